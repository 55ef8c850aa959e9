"""Speculative decoding on a :class:`~roofline_decode.Parallel` layout of several devices.

:func:`~roofline_decode.floors.speculative.speculative_floor` (``parallel=``) times the plain
step, the draft steps and the verify step on the busiest device of the layout
(:func:`~roofline_decode.floors.layout.layout_floor`: tensor, expert, attention-DP and pipeline
splits, collectives over the links, the strict floor).  The verify step's bytes and FLOPs are
:func:`~roofline_decode.floors.verify.verify_traffic`'s, split as a prefill chunk of B·(k + 1)
tokens is split (:func:`~roofline_decode.floors.layout_traffic.step_share`); its routed experts
are those the B·(k + 1) tokens touch.  A draft model runs on its own layout (``draft_parallel``,
default the target's); MTP heads are the target's layers and run on the target's.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import formulas as f
from ..errors import InvalidValueError
from .decode import decode_floor
from .layout import Options, check_layout, layout_floor
from .layout_traffic import step_share
from .prefill import routed_experts
from .routing import resolve_routing
from .traffic import streamed_terms
from .verify import verify_traffic
from .capacity import kv_bytes_per_sequence

__all__ = ["checked_draft_layout", "layout_plain", "layout_draft_times", "layout_verify_times",
           "layout_critical_batch"]


def checked_draft_layout(draft: Any, layout: Any, draft_parallel: Any) -> Any:
    """The draft's layout (``draft_parallel``, default ``layout``) checked against the draft model;
    a refusal names ``draft_parallel``."""
    from .layout import layout_of

    chosen = layout if draft_parallel is None else layout_of(draft_parallel)
    if chosen is None:
        raise InvalidValueError("draft_parallel", draft_parallel, "a Parallel layout or its text such as 'tp2'")
    try:
        check_layout(draft, chosen)
    except InvalidValueError as error:
        raise InvalidValueError("draft_parallel", str(chosen), f"a layout the draft {draft.name} takes: "
                                f"{error.field}={error.value} ({error.allowed})") from None
    return chosen


def layout_plain(model: Any, accelerator: Any, layout: Any, batch: np.ndarray, context: np.ndarray, sparse: bool,
                 routing: str) -> np.ndarray:
    """Plain decode steps on the layout [s]."""
    return np.asarray(decode_floor(model, accelerator, batch, context, sparse=sparse, routing=routing,
                                   parallel=layout).step_time_s)


def layout_draft_times(draft: Any, accelerator: Any, layout: Any, batch: np.ndarray, context: np.ndarray,
                       k_max: int, sparse: bool, routing: str) -> tuple[np.ndarray, ...]:
    """Cumulative (memory, compute, communication, floor) of 1 … k_max draft steps (last axis) on
    the draft's layout, steps at contexts T + i."""
    offsets = np.arange(k_max, dtype=float)
    steps = decode_floor(draft, accelerator, batch[..., None], context[..., None] + offsets, sparse=sparse,
                         routing=routing, parallel=layout)
    comm = getattr(steps, "communication_time_s", np.zeros(np.shape(steps.step_time_s)))  # one device: none
    return tuple(np.cumsum(np.asarray(value), axis=-1) for value in (
        steps.memory_time_s, steps.compute_time_s, comm, steps.step_time_s))


def layout_verify_times(model: Any, accelerator: Any, layout: Any, batch: Any, context: Any, k: Any, sparse: bool,
                        routing: str) -> tuple[np.ndarray, ...]:
    """(memory, compute, communication, floor, bound) of the verify step on the layout."""
    t = verify_traffic(model, batch, context, k, routing)
    tokens = batch * (k + 1)
    _, row, b_w = streamed_terms(model)
    experts: Any = 0.0
    if model.is_moe:
        experts = f.weight_bytes_read(tokens, 0, 0, model.vocab_size, b_w, *routed_experts(model, routing),
                                      model.expert_parameters, model.routed_expert_format.bytes_per_element)
    rows = f.weight_bytes_read(tokens, 0, row, model.vocab_size, b_w)
    share = step_share(t, tokens=tokens, kv_resident=batch * kv_bytes_per_sequence(model, context + k),
                       expert_bytes=experts, gathered_bytes=rows, dp=layout.attention_dp)
    shape = np.broadcast(batch, context, k).shape
    r = layout_floor(model, accelerator, layout, share, batch=np.broadcast_to(batch, shape),
                     context=np.broadcast_to(context, shape), tokens=tokens, logits_tokens=tokens,
                     options=Options(sparse=sparse), routing=resolve_routing(routing, model), step="verify")
    return (np.asarray(r.memory_time_s), np.asarray(r.compute_time_s), np.asarray(r.communication_time_s),
            np.asarray(r.step_time_s), np.asarray(r.bound))


def layout_critical_batch(model: Any, accelerator: Any, layout: Any, context: np.ndarray, sparse: bool,
                          routing: str) -> np.ndarray:
    """Smallest whole batch at which plain decoding on the layout is compute-bound (inf: none up to
    2^20): powers of two, then bisection."""
    def bound(b: np.ndarray) -> np.ndarray:
        r = decode_floor(model, accelerator, b, context, sparse=sparse, routing=routing, parallel=layout)
        return np.asarray(r.compute_time_s) >= np.asarray(r.memory_time_s)

    high = np.ones(np.shape(context))
    for _ in range(20):
        below = ~bound(high)
        if not below.any():
            break
        high = np.where(below, high * 2, high)
    found = bound(high)
    low = np.where(high > 1, high / 2, 0.0)
    for _ in range(24):
        open_ = found & (high - low > 1)
        if not open_.any():
            break
        mid = np.where(open_, np.floor((low + high) / 2), high)
        ok = bound(mid)
        high, low = np.where(open_ & ok, mid, high), np.where(open_ & ~ok, mid, low)
    return np.where(found, high, np.inf)
