"""Layer 3: ``prefill_floor``: the floor of the time to first token, and the device timing the
request, mixed-step and speculative floors share.

It broadcasts over every numeric argument like :func:`~roofline_decode.floors.decode.decode_floor`
and keep every term.  Accounting: DESIGN.md §4b and :mod:`roofline_decode.formulas.prefill`.
The device is timed as ``decode_floor`` times a decode step: bytes at its bandwidth, each FLOP
group at the peak of its own compute precision (DESIGN.md §4b), the group times added.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable, Operand
from .energy import EnergyAndCost
from ..checks import flag
from ..errors import InvalidValueError
from .peaks import NO_COMPUTE_PEAK, Peaks, group_peaks
from ..formulas import prefill as fp
from .grid import KvLike, WeightsLike, broadcast_grid, checked_array
from .traffic import layer_terms, matrix_parameters_per_token, streamed_terms, StepTraffic
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .routing import resolve_routing
from .layout import Options, layout_of, prefill_layout_floor
from .layout_result import ParallelFloor

if TYPE_CHECKING:
    from ..specs.parallel import Parallel
from .terms import RooflineTerms
from .grid_result import GridResult

__all__ = ["PrefillFloor", "prefill_floor", "prefill_traffic", "device_timing", "Timing", "Traffic",
           "ridge_point_of", "ridge_text", "compute_text", "routing_notes"]


@dataclass(frozen=True)
class Traffic:
    """Bytes and FLOPs of a prefill or a step (device independent); ``group_flops`` splits the
    FLOPs by compute group (``estimate.COMPUTE_GROUPS``), each timed at its own precision."""

    weight_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    flops: np.ndarray
    group_flops: dict[str, np.ndarray]

    @property
    def bytes_total(self) -> np.ndarray:
        total: np.ndarray = self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes
        return total


def group_flops(model: Model, matmul_tokens: Operand, lm_head_tokens: Operand,
                attention: np.ndarray) -> dict[str, np.ndarray]:
    """FLOPs per compute group: every matrix group for ``matmul_tokens`` tokens, the lm_head for
    ``lm_head_tokens``, and the attention scores."""
    counts = matrix_parameters_per_token(model)
    groups = {g: f.matmul_flops(matmul_tokens, c) for g, c in counts.items() if g != "lm_head"}
    if "lm_head" in counts:
        groups["lm_head"] = f.matmul_flops(lm_head_tokens, counts["lm_head"])
    groups["attention_scores"] = attention
    return groups


def make_traffic(weight: np.ndarray, kv_read: np.ndarray, kv_write: np.ndarray, flops: np.ndarray,
                 groups: dict[str, np.ndarray]) -> Traffic:
    weight, kv_read, kv_write, flops = np.broadcast_arrays(weight, kv_read, kv_write, flops)
    return Traffic(weight, kv_read, kv_write, flops, {g: np.broadcast_to(v, flops.shape) for g, v in groups.items()})


@dataclass(frozen=True)
class Timing:
    """How one device times bytes and FLOPs, exactly as ``decode_floor`` does: memory at the
    bandwidth, each FLOP group at the peak of its own compute precision (the times add).

    ``device`` and ``weights`` name the device and the weight format in the notes."""

    precision: str
    bandwidth: float
    peaks: Peaks
    device: str = ""
    weights: str = ""

    @property
    def bounded(self) -> bool:
        """Whether some FLOP group has a published peak."""
        return self.peaks.bounded

    def memory_time(self, traffic: Traffic) -> np.ndarray:
        time: np.ndarray = f.memory_time(traffic.bytes_total, self.bandwidth)
        return time

    def compute_time(self, traffic: Traffic) -> np.ndarray:
        if not self.peaks.bounded:  # no published peak: the compute bound is dropped
            return np.zeros(np.shape(traffic.flops))
        return self.peaks.compute_time(StepTraffic(traffic.weight_bytes, traffic.kv_read_bytes, traffic.kv_write_bytes,
                                                traffic.flops, traffic.group_flops))

    def required_compute_time(self, traffic: Traffic) -> np.ndarray:
        """:meth:`compute_time` of a time that needs a peak (a prefill): NaN on a device without any."""
        if not self.peaks.bounded:
            return np.full(np.shape(traffic.flops), np.nan)
        return self.compute_time(traffic)

    def notes(self, without_peak: str) -> tuple[str, ...]:
        """The notes of the peak look-ups (precision and sparse fallbacks, groups without a peak);
        on a device without any peak, one sentence saying ``without_peak``: what is given and
        what is not (a decode step's wording, "the floor is the memory time", does not fit a
        prefill)."""
        if self.peaks.bounded:
            return self.peaks.notes
        kept = [note for note in self.peaks.notes if not note.startswith(NO_COMPUTE_PEAK)]
        return (*kept, f"{NO_COMPUTE_PEAK} for {self.device} ({self.weights} weights): {without_peak}")

    def effective_peak(self, traffic: Traffic, compute: np.ndarray) -> np.ndarray:
        """FLOPs / compute time [FLOP/s] (NaN without a published peak)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(compute > 0, traffic.flops / np.where(compute > 0, compute, 1.0), np.nan)


