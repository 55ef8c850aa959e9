"""Layer 3: ``mixed_step_floor``: one continuous-batching step of decode tokens beside a prefill chunk.

It broadcasts over every numeric argument like :func:`~roofline_decode.floors.decode.decode_floor`
and keeps every term.  The chunk's bytes and FLOPs follow the prefill accounting
(:mod:`roofline_decode.floors.prefill`, DESIGN.md §4b), the decode tokens the decode step's; the
device times them as :func:`~roofline_decode.floors.prefill.prefill_floor` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, overload

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable
from ..errors import InvalidValueError
from ..formulas import prefill as fp
from .grid import KvLike, WeightsLike, broadcast_grid, checked_array
from .grid_result import GridResult
from .prefill import (Traffic, compute_text, device_timing, group_flops, make_traffic, prefill_score_value_width,
                      resolve_model_and_device, ridge_point_of, routed_experts, routing_notes)
from .terms import RooflineTerms
from .traffic import layer_terms, streamed_terms
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from ..checks import flag
from .capacity import kv_bytes_per_sequence
from .layout import Options, check_layout, layout_floor, layout_of
from .layout_result import ParallelFloor
from .layout_traffic import step_share
from .routing import resolve_routing

if TYPE_CHECKING:
    from ..specs.parallel import Parallel

__all__ = ["MixedStepFloor", "mixed_step_floor", "mixed_traffic"]

#: What a mixed step gives on a device without a compute peak (its note, after the device).
MIXED_WITHOUT_PEAK = ("a step that carries prefill tokens needs one: its step time and compute time are not given "
                      "(NaN) and its bound is n/a; a step of decode tokens alone keeps its memory floor, as "
                      "decode_floor's")


def mixed_traffic(model: Model, decode_batch: np.ndarray, decode_context: np.ndarray, prefill_tokens: np.ndarray,
                  prefill_context: np.ndarray, routing: str = "uniform") -> Traffic:
    """One continuous-batching step: B decode tokens and a prefill chunk of p tokens of one
    sequence, weights read once for all B + p tokens (experts touched: U(B + p))."""
    b_e = model.routed_expert_format.bytes_per_element
    layers, m_kv, _ = layer_terms(model)
    experts = routed_experts(model, routing)
    streamed, row, b_w = streamed_terms(model)
    lm_head = model.parameter_groups["lm_head"]
    tokens = decode_batch + prefill_tokens
    weight = f.weight_bytes_read(tokens, streamed, row, model.vocab_size, b_w, *experts, model.expert_parameters, b_e)
    has_prefill = prefill_tokens > 0
    chunk = np.maximum(prefill_tokens, 1)
    kv_read = f.kv_read_bytes(decode_batch, decode_context, m_kv, *layers) + np.where(
        has_prefill, fp.prefill_kv_read_bytes(1, chunk, chunk, prefill_context, m_kv, *layers), 0.0)
    kv_write = f.kv_write_bytes(tokens, m_kv, model.num_attention_layers)
    decode_attention = f.attention_flops(decode_batch, decode_context, model.num_heads, model.score_value_width, *layers)
    decode_flops = f.matmul_flops(decode_batch, model.matmul_parameters_per_token) + decode_attention
    prefill_attention = np.where(has_prefill, fp.prefill_attention_flops(
        1, chunk, prefill_context, model.num_heads, prefill_score_value_width(model), *layers), 0.0)
    prefill_flops = fp.prefill_matmul_flops(1, chunk, model.matmul_parameters_per_token, lm_head) + prefill_attention
    flops = decode_flops + np.where(has_prefill, prefill_flops, 0.0)
    groups = group_flops(model, decode_batch + np.where(has_prefill, prefill_tokens, 0.0),
                         decode_batch + has_prefill, decode_attention + prefill_attention)
    return make_traffic(weight, kv_read, kv_write, flops, groups)


@dataclass(frozen=True)
class MixedStepFloor(RooflineTerms, GridResult):
    """One step of continuous batching: decode tokens beside a prefill chunk (SI units).

    ``weight_format`` and ``kv_format`` name the formats the model was served in.  On a device
    without a compute peak, a step with prefill tokens (p > 0) has no time (``step_time_s`` and
    ``compute_time_s`` NaN, ``bound`` ``"n/a"``: its chunk is a prefill, whose time needs the
    peak); a step of decode tokens alone keeps the memory floor and ``compute_time_s`` 0, as
    :func:`~roofline_decode.floors.decode.decode_floor` gives it.  ``notes`` says so, with the
    peak look-ups' fallbacks and the MoE ``routing`` assumption."""

    weight_format: str
    kv_format: str
    decode_batch: np.ndarray
    decode_context: np.ndarray
    prefill_tokens: np.ndarray
    prefill_context: np.ndarray
    step_time_s: np.ndarray
    ridge_point: float | np.ndarray
    memory_bandwidth: float
    peak_flops: np.ndarray
    notes: tuple[str, ...] = ()
    routing: str = "uniform"

    RECORD_KEYS = (
        "model", "accelerator", "weight_format", "kv_format", "decode_batch", "decode_context", "prefill_tokens",
        "prefill_context",
        "weight_bytes", "kv_read_bytes", "kv_write_bytes", "bytes_total", "flops", "memory_time_s",
        "compute_time_s", "step_time_s", "bound",
    )
    COLUMNS = (
        ("decode B", "decode_batch", 1.0), ("decode T", "decode_context", 1.0),
        ("prefill tokens", "prefill_tokens", 1.0), ("prefill cached", "prefill_context", 1.0),
        ("weights GB", "weight_bytes", 1e9), ("KV read GB", "kv_read_bytes", 1e9), ("TFLOP", "flops", 1e12),
        ("mem ms", "memory_time_s", 1e-3), ("comp ms", "compute_time_s", 1e-3), ("step ms", "step_time_s", 1e-3),
        ("bound", "bound", None),
    )

    def title(self) -> str:
        return (f"mixed step of {self.model} on {self.accelerator}: {self.weight_format} weights, {self.kv_format} KV "
                f"({compute_text(self.compute_precision, self.ridge_point)})")


