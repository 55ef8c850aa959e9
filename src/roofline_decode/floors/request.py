"""Layer 3: ``request_floor``: time to first token, decode, and the whole request.

**The request convention** (DESIGN.md §4b, used everywhere in the library): a request with a
prompt of P tokens and O output tokens is a prefill of the P tokens, which yields the first
output token, then O − 1 decode steps at contexts P, P + 1, …, P + O − 2.  The decode time is
the exact sum of :func:`~roofline_decode.floors.decode.decode_floor` over those contexts (no mean
context).  :mod:`roofline_decode.planning.serving` and the measurement readers take the same
convention (decode steps O − 1 at mean context P + (O − 2) / 2).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable, Operand
from .energy import EnergyAndCost, checked_price
from ..checks import flag
from ..errors import InvalidValueError
from .decode import decode_floor
from .prefill import (Timing, compute_text, device_timing, make_traffic, prefill_traffic, resolve_model_and_device,
                      routed_experts, routing_notes)
from .terms import BOUND_NOT_DEFINED
from .grid import MAX_GRID_VALUE, KvLike, WeightsLike, broadcast_grid, checked_array
from .traffic import layer_terms
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .grid_result import GridResult
from .layout import layout_of
from .request_layout import LAYOUT_PREFIX_NOTE, checked_layout, layout_fit, layout_steps, layout_ttft

if TYPE_CHECKING:
    from ..specs.parallel import Parallel

__all__ = ["RequestFloor", "request_floor", "decode_contexts", "mean_decode_context", "decode_steps"]


@overload
def decode_steps(output: float) -> float: ...
@overload
def decode_steps(output: Operand) -> Operand: ...


def decode_steps(output: Operand) -> Operand:
    """Decode steps of a request with ``output`` tokens: O − 1 (the prefill yields the first)."""
    return output - 1


#: Most output tokens per request: the request floor evaluates each of its decode steps.
MAX_OUTPUT = 2**24
#: Decode steps evaluated at once (memory: a few dozen arrays of this length); a request with more
#: steps adds its blocks' sums, so a 2**24-token output holds 256 blocks, not one 16M-long grid.
DECODE_BLOCK = 2**16

#: What a request gives on a device without a compute peak (its note, after the device).
REQUEST_WITHOUT_PEAK = ("the prefill needs one: TTFT, E2E, the rates over E2E (tokens/s, requests/s, cost) and the "
                        "count of compute-bound decode steps are not given (NaN, n/a); the decode steps keep their "
                        "memory floor, as decode_floor's: decode time, TPOT, first and last step stand")


def decode_contexts(prompt: int, output: int) -> np.ndarray:
    """Contexts of the decode steps of a request: P, P + 1, …, P + O − 2 (empty for O = 1)."""
    return np.arange(prompt, prompt + output - 1, dtype=float)


@overload
def mean_decode_context(prompt: float, output: float) -> float: ...
@overload
def mean_decode_context(prompt: Operand, output: Operand) -> Operand: ...


def mean_decode_context(prompt: Operand, output: Operand) -> Operand:
    """Mean context over the decode steps of a request: P + (O − 2) / 2 (for O >= 2)."""
    return prompt + (output - 2) / 2


def whole_array(name: str, value: Broadcastable, minimum: float) -> np.ndarray:
    """``value`` as an array of whole numbers >= ``minimum``; InvalidValueError otherwise."""
    array = checked_array(name, value, minimum, inclusive=True)
    fractional = array != np.floor(array)
    if fractional.any():
        raise InvalidValueError(name, array[fractional].flat[0].item(), f"whole numbers >= {minimum:g}")
    return array


@dataclass(frozen=True)
class RequestFloor(GridResult, EnergyAndCost):
    """Floor of a static batch of requests, broadcast over batch, prompt, output, chunk, cached
    and shared prefix.  SI units; times in seconds.

    ``ttft_s``: prefill floor (first token); ``decode_time_s``: sum of the O − 1 decode steps;
    ``tpot_s``: their mean (time per output token after the first; nan for O = 1);
    ``e2e_latency_s`` = TTFT + decode time (end to end, the E2E of the serving benchmarks; bare
    "latency" in this library names a latency profile); ``output_tokens_per_s`` = B·O / E2E;
    ``total_tokens_per_s`` = B·(prompt + O) / E2E; ``requests_per_s`` = B / E2E (a static batch:
    all requests start and end together).  ``latency_s`` is a deprecated alias of ``e2e_latency_s``.  ``kv_resident_bytes``: the KV cache
    at the last decode step (a shared prefix stored once); ``fits``: the weights and that cache
    fit the device's usable memory (:func:`roofline_decode.planning.usable_memory`, defaults);
    ``max_batch``: the largest batch for which they would (the shared prefix stored once).
    ``weight_format`` and ``kv_format`` name the formats the model was served in.

    On a device without a compute peak (:data:`~roofline_decode.floors.NO_COMPUTE_PEAK`) the
    prefill has no time: ``ttft_s``, ``e2e_latency_s``, ``output_tokens_per_s``,
    ``total_tokens_per_s``, ``requests_per_s`` and ``decode_compute_bound_steps`` are NaN and
    ``prefill_bound`` is ``"n/a"``; the decode steps keep :func:`~roofline_decode.decode_floor`'s
    memory floor.  ``notes`` says so, with the peak look-ups' fallbacks and the MoE ``routing``.
    """

    model: str
    accelerator: str
    compute_precision: str
    weight_format: str
    kv_format: str
    batch: np.ndarray
    prompt: np.ndarray
    output: np.ndarray
    chunk: np.ndarray
    cached: np.ndarray
    shared_prefix: np.ndarray
    cascade: bool
    ttft_s: np.ndarray
    prefill_flops: np.ndarray
    prefill_bytes: np.ndarray
    decode_time_s: np.ndarray
    decode_flops: np.ndarray
    decode_bytes: np.ndarray
    first_step_s: np.ndarray
    last_step_s: np.ndarray
    tpot_s: np.ndarray
    e2e_latency_s: np.ndarray
    output_tokens_per_s: np.ndarray
    total_tokens_per_s: np.ndarray
    requests_per_s: np.ndarray
    kv_resident_bytes: np.ndarray
    prefill_bound: np.ndarray
    decode_compute_bound_steps: np.ndarray
    fits: np.ndarray
    max_batch: np.ndarray
    device: Accelerator | None = field(default=None, repr=False, compare=False)
    notes: tuple[str, ...] = ()
    routing: str = "uniform"
    layout: str = "1 device"

    # energy and cost (roofline_decode.floors.energy): the whole batch of requests, per output token
    @property
    def _energy_bytes(self) -> np.ndarray:
        total: np.ndarray = np.asarray(self.prefill_bytes) + np.asarray(self.decode_bytes)
        return total

    @property
    def latency_s(self) -> np.ndarray:
        """Deprecated alias of :attr:`e2e_latency_s` (the name until 0.2; goes in the next release)."""
        warnings.warn("RequestFloor.latency_s is deprecated: use e2e_latency_s (end to end; 'latency' names a "
                      "latency profile)", DeprecationWarning, stacklevel=2)
        return self.e2e_latency_s

    @property
    def _energy_time(self) -> np.ndarray:
        return np.asarray(self.e2e_latency_s)

    @property
    def _energy_tokens(self) -> np.ndarray:
        tokens: np.ndarray = np.asarray(self.batch, dtype=float) * np.asarray(self.output, dtype=float)
        return tokens

    def cost_per_request(self, price_per_hour: float) -> np.ndarray:
        """Price of one request [$] at ``price_per_hour`` per device-hour: the device busy for
        the latency of the static batch, shared by its ``batch`` requests."""
        cost: np.ndarray = f.cost_per_token(checked_price(price_per_hour), self.e2e_latency_s, self.batch)
        return cost

    RECORD_KEYS = (
        "model", "accelerator", "weight_format", "kv_format", "batch", "prompt", "output", "chunk", "cached", "shared_prefix", "cascade",
        "ttft_s", "prefill_flops", "prefill_bytes", "prefill_bound", "decode_time_s", "decode_flops",
        "decode_bytes", "decode_compute_bound_steps", "first_step_s", "last_step_s", "tpot_s", "e2e_latency_s",
        "output_tokens_per_s", "total_tokens_per_s", "requests_per_s", "kv_resident_bytes", "fits",
        "max_batch",
    )
    COLUMNS = (
        ("batch", "batch", 1.0), ("prompt", "prompt", 1.0), ("output", "output", 1.0),
        ("TTFT ms", "ttft_s", 1e-3), ("prefill", "prefill_bound", None), ("TPOT ms", "tpot_s", 1e-3),
        ("decode ms", "decode_time_s", 1e-3), ("E2E ms", "e2e_latency_s", 1e-3),
        ("out tok/s", "output_tokens_per_s", 1.0), ("req/s", "requests_per_s", 1.0),
        ("KV GB", "kv_resident_bytes", 1e9), ("fits", "fits_text", None), ("max B", "max_batch", 1.0),
    )

    @property
    def fits_text(self) -> np.ndarray:
        return np.where(self.fits, "yes", "no")

    def title(self) -> str:
        share = ""
        if np.any(self.shared_prefix > 0):
            share = f"; shared prefix read {'once (cascade kernel)' if self.cascade else 'per sequence'}"
        return (f"requests of {self.model} on {self.accelerator}: {self.weight_format} weights, {self.kv_format} KV "
                f"({compute_text(self.compute_precision)}): "
                f"prefill yields the first token, then output - 1 decode steps{share}")


def _prefill_with_prefix(model: Model, batch: float, prompt: float, chunk: float, cached: float, shared: float,
                         timing: Timing, routing: str = "uniform") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(FLOPs, bytes) of the prefill; a shared prefix beyond the cached tokens is computed once.

    With S > C the prefix tokens C…S are prefilled for one sequence and the B suffixes after
    them; as one pass, its weight bytes are at least the larger of the two parts' (a floor)."""
    if shared <= cached:
        t = prefill_traffic(model, batch, prompt - cached, chunk, cached, routing)
        return t.flops, t.bytes_total, timing.required_compute_time(t)
    head = prefill_traffic(model, 1.0, shared - cached, min(chunk, shared - cached), cached, routing)
    tail = prefill_traffic(model, batch, prompt - shared, chunk, shared, routing)
    weights = np.maximum(head.weight_bytes, tail.weight_bytes)
    tail_kv_read = tail.kv_read_bytes - f.kv_read_bytes(batch, shared, model.kv_bytes_per_token_per_layer,
                                                        *layer_terms(model)[0])
    kv = head.kv_read_bytes + head.kv_write_bytes + np.maximum(tail_kv_read, 0) + tail.kv_write_bytes
    lm_head = 2 * model.parameter_groups["lm_head"]  # the prefix yields no token: no lm_head row
    groups = dict(head.group_flops)
    if "lm_head" in groups:
        groups["lm_head"] = groups["lm_head"] - lm_head
    head = make_traffic(head.weight_bytes, head.kv_read_bytes, head.kv_write_bytes, head.flops - lm_head, groups)
    return head.flops + tail.flops, weights + kv, timing.required_compute_time(head) + timing.required_compute_time(tail)


