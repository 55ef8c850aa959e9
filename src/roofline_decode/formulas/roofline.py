"""The roofline: memory time, compute time, the step floor and the critical batch."""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import maximum, ratio_or_infinite

__all__ = [
    "memory_time",
    "compute_time",
    "step_time",
    "arithmetic_intensity",
    "ridge_point",
    "tokens_per_second",
    "critical_batch",
]


def memory_time(bytes_moved: Operand, memory_bandwidth: Operand) -> ArrayOrExpr:
    r"""Time to move bytes through memory at full bandwidth.

    .. math:: T_{mem} = \frac{\text{bytes}}{BW}

    Parameters
    ----------
    bytes_moved : array_like
        Bytes read plus written [B].
    memory_bandwidth : array_like
        Peak memory bandwidth BW [B/s].

    Returns
    -------
    array_like
        Memory time [s], a floor on the step.

    References
    ----------
    .. [1] Williams, Waterman and Patterson, "Roofline: An Insightful Visual Performance Model
       for Multicore Architectures", CACM 52(4), 2009.

    Examples
    --------
    The worked example: 20 GB through 1 TB/s takes at least 20 ms.

    >>> memory_time(20e9, 1e12)
    0.02
    """
    return bytes_moved / memory_bandwidth


def compute_time(flops: Operand, peak_flops: Operand) -> ArrayOrExpr:
    r"""Time to execute FLOPs at the dense peak.

    .. math:: T_{comp} = \frac{F_{step}}{F_{peak}}

    Parameters
    ----------
    flops : array_like
        FLOPs of the step [FLOP].
    peak_flops : array_like
        Dense peak of the compute precision [FLOP/s].

    Returns
    -------
    array_like
        Compute time [s] at the dense peak.

    References
    ----------
    .. [1] Williams, Waterman and Patterson, CACM 52(4), 2009.

    Examples
    --------
    Llama-2-7B at batch 1 (13.2 GFLOP) on an H100 SXM (989.5 TFLOP/s dense bf16): 13 µs.

    >>> round(compute_time(13.2e9, 989.5e12) * 1e6, 1)
    13.3
    """
    return flops / peak_flops


def step_time(memory_time: Operand, compute_time: Operand) -> ArrayOrExpr:
    r"""The decode step floor with perfect overlap of memory and compute.

    .. math:: T_{step} = \max(T_{mem}, T_{comp})

    Parameters
    ----------
    memory_time, compute_time : array_like
        From :func:`memory_time` and :func:`compute_time` [s].

    Returns
    -------
    array_like
        Seconds per step [s]; no schedule can be faster on this device.

    References
    ----------
    .. [1] Williams, Waterman and Patterson, CACM 52(4), 2009.

    Examples
    --------
    >>> float(step_time(0.02, 0.005))
    0.02
    """
    return maximum(memory_time, compute_time)


def arithmetic_intensity(flops: Operand, bytes_moved: Operand) -> ArrayOrExpr:
    r"""FLOPs per byte moved.

    .. math:: I = \frac{F_{step}}{\text{bytes}}

    Parameters
    ----------
    flops : array_like
        FLOPs [FLOP].
    bytes_moved : array_like
        Bytes [B].

    Returns
    -------
    array_like
        Intensity [FLOP/B]; below the ridge point the step is memory-bound.

    References
    ----------
    .. [1] Williams, Waterman and Patterson, CACM 52(4), 2009.

    Examples
    --------
    A bf16 dense model at batch 1 does 2 FLOPs per 2-byte weight: about 1 FLOP/B.

    >>> arithmetic_intensity(2 * 8.0e9, 2 * 8.0e9)
    1.0
    """
    return flops / bytes_moved


def ridge_point(peak_flops: Operand, memory_bandwidth: Operand) -> ArrayOrExpr:
    r"""Arithmetic intensity at which a device turns from memory- to compute-bound.

    .. math:: I^{*} = \frac{F_{peak}}{BW}

    Parameters
    ----------
    peak_flops : array_like
        Dense peak [FLOP/s].
    memory_bandwidth : array_like
        Memory bandwidth [B/s].

    Returns
    -------
    array_like
        Ridge point [FLOP/B].

    References
    ----------
    .. [1] Williams, Waterman and Patterson, CACM 52(4), 2009.

    Examples
    --------
    H100 SXM dense bf16 (989.5 TFLOP/s, 3.35 TB/s):

    >>> round(ridge_point(989.5e12, 3.35e12), 1)
    295.4
    """
    return peak_flops / memory_bandwidth


def tokens_per_second(batch: Operand, step_time: Operand) -> ArrayOrExpr:
    r"""Generated tokens per second, aggregated over the batch.

    .. math:: \text{tok/s} = \frac{B}{T_{step}}

    Parameters
    ----------
    batch : array_like
        Sequences B [1]; each produces one token per step.
    step_time : array_like
        Seconds per step [s].

    Returns
    -------
    array_like
        Tokens per second [1/s]; per sequence it is 1 / T_step.

    References
    ----------
    .. [1] Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §2.

    Examples
    --------
    Batching four requests into one 20 ms pass: 200 tokens/s.

    >>> tokens_per_second(4, 0.02)
    200.0
    """
    return batch / step_time


def critical_batch(
    fixed_bytes: Operand, bytes_per_sequence: Operand, flops_per_sequence: Operand, peak_flops: Operand,
    memory_bandwidth: Operand,
) -> ArrayOrExpr:
    r"""Batch at which compute time equals memory time (bytes linear in B).

    With bytes = W + B·m and FLOPs = B·f, T_comp ≥ T_mem once

    .. math:: B^{*} = \frac{W / BW}{f / F_{peak} - m / BW}

    and never (B* = ∞) if f / F_peak ≤ m / BW: each sequence's own bytes (its KV cache) then
    cost more time than its FLOPs, and batching cannot reach the ridge.

    Parameters
    ----------
    fixed_bytes : array_like
        Bytes read once per step whatever the batch, W [B] (weights).
    bytes_per_sequence : array_like
        Bytes each sequence adds, m [B] (its KV read and write, its embedding row).
    flops_per_sequence : array_like
        FLOPs each sequence adds, f [FLOP].
    peak_flops, memory_bandwidth : array_like
        F_peak [FLOP/s] and BW [B/s], as in :func:`ridge_point`.

    Returns
    -------
    array_like
        B* [1] as a real number (any integer batch ≥ B* is compute-bound), or +inf.

    Notes
    -----
    Valid for dense models with B ≤ V; MoE weight reads are not linear in B and are solved
    numerically by :func:`roofline_decode.decode_floor`.

    References
    ----------
    .. [1] Austin et al., "How to Scale Your Model", 2025, "All About Transformer Inference"
       (B_crit ≈ F / BW ≈ 240 for a TPU v5e in bf16).

    Examples
    --------
    A bf16 model on a TPU v5e (1.97e14 FLOP/s, 8.2e11 B/s) at zero context: each weight
    (2 B) gives 2 FLOPs per sequence, so B* ≈ F / BW ≈ 240.

    >>> round(float(critical_batch(2 * 8e9, 0, 2 * 8e9, 1.97e14, 8.2e11)), 1)
    240.2
    """
    per_sequence_margin = flops_per_sequence / peak_flops - bytes_per_sequence / memory_bandwidth
    return ratio_or_infinite(fixed_bytes / memory_bandwidth, per_sequence_margin)
