"""The scalar fast path of :func:`~roofline_decode.decode_floor` (issue 18).

A notebook loop calls ``decode_floor`` once per configuration with one batch and one context.
The general path builds 0-d arrays and re-derives every model and device term on each call;
here the terms that depend only on the model, or on (model, accelerator, sparse, routing,
latency profile), are computed once (:class:`_Plan`, cached by the identity of the frozen spec
objects), the terms that depend on the context alone (critical batch, largest batch, KV bytes
per sequence) once per context (a bounded memo in the plan), and the point itself is evaluated
with the *same formula functions* on Python floats.  Additions, products and quotients are
IEEE operations whatever the container, and the one transcendental (the routed-expert power
q**B) goes through the same numpy ufunc, so every field equals the general path's bit for bit,
with the same types and flags (``tests/foundation/test_fast_path.py`` compares them on random
models, devices and points).

The result is assembled without the dataclass ``__init__`` (a frozen dataclass sets each of its
fields through ``object.__setattr__``: a third of a call's time); the fields are the same,
which the tests check (every field, nothing else).

Only the common case is taken: a real batch and context in range, ``routing`` by name, its
context within the model's positions, some compute peak known, and full or sliding attention
only (chunked, sparse and recurrent layers take the general path).  Anything
else (an array, a measured expert count, a context beyond the positions, bad input) returns ``None``
and the general path answers, with its notes and its error messages.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from .peaks import group_peaks
from .results import DecodeFloor
from .step_timing import chain_time
from ..formulas.flops import matmul_flops
from ..formulas.roofline import compute_time, memory_time, ridge_point
from .limits import fit_note
from .routing import Routing
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .traffic import layer_terms, matrix_parameters_per_token, streamed_terms

if TYPE_CHECKING:
    from ..specs.latency import LatencyProfile

__all__ = ["scalar_floor", "clear_plans"]

_PlanKey = tuple[int, int, bool, str, int]
_PLANS: dict[_PlanKey, _Plan] = {}
_MAX_PLANS = 256
_MAX_CONTEXTS = 4096  # context-only terms remembered per plan
_SCALARS = (int, float, np.floating, np.integer)
#: whether DecodeFloor's __init__ does more than set its fields (then the fast path calls it)
_CHECKED_INIT = hasattr(DecodeFloor, "__post_init__")


def clear_plans() -> None:
    """Forget every cached plan (they are rebuilt on the next call)."""
    _PLANS.clear()


def _shared(value: Any) -> np.ndarray:
    """A read-only 0-d array (as ``np.broadcast_to(value, ())`` gives) that results may share:
    a view of a read-only base, so no holder can make it writeable again."""
    base = np.array(value)
    base.flags.writeable = False
    return base.view()


class _AtContext:
    """The terms of a plan at one context (they do not depend on the batch)."""

    __slots__ = ("per_sequence", "capacity", "critical", "largest")

    def __init__(self, per_sequence: Any, capacity: float, critical: np.ndarray, largest: np.ndarray) -> None:
        self.per_sequence, self.capacity, self.critical, self.largest = per_sequence, capacity, critical, largest


class _Plan:
    """Everything of a floor that does not depend on the batch and the context."""

    def __init__(self, model: Model, accelerator: Accelerator, sparse: bool, routing: Routing,
                 profile: LatencyProfile | None) -> None:
        from .capacity import usable_memory

        self.keep = (model, accelerator, routing, profile)  # the ids in the key stay valid
        self.model, self.routing = model, routing
        self.peaks = peaks = group_peaks(model, accelerator, sparse)
        self.has_peak: bool = peaks.bounded
        self.uniform: bool = peaks.uniform
        self.single_peak: float = next(iter(peaks.peaks.values())) if self.uniform and self.has_peak else math.nan
        self.peak_list = [(g, peak) for g, peak in peaks.peaks.items() if not np.isnan(peak)]
        self.summary = peaks.summary()
        self.bandwidth: float = accelerator.memory_bandwidth
        self.streamed: tuple[float, float, float] = streamed_terms(model)
        self.b_e: float = model.routed_expert_format.bytes_per_element
        layers, self.m_kv, self.experts = layer_terms(model)
        self.layers: tuple[int, int, float] = layers
        self.is_moe: bool = model.is_moe
        # weight_bytes_read skips the expert term when L_moe is the int 0
        self.dense = isinstance(self.experts[0], int) and self.experts[0] == 0
        self.row_bytes: float = model.embedding_row_bytes
        self.streamed_bytes: float = model.streamed_weight_bytes
        self.expert_layer_bytes = self.b_e * model.num_moe_layers
        self.expert_parameters: float = model.expert_parameters
        self.matmul: float = model.matmul_parameters_per_token
        self.group_counts = matrix_parameters_per_token(model)
        self.num_heads: int = model.num_heads
        self.width: float = model.score_value_width
        self.vocab: int = model.vocab_size
        self.num_layers: int = model.num_attention_layers  # layers that write KV
        # chunked, sparse and recurrent layers (estimate.mixer_terms): the general path answers
        self.mixers = bool(model.num_chunked_layers or model.num_sparse_layers or model.num_recurrent_layers)
        self.fixed_state: float = model.cache_residency[3]
        self.chain = chain_time(model, profile)
        notes = peaks.notes
        if profile is not None:
            notes = (*notes, f"serial chain from latency profile {profile.label!r} "
                             f"({profile.operations_per_layer:g} operations per layer at "
                             f"{profile.operation_latency * 1e6:.3g} us): "
                             "an estimate for that runtime, not a physical floor")
        self.assumptions = notes + tuple(n for n in (routing.note(model),) if n)
        self.usable: float = usable_memory(accelerator)
        self.weight_bytes: float = model.weight_bytes
        # weights larger than the device: every point's fit note is this one sentence
        self.weights_note = (fit_note(model, accelerator.id or accelerator.name, np.array(1.0), np.array(0.0),
                                       np.array(0.0), np.array(False), self.usable)
                             if self.weight_bytes > self.usable else None)
        self.positions: int | None = model.max_position_embeddings
        self.profile_label = None if profile is None else profile.label
        self.k: int = model.num_experts_per_token
        self.num_experts: int = model.num_experts
        self.device = accelerator
        self.at: dict[float, _AtContext] = {}
        # fields every result of this plan shares: immutable values, and read-only arrays
        self.chain_array = _shared(self.chain)
        self.within_positions = _shared(False)
        self.no_experts = _shared(0.0)
        self.names = (model.name, accelerator.id or accelerator.name, model.weight_format.name, model.kv_format.name)
        # the uniform-routing identity k/E of experts_read
        self.effective_experts: int = self.num_experts if routing.kind == "uniform" else self.k
        # one peak: the effective peak and the ridge do not depend on the point
        self.ridge = float(ridge_point(self.single_peak, self.bandwidth)) if self.uniform else math.nan

    # --- the general path's terms, on floats -------------------------------------------------

    def experts_read(self, batch: float) -> Any:
        """``Routing.experts_read`` at one batch (same ufunc for the power); None for a dense model."""
        if not self.is_moe:
            return None
        effective = self.effective_experts
        return effective * (1 - np.power(1 - self.k / effective, batch))

    def attended(self, context: float) -> float:
        """``formulas.attended_positions``: G·T + S·min(T, W) (numpy's minimum gives a float)."""
        num_global, num_sliding, window = self.layers
        return num_global * context + num_sliding * float(context if context <= window else window)

    def traffic(self, batch: float, context: float, experts_read: Any) -> tuple[Any, float, float, float, float]:
        """``estimate.step_traffic`` on floats: the formulas' operations in their order
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

    def compute_time(self, flops: float, batch: float, scores: float) -> Any:
        """``Peaks.compute_time`` (share 1) on floats: FLOPs / F for one peak, else the sum
        over the groups with a peak (each group's FLOPs as ``GroupFlops`` computes them)."""
        if self.uniform:
            return compute_time(flops, self.single_peak)
        counts = self.group_counts
        return 0.0 + sum(compute_time(scores if g == "attention_scores" else matmul_flops(batch, counts[g]), peak)
                         for g, peak in self.peak_list)

    def effective_peak(self, flops: float, compute: Any) -> Any:
        if self.uniform:
            return self.single_peak
        return flops / compute if compute > 0 else math.nan

    def context_terms(self, context: float) -> _AtContext:
        """The terms at ``context`` that do not depend on the batch (computed once per context)."""
        # planning.capacity.kv_bytes_per_sequence: formulas.kv_cache_bytes at B = 1, plus the fixed state
        per_sequence = np.asarray(float(1 * self.m_kv * self.attended(context)), dtype=float) + self.fixed_state
        if per_sequence > 0:
            capacity = (self.usable - self.weight_bytes) / float(per_sequence)
        else:
            capacity = np.inf if self.weight_bytes <= self.usable else -np.inf
        if not self.is_moe:
            critical = self.critical_batch(context, None)
        elif self.routing.kind != "uniform":
            critical = self.critical_batch(context, self.experts_read(1.0))
        else:
            critical = self.moe_critical_batch(context)
        terms = _AtContext(per_sequence, capacity, _shared(critical), _shared(_max_batch(self, context)))
        if len(self.at) >= _MAX_CONTEXTS:
            self.at.clear()
        self.at[context] = terms
        return terms

    def critical_batch(self, context: float, fixed_experts: Any) -> float:
        """``critical_batch.closed_form_critical_batch`` at one context (closed form), as a float."""
        _, kv_read, kv_write, flops, scores = self.traffic(1.0, context, self.experts_read(1.0))
        peak = self.effective_peak(flops, self.compute_time(flops, 1.0, scores))
        kv_per_sequence = kv_read + kv_write
        row, vocab = self.row_bytes, self.vocab
        fixed = self.streamed_bytes
        if fixed_experts is not None:
            fixed = fixed + (self.expert_layer_bytes * fixed_experts * self.expert_parameters)
        below = _critical(fixed, kv_per_sequence + row, flops, peak, self.bandwidth)
        above = _critical(fixed + vocab * row, kv_per_sequence, flops, peak, self.bandwidth)
        return below if below <= vocab else above

    def moe_critical_batch(self, context: float) -> float:
        """``critical_batch.moe_critical_batch`` at one context: the same Newton iteration, operation
        for operation on floats (the power through the same ufunc), so the same iterates."""
        _, kv_read, kv_write, flops, scores = self.traffic(1.0, context, self.experts_read(1.0))
        t_sequence = self.compute_time(flops, 1.0, scores)
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


def _critical(fixed: Any, per_sequence_bytes: Any, flops: Any, peak: Any, bandwidth: float) -> float:
    """``formulas.critical_batch`` on floats: its ratio where the margin is positive, else inf."""
    margin = flops / peak - per_sequence_bytes / bandwidth
    return float(fixed / bandwidth) / float(margin) if margin > 0 else math.inf


class _PointGroups(Mapping[str, np.float64]):
    """FLOPs per compute group at one point, each computed on first use (as ``GroupFlops``
    does on a grid): a model whose groups share one peak never needs them."""

    __slots__ = ("_batch", "_counts", "_scores", "_done")

    def __init__(self, batch: float, counts: dict[str, float], scores: float) -> None:
        self._batch, self._counts, self._scores = batch, counts, scores
        self._done: dict[str, np.float64] | None = None

    def _all(self) -> dict[str, np.float64]:
        if self._done is None:
            done = {group: np.float64(matmul_flops(self._batch, count)) for group, count in self._counts.items()}
            done["attention_scores"] = np.float64(self._scores)
            self._done = done
        return self._done

    def __getitem__(self, group: str) -> np.float64:
        return self._all()[group]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._counts) + 1

    def __repr__(self) -> str:
        return repr(self._all())


def _plan(model: Model, accelerator: Accelerator, sparse: bool, routing: Routing,
          profile: LatencyProfile | None) -> _Plan:
    key = (id(model), id(accelerator), bool(sparse), routing.kind, id(profile))
    plan = _PLANS.get(key)
    if plan is None or plan.keep[0] is not model or plan.keep[1] is not accelerator or plan.keep[3] is not profile:
        if len(_PLANS) >= _MAX_PLANS:
            _PLANS.clear()
        plan = _PLANS[key] = _Plan(model, accelerator, sparse, routing, profile)
    return plan


def _real(value: Any, minimum: float) -> float | None:
    """``value`` as a float if it is a plain real number in [minimum, 2**53], else None."""
    kind = type(value)
    if kind is not int and kind is not float:  # the common cases first
        if not isinstance(value, _SCALARS) or isinstance(value, (bool, np.bool_)):
            return None
    try:
        x = float(value)
    except OverflowError:
        return None
    return x if minimum <= x <= 9007199254740992.0 else None


def _larger(a: Any, b: Any) -> Any:
    """``np.maximum`` of two floats: the larger one, NaN if either is NaN."""
    return a if a >= b or a != a else b


def scalar_floor(model: Model, accelerator: Accelerator, batch: Any, context: Any, sparse: bool, routing: Routing,
                 profile: LatencyProfile | None) -> DecodeFloor | None:
    """The :class:`~roofline_decode.DecodeFloor` of one point, or None where the general path
    must answer (see the module docstring).  ``model`` and ``accelerator`` are loaded specs,
    ``routing`` a resolved named routing, ``profile`` a loaded profile or None."""
    b, t = _real(batch, 1.0), _real(context, 0.0)
    if b is None or t is None or routing.measured is not None:
        return None
    plan = _plan(model, accelerator, sparse, routing, profile)
    if not plan.has_peak or plan.mixers:
        return None
    # beyond the positions the general path words the note
    if plan.positions and t >= plan.positions:
        return None
    at = plan.at.get(t)
    if at is None:
        at = plan.context_terms(t)
    fits = np.True_ if b <= at.capacity else np.False_  # grid_limits: np.float64(b) <= capacity
    notes = plan.assumptions
    if not fits:
        notes = notes + (plan.weights_note or fit_note(plan.model, plan.names[1], np.array(b), np.array(t),
                                                        at.per_sequence, np.array(fits), plan.usable,
                                                        plan.weight_bytes),)
    experts = plan.experts_read(b)
    weight, kv_read, kv_write, flops, scores = plan.traffic(b, t, experts)
    bandwidth = plan.bandwidth
    bytes_total = weight + kv_read + kv_write
    memory = memory_time(bytes_total, bandwidth)
    compute = plan.compute_time(flops, b, scores)
    step = _larger(_larger(memory, compute), plan.chain)  # formulas.step_time, then the chain
    if plan.uniform:
        peak, ridge = float(plan.single_peak), plan.ridge
    else:
        peak = plan.effective_peak(flops, compute)
        peak, ridge = float(peak), float(ridge_point(peak, bandwidth))
    names = plan.names
    values = {  # every field of DecodeFloor (tests/foundation/test_fast_path.py), in its order
        "model": names[0], "accelerator": names[1], "compute_precision": plan.summary,
        "weight_bytes": np.float64(weight), "kv_read_bytes": np.float64(kv_read),
        "kv_write_bytes": np.float64(kv_write), "bytes_total": np.float64(bytes_total), "flops": np.float64(flops),
        "memory_time_s": np.float64(memory), "compute_time_s": np.float64(compute),
        "weight_format": names[2], "kv_format": names[3], "batch": np.array(b), "context": np.array(t),
        "step_time_s": np.float64(step), "tokens_per_s": np.float64(b / step),
        "per_sequence_tokens_per_s": np.float64(1.0 / step), "arithmetic_intensity": np.float64(flops / bytes_total),
        "ridge_point": ridge, "critical_batch": at.critical, "memory_bandwidth": bandwidth, "peak_flops": peak,
        "spec": model, "compute_precisions": dict(plan.peaks.precisions), "group_peak_flops": dict(plan.peaks.peaks),
        "group_flops": _PointGroups(b, plan.group_counts, scores), "notes": notes, "routing": routing.kind,
        "experts_read": plan.no_experts if experts is None else _shared(experts), "_routing": routing,
        "fits": fits, "max_batch": at.largest, "kv_bytes_per_sequence": at.per_sequence,
        "usable_memory": plan.usable, "beyond_positions": plan.within_positions,
        "assumptions": plan.assumptions, "chain_time_s": plan.chain_array,
        "latency_profile": plan.profile_label, "device": accelerator,
    }
    if _CHECKED_INIT:  # a __post_init__ that checks the fields: let it run
        return DecodeFloor(**values)
    result = object.__new__(DecodeFloor)
    result.__dict__.update(values)
    return result


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