def _prefill_terms(model: Model, batch: float, prompt: float, output: float, chunk: float, cached: float,
                   shared: float, timing: Timing, routing: str = "uniform") -> dict[str, float | str]:
    """The prefill of a request (TTFT, its FLOPs, bytes and bound) and the KV cache it ends with."""
    layers, m_kv, _ = layer_terms(model)
    flops_p, bytes_p, compute_p = _prefill_with_prefix(model, batch, prompt, chunk, cached, shared, timing, routing)
    memory_p = f.memory_time(bytes_p, timing.bandwidth)
    ttft = float(f.step_time(memory_p, compute_p))
    bound_p = BOUND_NOT_DEFINED if np.isnan(compute_p) else "compute" if compute_p >= memory_p else "memory"
    end = prompt + output - 1
    resident = float(f.kv_cache_bytes(batch, end, m_kv, *layers)
                     - f.shared_prefix_saved_bytes(batch, end, shared, m_kv, *layers))
    return dict(ttft=ttft, flops_p=float(flops_p), bytes_p=float(bytes_p), resident=resident, bound_p=bound_p)


def _decode_sums(model: Model, accelerator: Accelerator, batch: float, prompt: float, outputs: list[float],
                 cascade: bool, shared: float, sparse: bool, timing: Timing, routing: str,
                 layout: Any = None) -> dict[float, dict[str, float]]:
    """The decode steps of requests of each output length in ``outputs`` (one prompt): their time,
    FLOPs and bytes summed, the first and last step, and the compute-bound steps.

    The steps of the longest request are evaluated once, :data:`DECODE_BLOCK` at a time (bounded
    memory), and each shorter request sums the same steps' prefix: the sums equal those of a
    separate evaluation bit for bit (each block summed as numpy sums one array)."""
    layers, m_kv, _ = layer_terms(model)
    ends = {o: int(prompt) + int(o) - 1 for o in outputs}  # whole numbers: exact up to the 2**53 cap
    last_end = max(ends.values())
    sums = np.zeros(4)  # decode time, FLOPs, bytes, compute-bound steps
    first = np.nan
    out: dict[float, dict[str, float]] = {o: {"decode": 0.0, "flops_d": 0.0, "bytes_d": 0.0, "first": np.nan,
                                             "last": np.nan, "steps_compute": 0.0} for o in outputs if o <= 1}
    for start in range(int(prompt), last_end, DECODE_BLOCK):
        contexts = np.arange(start, min(start + DECODE_BLOCK, last_end), dtype=float)
        d = decode_floor(model, accelerator, batch, contexts, sparse=sparse, routing=routing)
        step_bytes = d.bytes_total
        memory = d.memory_time_s
        if cascade and shared > 0:
            step_bytes = step_bytes - f.shared_prefix_saved_bytes(batch, contexts, shared, m_kv, *layers)
            memory = f.memory_time(step_bytes, d.memory_bandwidth)
        steps = f.step_time(memory, d.compute_time_s)
        bound = d.compute_time_s >= memory
        if layout is not None:  # the busiest device's steps; bytes and FLOPs stay the whole model's
            steps, bound = layout_steps(model, accelerator, layout, batch, contexts, sparse, routing)
        first = float(steps[0]) if start == int(prompt) else first
        for o, stop in ends.items():  # the requests whose last step is in this block
            if o > 1 and start < stop <= start + contexts.size:
                n = stop - start
                total = sums + (np.sum(steps[:n]), np.sum(d.flops[:n]), np.sum(step_bytes[:n]), np.sum(bound[:n]))
                # whether a decode step is compute-bound needs a peak (decode_floor's compute time is 0 without one)
                out[o] = {"decode": float(total[0]), "flops_d": float(total[1]), "bytes_d": float(total[2]),
                          "first": first, "last": float(steps[n - 1]),
                          "steps_compute": float(total[3]) if timing.bounded else np.nan}
        sums += (np.sum(steps), np.sum(d.flops), np.sum(step_bytes), np.sum(bound))
    return out


