"""The request floor on a :class:`~roofline_decode.Parallel` layout of several devices.

:func:`~roofline_decode.floors.request.request_floor` (``parallel=``) times its prefill and each
of its decode steps on the busiest device of the layout
(:func:`~roofline_decode.prefill_floor` and :func:`~roofline_decode.decode_floor` with
``parallel=``), keeps the bytes and FLOPs of the whole model (what every layout moves and
computes at least, the energy floor's inputs), and checks the fit per device.

A prefix shared by the batch and not yet cached is prefilled once: its prefill (one sequence)
and the suffixes' (the batch, the prefix cached) are each a part of the whole prefill, so the
TTFT floor is the longer of the two on the layout (a lower bound; one pass over both would
also share their weight reads).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import InvalidValueError
from .capacity import usable_memory
from .decode import decode_floor
from .layout import check_layout
from .layout_traffic import decode_share, rank_traffic
from .prefill import prefill_floor
from .routing import resolve_routing

__all__ = ["layout_ttft", "layout_steps", "layout_fit", "checked_layout", "LAYOUT_PREFIX_NOTE"]

#: The note of a request on a layout whose batch shares an uncached prefix.
LAYOUT_PREFIX_NOTE = ("on a parallel layout the shared prefix's prefill (once) and the suffixes' are timed apart and the "
                      "TTFT floor is the longer (a lower bound: one pass would also share their weight reads); the "
                      "fit counts each sequence's whole cache")


def layout_ttft(model: Any, accelerator: Any, layout: Any, batch: float, prompt: float, chunk: float, cached: float,
                shared: float, routing: str) -> tuple[float, str]:
    """(TTFT floor [s], bound) of the prefill of ``batch`` prompts on ``layout``."""
    if shared <= cached:
        r = prefill_floor(model, accelerator, prompt, batch, chunk=min(chunk, prompt - cached), cached=cached,
                          routing=routing, parallel=layout)
        return float(r.step_time_s), str(r.bound)
    head = prefill_floor(model, accelerator, shared, 1, chunk=min(chunk, shared - cached), cached=cached,
                         routing=routing, parallel=layout)
    tail = prefill_floor(model, accelerator, prompt, batch, chunk=min(chunk, prompt - shared), cached=shared,
                         routing=routing, parallel=layout)
    longer = head if float(head.step_time_s) >= float(tail.step_time_s) else tail
    return float(longer.step_time_s), str(longer.bound)


def layout_steps(model: Any, accelerator: Any, layout: Any, batch: float, contexts: np.ndarray, sparse: bool,
                 routing: str) -> tuple[np.ndarray, np.ndarray]:
    """(step floors [s], compute-bound flags) of decode steps at ``contexts`` on ``layout``."""
    r = decode_floor(model, accelerator, batch, contexts, sparse=sparse, routing=routing, parallel=layout)
    return np.asarray(r.step_time_s), np.asarray(r.bound) == "compute"


def layout_fit(model: Any, accelerator: Any, layout: Any, batch: np.ndarray, end: np.ndarray,
               routing: str) -> tuple[np.ndarray, np.ndarray]:
    """(fits, largest batch) of requests whose caches at context ``end`` sit beside the weights on
    every device of ``layout`` (usable memory per device; attention-DP groups hold their own
    sequences, pipeline stages their layers)."""
    share = decode_share(model, np.ones(np.shape(end)), end, resolve_routing(routing, model), layout.attention_dp)
    traffic = rank_traffic(model, share, layout)
    room = usable_memory(accelerator) - traffic.weight_bytes / layout.pp
    per_sequence = np.asarray(traffic.kv_bytes, dtype=float) / layout.pp
    with np.errstate(divide="ignore", invalid="ignore"):
        largest = np.where(per_sequence > 0, np.floor(max(room, 0.0) / np.where(per_sequence > 0, per_sequence, 1.0)),
                           np.inf if room >= 0 else 0.0)
    return batch * per_sequence <= room, largest


def checked_layout(model: Any, layout: Any, cascade: bool) -> Any:
    """``layout`` checked against ``model``; a cascade kernel is refused on it."""
    check_layout(model, layout)
    if cascade:
        raise InvalidValueError("cascade", True, "False with a parallel layout of several devices (a shared-prefix "
                                "kernel is timed on one device only)")
    return layout
