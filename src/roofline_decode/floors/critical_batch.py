"""The critical batch of a decode step: the smallest batch at which T_comp >= T_mem.

A closed form for dense models and MoE models with a fixed expert count; Newton's method for
MoE models under uniform routing, where the distinct experts read grow concavely with the batch.
Separate from :mod:`roofline_decode.floors.decode`: one solver, used by the grid path (the scalar
fast path in :mod:`roofline_decode.floors.fast_path` repeats it on floats, and its tests compare the two).
"""

from __future__ import annotations

import math

import numpy as np

from .. import formulas as f
from .peaks import effective_peak, Peaks
from ..specs.model import Model
from .traffic import step_traffic, StepTraffic


def closed_form_critical_batch(model: Model, context: np.ndarray, peaks: Peaks, bandwidth: float,
                    experts_read: np.ndarray | None = None) -> np.ndarray:
    """Smallest (real) batch with T_comp >= T_mem at each context.

    Bytes are W + D(B)·(expert bytes) + min(B, V)·(row bytes) + B·(KV bytes per sequence):
    linear in B for a dense model up to B = V, where the embedding gather saturates, and linear
    again past it.  The dense answer takes the closed form of the regime it lands in; so does an
    MoE model whose distinct experts ``experts_read`` are held fixed (identical routing: k; a
    measured count: that count, broadcasting with ``context``).  Uniform routing bisects.
    Every FLOP group is B times its per-sequence FLOPs, so the summed compute time is
    B·t_seq(T) exactly, the same as FLOPs / F_eff(T) with the effective peak
    F_eff = f_seq / t_seq, which does not depend on B: the closed form stays exact with F_eff.
    """
    one = step_traffic(model, np.ones_like(context), context)
    peak = effective_peak(one.flops, peaks.compute_time(one), peaks)
    kv_per_sequence = one.kv_read_bytes + one.kv_write_bytes
    row = model.embedding_row_bytes
    vocab = model.vocab_size
    fixed: float | np.ndarray = model.streamed_weight_bytes
    if model.is_moe and experts_read is not None:
        fixed = fixed + (model.routed_expert_format.bytes_per_element * model.num_moe_layers
                         * np.asarray(experts_read, dtype=float) * model.expert_parameters)
    if not model.is_moe or experts_read is not None:
        below = np.asarray(f.critical_batch(fixed, kv_per_sequence + row, one.flops, peak, bandwidth),
                           dtype=np.float64)
        above = np.asarray(f.critical_batch(fixed + vocab * row, kv_per_sequence, one.flops, peak, bandwidth),
                           dtype=np.float64)
        return np.where(below <= vocab, below, above)
    return moe_critical_batch(model, context, peaks, bandwidth, one, peak)


def moe_critical_batch(model: Model, context: np.ndarray, peaks: Peaks, bandwidth: float,
                        one: StepTraffic | None = None, peak: float | np.ndarray | None = None) -> np.ndarray:
    """Critical batch of an MoE model under uniform routing at each context (a 1-d array).

    The margin g(B) = T_comp − T_mem = B·t_seq − (W + b_e·L_moe·P_e·U(B) + min(B, V)·row +
    B·kv) / BW is convex in B (U is concave, min(B, V) is concave) and negative at B = 0, so it
    crosses zero once at most.  Newton's method started at an upper bound of the crossing (that
    of two linear upper bounds of the bytes: every expert read; gathered rows as B·row, or as
    V·row) stays above the root of a convex function and decreases monotonically to it; the
    iteration stops when a step no longer lowers B.  Same answer as 64 bisection steps to
    1e-12 relative (tests), in a handful of vectorised steps.
    """
    if one is None:
        one = step_traffic(model, np.ones_like(context), context)
        peak = effective_peak(one.flops, peaks.compute_time(one), peaks)
    assert peak is not None  # passed with ``one``, or computed with it above
    kv_per_sequence = one.kv_read_bytes + one.kv_write_bytes
    row, vocab = model.embedding_row_bytes, model.vocab_size
    fixed = model.streamed_weight_bytes
    expert_bytes = model.routed_expert_format.bytes_per_element * model.num_moe_layers * model.expert_parameters
    experts, k = model.num_experts, model.num_experts_per_token
    fixed_all = fixed + expert_bytes * experts
    upper = np.minimum(
        np.asarray(f.critical_batch(fixed_all, kv_per_sequence + row, one.flops, peak, bandwidth),
                   dtype=np.float64),
        np.asarray(f.critical_batch(fixed_all + vocab * row, kv_per_sequence, one.flops, peak, bandwidth),
                   dtype=np.float64),
    )
    finite = np.isfinite(upper)
    t_sequence = np.broadcast_to(peaks.compute_time(one), upper.shape)  # T_comp = B·t_seq
    q = 1 - k / experts
    log_q = math.log(q) if q > 0 else 0.0  # k = E: every expert read, U'(B) = 0
    x = np.where(finite, upper, 1.0)
    active = finite.copy()
    for _ in range(100):
        if not active.any():
            break
        power = np.power(q, x)
        touched = experts * (1 - power)
        gathered = np.minimum(x, vocab)
        margin = x * t_sequence - (fixed + expert_bytes * touched + gathered * row + x * kv_per_sequence) / bandwidth
        slope = t_sequence - (expert_bytes * (-experts * power * log_q) + np.where(x < vocab, row, 0.0)
                              + kv_per_sequence) / bandwidth
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(active & (margin > 0) & (slope > 0), margin / np.where(slope > 0, slope, 1.0), 0.0)
        following = x - step
        moved = following < x
        x = np.where(moved, following, x)
        active = active & moved
    return np.where(finite, x, np.inf)
