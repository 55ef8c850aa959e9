"""The per-layer table of a decode step under a layout: the busiest device's rows.

:func:`layout_layer_table` (what ``ParallelFloor.layers()`` returns) splits the step by layer kind, as
:func:`~roofline_decode.floors.layers.layer_table` splits a one-device step, and then applies to
each row the splits :mod:`~roofline_decode.floors.layout_traffic` applies to the whole step:

1. attention DP: the rows of one group's sequences (batch / ``attention_dp``,
   :func:`~roofline_decode.floors.layout_traffic.decode_share`);
2. tensor parallelism over ``tp`` (:func:`~roofline_decode.floors.layout_traffic.split_tensor`):
   every row 1 / tp but the replicated ones: the norm vectors (and biases) whole; the k/v
   projections of the attention rows and their KV cache at the KV-head share
   (:func:`~roofline_decode.formulas.kv_head_share`); an MLA latent cache split by context, or
   whole with its latent projections under ``mla_layout="replicated"``; the recurrent state at
   its heads' share;
3. expert parallelism (:func:`~roofline_decode.floors.layout_traffic.split_experts`): the
   routed-expert row is the busiest rank's even share of the experts the *whole* step touches;
4. ``pp`` pipeline stages: every row 1 / pp.

A last ``communication`` row has no bytes and no FLOPs: its time is the device's link time of
the step (``communication_time_s``).  The rows add up to the device's
``weight_read_bytes_per_device``, ``kv_read_bytes_per_device``,
``kv_write_bytes_per_device`` and ``flops_per_device`` (up to the rounding of a float sum),
and their memory and compute times to its memory and compute times (dense peaks).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from ..errors import InvalidValueError
from .layers import LayerRow, LayerTable, StepTotals, layer_table
from .layout_traffic import decode_share, latent_projection_parameters, mla_layout_of

if TYPE_CHECKING:
    from ..specs.model import Model
    from .layout_result import ParallelFloor

__all__ = ["layout_layer_table"]

_ATTENTION = ("attention (full)", "attention (sliding)", "attention (chunked)", "attention (sparse)")
_MLA = ("attention (MLA)", "attention (sparse MLA)")


def _refuse(floor: ParallelFloor, why: str) -> InvalidValueError:
    return InvalidValueError("floor", f"{floor.step} step of {floor.model} ({floor.strategy})", why)


def layout_layer_table(floor: ParallelFloor) -> LayerTable:
    """The busiest device's decode step of ``floor`` split by layer kind, and a communication row.

    Examples
    --------
    >>> from roofline_decode import decode_floor
    >>> r = decode_floor("deepseek-v3", "h200-sxm", batch=256, context=4096, parallel="dp8 ep8")
    >>> table = r.layers()
    >>> [row.kind for row in table][-3:]
    ['embedding', 'lm_head', 'communication']
    >>> bool(np.isclose(table.total("weight_bytes"), r.weight_read_bytes_per_device, rtol=1e-12, atol=0))
    True
    """
    from ..specs.parallel import Parallel
    from .decode import decode_floor
    from .routing import resolve_routing

    model, device = floor.spec, floor.device
    if model is None or device is None:
        raise _refuse(floor, "a floor with its model and device (decode_floor(..., parallel=...))")
    if floor.step != "decode" or floor.strategy == "pipeline":
        raise _refuse(floor, "a decode step of decode_floor(parallel=...) or tensor_parallel_floor (the "
                             "per-layer table splits one decode step)")
    if floor.routing == "measured":
        raise _refuse(floor, "routing 'uniform' or 'identical' (a measured count of experts is not kept)")
    layout = floor.parallel if floor.parallel is not None else Parallel(tp=floor.num_devices)
    batch, context = np.asarray(floor.batch, dtype=float), np.asarray(floor.context, dtype=float)
    routing = resolve_routing(floor.routing or "uniform", model, batch)
    share = decode_share(model, batch, context, routing, layout.attention_dp)
    whole = decode_floor(model, device, batch=batch, context=context, routing=routing)
    # one attention-DP group's sequences (batch / dp may be a fraction: a mean share)
    group = whole if layout.attention_dp == 1 else replace(whole, batch=share.tokens)
    rows = layer_table(group, routing).rows  # one device: a DecodeFloor
    tp, pp = layout.tp, layout.pp
    split = _TensorSplit(model, tp, floor.mla_layout or "sharded", rows, share.tokens)
    ranks = layout.ep * layout.moe_tp
    peaks = {g: p for g, p in group.group_peak_flops.items() if not np.isnan(p)}
    bandwidth = device.memory_bandwidth
    shape = floor.shape
    zero = np.zeros(shape)
    built = []
    for row in rows:
        weights, read, write, flops = split.row(row)
        if row.kind == "MoE routed experts":  # the busiest rank's share of the whole step's experts
            weights = zero + share.global_expert_bytes / ranks
            flops = {**flops, "experts": zero + share.global_expert_flops / ranks}
        if pp > 1:
            weights, read, write = weights / pp, read / pp, write / pp
            flops = {g: v / pp for g, v in flops.items()}
        memory = f.memory_time(weights + read + write, bandwidth)
        compute = zero + sum((f.compute_time(value, peaks[g]) for g, value in flops.items() if g in peaks), zero)
        built.append(LayerRow(row.kind, row.layers, zero + weights, zero + read, zero + write,
                              {g: zero + v for g, v in flops.items()}, memory, compute))
    built.append(LayerRow("communication", 0, zero, zero, zero, {}, zero, zero,
                          zero + np.asarray(floor.communication_time_s)))
    totals = StepTotals(layout=str(layout), num_devices=floor.num_devices,
        model=floor.model, accelerator=floor.accelerator, spec=model,
        weight_format=group.weight_format, kv_format=group.kv_format, batch=floor.batch, context=floor.context,
        weight_bytes=zero + floor.weight_read_bytes_per_device, kv_read_bytes=zero + floor.kv_read_bytes_per_device,
        kv_write_bytes=zero + floor.kv_write_bytes_per_device, flops=zero + floor.flops_per_device,
        memory_time_s=zero + floor.memory_time_s, compute_time_s=zero + floor.compute_time_s, bound=floor.bound)
    return LayerTable(tuple(built), totals)


class _TensorSplit:
    """One row's share on a device of ``tp``-way tensor parallelism (split 2 of the module
    docstring): the row-by-row form of :func:`~roofline_decode.floors.layout_traffic.split_tensor`."""

    def __init__(self, model: Model, tp: int, mla_layout: str, rows: tuple[LayerRow, ...], tokens: Any) -> None:
        self.tp, self.tokens = tp, tokens
        whole_latent = model.is_mla and mla_layout_of(mla_layout) == "replicated"
        latent = latent_projection_parameters(model) if whole_latent else 0
        b_attention = model.group_format("attention").bytes_per_element
        kv_heads = (1 if whole_latent else tp) if model.is_mla else model.num_kv_heads
        self.kv_share = float(f.kv_head_share(kv_heads, tp))
        self.state_share = float(f.recurrent_state_share(model.recurrent_heads or tp, tp))
        kv_proj = 0.0 if model.is_mla else b_attention * model.num_layers * 2 * model.hidden_size * (
            model.num_kv_heads * model.head_dim)
        # the k/v projections (and an MLA model's whole latent projections) spread over the
        # attention rows by their layers, as split_tensor counts them over the whole model
        attention = {r.kind: r.layers for r in rows if r.kind in _ATTENTION}
        latent_rows = {r.kind: r.layers for r in rows if r.kind in _MLA}
        self.kv_proj = {k: kv_proj * n / sum(attention.values()) for k, n in attention.items()} if attention else {}
        self.latent = ({k: (b_attention, latent * n / sum(latent_rows.values())) for k, n in latent_rows.items()}
                       if latent and latent_rows else {})

    def row(self, row: LayerRow) -> tuple[Any, Any, Any, dict[str, Any]]:
        """(weights, KV read, KV written, FLOPs per group) of ``row`` on one device."""
        n = self.tp
        weights, read, write = row.weight_bytes, row.kv_read_bytes, row.kv_write_bytes
        flops: dict[str, Any] = dict(row.group_flops)
        if n == 1:
            return weights, read, write, flops
        if row.kind == "norms and biases":  # replicated on every device
            return weights, read, write, flops
        flops = {g: v / n for g, v in flops.items()}
        if row.kind == "recurrent mixer":  # the state and its update by recurrent heads
            scores = row.group_flops.get("attention_scores", 0.0)
            flops["attention_scores"] = flops.get("attention_scores", 0.0) + scores * (self.state_share - 1 / n)
            return weights / n, read * self.state_share, write * self.state_share, flops
        if row.kind in self.kv_proj:
            proj = self.kv_proj[row.kind]
            return (weights - proj) / n + proj * self.kv_share, read * self.kv_share, write * self.kv_share, flops
        if row.kind in _MLA:
            held = weights / n
            if row.kind in self.latent:  # q_a and kv_a held whole (mla_layout="replicated"), and run whole
                bytes_per, parameters = self.latent[row.kind]
                held = held + bytes_per * parameters * (1 - 1 / n)
                flops["attention"] = flops["attention"] + f.matmul_flops(self.tokens, parameters) * (1 - 1 / n)
            return held, read * self.kv_share, write * self.kv_share, flops
        return weights / n, read, write, flops