@overload
def mixed_step_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    decode_batch: Broadcastable,
    decode_context: Broadcastable,
    prefill_tokens: Broadcastable,
    prefill_context: Broadcastable = 0,
    *,
    sparse: bool = False,
    routing: str = "uniform",
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: None = None,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> MixedStepFloor: ...


@overload
def mixed_step_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    decode_batch: Broadcastable,
    decode_context: Broadcastable,
    prefill_tokens: Broadcastable,
    prefill_context: Broadcastable = 0,
    *,
    sparse: bool = False,
    routing: str = "uniform",
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> MixedStepFloor | ParallelFloor: ...


def mixed_step_floor(
    model: Model | str,
    accelerator: Accelerator | str,
    decode_batch: Broadcastable,
    decode_context: Broadcastable,
    prefill_tokens: Broadcastable,
    prefill_context: Broadcastable = 0,
    *,
    sparse: bool = False,
    routing: str = "uniform",
    weights: WeightsLike = None,
    kv: KvLike = None,
    parallel: Parallel | str | None = None,
    mla_layout: str = "sharded",
    link_bandwidth: float | None = None,
    node_size: int | None = None,
    scale_out_bandwidth: float | None = None,
) -> MixedStepFloor | ParallelFloor:
    """The floor of one continuous-batching step carrying decode tokens and a prefill chunk.

    ``model``, ``accelerator``, ``sparse``, ``routing``, ``weights`` and ``kv`` are as in
    :func:`~roofline_decode.floors.prefill.prefill_floor`.

    Parameters
    ----------
    decode_batch : array_like
        Sequences decoding one token each B [1], >= 0.
    decode_context : array_like
        Tokens cached per decoding sequence T [tokens], >= 0.
    prefill_tokens : array_like
        Prompt tokens of one sequence in this step's chunk p [tokens], >= 0 (B + p > 0).
    prefill_context : array_like
        Tokens of that sequence already cached (earlier chunks, prefix hits) [tokens], >= 0.
    parallel, mla_layout, link_bandwidth, node_size, scale_out_bandwidth : optional
        A parallel layout and its options, as in :func:`~roofline_decode.decode_floor`: the
        step on ``parallel.num_devices`` devices seen from the busiest one, a
        :class:`~roofline_decode.floors.parallel.ParallelFloor` (``step="mixed"``; ``batch`` and
        ``context`` are the decode batch and context; ``tokens_per_s`` counts decode and
        prefill tokens).  The attention-DP groups share the decode sequences and the chunk
        evenly (the busiest group does at least the average).  None or one device: this floor.

    Notes
    -----
    The weights are read once for all B + p tokens (vLLM and SGLang schedule such steps).
    The chunk is taken to be its prompt's last (it yields a token): the lm_head multiplies one
    of its tokens.  With p = 0 the step is :func:`~roofline_decode.floors.decode.decode_floor`'s; with
    B = 0 it is a one-chunk :func:`~roofline_decode.floors.prefill.prefill_floor` of batch 1.

    Examples
    --------
    Llama-3.1-8B on an H100 SXM: 64 sequences at 2K context beside a 512-token chunk.

    >>> r = mixed_step_floor("llama-3.1-8b", "h100-sxm", 64, 2048, 512)
    >>> round(float(r.step_time_s) * 1e3, 2), str(r.bound)
    (9.63, 'memory')

    DeepSeek-V3 on 8 H200s (attention DP, EP): 128 sequences at 4K beside a 2K-token chunk.

    >>> r = mixed_step_floor("deepseek-v3", "h200-sxm", 128, 4096, 2048, parallel="dp8 ep8")
    >>> round(float(r.step_time_s) * 1e3, 2), str(r.bound)
    (21.59, 'memory')
    """
    model, accelerator = resolve_model_and_device(model, accelerator, weights, kv)
    decode_batch = checked_array("decode_batch", decode_batch, 0.0, inclusive=True)
    decode_context = checked_array("decode_context", decode_context, 0.0, inclusive=True)
    prefill_tokens = checked_array("prefill_tokens", prefill_tokens, 0.0, inclusive=True)
    prefill_context = checked_array("prefill_context", prefill_context, 0.0, inclusive=True)
    grid = broadcast_grid(decode_batch=decode_batch, decode_context=decode_context, prefill_tokens=prefill_tokens,
                          prefill_context=prefill_context)
    empty = (grid[0] + grid[2]) <= 0
    if empty.any():
        raise InvalidValueError("decode_batch + prefill_tokens", 0, "a step with at least one token (> 0)")
    layout = layout_of(parallel)
    if layout is not None and layout.num_devices > 1:
        options = Options(link_bandwidth=link_bandwidth, node_size=node_size, scale_out_bandwidth=scale_out_bandwidth,
                          mla_layout=mla_layout, sparse=flag("sparse", sparse))
        return _mixed_layout(model, accelerator, layout, options, grid, routing)
    timing = device_timing(model, accelerator, sparse)
    t = mixed_traffic(model, grid[0], grid[1], grid[2], grid[3], routing=routing)
    prefill = grid[2] > 0  # without a peak a chunk has no time; decode tokens alone keep the memory floor
    memory = timing.memory_time(t)
    compute = np.where(prefill, timing.required_compute_time(t), timing.compute_time(t))
    peak = timing.effective_peak(t, compute)
    notes = timing.notes(MIXED_WITHOUT_PEAK) if prefill.any() else timing.peaks.notes
    return MixedStepFloor(
        model=model.name, accelerator=accelerator.id or accelerator.name, compute_precision=timing.precision,
        weight_format=model.weight_format.name, kv_format=model.kv_format.name, decode_batch=grid[0], decode_context=grid[1], prefill_tokens=grid[2], prefill_context=grid[3],
        weight_bytes=t.weight_bytes, kv_read_bytes=t.kv_read_bytes, kv_write_bytes=t.kv_write_bytes,
        bytes_total=t.bytes_total, flops=t.flops, memory_time_s=memory, compute_time_s=compute,
        step_time_s=f.step_time(memory, compute), ridge_point=ridge_point_of(peak, timing.bandwidth),
        memory_bandwidth=timing.bandwidth, peak_flops=peak, notes=notes + routing_notes(model, routing), routing=routing,
    )


