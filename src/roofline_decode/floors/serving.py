"""Layer 3: ``serving_floor``: the floors of the metrics serving benchmarks report, in steady state.

Closed-loop clients (vLLM ``benchmark_serving`` / SGLang ``bench_serving`` with a max
concurrency C and no request-rate limit) send N_in-token prompts and read N_out output tokens.
The metrics are the benchmarks': TTFT (queueing included), TPOT = (E2E − TTFT)/(N_out − 1),
ITL (its mean equals the mean TPOT when every request has N_out tokens), E2E, output tokens/s
per GPU, per user (1 / TPOT, AIConfigurator's "tokens/s/user") and requests/s.  Times are
floors, rates ceilings.  The derivation and the assumptions a faster run would have to break
are in docs/serving.md; in brief:

* **running batch**: at most B_max = min(C, the sequences whose KV cache at the mean decode
  context N_in + (N_out − 2)/2 fits beside the weights on every device of the layout; the rates'
  batch, and C − B_max clients queue), at least B_min (the same at the last context
  N_in + N_out − 1: an engine that reserves each request's whole length; the TPOT's batch).
* **aggregated** (prefill and decode on the same devices, continuous batching with chunked
  prefill): a slot holds a request for one step of prefill and N_out − 1 decode steps, so a
  request's decode steps carry itself and the other slots that decode,
  1 + (B − 1)(N_out − 1)/N_out sequences (:func:`~roofline_decode.formulas.steady_decode_batch`),
  and the prompts of the others, (B − 1)·N_in/N_out tokens
  (:func:`~roofline_decode.formulas.prefill_tokens_per_step`), the weights read once per step;
  TPOT >= that step's floor (assumptions A1-A3 of the docs).  TTFT >= the request's own
  prefill floor on the layout (any schedule), >= one step (A2), plus the queue's wait.
* **disaggregated**: TTFT >= the prefill floor on a prefill worker plus the KV transfer of the
  prompt over the link; TPOT >= the decode step of a decode worker holding the request and its
  share of the others.
* **rates** (ceilings): the slots (B_max over the time a request holds one), the devices (every
  step decoding at most B_max and sharing its weights with B_max/(N_out − 1) prompts; any
  schedule), or the prefill and decode workers; E2E >= C / λ (Little's law, closed loop) and
  >= TTFT + (N_out − 1)·TPOT; the queue waits (C − B_max)/λ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable
from ..checks import flag, fraction, non_negative, whole_number
from ..errors import InvalidValueError
from .capacity import DEFAULT_RESERVE, kv_bytes_per_sequence
from .grid import KvLike, WeightsLike, broadcast_grid
from .grid_result import GridResult
from .prefill import device_timing, resolve_model_and_device, routing_notes
from .request import mean_decode_context, whole_array
from .layout import Options
from .serving_worker import ROUTINGS, Worker, kv_link_bandwidth as kv_link_of, resolve_layout, sequences_that_fit

__all__ = ["MODES", "ServingFloor", "serving_floor"]

#: Serving modes: prefill and decode on the same devices, or on separate workers.
MODES = ("aggregated", "disaggregated")

#: What a serving floor gives on a device without a compute peak (its note, after the device).
SERVING_WITHOUT_PEAK = ("a prefill's time needs one: TTFT, E2E, the rates and the TPOT of steps that carry prompts are "
                        "not given (n/a); a decode step alone keeps its memory floor")

#: What limits the request rate, by index (``ServingFloor.limited_by``).
LIMITS = ("latency", "running batch", "device throughput", "prefill workers", "decode workers")

#: What the assumptions of the steady step are called in the notes (docs/serving.md).
ASSUMPTIONS = ("steady state of closed-loop clients (docs/serving.md): an admitted request is prefilled in one step "
               "and then decodes in every step (A1), and the other requests' prompts ride along the steps evenly "
               "(A2); TTFT >= the request's own prefill floor holds for any schedule")


@dataclass(frozen=True)
class ServingFloor(GridResult):
    """Floors of the serving-benchmark metrics, broadcast over concurrency × input × output length.

    SI units (seconds, tokens/s).  ``running_batch``: requests admitted (B, per decode worker in
    disaggregated mode), ``queued``: clients waiting for a slot (C − admitted), ``max_running``:
    sequences the KV cache holds per worker; ``decode_batch``: sequences a request's decode
    steps carry; ``prefill_tokens_per_step``: prompt tokens riding along each of them (0 when
    disaggregated); ``decode_step_s``: the decode step alone at ``decode_batch``; ``step_time_s`` with its ``memory_time_s``, ``compute_time_s`` and
    ``communication_time_s``: the steady step (the TPOT floor); ``prefill_s``: the request's
    prefill alone on its worker; ``kv_transfer_s``: the prompt's KV moved to a decode worker;
    ``queue_time_s`` = ``ttft_s`` − ``prefill_s`` − ``kv_transfer_s``.  ``limited_by`` names the
    bound that sets the request rate (:data:`LIMITS`).  ``num_devices`` counts every GPU of the
    deployment (the per-GPU rate divides by it)."""

    model: str
    accelerator: str
    mode: str
    layout: str
    num_devices: int
    concurrency: np.ndarray
    input_length: np.ndarray
    output_length: np.ndarray
    mean_context: np.ndarray
    running_batch: np.ndarray
    decode_batch: np.ndarray
    queued: np.ndarray
    max_running: np.ndarray
    prefill_tokens_per_step: np.ndarray
    decode_step_s: np.ndarray
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray
    communication_time_s: np.ndarray
    step_time_s: np.ndarray
    prefill_s: np.ndarray
    kv_transfer_s: np.ndarray
    queue_time_s: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    itl_s: np.ndarray
    e2e_latency_s: np.ndarray
    requests_per_s: np.ndarray
    output_tokens_per_s: np.ndarray
    output_tokens_per_s_per_gpu: np.ndarray
    output_tokens_per_s_per_user: np.ndarray
    limited_by: np.ndarray
    prefill_workers: int = 0
    decode_workers: int = 0
    notes: tuple[str, ...] = field(default=())
    routing: str = "uniform"

    RECORD_KEYS = (
        "model", "accelerator", "mode", "layout", "num_devices", "concurrency", "input_length", "output_length",
        "running_batch", "decode_batch", "queued", "max_running", "prefill_tokens_per_step", "decode_step_s", "step_time_s",
        "memory_time_s", "compute_time_s", "communication_time_s", "prefill_s", "kv_transfer_s", "queue_time_s",
        "ttft_s", "tpot_s", "itl_s", "e2e_latency_s", "requests_per_s", "output_tokens_per_s",
        "output_tokens_per_s_per_gpu", "output_tokens_per_s_per_user", "limited_by",
    )
    COLUMNS = (
        ("C", "concurrency", 1.0), ("ISL", "input_length", 1.0), ("OSL", "output_length", 1.0),
        ("running", "running_batch", 1.0), ("decode B", "decode_batch", 1.0), ("queued", "queued", 1.0),
        ("prefill tok/step", "prefill_tokens_per_step", 1.0), ("decode ms", "decode_step_s", 1e-3),
        ("TTFT ms", "ttft_s", 1e-3), ("TPOT ms", "tpot_s", 1e-3), ("E2E s", "e2e_latency_s", 1.0),
        ("req/s", "requests_per_s", 1.0), ("tok/s/GPU", "output_tokens_per_s_per_gpu", 1.0),
        ("tok/s/user", "output_tokens_per_s_per_user", 1.0), ("limited by", "limited_by", None),
    )

    def title(self) -> str:
        return (f"serving floors of {self.model} on {self.num_devices} x {self.accelerator} ({self.mode}, "
                f"{self.layout}): closed-loop clients; times are floors, rates ceilings")


def serving_floor(
    model: Any,
    accelerator: Any,
    concurrency: Broadcastable,
    input_length: Broadcastable,
    output_length: Broadcastable,
    *,
    parallel: Any = None,
    mode: str = "aggregated",
    prefill_parallel: Any = None,
    decode_parallel: Any = None,
    prefill_workers: int = 1,
    decode_workers: int = 1,
    routing: str = "uniform",
    weights: WeightsLike = None,
    kv: KvLike = None,
    chunk: Broadcastable | None = None,
    sparse: bool = False,
    kv_link_bandwidth: float | None = None,
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
    mla_layout: str = "sharded",
    max_batch: int | None = None,
    reserve: float = DEFAULT_RESERVE,
    reserve_fraction: float = 0.0,
) -> ServingFloor:
    """Floors of TTFT, TPOT, ITL and E2E and ceilings of the throughputs of closed-loop serving.

    Parameters
    ----------
    model, accelerator : Model/str, Accelerator/str
        A model and a device, or catalog ids.
    concurrency : array_like
        Clients of the closed loop C [1], whole, >= 1 (the benchmarks' max concurrency).
    input_length : array_like
        Prompt tokens per request N_in [tokens], whole, >= 1.
    output_length : array_like
        Output tokens per request N_out [tokens], whole, >= 2 (TPOT needs a second token).
    parallel : int or Parallel, optional
        Layout of one replica (aggregated) and the default of both workers (disaggregated):
        None (one device) or a tensor-parallel degree.
    mode : {"aggregated", "disaggregated"}
    prefill_parallel, decode_parallel : int or Parallel, optional
        Layouts of a prefill and of a decode worker (disaggregated; default ``parallel``).
    prefill_workers, decode_workers : int
        Workers of each kind (disaggregated), >= 1.
    routing : {"uniform", "identical"}
        MoE routing ("identical": the strict floor).
    weights, kv : str, NumberFormat or dict, optional
        Weight and KV-cache formats (None: the model's).
    chunk : array_like, optional
        Chunked-prefill size [tokens]: every chunk re-reads the KV of the chunks before it
        (default: none, the least KV read).
    sparse : bool
        Use 2:4 structured-sparsity peaks.
    kv_link_bandwidth : float, optional
        Per-direction bandwidth [B/s] of the link the KV crosses (disaggregated); default the
        scale-up link when a prefill and a decode worker fit in one scale-up domain, else the
        scale-out link (a note says which).
    link_bandwidth, node_size, scale_out_bandwidth, mla_layout : optional
        The layout's link overrides and MLA layout, as in :func:`~roofline_decode.decode_floor`.
    max_batch : int, optional
        Most requests a worker runs at once (a server's max_num_seqs).
    reserve, reserve_fraction
        The usable-memory rule per device (:func:`~roofline_decode.planning.usable_memory`).

    Returns
    -------
    ServingFloor

    Examples
    --------
    Qwen3-32B in fp8 (fp8 KV cache) on 4 H100s with tensor parallelism, 128 clients, 4,096-token
    prompts: the TPOT floor falls with the output length as the prompts riding along each
    decode step thin out (TensorRT-LLM measured 118.5, 67.3 and 42.1 ms; the decode step of
    the 127 sequences alone is 7.6 ms).

    >>> r = serving_floor("qwen3-32b-fp8", "h100-sxm", 128, 4096, [128, 256, 512], parallel=4, kv="fp8")
    >>> [round(float(t) * 1e3, 1) for t in r.tpot_s]
    [35.4, 18.3, 9.8]
    >>> [round(float(t) * 1e3, 1) for t in r.decode_step_s]
    [7.6, 7.7, 7.9]
    """
    model, accelerator = resolve_model_and_device(model, accelerator, weights, kv)
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidValueError("mode", mode, "'aggregated' or 'disaggregated'")
    if not isinstance(routing, str) or routing not in ROUTINGS:
        raise InvalidValueError("routing", routing, "'uniform' or 'identical'")
    clients = whole_array("concurrency", concurrency, 1)
    prompt = whole_array("input_length", input_length, 1)
    output = whole_array("output_length", output_length, 2)
    chunk_array = None if chunk is None else whole_array("chunk", chunk, 1)
    grid = broadcast_grid(concurrency=clients, input_length=prompt, output_length=output,
                          **({} if chunk_array is None else {"chunk": chunk_array}))
    clients, prompt, output = grid[:3]
    chunk_grid = grid[3] if chunk_array is not None else None
    cap = None if max_batch is None else whole_number("max_batch", max_batch, 1)
    reserve = non_negative("reserve", reserve, "a finite number of bytes >= 0")
    reserve_fraction = fraction("reserve_fraction", reserve_fraction)
    context = np.asarray(mean_decode_context(prompt, output), dtype=float)
    timing = device_timing(model, accelerator, sparse)
    steps = output - 1
    options = Options(link_bandwidth=link_bandwidth, node_size=node_size, scale_out_bandwidth=scale_out_bandwidth,
                      mla_layout=mla_layout, sparse=flag("sparse", sparse))
    if mode == "aggregated":
        for name, value in (("prefill_parallel", prefill_parallel), ("decode_parallel", decode_parallel)):
            if value is not None:
                raise InvalidValueError(name, value, "None in aggregated mode (give parallel=, or mode='disaggregated')")
        if prefill_workers != 1 or decode_workers != 1:
            raise InvalidValueError("prefill_workers/decode_workers", (prefill_workers, decode_workers),
                                    "1 in aggregated mode (one replica; mode='disaggregated' has workers)")
        layouts = (resolve_layout("parallel", parallel),) * 2
        workers, share = (0, 0), clients
    else:
        workers = (whole_number("prefill_workers", prefill_workers, 1), whole_number("decode_workers", decode_workers, 1))
        layouts = (resolve_layout("prefill_parallel", parallel if prefill_parallel is None else prefill_parallel),
                   resolve_layout("decode_parallel", parallel if decode_parallel is None else decode_parallel))
        share = clients / workers[1]  # the clients of one decode worker
    # the running batch: at most what the KV cache holds at the mean decode context (paged, on
    # demand: the rates' ceiling), at least what it holds when every request reserves its whole
    # length (no eviction: the TPOT floor's batch)
    fit_mean, fit_end = sequences_that_fit(model, accelerator, layouts[1], np.stack([context, prompt + steps]), reserve,
                                           reserve_fraction, routing)
    if cap is not None:
        fit_mean, fit_end = np.minimum(fit_mean, cap), np.minimum(fit_end, cap)
    high = np.minimum(share, fit_mean)
    low = np.minimum(share, np.maximum(fit_end, np.minimum(high, 1.0)))
    nothing = high < (1.0 if mode == "aggregated" else 1.0 / workers[1])
    low, high = np.maximum(low, 1e-9), np.maximum(high, 1e-9)  # evaluated, then voided where nothing fits
    if mode == "aggregated":
        # a decoding request sees itself and the other slots not in their prefill step, and their
        # prompts (A1, A2); the devices' ceiling: steps of B decode tokens, B / (N_out - 1) prompts each
        seen, seen_high = (np.asarray(f.steady_decode_batch(b, output), dtype=float) for b in (low, high))
        # one pass over four steps: the decode batch alone and with its prompts (TPOT), the most
        # admitted with theirs (the slots' ceiling), and all admitted decoding beside B / (N_out - 1)
        # prompts (the devices' ceiling)
        worker = Worker.build(model, accelerator, timing, layouts[0], (seen, seen, seen_high, high), context, prompt,
                              chunk_grid, routing, options)
        ride = np.asarray(f.prefill_tokens_per_step(low, prompt, output), dtype=float)
        ride_high = np.asarray(f.prefill_tokens_per_step(high, prompt, output), dtype=float)
        times = worker.step(np.stack(np.broadcast_arrays(0.0 * ride, ride / prompt, ride_high / prompt, high / steps)))
        decode_step, tpot, tpot_high, work = times.step
        memory, compute, comm = times.memory[1], times.compute[1], times.communication[1]
        prefill = worker.prefill_alone().step
        service = np.maximum(prefill, tpot)
        transfer = np.zeros_like(tpot)
        slots = high / (np.maximum(prefill, tpot_high) + steps * tpot_high)
        rates = [np.where(high < clients, np.inf, slots), np.where(high < clients, slots, np.inf),
                 (high / steps) / work, np.inf, np.inf]
        notes = times.notes
        admitted, devices, label = high, layouts[0].num_devices, str(layouts[0])
    else:
        # a decoding request sees itself and the others on its worker (A1), at most what a worker holds
        low = np.minimum(1 + (clients - 1) / workers[1], np.maximum(fit_end, np.minimum(high, 1.0)))
        decoder = Worker.build(model, accelerator, timing, layouts[1], (low, high), context, prompt, chunk_grid,
                               routing, options)
        prefiller = Worker.build(model, accelerator, timing, layouts[0], (), context, prompt,
                                 chunk_grid, routing, options)
        link, link_notes = kv_link_of(accelerator, kv_link_bandwidth,
                                      layouts[0].num_devices + layouts[1].num_devices, options)
        kv_bytes = np.asarray(kv_bytes_per_sequence(model, prompt), dtype=float)
        transfer = np.asarray(f.kv_transfer_time(prompt, kv_bytes / prompt, link,
                                                 min(layouts[0].num_devices, layouts[1].num_devices)))
        seen, ride = low, np.zeros_like(low)
        times = decoder.step(0.0)
        tpot = decode_step = times.step[0]
        memory, compute, comm = times.memory[0], times.compute[0], times.communication[0]
        alone = prefiller.prefill_alone()
        prefill = alone.step
        service = prefill + transfer
        rates = [clients / (service + steps * tpot), np.inf, np.inf, workers[0] / prefiller.prompt_work(),
                 workers[1] * high / (steps * times.step[1])]
        admitted = high * workers[1]
        devices = workers[0] * layouts[0].num_devices + workers[1] * layouts[1].num_devices
        label = f"{workers[0]} x prefill {layouts[0]} + {workers[1]} x decode {layouts[1]}"
        notes = tuple(dict.fromkeys(alone.notes + times.notes + link_notes))
    stacked = np.stack(np.broadcast_arrays(*rates))
    with np.errstate(invalid="ignore", divide="ignore"):
        rate = np.min(stacked, axis=0)
        limit = np.where(np.isnan(rate), "n/a", np.asarray(LIMITS)[np.argmin(np.where(np.isnan(stacked), np.inf,
                                                                                     stacked), axis=0)])
        # TTFT: the own prefill after the wait of the clients that hold no slot (Little's law on the queue)
        queue = np.maximum(clients - admitted, 0.0) / rate
        ttft = service + queue
        e2e = np.maximum(np.asarray(f.closed_loop_latency(clients, rate), dtype=float), ttft + steps * tpot)
    return ServingFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name, mode=mode, layout=label,
        num_devices=devices, concurrency=clients, input_length=prompt, output_length=output, mean_context=context,
        running_batch=np.where(nothing, 0.0, high), decode_batch=np.where(nothing, 0.0, seen),
        queued=np.where(nothing, clients, np.maximum(clients - admitted, 0.0)),
        max_running=np.broadcast_to(fit_mean, clients.shape).astype(float), prefill_tokens_per_step=ride,
        decode_step_s=_void(decode_step, nothing), memory_time_s=_void(memory, nothing),
        compute_time_s=_void(compute, nothing), communication_time_s=_void(comm, nothing),
        step_time_s=_void(tpot, nothing), prefill_s=prefill, kv_transfer_s=transfer,
        queue_time_s=_void(queue, nothing), ttft_s=_void(ttft, nothing),
        tpot_s=_void(tpot, nothing), itl_s=_void(tpot, nothing), e2e_latency_s=_void(e2e, nothing),
        requests_per_s=np.where(nothing, 0.0, rate), output_tokens_per_s=np.where(nothing, 0.0, rate * output),
        output_tokens_per_s_per_gpu=np.where(nothing, 0.0, rate * output / devices),
        output_tokens_per_s_per_user=np.where(nothing, 0.0, 1.0 / tpot),
        limited_by=np.where(nothing, "memory (no sequence fits)", limit), prefill_workers=workers[0],
        decode_workers=workers[1], routing=routing,
        notes=_notes(model, timing, routing, notes, clients, admitted, nothing),
    )


def _void(value: np.ndarray, nothing: np.ndarray) -> np.ndarray:
    """``value`` with NaN where no sequence fits (no step runs there)."""
    return np.asarray(np.where(nothing, np.nan, value))


def _notes(model: Any, timing: Any, routing: str, layout_notes: tuple[str, ...], clients: np.ndarray,
           admitted: np.ndarray, nothing: np.ndarray) -> tuple[str, ...]:
    """The assumptions, the layout's notes, who queues, and the peak and routing notes."""
    notes = [ASSUMPTIONS, *layout_notes]
    queued = (clients > admitted) & ~nothing
    if queued.any():
        worst = int(np.argmax(np.where(queued, clients - admitted, -1)))
        c, b = float(clients.flat[worst]), float(admitted.flat[worst])
        notes.append(f"the KV cache holds {b:.0f} sequences at the mean decode context: of {c:.0f} clients, "
                     f"{c - b:.0f} queue (the largest queue of the grid; see queued); their wait is in TTFT")
    if nothing.any():
        notes.append("where the weights leave no room for one sequence's KV cache nothing runs: no times are given, rates are 0")
    return tuple(dict.fromkeys((*notes, *timing.notes(SERVING_WITHOUT_PEAK), *routing_notes(model, routing))))
