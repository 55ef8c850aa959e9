"""Energy and cost of a floor: lazy properties shared by the decode, parallel and prefill results.

Two energies, never confused (DESIGN.md §4b):

* the **data-movement floor** ``energy_floor_j_per_step`` = bytes moved x the access energy of
  the device's memory technology (:mod:`roofline_decode.specs.memory_energy`, sourced pJ/bit);
  NaN where the technology has no published figure (``energy_notes`` says why).  No energy per
  FLOP is sourced for any device yet, so the arithmetic adds nothing to the floor;
* the **estimate at board power** ``energy_at_board_power_j_per_step`` = devices x board power
  (the spec's ``tdp``) x step time: what the devices would draw flat out, not a bound.

Cost: :meth:`EnergyAndCost.cost_per_million_tokens` = devices x price per device-hour x step time
/ tokens, for a price the user gives (no price list ships: prices change).

Nothing here runs inside :func:`~roofline_decode.decode_floor`: the results keep the device spec
and compute these on first access.

Examples
--------
>>> from roofline_decode import decode_floor
>>> r = decode_floor("llama-3.1-8b", "h200-sxm", batch=1, context=4096)
>>> round(float(r.joules_per_token_floor), 3), round(float(r.joules_per_token_at_board_power), 2)
(0.298, 2.27)
>>> round(float(r.cost_per_million_tokens(3.50)), 2)
3.15
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable
from ..checks import positive
from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..specs.memory_energy import MemoryEnergy

__all__ = ["EnergyAndCost", "ENERGY_RECORD_KEYS"]

#: Keys :meth:`EnergyAndCost.energy_records` adds to each record (SI units: J, tokens/J, W,
#: J/bit; ``usd_per_million_tokens`` only when a price is given).
ENERGY_RECORD_KEYS = ("memory_technology", "access_energy_j_per_bit", "board_power_w", "energy_floor_j_per_step",
                      "joules_per_token_floor", "tokens_per_joule_floor", "energy_at_board_power_j_per_step",
                      "joules_per_token_at_board_power")


#: Prices per device-hour accepted [$/h]: a millionth of a dollar to a million dollars. Outside
#: it a cost per token underflows to $0 or overflows to infinity (5e-324, 1e308), or the
#: figure is a unit slip (a price per month or per year typed as per hour).
PRICE_RANGE = (1e-6, 1e6)


def checked_price(price_per_hour: object) -> float:
    """A price per device-hour: a real number in :data:`PRICE_RANGE` [$/h] (no bool, no string),
    else InvalidValueError naming it."""
    low, high = PRICE_RANGE
    allowed = f"a number from {low:g} to {high:g} (dollars for one device for one hour)"
    price = positive("price_per_hour", price_per_hour, allowed)
    if not low <= price <= high:
        raise InvalidValueError("price_per_hour", price_per_hour, allowed)
    return price


class EnergyAndCost:
    """Mixin: energy and cost of a result that holds ``device`` (its Accelerator spec).

    A host class provides ``_energy_bytes`` (bytes the step moves on all its devices [B]),
    ``_energy_time`` [s], ``_energy_tokens`` (tokens the step produces) and
    ``_energy_devices`` (devices it runs on); the defaults fit :class:`~roofline_decode.DecodeFloor`.
    """

    if TYPE_CHECKING:  # what the default step reads from a host result (DecodeFloor's fields)
        bytes_total: Broadcastable
        step_time_s: Broadcastable
        batch: Broadcastable

    # -- what a step is (overridden by the parallel and prefill results) ----------------------
    @property
    def _energy_bytes(self) -> np.ndarray:
        return np.asarray(self.bytes_total)

    @property
    def _energy_time(self) -> np.ndarray:
        return np.asarray(self.step_time_s)

    @property
    def _energy_tokens(self) -> np.ndarray:
        return np.asarray(self.batch, dtype=float)

    @property
    def _energy_devices(self) -> int:
        return 1

    def _access(self) -> tuple[MemoryEnergy | None, str | None]:
        from ..specs.memory_energy import access_energy_of

        cached: tuple[MemoryEnergy | None, str | None] | None = self.__dict__.get("_access_cache")
        if cached is None:
            device = getattr(self, "device", None)
            if device is None:
                cached = (None, "energy unavailable: the result carries no device spec")
            else:
                cached = access_energy_of(device.memory_type)
            object.__setattr__(self, "_access_cache", cached)
        return cached

    # -- the data ----------------------------------------------------------------------------
    @property
    def memory_technology(self) -> str | None:
        """The memory technology whose access energy the floor uses (None where unsourced)."""
        energy = self._access()[0]
        return None if energy is None else energy.name

    @property
    def access_energy_per_bit(self) -> float:
        """Access energy of the device's memory [J/bit]; NaN where no source gives one."""
        energy = self._access()[0]
        return float("nan") if energy is None else energy.access_energy_per_bit

    @property
    def board_power_w(self) -> float:
        """Board power (TDP/TBP) of one device [W] from its spec; NaN where the spec has none."""
        device = getattr(self, "device", None)
        power = None if device is None else device.tdp_w
        return float("nan") if power is None else float(power)

    @property
    def energy_notes(self) -> tuple[str, ...]:
        """What the energy figures rest on: the technology used, or why the floor is unavailable."""
        energy, note = self._access()
        notes = [note] if note else []
        if energy is not None:
            figure = energy.figures["access_energy"]
            notes.append(f"energy floor: bytes moved x {energy.name} access energy "
                         f"{energy.access_energy_per_bit * 1e12:g} pJ/bit ({energy.sources[figure.source].title}); "
                         "no energy per FLOP is sourced, so arithmetic adds nothing to it")
            if figure.kind == "derived":
                # a figure scaled from a vendor's relative claim is an estimate, not a printed bound
                notes.append(f"the {energy.name} access energy is derived, not printed by its vendor "
                             f"({figure.derivation}): the energy floor rests on that estimate")
        if np.isnan(self.board_power_w):
            notes.append("energy at board power unavailable: the device spec has no tdp figure")
        else:
            notes.append(f"energy at board power = {self._energy_devices} x {self.board_power_w:g} W x step time: "
                         "an estimate, not a floor")
        return tuple(notes)

    # -- energy --------------------------------------------------------------------------------
    @property
    def energy_floor_j_per_step(self) -> np.ndarray:
        """Data-movement energy floor of one step on all its devices [J] (NaN where unsourced)."""
        energy: np.ndarray = f.data_movement_energy(self._energy_bytes, self.access_energy_per_bit)
        return energy

    @property
    def joules_per_token_floor(self) -> np.ndarray:
        """Data-movement energy floor per generated token [J]."""
        energy: np.ndarray = f.energy_per_token(self.energy_floor_j_per_step, self._energy_tokens)
        return energy

    @property
    def tokens_per_joule_floor(self) -> np.ndarray:
        """Most tokens one joule can buy under the floor [1/J]."""
        return 1.0 / self.joules_per_token_floor

    @property
    def energy_at_board_power_j_per_step(self) -> np.ndarray:
        """Devices x board power x step time [J]: an estimate, not a floor."""
        energy: np.ndarray = f.board_energy(self.board_power_w, self._energy_time, self._energy_devices)
        return energy

    @property
    def joules_per_token_at_board_power(self) -> np.ndarray:
        """Energy per token at full board power [J]: an estimate, not a floor."""
        energy: np.ndarray = f.energy_per_token(self.energy_at_board_power_j_per_step, self._energy_tokens)
        return energy

    # -- cost ------------------------------------------------------------------------------------
    def cost_per_million_tokens(self, price_per_hour: float) -> np.ndarray:
        """Price of a million tokens [$] at ``price_per_hour`` per device-hour, all devices busy
        at this batch (idle time, and prefill for decode results, excluded)."""
        price = checked_price(price_per_hour)
        cost: np.ndarray = 1e6 * f.cost_per_token(price, self._energy_time, self._energy_tokens, self._energy_devices)
        return cost

    def energy_records(self, price_per_hour: float | None = None) -> list[dict[str, Any]]:
        """Per grid point (in :meth:`to_records` order) the :data:`ENERGY_RECORD_KEYS` and, with a
        price, ``usd_per_million_tokens`` and ``price_per_hour``.  NaN becomes None (JSON null)."""
        shape = np.broadcast(self._energy_time, self._energy_tokens, self._energy_bytes).shape
        columns = {
            "energy_floor_j_per_step": self.energy_floor_j_per_step,
            "joules_per_token_floor": self.joules_per_token_floor,
            "tokens_per_joule_floor": self.tokens_per_joule_floor,
            "energy_at_board_power_j_per_step": self.energy_at_board_power_j_per_step,
            "joules_per_token_at_board_power": self.joules_per_token_at_board_power,
        }
        if price_per_hour is not None:
            columns["usd_per_million_tokens"] = self.cost_per_million_tokens(price_per_hour)
        flat = {k: np.broadcast_to(v, shape).ravel() for k, v in columns.items()}
        fixed: dict[str, Any] = {"memory_technology": self.memory_technology,
                 "access_energy_j_per_bit": _plain(self.access_energy_per_bit),
                 "board_power_w": _plain(self.board_power_w)}
        if price_per_hour is not None:
            fixed["price_per_hour"] = checked_price(price_per_hour)
        return [{**fixed, **{k: _plain(v[i]) for k, v in flat.items()}} for i in range(int(np.prod(shape)))]


def _plain(value: float | np.floating[Any]) -> float | None:
    number = float(value)
    return None if np.isnan(number) else number
