"""Energy and cost of a step: the data-movement floor, board power, and price per token.

.. math:: E_{move} = 8\\,Q\\,e_{bit} + F_{step}\\,e_{flop}, \\qquad
          E_{board} = n\\,P_{board}\\,T_{step}, \\qquad
          c_{tok} = \\frac{n\\,p_{h}\\,T_{step}}{3600\\,B}

The first is a floor (every byte of the step crosses the memory interface at least once); the
second is an estimate (a device seldom draws its full board power while memory-bound, and
sometimes more than it for a moment); the third follows from the step time and a price.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand

__all__ = ["data_movement_energy", "board_energy", "energy_per_token", "cost_per_token"]


def data_movement_energy(bytes_moved: Operand, access_energy_per_bit: Operand, flops: Operand = 0,
                         energy_per_flop: Operand = 0) -> ArrayOrExpr:
    r"""Least energy a step spends moving its bytes (and doing its FLOPs, where sourced).

    .. math:: E_{move} = 8\,Q\,e_{bit} + F_{step}\,e_{flop}

    Parameters
    ----------
    bytes_moved : array_like
        Bytes the step moves Q [B] (weights read + KV read + KV written).
    access_energy_per_bit : array_like
        Energy of the memory technology per bit read or written e_bit [J/bit].
    flops : array_like, optional
        FLOPs of the step F_step [FLOP].
    energy_per_flop : array_like, optional
        Energy per FLOP e_flop [J/FLOP]; 0 unless a source states one.

    Returns
    -------
    array_like
        Least energy of one step [J].

    Notes
    -----
    A floor under the assumptions that each byte crosses the memory interface once and that the
    vendor's energy per bit covers the DRAM side only (array, on-die movement, I/O): the
    processor's PHY, controller, caches, registers and arithmetic add to it.

    References
    ----------
    .. [1] Micron, "Ultra-Bandwidth Solutions", product comparison, row "Average Device Power
       (pJ/bit)" (GDDR6 7.5, GDDR6X 7.25, HBM2E 6.0), retrieved 2026-11-30.

    Examples
    --------
    Llama-3.1-8B in bf16 at batch 1 and 4K context moves 15.55 GB per step; from HBM3E at
    2.4 pJ/bit (Micron, derived: ``memory_energy/hbm3e.toml``) that takes at least 0.299 J, the
    energy floor of one token.

    >>> round(data_movement_energy(15.547e9, 2.4e-12), 3)
    0.299
    """
    return 8 * bytes_moved * access_energy_per_bit + flops * energy_per_flop


def board_energy(board_power: Operand, step_time: Operand, num_devices: Operand = 1) -> ArrayOrExpr:
    r"""Energy of a step at full board power: an estimate, never a floor.

    .. math:: E_{board} = n\,P_{board}\,T_{step}

    Parameters
    ----------
    board_power : array_like
        Board power (TDP/TBP) of one device P_board [W].
    step_time : array_like
        Time of one step T_step [s].
    num_devices : array_like, optional
        Devices running the step n [1].

    Returns
    -------
    array_like
        Energy of one step at board power, summed over the devices [J].

    Notes
    -----
    A memory-bound decode step rarely draws the full board power; the true energy may be lower
    (and the floor's step time is itself a lower bound on the time).  Use it to compare devices,
    not as a bound.

    Examples
    --------
    An H100 SXM (700 W) over the 4.64 ms bf16 floor of a Llama-3.1-8B step (batch 1, 4K
    context): about 3.25 J.

    >>> round(board_energy(700, 4.641e-3), 2)
    3.25
    """
    return num_devices * board_power * step_time


def energy_per_token(step_energy: Operand, batch: Operand) -> ArrayOrExpr:
    r"""Energy per generated token of a step that produces one token per sequence.

    .. math:: e_{tok} = E_{step} / B

    Parameters
    ----------
    step_energy : array_like
        Energy of one step E_step [J].
    batch : array_like
        Sequences in the step B [1].

    Returns
    -------
    array_like
        Joules per token [J].

    Examples
    --------
    >>> energy_per_token(0.5, 64)
    0.0078125
    """
    return step_energy / batch


def cost_per_token(price_per_hour: Operand, step_time: Operand, batch: Operand, num_devices: Operand = 1) -> ArrayOrExpr:
    r"""Price of one generated token at a price per device-hour.

    .. math:: c_{tok} = \frac{n\,p_{h}\,T_{step}}{3600\,B}

    Parameters
    ----------
    price_per_hour : array_like
        Price of one device for one hour p_h [$/h] (the user's: prices change).
    step_time : array_like
        Time of one step T_step [s].
    batch : array_like
        Sequences in the step B [1].
    num_devices : array_like, optional
        Devices running the step n [1].

    Returns
    -------
    array_like
        Dollars (or the price's currency) per token [$].

    Notes
    -----
    The devices are assumed busy all the time at that batch: idle time, prefill and
    host overheads add to it.

    Examples
    --------
    At $2.50 per H100-hour and a 4.64 ms step at batch 1: $3.22 per million tokens.

    >>> round(cost_per_token(2.50, 4.641e-3, 1) * 1e6, 2)
    3.22
    """
    return num_devices * price_per_hour * step_time / (3600 * batch)
