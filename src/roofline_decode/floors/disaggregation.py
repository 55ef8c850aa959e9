"""Layer 3: ``balanced_workers``: the prefill:decode worker ratio of disaggregated serving.

Disaggregated serving (DistServe, Splitwise, NVIDIA Dynamo) runs prompts on prefill workers
and moves their KV caches to decode workers.  Each kind of worker has a ceiling on the
requests it completes per second; both are busy when their counts are in the inverse ratio of
those ceilings.  :func:`~roofline_decode.floors.serving.serving_floor` (``mode="disaggregated"``)
gives the metrics of a given deployment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable
from ..checks import fraction, non_negative, positive
from ..errors import InvalidValueError
from .capacity import DEFAULT_RESERVE
from .grid import KvLike, WeightsLike, broadcast_grid
from .grid_result import GridResult
from .prefill import PREFILL_WITHOUT_PEAK, device_timing, resolve_model_and_device, routing_notes
from .request import mean_decode_context, whole_array
from .serving_worker import ROUTINGS, Worker, resolve_layout, sequences_that_fit

__all__ = ["BalancedWorkers", "balanced_workers"]


@dataclass(frozen=True)
class BalancedWorkers(GridResult):
    """Prefill and decode workers that balance in disaggregated serving (ceilings per worker).

    ``prefill_rate_per_worker`` [1/s]: the most prompts a prefill worker completes per second
    (its prompts' FLOPs, KV bytes and link bytes, the weights shared by batched prompts);
    ``decode_rate_per_worker`` [1/s]: the most requests a decode worker completes per second at
    ``decode_batch`` (B / ((N_out − 1) · decode step floor)); ``ratio`` = prefill workers per
    decode worker that keep both busy; for a ``request_rate`` the whole workers of each kind it
    needs at least (NaN without one)."""

    model: str
    accelerator: str
    layout: str
    input_length: np.ndarray
    output_length: np.ndarray
    decode_batch: np.ndarray
    decode_step_s: np.ndarray
    prefill_rate_per_worker: np.ndarray
    decode_rate_per_worker: np.ndarray
    ratio: np.ndarray
    request_rate: np.ndarray
    prefill_workers: np.ndarray
    decode_workers: np.ndarray
    notes: tuple[str, ...] = ()

    RECORD_KEYS = ("model", "accelerator", "layout", "input_length", "output_length", "decode_batch", "decode_step_s",
                   "prefill_rate_per_worker", "decode_rate_per_worker", "ratio", "request_rate", "prefill_workers",
                   "decode_workers")
    COLUMNS = (("ISL", "input_length", 1.0), ("OSL", "output_length", 1.0), ("decode B", "decode_batch", 1.0),
               ("decode ms", "decode_step_s", 1e-3), ("prefill req/s/worker", "prefill_rate_per_worker", 1.0),
               ("decode req/s/worker", "decode_rate_per_worker", 1.0), ("P:D ratio", "ratio", 1.0),
               ("prefill workers", "prefill_workers", 1.0), ("decode workers", "decode_workers", 1.0))

    def title(self) -> str:
        return f"balanced prefill and decode workers of {self.model} on {self.accelerator} ({self.layout})"


def balanced_workers(model: Any, accelerator: Any, input_length: Broadcastable, output_length: Broadcastable,
                     decode_batch: Broadcastable, *, request_rate: float | None = None, prefill_parallel: Any = None,
                     decode_parallel: Any = None, routing: str = "uniform", weights: WeightsLike = None,
                     kv: KvLike = None, chunk: Broadcastable | None = None, sparse: bool = False,
                     reserve: float = DEFAULT_RESERVE, reserve_fraction: float = 0.0) -> BalancedWorkers:
    """The prefill:decode worker ratio that balances disaggregated serving, and the workers a rate needs.

    A prefill worker completes at most μ_p = 1 / (least time of one prompt, weights shared)
    requests per second, a decode worker at most μ_d = B / ((N_out − 1) · T_step(B)) at its
    decode batch B (capped by what its KV cache holds at the mean decode context); both kinds
    are busy when W_p / W_d = μ_d / μ_p (:func:`~roofline_decode.formulas.workers_for_rate`).

    Parameters
    ----------
    model, accelerator, routing, weights, kv, chunk, sparse, reserve, reserve_fraction
        As in :func:`serving_floor`.
    input_length, output_length : array_like
        Prompt and output tokens per request (whole; output >= 2).
    decode_batch : array_like
        Sequences each decode worker runs [1], >= 1.
    request_rate : float, optional
        Requests per second to sustain [1/s]: gives the workers of each kind (rounded up).
    prefill_parallel, decode_parallel : int or Parallel, optional
        Layouts of the two kinds of worker (None: one device).

    Examples
    --------
    Qwen3-32B fp8 on H100s, tp4 workers, 4,096-token prompts, 512 output tokens, decode batch 128:
    a prefill worker does 29 prompts/s, a decode worker 31.7 requests/s: 1.1 prefill workers per
    decode worker keep both busy, and 20 requests/s need one of each.

    >>> r = balanced_workers("qwen3-32b-fp8", "h100-sxm", 4096, 512, 128, request_rate=20,
    ...                      prefill_parallel=4, decode_parallel=4, kv="fp8")
    >>> round(float(r.ratio), 2), int(r.prefill_workers), int(r.decode_workers)
    (1.1, 1, 1)
    """
    model, accelerator = resolve_model_and_device(model, accelerator, weights, kv)
    if not isinstance(routing, str) or routing not in ROUTINGS:
        raise InvalidValueError("routing", routing, "'uniform' or 'identical'")
    prompt = whole_array("input_length", input_length, 1)
    output = whole_array("output_length", output_length, 2)
    wanted = whole_array("decode_batch", decode_batch, 1)
    rate = np.nan if request_rate is None else positive("request_rate", request_rate, "requests per second > 0")
    chunk_array = None if chunk is None else whole_array("chunk", chunk, 1)
    grid = broadcast_grid(input_length=prompt, output_length=output, decode_batch=wanted,
                          **({} if chunk_array is None else {"chunk": chunk_array}))
    prompt, output, wanted = grid[:3]
    chunk_grid = grid[3] if chunk_array is not None else None
    reserve = non_negative("reserve", reserve, "a finite number of bytes >= 0")
    reserve_fraction = fraction("reserve_fraction", reserve_fraction)
    p_layout = resolve_layout("prefill_parallel", prefill_parallel)
    d_layout = resolve_layout("decode_parallel", decode_parallel)
    context = np.asarray(mean_decode_context(prompt, output), dtype=float)
    timing = device_timing(model, accelerator, sparse)
    fit = sequences_that_fit(model, accelerator, d_layout, context, reserve, reserve_fraction, routing)
    batch = np.minimum(wanted, fit)
    if (fit < 1).any():
        raise InvalidValueError("decode_parallel", str(d_layout), f"a layout on which one sequence of {model.name} fits "
                                "beside the weights (its KV cache at the mean decode context)")
    decoder = Worker.build(model, accelerator, timing, d_layout, (batch,), context, prompt, chunk_grid, routing)
    prefiller = Worker.build(model, accelerator, timing, p_layout, (), context, prompt, chunk_grid,
                             routing)
    decoded = decoder.step(0.0)
    step = decoded.step[0]
    mu_p = 1.0 / prefiller.prompt_work()
    mu_d = batch / ((output - 1) * step)
    notes: tuple[str, ...] = (f"decode batch capped at the {int(np.min(fit))} sequences the KV cache holds",) if (
        wanted > fit).any() else ()
    return BalancedWorkers(
        model=model.name, accelerator=accelerator.id or accelerator.name,
        layout=f"prefill {p_layout}, decode {d_layout}", input_length=prompt, output_length=output,
        decode_batch=batch, decode_step_s=step, prefill_rate_per_worker=mu_p, decode_rate_per_worker=mu_d,
        ratio=np.asarray(mu_d / mu_p), request_rate=np.full(batch.shape, rate),
        prefill_workers=np.ceil(np.asarray(f.workers_for_rate(rate, mu_p), dtype=float)),
        decode_workers=np.ceil(np.asarray(f.workers_for_rate(rate, mu_d), dtype=float)),
        notes=notes + decoded.notes + timing.notes(PREFILL_WITHOUT_PEAK) + routing_notes(model, routing),
    )