def _mixed_layout(model: Model, accelerator: Accelerator, layout: Parallel, options: Options,
                  grid: tuple[np.ndarray, ...], routing: str) -> ParallelFloor:
    """``mixed_step_floor`` under a layout of several devices (:func:`~roofline_decode.floors.layout.layout_floor`)."""
    check_layout(model, layout)
    decode_batch, decode_context, prefill_tokens, prefill_context = grid
    t = mixed_traffic(model, decode_batch, decode_context, prefill_tokens, prefill_context, routing=routing)
    _, row, b_w = streamed_terms(model)
    tokens = decode_batch + prefill_tokens
    expert_bytes: Any = 0.0
    if model.is_moe:
        expert_bytes = f.weight_bytes_read(tokens, 0, 0, model.vocab_size, b_w, *routed_experts(model, routing),
                                           model.expert_parameters, model.routed_expert_format.bytes_per_element)
    rows = f.weight_bytes_read(tokens, 0, row, model.vocab_size, b_w)
    has_prefill = prefill_tokens > 0
    resident = decode_batch * kv_bytes_per_sequence(model, decode_context) + np.where(
        has_prefill, kv_bytes_per_sequence(model, prefill_context + prefill_tokens), 0.0)
    share = step_share(t, tokens=tokens, kv_resident=resident, expert_bytes=expert_bytes, gathered_bytes=rows,
                       dp=layout.attention_dp)
    return layout_floor(model, accelerator, layout, share, batch=decode_batch, context=decode_context, tokens=tokens,
                        logits_tokens=decode_batch + has_prefill, options=options,
                        routing=resolve_routing(routing, model), step="mixed", tokens_per_step=tokens,
                        prefill_tokens=prefill_tokens, prefill_context=prefill_context, needs_peak=has_prefill)