def request_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    prompt: Broadcastable,
    output: Broadcastable,
    batch: Broadcastable = 1,
    *,
    chunk: Broadcastable | None = None,
    cached: Broadcastable = 0,
    shared_prefix: Broadcastable = 0,
    cascade: bool = False,
    sparse: bool = False,
    routing: str = "uniform",
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str | None = None,
) -> RequestFloor:
    """The fastest possible request: time to first token, time per output token, end to end.

    One :func:`~roofline_decode.prefill_floor`, then a decode floor for every further output token.

    Parameters
    ----------
    model, accelerator : Model/str, Accelerator/str
        A model and a device, or catalog ids.
    prompt : array_like
        Prompt tokens per request P [tokens], whole, >= 1.
    output : array_like
        Output tokens per request O [tokens], whole, >= 1; the prefill yields the first, then
        O − 1 decode steps run at contexts P … P + O − 2.
    batch : array_like
        Requests served together (a static batch) B [1], whole, >= 1.
    chunk : array_like, optional
        Chunked-prefill size [tokens] (default: one chunk).
    cached : array_like
        Leading prompt tokens already in the prefix cache [tokens], 0 <= cached < P.
    shared_prefix : array_like
        Leading prompt tokens every request of the batch shares S [tokens], 0 <= S < P: its KV
        is stored once, and prefilled once (beyond ``cached``).
    cascade : bool
        A shared-prefix (cascade) attention kernel reads the prefix KV once per decode step
        instead of once per sequence (default: without, once per sequence).
    sparse : bool
        Use 2:4 structured-sparsity peaks.
    routing : {"uniform", "identical"}
        MoE routing assumption of the prefill and every decode step ("identical": the strict floor).
    weights, kv : str, NumberFormat or dict, optional
        Weight and KV-cache formats, as in :func:`~roofline_decode.decode_floor` (None: the model's).
    parallel : Parallel or str, optional
        A layout of several devices (``"tp8"``, ``"tp8ep8dp8"``): the prefill and every decode
        step on its busiest device (:func:`~roofline_decode.prefill_floor` and
        :func:`~roofline_decode.decode_floor` with ``parallel=``), the fit per device; bytes and
        FLOPs stay the whole model's.  Not with ``cascade``.

    Returns
    -------
    RequestFloor

    Examples
    --------
    Llama-3.1-8B on an H100 SXM, a 2,048-token prompt and 512 output tokens, batch 1 and 32:

    >>> r = request_floor("llama-3.1-8b", "h100-sxm", 2048, 512, batch=[1, 32])
    >>> [round(float(t) * 1e3, 1) for t in r.ttft_s], [round(float(t) * 1e3, 3) for t in r.tpot_s]
    ([30.0, 960.1], [4.571, 7.365])
    >>> [round(float(t), 3) for t in r.e2e_latency_s]
    [2.366, 4.724]
    """
    model, accelerator = resolve_model_and_device(model, accelerator, weights, kv)
    routed_experts(model, routing)  # checks the routing
    cascade = flag("cascade", cascade)
    batch = whole_array("batch", batch, 1)
    prompt = whole_array("prompt", prompt, 1)
    output = whole_array("output", output, 1)
    if (output > MAX_OUTPUT).any():  # each decode step is evaluated: bound the work and the memory
        raise InvalidValueError("output", output[output > MAX_OUTPUT].flat[0].item(),
                                f"whole numbers from 1 to {MAX_OUTPUT:,} (2**24) output tokens per request")
    cached = whole_array("cached", cached, 0)
    shared = whole_array("shared_prefix", shared_prefix, 0)
    chunk_array = np.inf if chunk is None else whole_array("chunk", chunk, 1)
    grid = broadcast_grid(batch=batch, prompt=prompt, output=output, chunk=chunk_array, cached=cached, shared_prefix=shared)
    batch, prompt, output, chunk_grid, cached, shared = grid
    over = prompt > MAX_GRID_VALUE - output + 1  # exact: both whole and at most 2**53
    if over.any():
        raise InvalidValueError("prompt + output", f"{prompt[over].flat[0]:.0f} + {output[over].flat[0]:.0f}",
                                "at most 2**53 + 1 tokens in all (the decode steps' contexts reach prompt + output - 2 "
                                "and stay exact numbers)")
    for name, value in (("cached", cached), ("shared_prefix", shared)):
        if (value > prompt - 1).any():
            raise InvalidValueError(name, value[value > prompt - 1].flat[0].item(),
                                    "fewer tokens than the prompt (the last prompt token is always computed)")
    timing = device_timing(model, accelerator, sparse)
    layout = layout_of(parallel)
    layout = None if layout is None or layout.num_devices == 1 else checked_layout(model, layout, cascade)
    keys = ("ttft", "flops_p", "bytes_p", "decode", "flops_d", "bytes_d", "first", "last", "steps_compute", "resident",
            "bound_p")
    out = {k: np.empty(batch.shape, dtype=object if k == "bound_p" else float) for k in keys}
    points: dict[tuple[float, ...], list[tuple[int, ...]]] = {}  # each distinct request, and where it sits
    for index in np.ndindex(batch.shape):
        points.setdefault(tuple(float(a[index]) for a in grid), []).append(index)
    outputs: dict[tuple[float, float, float], list[float]] = {}  # the decode steps depend on (B, P, shared) and O
    for b, p, o, _, _, s in points:
        outputs.setdefault((b, p, s), []).append(o)
    decode = {(b, p, s): _decode_sums(model, accelerator, b, p, lengths, cascade, s, sparse, timing, routing, layout)
              for (b, p, s), lengths in outputs.items()}
    for (b, p, o, c, h, s), where in points.items():
        values = {**_prefill_terms(model, b, p, o, min(c, p - h), h, s, timing, routing), **decode[b, p, s][o]}
        if layout is not None:
            values["ttft"], values["bound_p"] = layout_ttft(model, accelerator, layout, b, p, min(c, p - h), h, s,
                                                            routing)
        for index in where:
            for k in keys:
                out[k][index] = values[k]
    latency = out["ttft"] + out["decode"]
    steps = decode_steps(output)
    with np.errstate(invalid="ignore", divide="ignore"):
        tpot = np.where(steps > 0, out["decode"] / np.maximum(steps, 1), np.nan)
    prefill_compute = out["bound_p"].astype(str)
    from .capacity import usable_memory

    usable = usable_memory(accelerator)
    fits = model.weight_bytes + out["resident"] <= usable
    largest = _max_batch(model, prompt + output - 1, shared, usable - model.weight_bytes)
    notes = timing.notes(REQUEST_WITHOUT_PEAK) + routing_notes(model, routing)
    if layout is not None:
        fits, largest = layout_fit(model, accelerator, layout, batch, prompt + output - 1, routing)
        notes += (f"on {layout.num_devices} devices ({layout}): TTFT and every decode step on the busiest device, "
                  "the fit per device; bytes and FLOPs of the whole model",)
        notes += (LAYOUT_PREFIX_NOTE,) if np.any(shared > cached) else ()
    return RequestFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name, compute_precision=timing.precision,
        weight_format=model.weight_format.name, kv_format=model.kv_format.name, batch=batch,
        prompt=prompt, output=output, chunk=np.where(np.isfinite(chunk_grid), chunk_grid, prompt - cached),
        cached=cached, shared_prefix=shared, cascade=bool(cascade), ttft_s=out["ttft"], prefill_flops=out["flops_p"],
        prefill_bytes=out["bytes_p"], decode_time_s=out["decode"], decode_flops=out["flops_d"],
        decode_bytes=out["bytes_d"], first_step_s=out["first"], last_step_s=out["last"], tpot_s=tpot,
        e2e_latency_s=latency, output_tokens_per_s=batch * output / latency,
        total_tokens_per_s=batch * (prompt + output) / latency, requests_per_s=batch / latency,
        kv_resident_bytes=out["resident"], prefill_bound=prefill_compute,
        decode_compute_bound_steps=out["steps_compute"], fits=fits, max_batch=largest, device=accelerator,
        notes=notes, routing=routing, layout="1 device" if layout is None else str(layout),
    )


def _max_batch(model: Model, end: np.ndarray, shared: np.ndarray, room: np.ndarray | float) -> np.ndarray:
    """Largest whole batch whose KV caches at the last decode step fit ``room`` bytes, a shared
    prefix stored once: B·(M − m·s) + m·s <= room (m·s: the prefix positions held)."""
    layers, m_kv, _ = layer_terms(model)
    per_sequence = f.kv_cache_bytes(1, end, m_kv, *layers)
    prefix = m_kv * f.shared_prefix_positions(end, shared, *layers)
    with np.errstate(divide="ignore", invalid="ignore"):
        largest = np.floor((room - prefix) / (per_sequence - prefix))
    return np.where(room < per_sequence, 0.0, np.where(per_sequence - prefix > 0, largest, np.inf))
