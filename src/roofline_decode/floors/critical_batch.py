"""The critical batch of a decode step: the smallest batch at which T_comp >= T_mem.

A closed form for dense models and MoE models with a fixed expert count; Newton's method for
MoE models under uniform routing, where the distinct experts read grow concavely with the batch.
Separate from :mod:`roofline_decode.floors.decode`: one solver, used by the grid path and (once per
context) by the scalar fast path in :mod:`roofline_decode.floors.fast_path`.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

from .. import formulas as f
from .peaks import effective_peak, Peaks
from .routing import Routing
from ..specs.model import Model
from .traffic import GroupFlops, StepCoefficients, mixer_terms, step_coefficients, step_terms

__all__ = ["decode_critical_batch"]


class SequenceTerms(NamedTuple):
    """One sequence's step at each context, from which the critical batch is solved: every
    term but the weights grows linearly with the batch."""

    flops: Any  # FLOPs of one sequence f [FLOP]
    kv_bytes: Any  # KV bytes one sequence reads and writes [B]
    compute_time: Any  # its compute time at the group peaks t_seq [s]
    peak: Any  # the effective peak f / t_seq [FLOP/s]


def sequence_terms(model: Model, context: Any, peaks: Peaks, coefficients: StepCoefficients | None = None
                   ) -> SequenceTerms:
    """The :class:`SequenceTerms` at each ``context`` (:func:`~roofline_decode.floors.traffic.step_terms`
    at batch 1, timed at ``peaks``)."""
    c = step_coefficients(model) if coefficients is None else coefficients
    one = np.ones_like(context)
    terms = step_terms(c, one, context, None, mixer_terms(model, one, context))
    compute = peaks.time_of(terms.flops, GroupFlops(one, c.group_parameters, terms.score_flops, np.shape(terms.flops)))
    return SequenceTerms(terms.flops, terms.kv_read_bytes + terms.kv_write_bytes, compute,
                         effective_peak(terms.flops, compute, peaks))


def decode_critical_batch(model: Model, context: Any, peaks: Peaks, bandwidth: float, routing: Routing,
                          coefficients: StepCoefficients | None = None) -> np.ndarray:
    """The critical batch of a decode step at each ``context`` (an array of its shape) under
    ``routing``: NaN without a compute peak; the closed form for a dense model and for an MoE
    model whose experts read are held fixed (identical routing: k; a measured count); Newton's
    method, once per distinct context, under uniform routing."""
    if not peaks.bounded:
        return np.full(np.shape(context), np.nan)
    is_moe = model.is_moe if coefficients is None else coefficients.is_moe
    if is_moe and routing.kind != "uniform":  # experts held fixed: closed form
        fixed = routing.experts_read(model, np.ones(()))  # k, or the measured count
        return closed_form_critical_batch(model, context, peaks, bandwidth, np.broadcast_to(fixed, np.shape(fixed)),
                                          coefficients)
    if is_moe:  # Newton's method: solve once per distinct context
        contexts, inverse = np.unique(context, return_inverse=True)
        solved = closed_form_critical_batch(model, contexts, peaks, bandwidth, coefficients=coefficients)
        return solved[inverse].reshape(np.shape(context))
    return closed_form_critical_batch(model, context, peaks, bandwidth, coefficients=coefficients)


def closed_form_critical_batch(model: Model, context: np.ndarray, peaks: Peaks, bandwidth: float,
                               experts_read: np.ndarray | None = None,
                               coefficients: StepCoefficients | None = None) -> np.ndarray:
    """Smallest (real) batch with T_comp >= T_mem at each context.

    Bytes are W + D(B)·(expert bytes) + min(B, V)·(row bytes) + B·(KV bytes per sequence):
    linear in B for a dense model up to B = V, where the embedding gather saturates, and linear
    again past it.  The dense answer takes the closed form of the regime it lands in; so does an
    MoE model whose distinct experts ``experts_read`` are held fixed (identical routing: k; a
    measured count: that count, broadcasting with ``context``).  Uniform routing: Newton's
    method (:func:`moe_critical_batch`).
    Every FLOP group is B times its per-sequence FLOPs, so the summed compute time is
    B·t_seq(T) exactly, the same as FLOPs / F_eff(T) with the effective peak
    F_eff = f_seq / t_seq, which does not depend on B: the closed form stays exact with F_eff.
    """
    c = step_coefficients(model) if coefficients is None else coefficients
    one = sequence_terms(model, context, peaks, c)
    if c.is_moe and experts_read is None:
        return moe_critical_batch(model, context, peaks, bandwidth, one, c)
    row, vocab = c.row_bytes, c.vocab_size
    fixed: float | np.ndarray = c.streamed_bytes
    if c.is_moe:
        fixed = fixed + (c.bytes_per_expert_weight * c.experts[0] * np.asarray(experts_read, dtype=float)
                         * c.expert_parameters)
    below = np.asarray(f.critical_batch(fixed, one.kv_bytes + row, one.flops, one.peak, bandwidth), dtype=np.float64)
    above = np.asarray(f.critical_batch(fixed + vocab * row, one.kv_bytes, one.flops, one.peak, bandwidth),
                       dtype=np.float64)
    return np.where(below <= vocab, below, above)


def moe_critical_batch(model: Model, context: np.ndarray, peaks: Peaks, bandwidth: float,
                       one: SequenceTerms | None = None, coefficients: StepCoefficients | None = None) -> np.ndarray:
    """Critical batch of an MoE model under uniform routing at each context (a 1-d array).

    The margin g(B) = T_comp − T_mem = B·t_seq − (W + b_e·L_moe·P_e·U(B) + min(B, V)·row +
    B·kv) / BW is convex in B (U is concave, min(B, V) is concave) and negative at B = 0, so it
    crosses zero once at most.  Newton's method started at an upper bound of the crossing (that
    of two linear upper bounds of the bytes: every expert read; gathered rows as B·row, or as
    V·row) stays above the root of a convex function and decreases monotonically to it; the
    iteration stops when a step no longer lowers B.  Same answer as 64 bisection steps to
    1e-12 relative (tests), in a handful of vectorised steps.
    """
    c = step_coefficients(model) if coefficients is None else coefficients
    if one is None:
        one = sequence_terms(model, context, peaks, c)
    kv_per_sequence = one.kv_bytes
    row, vocab = c.row_bytes, c.vocab_size
    fixed = c.streamed_bytes
    moe_layers, experts, k = c.experts
    expert_bytes = c.bytes_per_expert_weight * moe_layers * c.expert_parameters
    fixed_all = fixed + expert_bytes * experts
    upper = np.minimum(
        np.asarray(f.critical_batch(fixed_all, kv_per_sequence + row, one.flops, one.peak, bandwidth),
                   dtype=np.float64),
        np.asarray(f.critical_batch(fixed_all + vocab * row, kv_per_sequence, one.flops, one.peak, bandwidth),
                   dtype=np.float64),
    )
    finite = np.isfinite(upper)
    t_sequence = np.broadcast_to(one.compute_time, upper.shape)  # T_comp = B·t_seq
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
