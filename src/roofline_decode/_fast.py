"""The scalar fast path of :func:`~roofline_decode.decode_floor` (issue 18).

A notebook loop calls ``decode_floor`` once per configuration with one batch and one context.
The general path builds 0-d arrays and re-derives every model and device term on each call;
here the terms that depend only on the model, or on (model, accelerator, sparse, routing,
latency profile), are computed once (:class:`_Plan`, cached by the identity of the frozen spec
objects), and the point itself is evaluated with the *same formula functions* on Python floats.
Additions, products and quotients are IEEE operations whatever the container, and the one
transcendental (the routed-expert power q**B) goes through the same numpy ufunc, so every field
equals the general path's bit for bit, with the same types (``tests/estimate/test_fast_path.py``
compares them on random models, devices and points).

Only the common case is taken: a real batch and context in range, ``routing`` by name, its
context within the model's positions, some compute peak known, and full or sliding attention
only (chunked, sparse and recurrent layers take the general path).  Anything
else (an array, a measured expert count, a context beyond the positions, bad input) returns ``None``
and the general path answers, with its notes and its error messages.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import formulas as f
from .estimate import DecodeFloor
from .limits import _fit_note

__all__ = ["scalar_floor", "clear_plans"]

_PLANS: dict[tuple, "_Plan"] = {}
_MAX_PLANS = 256
_SCALARS = (int, float, np.floating, np.integer)


def clear_plans() -> None:
    """Forget every cached plan (they are rebuilt on the next call)."""
    _PLANS.clear()


class _Plan:
    """Everything of a floor that does not depend on the batch and the context."""

    def __init__(self, model, accelerator, sparse: bool, routing, profile) -> None:
        from . import estimate as e
        from .planning.capacity import usable_memory

        self.keep = (model, accelerator, routing, profile)  # the ids in the key stay valid
        self.model, self.routing = model, routing
        self.peaks = peaks = e._peaks(model, accelerator, sparse)
        self.has_peak = peaks.bounded
        self.uniform = peaks.uniform
        self.single_peak = next(iter(peaks.peaks.values())) if self.uniform and self.has_peak else None
        self.summary = peaks.summary()
        self.bandwidth = accelerator.memory_bandwidth
        self.streamed = e._streamed_terms(model)
        self.b_e = model.routed_expert_format.bytes_per_element
        self.layers, self.m_kv, self.experts = e._layer_terms(model)
        self.is_moe = model.is_moe
        # weight_bytes_read skips the expert term when L_moe is the int 0
        self.dense = isinstance(self.experts[0], int) and self.experts[0] == 0
        self.row_bytes, self.streamed_bytes = model.embedding_row_bytes, model.streamed_weight_bytes
        self.expert_layer_bytes = self.b_e * model.num_moe_layers
        self.expert_parameters = model.expert_parameters
        self.matmul = model.matmul_parameters_per_token
        self.group_counts = tuple(e._matrix_parameters_per_token(model).items())
        self.num_heads, self.width = model.num_heads, model.score_value_width
        self.vocab, self.num_layers = model.vocab_size, model.num_attention_layers  # layers that write KV
        # chunked, sparse and recurrent layers (estimate._mixer_terms): the general path answers
        self.mixers = bool(model.num_chunked_layers or model.num_sparse_layers or model.num_recurrent_layers)
        self.fixed_state = model.cache_residency[3]
        self.chain = e.chain_time(model, profile)
        notes = peaks.notes
        if profile is not None:
            notes = (*notes, f"serial chain from latency profile {profile.label!r} "
                             f"({profile.operations_per_layer:g} operations per layer at "
                             f"{profile.operation_latency * 1e6:.3g} us): "
                             "an estimate for that runtime, not a physical floor")
        self.assumptions = notes + tuple(n for n in (routing.note(model),) if n)
        self.usable = usable_memory(accelerator)
        self.weight_bytes = model.weight_bytes
        self.sized = _Sized(model, self.weight_bytes)
        self.positions = model.max_position_embeddings
        self.names = (model.name, accelerator.id or accelerator.name, model.weight_format.name, model.kv_format.name)
        self.profile_label = None if profile is None else profile.label
        self.k, self.num_experts = model.num_experts_per_token, model.num_experts

    # --- the general path's terms, on floats -------------------------------------------------

    def experts_read(self, batch: float):
        """``Routing.experts_read`` at one batch (same ufunc for the power)."""
        if not self.is_moe:
            return None
        effective = self.num_experts if self.routing.kind == "uniform" else self.k
        return effective * (1 - np.power(1 - self.k / effective, batch))

    def attended(self, context: float) -> float:
        """``formulas.attended_positions``: G·T + S·min(T, W) (numpy's minimum gives a float)."""
        num_global, num_sliding, window = self.layers
        return num_global * context + num_sliding * float(context if context <= window else window)

    def traffic(self, batch: float, context: float, experts_read) -> tuple:
        """``estimate._traffic`` on floats: the formulas' operations in their order
        (``weight_bytes_read``, ``kv_read_bytes``, ``kv_write_bytes``, ``matmul_flops``,
        ``attention_flops``); the fast-path test holds them equal to the formulas."""
        streamed, row, b_w = self.streamed
        gathered = float(batch if batch <= self.vocab else self.vocab) * row
        experts = 0 if self.dense else self.experts[0] * experts_read
        weight = b_w * (streamed + gathered) + self.b_e * experts * self.expert_parameters
        attended = self.attended(context)
        kv_read = batch * self.m_kv * attended
        kv_write = batch * self.m_kv * self.num_layers
        scores = 2 * batch * self.num_heads * self.width * attended
        flops = 2 * batch * self.matmul + scores
        return weight, kv_read, kv_write, flops, scores

    def compute_time(self, flops: float, groups: dict) -> Any:
        """``_Peaks.compute_time`` (share 1) on floats."""
        if self.uniform:
            return f.compute_time(flops, self.single_peak)
        return 0.0 + sum(f.compute_time(groups[g], peak) for g, peak in self.peaks.peaks.items()
                         if not np.isnan(peak))

    def effective_peak(self, flops: float, compute: float) -> Any:
        if self.uniform:
            return self.single_peak
        return flops / compute if compute > 0 else math.nan

    def groups(self, batch: float, scores) -> dict:
        groups = {group: f.matmul_flops(batch, count) for group, count in self.group_counts}
        groups["attention_scores"] = scores
        return groups

    def critical_batch(self, context: float, fixed_experts) -> Any:
        """``estimate._critical_batch`` at one context (closed form), as a float."""
        _, kv_read, kv_write, flops, scores = self.traffic(1.0, context, self.experts_read(1.0))
        peak = self.effective_peak(flops, self.compute_time(flops, self.groups(1.0, scores)))
        kv_per_sequence = kv_read + kv_write
        row, vocab = self.row_bytes, self.vocab
        fixed = self.streamed_bytes
        if fixed_experts is not None:
            fixed = fixed + (self.expert_layer_bytes * fixed_experts * self.expert_parameters)
        below = _critical(fixed, kv_per_sequence + row, flops, peak, self.bandwidth)
        above = _critical(fixed + vocab * row, kv_per_sequence, flops, peak, self.bandwidth)
        return below if below <= vocab else above


    def moe_critical_batch(self, context: float) -> float:
        """``estimate._moe_critical_batch`` at one context: the same Newton iteration, operation
        for operation on floats (the power through the same ufunc), so the same iterates."""
        _, kv_read, kv_write, flops, scores = self.traffic(1.0, context, self.experts_read(1.0))
        t_sequence = self.compute_time(flops, self.groups(1.0, scores))
        peak = self.effective_peak(flops, t_sequence)
        kv_per_sequence = kv_read + kv_write
        row, vocab, fixed, bandwidth = self.row_bytes, self.vocab, self.streamed_bytes, self.bandwidth
        expert_bytes = self.expert_layer_bytes * self.expert_parameters
        experts, k = self.num_experts, self.k
        fixed_all = fixed + expert_bytes * experts
        upper = min(_critical(fixed_all, kv_per_sequence + row, flops, peak, bandwidth),
                    _critical(fixed_all + vocab * row, kv_per_sequence, flops, peak, bandwidth))
        if not math.isfinite(upper):
            return math.inf
        q = 1 - k / experts
        log_q = math.log(q) if q > 0 else 0.0
        x = upper
        for _ in range(100):
            power = np.power(q, x)
            touched = experts * (1 - power)
            gathered = x if x <= vocab else float(vocab)
            margin = x * t_sequence - (fixed + expert_bytes * touched + gathered * row + x * kv_per_sequence) / bandwidth
            slope = t_sequence - (expert_bytes * (-experts * power * log_q) + (float(row) if x < vocab else 0.0)
                                  + kv_per_sequence) / bandwidth
            step = margin / slope if margin > 0 and slope > 0 else 0.0
            following = x - step
            if not following < x:
                break
            x = following
        return float(x)


def _critical(fixed, per_sequence_bytes, flops, peak, bandwidth) -> float:
    """``formulas.critical_batch`` on floats: its ratio where the margin is positive, else inf."""
    margin = flops / peak - per_sequence_bytes / bandwidth
    return float(fixed / bandwidth) / float(margin) if margin > 0 else math.inf


class _Sized:
    """The model with its weight bytes computed once (``Model.weight_bytes`` sums every group
    on each access); other attributes come from the model."""

    def __init__(self, model, weight_bytes: float) -> None:
        self._model, self.weight_bytes = model, weight_bytes

    def __getattr__(self, name: str):
        return getattr(self._model, name)


def _plan(model, accelerator, sparse: bool, routing, profile) -> _Plan:
    key = (id(model), id(accelerator), bool(sparse), routing.kind, id(profile))
    plan = _PLANS.get(key)
    if plan is None or plan.keep[0] is not model or plan.keep[1] is not accelerator or plan.keep[3] is not profile:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _Plan(model, accelerator, sparse, routing, profile)
    return plan


def _real(value: Any, minimum: float) -> float | None:
    """``value`` as a float if it is a plain real number in [minimum, 2**53], else None."""
    if not isinstance(value, _SCALARS) or isinstance(value, (bool, np.bool_)):
        return None
    try:
        x = float(value)
    except OverflowError:
        return None
    return x if minimum <= x <= 9007199254740992.0 else None


def scalar_floor(model, accelerator, batch: Any, context: Any, sparse: bool, routing, profile):
    """The :class:`~roofline_decode.DecodeFloor` of one point, or None where the general path
    must answer (see the module docstring).  ``model`` and ``accelerator`` are loaded specs,
    ``routing`` a resolved named routing, ``profile`` a loaded profile or None."""
    b, t = _real(batch, 1.0), _real(context, 0.0)
    if b is None or t is None or routing.measured is not None:
        return None
    plan = _plan(model, accelerator, sparse, routing, profile)
    if not plan.has_peak or plan.mixers:
        return None
    # fit and positions first (grid_limits on floats); beyond the positions the general path words the note
    # planning.capacity.kv_bytes_per_sequence: formulas.kv_cache_bytes at B = 1, plus the fixed state
    per_sequence = np.asarray(float(1 * plan.m_kv * plan.attended(t)), dtype=float) + plan.fixed_state
    if per_sequence > 0:
        capacity = (plan.usable - plan.weight_bytes) / float(per_sequence)
    else:
        capacity = np.inf if plan.weight_bytes <= plan.usable else -np.inf
    fits = np.float64(b) <= capacity
    if plan.positions and t >= plan.positions:
        return None
    notes = plan.assumptions
    if not fits:
        notes = notes + (_fit_note(plan.sized, plan.names[1], np.array(b), np.array(t), per_sequence,
                                   np.array(fits), plan.usable),)
    experts = plan.experts_read(b)
    weight, kv_read, kv_write, flops, scores = plan.traffic(b, t, experts)
    groups = plan.groups(b, scores)
    bandwidth = plan.bandwidth
    bytes_total = weight + kv_read + kv_write
    memory = f.memory_time(bytes_total, bandwidth)
    compute = plan.compute_time(flops, groups)
    peak = plan.effective_peak(flops, compute)
    step = np.maximum(np.maximum(memory, compute), plan.chain)  # formulas.step_time, then the chain
    if not plan.is_moe:
        critical = plan.critical_batch(t, None)
    elif plan.routing.kind != "uniform":
        critical = plan.critical_batch(t, plan.experts_read(1.0))
    else:
        critical = plan.moe_critical_batch(t)
    largest = _max_batch(plan, t)
    positions = plan.positions
    return DecodeFloor(
        model=plan.names[0], accelerator=plan.names[1], weight_format=plan.names[2], kv_format=plan.names[3],
        compute_precision=plan.summary, batch=np.array(b), context=np.array(t),
        weight_bytes=np.float64(weight), kv_read_bytes=np.float64(kv_read), kv_write_bytes=np.float64(kv_write),
        bytes_total=np.float64(bytes_total), flops=np.float64(flops), memory_time_s=np.float64(memory),
        compute_time_s=np.float64(compute), step_time_s=step, tokens_per_s=np.float64(b / step),
        per_sequence_tokens_per_s=np.float64(1.0 / step),
        arithmetic_intensity=np.float64(flops / bytes_total),
        ridge_point=float(f.ridge_point(peak, bandwidth)), critical_batch=_frozen(critical),
        memory_bandwidth=bandwidth, peak_flops=float(peak), spec=model,
        compute_precisions=dict(plan.peaks.precisions), group_peak_flops=dict(plan.peaks.peaks),
        group_flops={g: np.float64(v) for g, v in groups.items()},
        notes=notes, routing=routing.kind,
        experts_read=_frozen(0.0 if experts is None else experts), _routing=routing,
        fits=fits, max_batch=_frozen(largest), kv_bytes_per_sequence=per_sequence,
        usable_memory=plan.usable,
        beyond_positions=_frozen(t >= positions if positions else False),
        assumptions=plan.assumptions, chain_time_s=_frozen(plan.chain),
        latency_profile=plan.profile_label, device=accelerator,
    )


def _max_batch(plan: _Plan, context: float) -> float:
    """``limits._max_batch`` (planning's ``max_batch`` rule) at one context, as a float."""
    weights, usable = plan.weight_bytes, plan.usable
    if context <= 0:
        return math.inf if weights <= usable else 0.0
    positive = max(context, 1.0)  # planning's max_batch holds at least one token per sequence
    per_sequence = 1 * plan.m_kv * plan.attended(positive)
    real = (usable - weights) / per_sequence if per_sequence > 0 else math.inf
    batch = max(real, 0.0)
    batch = float(math.floor(batch)) if math.isfinite(batch) else batch
    if weights + batch * per_sequence > usable:
        batch = max(batch - 1, 0.0)
    if weights + (batch + 1) * per_sequence <= usable:
        batch = batch + 1
    return float(min(batch, 9007199254740992.0))


def _frozen(value) -> np.ndarray:
    """A read-only 0-d array, as ``np.broadcast_to(value, ())`` gives."""
    array = np.array(value)
    array.flags.writeable = False
    return array
