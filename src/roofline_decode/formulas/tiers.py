"""Two memory tiers: step time when part of the bytes stream from a slower tier.

A slower tier (host DDR5 channels, PCIe, CXL) holds a fraction of the KV cache (its oldest
tokens) and/or of the weights.  Every decode step still reads all of them, so the step pays
``bytes_tier / BW_tier`` on top of (serial) or beside (overlapped) the HBM time.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import maximum, ratio_or_infinite

__all__ = ["tiered_memory_time", "overlapped_tiered_memory_time", "required_tier_bandwidth"]


def tiered_memory_time(
    fast_bytes: Operand, fast_bandwidth: Operand, tier_bytes: Operand, tier_bandwidth: Operand,
) -> ArrayOrExpr:
    r"""Memory time of a step whose bytes come from two tiers, one after the other.

    .. math:: T_{mem} = \frac{b_{fast}}{BW_{fast}} + \frac{b_{tier}}{BW_{tier}}

    Parameters
    ----------
    fast_bytes : array_like
        Bytes read and written in device memory per step [B].
    fast_bandwidth : array_like
        Device memory bandwidth [B/s].
    tier_bytes : array_like
        Bytes read from the slower tier per step [B].
    tier_bandwidth : array_like
        Read bandwidth of the slower tier toward the device [B/s].

    Returns
    -------
    array_like
        Seconds [s].  The serial form: a layer cannot attend over offloaded keys before
        they arrive, and a runtime that fetches them on demand pays both times.

    References
    ----------
    .. [1] Sheng et al., "FlexGen: High-Throughput Generative Inference of Large Language
       Models with a Single GPU", ICML 2023, §4 (cost model of a GPU/CPU/disk hierarchy).

    Examples
    --------
    Llama-3.1-8B (16.06 GB of bf16 weights) on an H100 SXM with 4 GB of KV cache per step
    streamed over PCIe 5.0 x16 (63 GB/s): 68.3 ms, against 6 ms from HBM alone.

    >>> round(tiered_memory_time(16.06e9, 3.35e12, 4e9, 63e9) * 1e3, 1)
    68.3
    """
    return fast_bytes / fast_bandwidth + tier_bytes / tier_bandwidth


def overlapped_tiered_memory_time(
    fast_bytes: Operand, fast_bandwidth: Operand, tier_bytes: Operand, tier_bandwidth: Operand,
) -> ArrayOrExpr:
    r"""Memory time of a two-tier step when both tiers stream at once (perfect prefetch).

    .. math:: T_{mem} = \max\left(\frac{b_{fast}}{BW_{fast}}, \frac{b_{tier}}{BW_{tier}}\right)

    Parameters and units as in :func:`tiered_memory_time`.

    Returns
    -------
    array_like
        Seconds [s]: the floor no schedule beats, reached only when the tier transfer for the
        next layers is fully hidden behind the current ones.

    Notes
    -----
    Never larger than :func:`tiered_memory_time` and never smaller than either tier's own
    time, so offloading bytes to a tier slower than the device never makes a step faster.

    References
    ----------
    .. [1] Sheng et al., "FlexGen", ICML 2023, §4.1 (overlapping I/O with compute).

    Examples
    --------
    >>> round(overlapped_tiered_memory_time(16.06e9, 3.35e12, 4e9, 63e9) * 1e3, 1)
    63.5
    """
    return maximum(fast_bytes / fast_bandwidth, tier_bytes / tier_bandwidth)


def required_tier_bandwidth(
    tier_bytes: Operand, target_step_time: Operand, fast_bytes: Operand = 0,
    fast_bandwidth: Operand = float("inf"), overlapped: bool = False,
) -> ArrayOrExpr:
    r"""Tier read bandwidth needed for a step to finish within a target time.

    Serial (default) and overlapped:

    .. math::

        BW_{tier} \ge \frac{b_{tier}}{T_{target} - b_{fast}/BW_{fast}}
        \qquad
        BW_{tier} \ge \frac{b_{tier}}{T_{target}}

    Parameters
    ----------
    tier_bytes : array_like
        Bytes read from the tier per step [B].
    target_step_time : array_like
        Target seconds per step [s] (batch / target aggregate tokens per second).
    fast_bytes, fast_bandwidth : array_like, optional
        Bytes and bandwidth of device memory [B], [B/s]; only the serial form uses them.
    overlapped : bool, optional
        Use the overlapped form (device and tier stream at once).

    Returns
    -------
    array_like
        Bandwidth [B/s]; +inf when device memory alone already takes the whole target
        (serial), i.e. no tier is fast enough.

    References
    ----------
    .. [1] Sheng et al., "FlexGen", ICML 2023, §4.

    Examples
    --------
    4 GB of offloaded KV per step with Llama-3.1-8B on an H100 SXM and a 50 ms step target:
    88.5 GB/s, beyond PCIe 5.0 x16 (63 GB/s).

    >>> round(float(required_tier_bandwidth(4e9, 0.05, 16.06e9, 3.35e12)) / 1e9, 1)
    88.5
    """
    if overlapped:
        return tier_bytes / target_step_time
    return ratio_or_infinite(tier_bytes, target_step_time - fast_bytes / fast_bandwidth)
