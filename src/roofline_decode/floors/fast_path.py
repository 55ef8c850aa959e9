"""The scalar fast path of :func:`~roofline_decode.decode_floor` (issue 18).

A notebook loop calls ``decode_floor`` once per configuration with one batch and one context.
The general path builds arrays and re-derives every model and device term on each call; here
what depends only on (model, accelerator, sparse, routing, latency profile) is derived once
(:class:`_Plan`, cached by the identity of the frozen spec objects: the model's
:class:`~roofline_decode.floors.traffic.StepCoefficients`, the peaks, the serial chain, the
notes, the usable memory), what depends on the context alone (critical batch, largest batch, KV
bytes per sequence) once per context (a bounded memo in the plan), and the point itself on
Python floats.  No term is written here: each comes from the function the general path calls
(:func:`~roofline_decode.floors.traffic.step_terms`,
:func:`~roofline_decode.floors.step_timing.step_times`,
:func:`~roofline_decode.floors.critical_batch.decode_critical_batch`,
:func:`~roofline_decode.floors.limits.context_limits`).  Those run the formulas' operations in
the same order on floats as on arrays (IEEE arithmetic whatever the container; the one
transcendental, the routed-expert power, goes through numpy's ufunc for both), so every field
equals the general path's bit for bit, with the same types and flags
(``tests/foundation/test_fast_path.py`` compares them on random models, devices and points).

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

from typing import TYPE_CHECKING, Any, cast

import numpy as np

from .critical_batch import decode_critical_batch
from .limits import context_limits, fit_note
from .peaks import group_peaks
from .results import DecodeFloor
from .routing import Routing
from .step_timing import chain_time, step_assumptions, step_times
from .traffic import GroupFlops, step_coefficients, step_terms
from ..specs.accelerator import Accelerator
from ..specs.model import Model

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
        self.model, self.device, self.routing = model, accelerator, routing
        self.peaks = peaks = group_peaks(model, accelerator, sparse)
        self.coefficients = step_coefficients(model)
        self.bandwidth: float = accelerator.memory_bandwidth
        # no compute peak, or chunked, sparse and recurrent layers (traffic.mixer_terms): the general path answers
        self.declined = not peaks.bounded or bool(model.num_chunked_layers or model.num_sparse_layers
                                                   or model.num_recurrent_layers)
        self.assumptions = step_assumptions(model, peaks, routing, profile)
        self.usable: float = usable_memory(accelerator)
        self.weight_bytes: float = model.weight_bytes
        self.names = (model.name, accelerator.id or accelerator.name, model.weight_format.name, model.kv_format.name)
        # weights larger than the device: every point's fit note is this one sentence
        self.weights_note = (fit_note(model, self.names[1], np.array(1.0), np.array(0.0), np.array(0.0),
                                      np.array(False), self.usable) if self.weight_bytes > self.usable else None)
        self.positions: int | None = model.max_position_embeddings
        self.profile_label = None if profile is None else profile.label
        self.summary = peaks.summary()
        self.at: dict[float, _AtContext] = {}
        # fields every result of this plan shares: immutable values, and read-only arrays
        self.chain = _shared(chain_time(model, profile))
        self.within_positions = _shared(False)
        self.no_experts = _shared(0.0)

    def context_terms(self, context: float) -> _AtContext:
        """The terms at ``context`` that do not depend on the batch (computed once per context,
        by the general path's functions)."""
        limits = context_limits(self.model, self.device, context, self.usable, self.weight_bytes)
        critical = decode_critical_batch(self.model, context, self.peaks, self.bandwidth, self.routing,
                                         self.coefficients)
        terms = _AtContext(limits.kv_bytes_per_sequence, float(limits.capacity), _shared(critical),
                           _shared(limits.max_batch))
        if len(self.at) >= _MAX_CONTEXTS:
            self.at.clear()
        self.at[context] = terms
        return terms


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


def scalar_floor(model: Model, accelerator: Accelerator, batch: Any, context: Any, sparse: bool, routing: Routing,
                 profile: LatencyProfile | None) -> DecodeFloor | None:
    """The :class:`~roofline_decode.DecodeFloor` of one point, or None where the general path
    must answer (see the module docstring).  ``model`` and ``accelerator`` are loaded specs,
    ``routing`` a resolved named routing, ``profile`` a loaded profile or None."""
    b, t = _real(batch, 1.0), _real(context, 0.0)
    if b is None or t is None or routing.measured is not None:
        return None
    plan = _plan(model, accelerator, sparse, routing, profile)
    # beyond the positions the general path words the note
    if plan.declined or (plan.positions and t >= plan.positions):
        return None
    at = plan.at.get(t)
    if at is None:
        at = plan.context_terms(t)
    fits = np.True_ if b <= at.capacity else np.False_  # grid_limits: np.float64(b) <= capacity
    notes = plan.assumptions
    if not fits:
        notes = notes + (plan.weights_note or fit_note(model, plan.names[1], np.array(b), np.array(t),
                                                        at.per_sequence, np.array(fits), plan.usable,
                                                        plan.weight_bytes),)
    coefficients = plan.coefficients
    experts = routing.experts_read(model, b) if coefficients.is_moe else None
    terms = step_terms(coefficients, b, t, experts)
    # numpy floats, as the general path's compact() makes of a 0-d grid
    groups = GroupFlops(cast(np.ndarray, np.float64(b)), coefficients.group_parameters,
                        cast(np.ndarray, np.float64(terms.score_flops)), ())
    times = step_times(terms, groups, b, plan.peaks, plan.bandwidth, plan.chain)
    names = plan.names
    values = {  # every field of DecodeFloor (tests/foundation/test_fast_path.py), in its order
        "model": names[0], "accelerator": names[1], "compute_precision": plan.summary,
        "weight_bytes": np.float64(terms.weight_bytes), "kv_read_bytes": np.float64(terms.kv_read_bytes),
        "kv_write_bytes": np.float64(terms.kv_write_bytes), "bytes_total": np.float64(times.bytes_total),
        "flops": np.float64(terms.flops), "memory_time_s": np.float64(times.memory_time),
        "compute_time_s": np.float64(times.compute_time), "weight_format": names[2], "kv_format": names[3],
        "batch": np.array(b), "context": np.array(t), "step_time_s": np.float64(times.step_time),
        "tokens_per_s": np.float64(times.tokens_per_s),
        "per_sequence_tokens_per_s": np.float64(times.per_sequence_tokens_per_s),
        "arithmetic_intensity": np.float64(times.arithmetic_intensity), "ridge_point": times.ridge_point,
        "critical_batch": at.critical, "memory_bandwidth": plan.bandwidth, "peak_flops": times.peak_flops,
        "spec": model, "compute_precisions": dict(plan.peaks.precisions), "group_peak_flops": dict(plan.peaks.peaks),
        "group_flops": groups, "notes": notes, "routing": routing.kind,
        "experts_read": plan.no_experts if experts is None else _shared(experts), "_routing": routing,
        "fits": fits, "max_batch": at.largest, "kv_bytes_per_sequence": at.per_sequence,
        "usable_memory": plan.usable, "beyond_positions": plan.within_positions,
        "assumptions": plan.assumptions, "chain_time_s": plan.chain,
        "latency_profile": plan.profile_label, "device": accelerator,
    }
    if _CHECKED_INIT:  # a __post_init__ that checks the fields: let it run
        return DecodeFloor(**values)
    result = object.__new__(DecodeFloor)
    result.__dict__.update(values)
    return result