def device_timing(model: Model, accelerator: Accelerator, sparse: bool = False) -> Timing:
    """The :class:`Timing` of ``model`` on ``accelerator`` (``decode_floor``'s peaks and bandwidth)."""
    peaks = group_peaks(model, accelerator, flag("sparse", sparse))
    return Timing(peaks.summary(), float(accelerator.memory_bandwidth), peaks, accelerator.id or accelerator.name,
                  model.weight_format.name)


def routing_notes(model: Model, routing: str) -> tuple[str, ...]:
    """The MoE routing note of a result (none for a dense model), as ``decode_floor`` words it."""
    note = resolve_routing(routing, model).note(model)
    return () if note is None else (note,)


def ridge_point_of(peak: np.ndarray, bandwidth: float) -> float | np.ndarray:
    """The ridge point: a float when the effective peak is the same everywhere, else an array."""
    ridge = np.asarray(peak, dtype=np.float64) / bandwidth
    finite = ridge[np.isfinite(ridge)]
    if finite.size == 0:
        return float("nan")
    return float(finite.flat[0]) if np.allclose(finite, finite.flat[0], rtol=1e-12) else ridge


def ridge_text(ridge: float | np.ndarray) -> str:
    if np.ndim(ridge) == 0:
        return NO_COMPUTE_PEAK if np.isnan(ridge) else f"ridge point {float(ridge):.4g} FLOP/B"
    return "ridge point varies with the mix of precisions"


def compute_text(precision: str, ridge: float | np.ndarray | None = None) -> str:
    """The compute part of a title: "computing in bf16; ridge point 295 FLOP/B" (without the
    ridge where none is given), or the plain NO_COMPUTE_PEAK where the device has no peak (its
    name stands for the precision then)."""
    if precision == NO_COMPUTE_PEAK:
        return NO_COMPUTE_PEAK
    return f"computing in {precision}" + ("" if ridge is None else f"; {ridge_text(ridge)}")


ROUTINGS = ("uniform", "identical")

#: What a prefill gives on a device without a compute peak (its note, after the device).
PREFILL_WITHOUT_PEAK = ("a prefill's time needs one: TTFT, prompt tokens/s, the compute time, the bound, P* and "
                        "chunk* are not given (NaN, n/a); bytes, FLOPs and the memory time are")


def routed_experts(model: Model, routing: str = "uniform") -> tuple[int, int, int]:
    """(MoE layers, E, k) for the formulas: uniform routing touches U(tokens) experts per MoE
    layer; identical routing (every token picks the same k: the strict floor) passes E = k, so
    U = k for any token count (and 0 for none)."""
    if not isinstance(routing, str) or routing not in ROUTINGS:  # a measured count is decode_floor's alone
        raise InvalidValueError("routing", routing, "'uniform' or 'identical'")
    layers, experts, per_token = layer_terms(model)[2]
    return (layers, per_token, per_token) if routing == "identical" else (layers, experts, per_token)


def prefill_score_value_width(model: Model) -> float:
    """w of a prefill (MLA: the cheaper of the decompressed and absorbed forms)."""
    if model.is_mla:
        width: float = fp.mla_prefill_score_value_width(model.kv_lora_rank, model.qk_nope_head_dim,
                                                        model.qk_rope_head_dim, model.v_head_dim)
        return width
    return model.score_value_width


