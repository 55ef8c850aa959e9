"""Serving rate: the highest request rate a deployment sustains within a per-token target.

The request convention of :mod:`roofline_decode.floors.request` (DESIGN.md §4b): the prefill
yields a request's first token, then it decodes N_out − 1 tokens at contexts P … P + N_out − 2.
Continuous batching admits a request into a free slot and keeps it for those N_out − 1 decode
steps.  In steady state Little's law ties concurrency B, arrival rate λ and step time:

    B = λ · (N_out − 1) · T_step(B)        =>        λ(B) = B / ((N_out − 1) · T_step(B))

λ(B) is the aggregate decode tokens/s divided by N_out − 1, which never falls as B grows (each added
sequence adds at most its own KV bytes to a step that already reads the weights), so the
highest rate that meets a target is reached at the largest concurrency B whose step time
meets the target and whose KV caches fit.

Sequences in steady state sit at every point of their decode, so the mean context is
``prompt_length + (output_length − 2) / 2`` (the mean of P … P + N_out − 2); KV bytes are
linear in the context, so both the
resident cache and the bytes read per step are those of every sequence at that mean.  (For
sliding-window layers they are min(T, W), which is concave: at the mean context they are at
least the true mean, so for such models the rate is slightly conservative when contexts cross W.)
Prefill is not counted (decode-only servers, or prefill on other devices):
:func:`~roofline_decode.floors.serving.serving_floor` counts the prompts that ride along the
decode steps, queueing, and disaggregated prefill, as the serving benchmarks measure them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from ..errors import InvalidValueError
from ..floors.request import decode_steps, mean_decode_context
from ..checks import check_slo_ms, renamed, whole_number
from ..floors.capacity import DEFAULT_RESERVE, usable_memory
from ..floors.parallel import DEFAULT_COLLECTIVE_LATENCY, device_traffic, tensor_parallel_floor
from .layouts import layout_capacity, layout_decode_floor, planned_layout

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["ServingRate", "serving_rate"]


@dataclass(frozen=True)
class ServingRate:
    """Steady state of continuous batching at the highest request rate meeting the target."""

    model: str
    accelerator: str
    num_devices: int
    output_length: int
    mean_context: float
    concurrency: int
    step_time_s: float
    tokens_per_s: float
    requests_per_s: float
    limited_by: str
    max_concurrency: int
    slo_ms: float | None
    curve_concurrency: np.ndarray
    curve_requests_per_s: np.ndarray
    parallel: str | None = None  # the layout's text when one was given (``parallel=``)

    @property
    def slo_ms_per_token(self) -> float | None:
        """Deprecated name of :attr:`slo_ms`."""
        import warnings

        warnings.warn("slo_ms_per_token is deprecated; use slo_ms", DeprecationWarning, stacklevel=2)
        return self.slo_ms

    def __str__(self) -> str:
        return (
            f"{self.model} on {self.num_devices} x {self.accelerator}"
            + (f" ({self.parallel})" if self.parallel else "") + f": {self.requests_per_s:.4g} requests/s of "
            f"{self.output_length} tokens ({self.tokens_per_s:.4g} tokens/s) at concurrency {self.concurrency}, "
            f"{self.step_time_s * 1e3:.4g} ms per token; limited by {self.limited_by}"
        )


def serving_rate(model: Model | str, accelerator: Accelerator | str, output_length: int, prompt_length: int = 0, slo_ms: float | None = None,
                 *, num_devices: int = 1, reserve: float = DEFAULT_RESERVE, reserve_fraction: float = 0.0,
                 collective_latency: float = DEFAULT_COLLECTIVE_LATENCY, link_bandwidth: float | None = None,
                 max_concurrency: int | None = None, slo_ms_per_token: float | None = None,
                 parallel: Parallel | str | None = None, node_size: int | None = None,
                 scale_out_bandwidth: float | None = None) -> ServingRate:
    """Highest request rate (Little's law) within ``slo_ms`` and device memory.

    Parameters
    ----------
    model, accelerator : Model/str, Accelerator/str
    output_length : int
        Tokens generated per request N_out, >= 2: the prefill yields the first, then N_out − 1
        decode steps hold a batch slot (the request convention).
    prompt_length : int
        Prompt tokens per request (cached before decode starts).
    slo_ms : float, optional
        Per-token target [ms]; without it the rate is limited by memory capacity alone.
    num_devices : int
        Tensor-parallel degree of one replica (a thin wrapper of ``parallel=Parallel(tp=n)``:
        the same numbers).
    reserve, reserve_fraction
        The usable-memory rule per device.
    collective_latency, link_bandwidth
        Tensor-parallel options.
    max_concurrency : int, optional
        Cap on concurrent requests (a server's max_num_seqs).
    parallel : Parallel or str, optional
        The layout of one replica instead of ``num_devices`` (which must then stay 1): the
        busiest device's step and memory (:mod:`roofline_decode.planning.layouts`);
        ``node_size`` and ``scale_out_bandwidth`` override its links.  Concurrency counts the
        replica's sequences (all attention-DP groups together).

    Examples
    --------
    Llama-3.1-8B on one H100 SXM, 1000-token prompts and 500-token answers, 20 ms per token:

    >>> r = serving_rate("llama-3.1-8b", "h100-sxm", 500, 1000, slo_ms=20)
    >>> r.concurrency, round(r.requests_per_s, 1), r.limited_by
    (317, 31.8, 'the per-token target')

    Llama-3.1-70B on four H100s as a layout, 30 ms per token:

    >>> r = serving_rate("llama-3.1-70b", "h100-sxm", 500, 1000, slo_ms=30, parallel="tp4")
    >>> r.num_devices, r.parallel, r.concurrency
    (4, 'tp4', 470)
    """
    from ..catalog import load_accelerator, load_model

    model, accelerator = load_model(model), load_accelerator(accelerator)
    output_length = whole_number("output_length", output_length, 1)
    if output_length < 2:
        raise InvalidValueError("output_length", output_length,
                                "at least 2 (the prefill yields the first token; decode serves the rest)")
    prompt_length = whole_number("prompt_length", prompt_length, 0)
    num_devices = whole_number("num_devices", num_devices, 1)
    if max_concurrency is not None:
        max_concurrency = whole_number("max_concurrency", max_concurrency, 1)
    slo_ms = check_slo_ms(renamed("slo_ms", slo_ms, "slo_ms_per_token", slo_ms_per_token))
    mean_context = mean_decode_context(prompt_length, output_length)
    steps_per_request = decode_steps(output_length)
    usable = usable_memory(accelerator, reserve, reserve_fraction)
    layout = planned_layout(parallel)
    links: dict[str, Any] = dict(collective_latency=collective_latency, link_bandwidth=link_bandwidth, node_size=node_size,
                 scale_out_bandwidth=scale_out_bandwidth, overlap_communication=False)
    if layout is not None:
        if num_devices != 1:
            raise InvalidValueError("num_devices", num_devices, "1 when parallel= is given (the layout holds the degrees)")
        num_devices = layout.num_devices
        weights, per_sequence = layout_capacity(model, accelerator, mean_context, layout, **links)
    else:
        one = device_traffic(model, np.ones(1), np.full(1, mean_context), num_devices)
        weights, per_sequence = one.weight_bytes, float(one.kv_bytes[0])
    room = usable - weights
    capacity = int(max(np.floor(room / per_sequence), 0)) if per_sequence > 0 else (1 << 20)
    cap = capacity if max_concurrency is None else min(capacity, int(max_concurrency))
    name = accelerator.id or accelerator.name
    label = None if layout is None else str(layout)
    if cap < 1:
        return ServingRate(model.name, name, num_devices, int(output_length), mean_context, 0, float("nan"), 0.0, 0.0,
                           "memory capacity (the weights leave no room for one sequence)", capacity,
                           slo_ms, np.zeros(0, dtype=np.int64), np.zeros(0), label)
    concurrency = np.arange(1, cap + 1)
    if layout is not None:  # collectives on the critical path, as planned
        floor = layout_decode_floor(model, accelerator, concurrency, mean_context, layout, **links)
    else:
        floor = tensor_parallel_floor(model, accelerator, concurrency, mean_context, num_devices,
                                      collective_latency=collective_latency, link_bandwidth=link_bandwidth,
                                      overlap_communication=False)  # collectives on the critical path, as planned
    step = np.asarray(floor.step_time_s, dtype=float)
    rates = np.asarray(f.request_rate_at_concurrency(concurrency, steps_per_request, step), dtype=np.float64)
    ok = np.ones_like(step, dtype=bool) if slo_ms is None else step <= slo_ms / 1e3
    if not ok.any():
        return ServingRate(model.name, name, num_devices, int(output_length), mean_context, 0, float(step[0]), 0.0, 0.0,
                           "the per-token target (missed even at concurrency 1)", capacity, slo_ms,
                           concurrency, rates, label)
    best = int(np.nonzero(ok)[0][-1])
    limited = "the per-token target" if best + 1 < cap else (
        "memory capacity" if cap == capacity else "max_concurrency")
    return ServingRate(
        model=model.name, accelerator=name, num_devices=num_devices, output_length=int(output_length),
        mean_context=mean_context, concurrency=int(concurrency[best]), step_time_s=float(step[best]),
        tokens_per_s=float(concurrency[best] / step[best]), requests_per_s=float(rates[best]), limited_by=limited,
        max_concurrency=capacity, slo_ms=slo_ms, curve_concurrency=concurrency,
        curve_requests_per_s=rates, parallel=label,
    )