def _lm_head_weight_terms(model: Model) -> float:
    """The lm_head in the units of ``streamed_terms``: parameters for one weight format, bytes
    (b = 1) with per-group formats."""
    lm_head = model.parameter_groups["lm_head"]
    if model.has_uniform_weights:
        return lm_head
    return lm_head * model.group_format("lm_head").bytes_per_element


def prefill_traffic(model: Model, batch: Operand, prompt: Operand, chunk: Operand, cached: Operand,
                    routing: str = "uniform") -> Traffic:
    """Bytes and FLOPs of prefilling ``prompt`` tokens per sequence for ``batch`` sequences
    (``cached`` tokens before them); the four broadcast against each other."""
    b_e = model.routed_expert_format.bytes_per_element
    layers, m_kv, _ = layer_terms(model)
    experts = routed_experts(model, routing)
    streamed, row, b_w = streamed_terms(model)
    lm_head = model.parameter_groups["lm_head"]
    weight = fp.prefill_weight_bytes(
        batch, prompt, chunk, streamed, _lm_head_weight_terms(model), row, model.vocab_size, b_w, *experts,
        model.expert_parameters, b_e,
    )
    kv_read = fp.prefill_kv_read_bytes(batch, prompt, chunk, cached, m_kv, *layers)
    kv_write = f.kv_write_bytes(batch * prompt, m_kv, model.num_attention_layers)  # recurrent layers cache no KV
    attention = fp.prefill_attention_flops(batch, prompt, cached, model.num_heads, prefill_score_value_width(model),
                                           *layers)
    flops = fp.prefill_matmul_flops(batch, prompt, model.matmul_parameters_per_token, lm_head) + attention
    return make_traffic(weight, kv_read, kv_write, flops, group_flops(model, batch * prompt, batch, attention))


def _margin(model: Model, batch: np.ndarray, prompt: np.ndarray | float, chunk: np.ndarray | float,
            cached: np.ndarray, timing: Timing, routing: str = "uniform") -> np.ndarray:
    t = prefill_traffic(model, batch, prompt, chunk, cached, routing)
    margin: np.ndarray = timing.compute_time(t) - timing.memory_time(t)
    return margin


def _smallest_whole(predicate: Callable[[np.ndarray], np.ndarray], low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Smallest whole x in (low, high] with predicate true, given false at low and true at high."""
    low, high = low.astype(float), high.astype(float)
    for _ in range(64):
        open_ = high - low > 1
        if not open_.any():
            break
        mid = np.where(open_, np.floor((low + high) / 2), high)  # closed rows: evaluate a valid point
        ok = predicate(mid)
        high = np.where(open_ & ok, mid, high)
        low = np.where(open_ & ~ok, mid, low)
    return high


def _compute_bound_prompt(model: Model, batch: np.ndarray, cached: np.ndarray, timing: Timing,
                          routing: str = "uniform") -> np.ndarray:
    """Smallest whole prompt whose unchunked prefill is compute-bound (inf: none up to 2^40;
    NaN: no compute peak published, so none can be told)."""
    if not timing.peaks.bounded:
        return np.full(np.shape(batch), np.nan)
    high = np.ones(np.shape(batch))
    for _ in range(41):
        below = _margin(model, batch, high, high, cached, timing, routing) < 0
        if not below.any():
            break
        high = np.where(below, high * 2, high)
    found = _margin(model, batch, high, high, cached, timing, routing) >= 0
    at_one = _margin(model, batch, 1.0, 1.0, cached, timing, routing) >= 0
    result = _smallest_whole(lambda p: _margin(model, batch, p, p, cached, timing, routing) >= 0,
                             np.where(found, np.floor(high / 2), 0), high)
    return np.where(at_one, 1.0, np.where(found, result, np.inf))


def _compute_bound_chunk(model: Model, batch: np.ndarray, prompt: np.ndarray, cached: np.ndarray, timing: Timing,
                         routing: str = "uniform") -> np.ndarray:
    """Smallest whole chunk at which the prefill of ``prompt`` is compute-bound (inf: none).

    Bisection over 1 … P: bytes fall as chunks grow, up to the ceiling steps of the chunk count.
    NaN without a published compute peak."""
    if not timing.peaks.bounded:
        return np.full(np.shape(prompt), np.nan)
    whole = np.ceil(prompt)
    possible = _margin(model, batch, prompt, whole, cached, timing, routing) >= 0
    at_one = _margin(model, batch, prompt, 1.0, cached, timing, routing) >= 0
    result = _smallest_whole(lambda c: _margin(model, batch, prompt, c, cached, timing, routing) >= 0,
                             np.ones_like(whole), whole)
    return np.where(at_one, 1.0, np.where(possible, result, np.inf))


@dataclass(frozen=True)
class PrefillFloor(RooflineTerms, GridResult, EnergyAndCost):
    """The prefill floor (time to first token) broadcast over batch, prompt, chunk and cached.

    SI units: bytes [B], FLOPs, seconds [s].  ``ttft_s`` is the floor of the whole prefill, the
    time to first token (the prefill yields it), as :class:`~roofline_decode.RequestFloor` names
    it; ``prompt_tokens_per_s`` is B·P / TTFT.  ``time_s`` is a deprecated alias of ``ttft_s``.
    ``prompt`` counts a cached prefix (``cached`` of its tokens are not recomputed).
    ``compute_bound_prompt``: smallest prompt whose unchunked prefill (same batch and cached
    prefix) is compute-bound; ``compute_bound_chunk``: smallest chunk at which this prompt's
    prefill is compute-bound (inf where even one chunk stays memory-bound).

    **No answer without its ingredients.**  A prefill's time needs a compute peak: on a device
    that publishes none for the model's precisions (:data:`~roofline_decode.floors.NO_COMPUTE_PEAK`:
    Apple M-series, several GeForce and Radeon cards, CPUs ...) ``ttft_s``,
    ``prompt_tokens_per_s``, ``compute_time_s``, ``peak_flops``, ``ridge_point``,
    ``compute_bound_prompt`` and ``compute_bound_chunk`` are NaN and ``bound`` is ``"n/a"``
    (the memory time alone would claim any FLOP rate); bytes, FLOPs, ``memory_time_s`` and the
    arithmetic intensity stand, and ``notes`` says so.  ``notes`` also carries the peak
    look-ups' fallbacks and, for an MoE model, the ``routing`` assumption.
    """

    weight_format: str
    kv_format: str
    batch: np.ndarray
    prompt: np.ndarray
    chunk: np.ndarray
    cached: np.ndarray
    num_chunks: np.ndarray
    ttft_s: np.ndarray
    prompt_tokens_per_s: np.ndarray
    arithmetic_intensity: np.ndarray
    ridge_point: float | np.ndarray
    compute_bound_prompt: np.ndarray
    compute_bound_chunk: np.ndarray
    memory_bandwidth: float
    peak_flops: np.ndarray
    spec: Model = field(repr=False)
    device: Accelerator | None = field(default=None, repr=False, compare=False)
    notes: tuple[str, ...] = ()
    routing: str = "uniform"

    @property
    def time_s(self) -> np.ndarray:
        """Deprecated alias of :attr:`ttft_s` (the name until 0.2; goes in the next release)."""
        warnings.warn("PrefillFloor.time_s is deprecated: use ttft_s (the time to first token, as RequestFloor "
                      "names it)", DeprecationWarning, stacklevel=2)
        return self.ttft_s

    @property
    def _energy_time(self) -> np.ndarray:
        return np.asarray(self.ttft_s)

    @property
    def _energy_tokens(self) -> np.ndarray:  # prompt tokens processed (input tokens)
        ttft = np.asarray(self.ttft_s)
        # B·P directly where the TTFT is not defined (no peak: the data-movement floor per token stands)
        tokens: np.ndarray = np.where(np.isnan(ttft), self.batch * (self.prompt - self.cached),
                                      np.asarray(self.prompt_tokens_per_s) * ttft)
        return tokens

    RECORD_KEYS = (
        "model", "accelerator", "batch", "prompt", "chunk", "cached", "num_chunks", "weight_format", "kv_format",
        "weight_bytes", "kv_read_bytes", "kv_write_bytes", "bytes_total", "flops", "memory_time_s",
        "compute_time_s", "ttft_s", "prompt_tokens_per_s", "arithmetic_intensity", "ridge_point", "bound",
        "compute_bound_prompt", "compute_bound_chunk",
    )
    COLUMNS = (
        ("batch", "batch", 1.0), ("prompt", "prompt", 1.0), ("chunk", "chunk", 1.0), ("cached", "cached", 1.0),
        ("weights GB", "weight_bytes", 1e9), ("KV read GB", "kv_read_bytes", 1e9),
        ("KV write GB", "kv_write_bytes", 1e9), ("TFLOP", "flops", 1e12), ("mem ms", "memory_time_s", 1e-3),
        ("comp ms", "compute_time_s", 1e-3), ("TTFT ms", "ttft_s", 1e-3), ("bound", "bound", None),
        ("P*", "compute_bound_prompt", 1.0), ("chunk*", "compute_bound_chunk", 1.0),
    )

    def title(self) -> str:
        return (f"prefill of {self.model} on {self.accelerator}: {self.weight_format} weights, {self.kv_format} KV, "
                f"{compute_text(self.compute_precision, self.ridge_point)}")


def resolve_model_and_device(model: Model | str, accelerator: Accelerator | str, weights: WeightsLike = None,
                             kv: KvLike = None) -> tuple[Model, Accelerator]:
    """The model (in the ``weights`` and ``kv`` formats, as :func:`~roofline_decode.load_model`
    applies them; None keeps the model's) and the device, from specs or catalog ids."""
    from ..catalog import load_accelerator, load_model

    return load_model(model, weights=weights, kv=kv), load_accelerator(accelerator)


@overload
def prefill_floor(model: Model | str, accelerator: Accelerator | str, prompt: Broadcastable, batch: Broadcastable = 1,
                  *, chunk: Broadcastable | None = None, cached: Broadcastable = 0, sparse: bool = False,
                  routing: str = "uniform", weights: WeightsLike = None, kv: KvLike = None, parallel: None = None,
                  mla_layout: str = "sharded", link_bandwidth: float | None = None, node_size: int | None = None,
                  scale_out_bandwidth: float | None = None) -> PrefillFloor: ...


@overload
def prefill_floor(model: Model | str, accelerator: Accelerator | str, prompt: Broadcastable, batch: Broadcastable = 1,
                  *, chunk: Broadcastable | None = None, cached: Broadcastable = 0, sparse: bool = False,
                  routing: str = "uniform", weights: WeightsLike = None, kv: KvLike = None,
                  parallel: Parallel | str, mla_layout: str = "sharded", link_bandwidth: float | None = None,
                  node_size: int | None = None, scale_out_bandwidth: float | None = None) -> PrefillFloor | ParallelFloor: ...


def prefill_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    prompt: Broadcastable,
    batch: Broadcastable = 1,
    *,
    chunk: Broadcastable | None = None,
    cached: Broadcastable = 0,
    sparse: bool = False,
    routing: str = "uniform",
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str | None = None,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> PrefillFloor | ParallelFloor:
    """The fastest possible prefill of a prompt: the floor of the time to first token.

    The prompt's new tokens run in chunks of ``chunk`` per sequence, after the ``cached`` ones.

    Parameters
    ----------
    model, accelerator : Model/str, Accelerator/str
        A model and a device, or catalog ids.
    prompt : array_like
        Prompt tokens per sequence [tokens], >= 1, a cached prefix included.
    batch : array_like
        Sequences prefilled together B [1], > 0.
    chunk : array_like, optional
        Tokens per sequence per chunk c [tokens], >= 1 (chunked prefill); default: one chunk.
    cached : array_like
        Leading prompt tokens already in the KV cache (a prefix-cache hit) C [tokens],
        0 <= C < prompt: they are read, not recomputed; P = prompt − C tokens are prefilled.
    sparse : bool
        Use 2:4 structured-sparsity peaks.
    routing : {"uniform", "identical"}
        MoE routing: the expected experts a chunk of independent tokens touches, or the strict
        floor (every token picks the same k experts).
    weights, kv : str, NumberFormat or dict, optional
        Weight and KV-cache formats, as in :func:`~roofline_decode.decode_floor` (None: the model's).
    parallel, mla_layout, link_bandwidth, node_size, scale_out_bandwidth : optional
        A parallel layout and its options, as in :func:`~roofline_decode.decode_floor`: the
        prefill of all ``batch`` sequences on ``parallel.num_devices`` devices, seen from the
        busiest one (sequences spread over the attention-DP groups; its ``ttft_s`` is the
        step time).  None (default) or one device: the single-device floor.

    Returns
    -------
    PrefillFloor or ParallelFloor
        Every term, broadcast over batch, prompt, chunk and cached; a ``ParallelFloor``
        (``step="prefill"``, ``context`` = ``cached``, ``prefill_tokens`` the new tokens per
        sequence) for a layout of several devices.

    Notes
    -----
    Bytes: weights once per chunk (lm_head once), one embedding row per prompt token, KV
    written for every prompt token, KV read once per chunk for the tokens before it; FLOPs:
    2 per matrix parameter per token (lm_head for the last token only) plus causal attention
    summed exactly over positions; time = max(bytes / BW, FLOPs / peak) (DESIGN.md §4b).

    Examples
    --------
    Llama-2-7B in bf16, a 2,048-token prompt on an A100-80GB SXM: compute-bound, 27.6 TFLOP, 88.5 ms.

    >>> r = prefill_floor("llama-2-7b", "a100-80gb-sxm", 2048)
    >>> f"{float(r.flops):.3g}", round(float(r.ttft_s) * 1e3, 1), str(r.bound)
    ('2.76e+13', 88.5, 'compute')
    >>> int(r.compute_bound_prompt)
    157

    Llama-3.1-70B prefilling 8 prompts of 8K tokens on 8 H100s, tensor parallel:

    >>> r = prefill_floor("llama-3.1-70b", "h100-sxm", 8192, 8, parallel="tp8")
    >>> round(float(r.ttft_s), 2), str(r.bound)
    (1.22, 'compute')
    """
    model, accelerator = resolve_model_and_device(model, accelerator, weights, kv)
    batch = checked_array("batch", batch, 1.0, inclusive=True)
    prompt = checked_array("prompt", prompt, 1.0, inclusive=True)
    cached = checked_array("cached", cached, 0.0, inclusive=True)
    batch, prompt, cached = broadcast_grid(batch=batch, prompt=prompt, cached=cached)
    if (cached > prompt - 1).any():
        bad = cached[cached > prompt - 1].flat[0].item()
        raise InvalidValueError("cached", bad, "fewer tokens than the prompt (the last prompt token is always computed)")
    new = prompt - cached
    chunk = new if chunk is None else checked_array("chunk", chunk, 1.0, inclusive=True)
    batch, prompt, chunk, cached, new = broadcast_grid(batch=batch, prompt=prompt, chunk=chunk, cached=cached, new=new)
    layout = layout_of(parallel)
    if layout is not None and layout.num_devices > 1:
        options = Options(link_bandwidth=link_bandwidth, node_size=node_size, scale_out_bandwidth=scale_out_bandwidth,
                          mla_layout=mla_layout, sparse=flag("sparse", sparse))
        return prefill_layout_floor(model, accelerator, layout, options, prefill_traffic(
            model, batch, new, chunk, cached, routing), batch, prompt, chunk, cached, new,
            routed_experts(model, routing), resolve_routing(routing, model))
    timing = device_timing(model, accelerator, sparse)
    t = prefill_traffic(model, batch, new, chunk, cached, routing)
    memory, compute = timing.memory_time(t), timing.required_compute_time(t)
    time = f.step_time(memory, compute)
    peak = timing.effective_peak(t, compute)
    return PrefillFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name, weight_format=model.weight_format.name,
        kv_format=model.kv_format.name, compute_precision=timing.precision, batch=batch, prompt=prompt, chunk=chunk,
        cached=cached, num_chunks=np.ceil(new / chunk), weight_bytes=t.weight_bytes, kv_read_bytes=t.kv_read_bytes,
        kv_write_bytes=t.kv_write_bytes, bytes_total=t.bytes_total, flops=t.flops, memory_time_s=memory,
        compute_time_s=compute, ttft_s=time, prompt_tokens_per_s=batch * new / time,
        arithmetic_intensity=f.arithmetic_intensity(t.flops, t.bytes_total),
        ridge_point=ridge_point_of(peak, timing.bandwidth),
        compute_bound_prompt=cached + _compute_bound_prompt(model, batch, cached, timing, routing),
        compute_bound_chunk=_compute_bound_chunk(model, batch, new, cached, timing, routing),
        memory_bandwidth=timing.bandwidth, peak_flops=peak, spec=model, device=accelerator,
        notes=timing.notes(PREFILL_WITHOUT_PEAK) + routing_notes(model, routing), routing=routing,
    )

