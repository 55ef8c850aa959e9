"""Compare measured decode timings with the floor.

For each row: the floor step time, efficiency = floor / measured, achieved bandwidth = bytes
the floor counts / measured time, model-bandwidth utilisation (MBU) = achieved bandwidth /
peak bandwidth, model-FLOPs utilisation (MFU), and flags.  A row faster than its *strict*
floor is flagged :data:`IMPOSSIBLE`: a floor cannot be beaten, so the row's units, token count
(early stop at EOS) or caching must be wrong.  For an MoE model the strict floor is the one of
identical routing (every sequence reads the same k experts, :mod:`roofline_decode.floors.routing`); a
row between it and the uniform-routing floor is flagged :data:`FASTER_THAN_UNIFORM` instead:
possible, with correlated or skewed routing (same prompts in every sequence, a popular expert).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypedDict

import numpy as np

from ..floors.records import ToDataFrame
from ..errors import InvalidValueError, is_real
from ..formats import NumberFormat
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from ..units import GB, format_number
from ..units import format_table
from ..floors.capacity import device_memory
from .rows import MeasurementRow

__all__ = ["IMPOSSIBLE", "FASTER_THAN_UNIFORM", "EXCEEDS_MEMORY", "RowComparison", "Comparison", "compare", "resolve_model",
           "resolve_accelerator", "microbatches"]

IMPOSSIBLE = "impossible: check units, early stop, or caching"
FASTER_THAN_UNIFORM = "faster than uniform routing: correlated or skewed routing"
EXCEEDS_MEMORY = "weights exceed device memory: offloaded or sharded, not a resident-weights measurement"


@dataclass(frozen=True)
class RowComparison:
    """One measured row next to its floor; all SI units."""

    row: MeasurementRow
    model: str
    accelerator: str
    weight_format: str
    kv_format: str
    measured_step_time_s: float
    floor_step_time_s: float
    memory_time_s: float
    compute_time_s: float
    bytes_moved: float
    flops: float
    bound: str
    efficiency: float
    achieved_bandwidth: float
    bandwidth_utilisation: float
    flops_utilisation: float
    flags: tuple[str, ...] = field(default=())
    routing: str = "uniform"
    strict_floor_step_time_s: float | None = None
    uniform_floor_step_time_s: float | None = None

    @property
    def impossible(self) -> bool:
        """True when the measured time is below the strict floor."""
        return IMPOSSIBLE in self.flags

    def to_record(self) -> dict[str, Any]:
        r = self.row
        return {
            "label": r.describe(), "model": self.model, "accelerator": self.accelerator,
            "weight_format": self.weight_format, "kv_format": self.kv_format, "batch": r.batch,
            "context": r.context, "num_devices": r.num_devices, "scope": r.scope,
            "measured_step_time_s": self.measured_step_time_s, "floor_step_time_s": self.floor_step_time_s,
            "memory_time_s": self.memory_time_s, "compute_time_s": self.compute_time_s,
            "bytes_moved": self.bytes_moved, "flops": self.flops, "bound": self.bound,
            "efficiency": self.efficiency, "achieved_bandwidth": self.achieved_bandwidth,
            "bandwidth_utilisation": self.bandwidth_utilisation, "flops_utilisation": self.flops_utilisation,
            "flags": list(self.flags), "source": r.source, "routing": self.routing,
            "strict_floor_step_time_s": self.strict_floor_step_time_s,
            "uniform_floor_step_time_s": self.uniform_floor_step_time_s,
        }


class Comparison(ToDataFrame, list[RowComparison]):
    """The :class:`RowComparison` of each row, in input order."""

    @property
    def flagged(self) -> list[RowComparison]:
        """Rows with at least one flag."""
        return [c for c in self if c.flags]

    @property
    def impossible(self) -> list[RowComparison]:
        """Rows faster than their strict floor."""
        return [c for c in self if c.impossible]

    def to_records(self) -> list[dict[str, Any]]:
        return [c.to_record() for c in self]

    def __str__(self) -> str:
        headers = ["row", "device", "B", "T", "measured ms", "floor ms", "eff.", "GB/s", "MBU", "bound", "flags"]
        lines: list[list[str]] = []
        for c in self:
            lines.append([
                c.row.describe(), c.accelerator, f"{c.row.batch:g}", f"{c.row.context:g}",
                format_number(c.measured_step_time_s * 1e3), format_number(c.floor_step_time_s * 1e3),
                f"{c.efficiency:.1%}", format_number(c.achieved_bandwidth / GB), f"{c.bandwidth_utilisation:.1%}",
                c.bound, "; ".join(c.flags),
            ])
        return format_table(headers, lines)


def resolve_model(model: Model | str | None, weight_format: str | NumberFormat | None = None,
                  kv_format: str | NumberFormat | None = None, field_name: str = "model") -> Model:
    """A Model from an id or object, served in the given formats (None keeps the model's)."""
    from ..catalog import load_model

    if model is None:
        raise InvalidValueError(field_name, None, "a Model or a catalog model id (the row has none and none was given)")
    model = load_model(model)
    if weight_format is not None or kv_format is not None:
        model = model.with_precision(weights=weight_format, kv=kv_format)
    return model


def resolve_accelerator(accelerator: Accelerator | str | None, field_name: str = "accelerator") -> Accelerator:
    from ..catalog import load_accelerator

    if accelerator is None:
        raise InvalidValueError(field_name, None, "an Accelerator or a catalog id (the row has none and none was given)")
    return load_accelerator(accelerator)


class _FloorTerms(TypedDict):
    """A row's floor on its devices: times [s], bytes [B], FLOPs, bandwidth [B/s], peak [FLOP/s]
    and the routing label of the reported floor."""

    memory: float
    compute: float
    bytes: float
    flops: float
    bandwidth: float
    peak: float
    routing: str


def microbatches(batch: float, stages: int) -> int:
    """Micro-batches of the fastest pipeline schedule of ``batch`` sequences over ``stages``
    stages: min(B, p) (whole).  With m <= p a step takes p stage passes of one micro-batch, and
    a smaller micro-batch moves fewer bytes; with m > p each stage re-reads its weights m times.
    At batch 1, as in every llama-bench ``tg`` row, m = 1: the stages run one after another."""
    return max(1, min(int(batch), stages))


def _floor_terms(row: MeasurementRow, model: Model, device: Accelerator, routing: str | float = "uniform") -> _FloorTerms:
    """The floor of ``row`` on its devices: ``num_devices`` (tensor parallel) in each of
    ``pipeline_parallel`` stages.  Within a stage, a perfect split over its devices; across
    stages the pipeline floor (:func:`~roofline_decode.floors.parallel.pipeline_parallel_floor`,
    :func:`~roofline_decode.formulas.pipeline_step_time`): m micro-batches of B/m sequences each
    pass the p stages in turn, each stage moving 1/p of a micro-batch's bytes and FLOPs, so a step
    takes max(m, p) stage passes.  A layer split (llama.cpp's default ``-sm layer``) is such a
    pipeline: at batch 1 it is as slow as one stage holding every layer, not p times faster.
    Hand-offs between stages are left out (a floor), and the routing is the row's."""
    from ..floors.decode import decode_floor
    from ..formulas import pipeline_step_time

    n, p = row.num_devices, row.pipeline_parallel
    m = microbatches(row.batch, p)
    floor = decode_floor(model, device, batch=row.batch / m, context=row.context, routing=routing)  # one micro-batch
    if row.scope == "kv_read":
        bytes_moved = float(floor.kv_read_bytes)
        flops = float(floor.breakdown()["flops"]["attention_scores"])
        peak = floor.group_peak_flops["attention_scores"]  # attention at its own precision
    else:
        bytes_moved, flops = float(floor.bytes_total), float(floor.flops)
        peak = float(floor.peak_flops)  # effective peak: FLOPs / compute time
    # a stage pass: 1/p of the micro-batch's work on the n devices of the stage (aggregate,
    # perfect split, communication not counted); no compute peak: no compute bound
    stage_memory = bytes_moved / (p * n * floor.memory_bandwidth)
    stage_compute = 0.0 if np.isnan(peak) else flops / (p * n * peak)
    return {
        "memory": float(pipeline_step_time(stage_memory, p, m)), "compute": float(pipeline_step_time(stage_compute, p, m)),
        "bytes": m * bytes_moved, "flops": m * flops,
        "bandwidth": p * n * floor.memory_bandwidth, "peak": p * n * peak, "routing": floor.routing,
    }


def _step(terms: _FloorTerms) -> float:
    return max(terms["memory"], terms["compute"])


def compare(rows: list[MeasurementRow], model: Model | str | None = None,
            accelerator: Accelerator | str | None = None, *, tolerance: float = 0.0,
            routing: str | float | None = None) -> Comparison:
    """Each measured row next to its floor.

    Parameters
    ----------
    rows : list of MeasurementRow
        Measured rows; each row's ``weight_format`` / ``kv_format`` are applied to the model.
    model, accelerator : optional
        Used for every row when given; otherwise each row's own ``model`` / ``accelerator``.
    tolerance : float
        Relative slack before a row faster than its floor is flagged (0: any row below the floor).
    routing : {"uniform", "identical"} or float, optional
        MoE routing of the reported floor and efficiency (:func:`~roofline_decode.decode_floor`)
        for every row; default: each row's own :attr:`MeasurementRow.routing` (``"uniform"``
        unless the row states it); the impossible flag always uses the strict (``"identical"``) floor, and a row between the
        strict and the uniform floor is flagged :data:`FASTER_THAN_UNIFORM`.  Dense models: one floor.

    Returns
    -------
    Comparison
        One :class:`RowComparison` per row: floor, efficiency (floor / measured), achieved
        bandwidth [B/s], bandwidth and FLOPs utilisation, bound, and flags.

    Notes
    -----
    ``scope="kv_read"`` rows (attention microbenchmarks) get a KV-read floor: the KV bytes
    of ``model`` (pass a one-layer model for a single-layer kernel) over the bandwidth, and
    the attention-score FLOPs over the peak.  A row on ``num_devices`` > 1 (tensor parallel)
    is compared with the aggregate of that many devices (perfect split, communication not
    counted) — still a lower bound.  A row with ``pipeline_parallel`` > 1 (a layer split over
    several GPUs, llama.cpp's default ``-sm layer``) gets the pipeline floor: its stages run one
    after another for each micro-batch, at most min(B, p) micro-batches (:func:`microbatches`),
    so at batch 1 the floor is that of one device reading every layer.  Bandwidth and FLOPs
    utilisation are over all ``num_devices`` x ``pipeline_parallel`` devices.

    Examples
    --------
    gpt-fast's Llama-2-7B bf16 on an A100-80GB: 104.9 tok/s at batch 1 (mean context 105).

    >>> row = MeasurementRow(batch=1, context=105, tokens_per_s=104.9)
    >>> c = compare([row], "llama-2-7b", "a100-80gb-sxm")[0]
    >>> round(c.efficiency, 3), c.flags
    (0.683, ())

    Qwen3-30B-A3B at batch 16 measured at 3 ms per step on an H100: below the uniform-routing
    floor (12.1 ms) but above the strict one (2.06 ms), so possible with correlated routing.

    >>> row = MeasurementRow(batch=16, context=512, step_time_s=3.0e-3)
    >>> c = compare([row], "qwen3-30b-a3b", "h100-sxm")[0]
    >>> c.flags, round(c.strict_floor_step_time_s * 1e3, 2), round(c.uniform_floor_step_time_s * 1e3, 2)
    (('faster than uniform routing: correlated or skewed routing',), 2.06, 12.12)
    """
    if not is_real(tolerance) or not 0 <= tolerance < 1:
        raise InvalidValueError("tolerance", tolerance, "a number in [0, 1)")
    result = Comparison()
    for row in rows:
        spec = resolve_model(model if model is not None else row.model, row.weight_format, row.kv_format)
        device = resolve_accelerator(accelerator if accelerator is not None else row.accelerator)
        t = _floor_terms(row, spec, device, row.routing if routing is None else routing)
        floor = max(t["memory"], t["compute"])
        measured = row.step_time
        flags: list[str] = []
        strict = uniform = floor
        if spec.is_moe:
            label = t["routing"]
            strict = floor if label == "identical" else _step(_floor_terms(row, spec, device, "identical"))
            uniform = floor if label == "uniform" else _step(_floor_terms(row, spec, device, "uniform"))
        if measured < strict * (1 - tolerance):
            flags.append(IMPOSSIBLE)
        elif measured < uniform * (1 - tolerance):
            flags.append(FASTER_THAN_UNIFORM)
        # the capacity rule of planning (binary reading, ECC, unified-memory share), no runtime reserve
        if row.scope == "decode_step" and spec.weight_bytes > row.num_devices * row.pipeline_parallel * device_memory(device):
            flags.append(EXCEEDS_MEMORY)
        achieved = t["bytes"] / measured
        result.append(RowComparison(
            row=row, model=spec.name, accelerator=device.id or device.name,
            weight_format=spec.weight_format.name, kv_format=spec.kv_format.name,
            measured_step_time_s=measured, floor_step_time_s=floor, memory_time_s=t["memory"],
            compute_time_s=t["compute"], bytes_moved=t["bytes"], flops=t["flops"],
            bound="compute" if t["compute"] >= t["memory"] else "memory",
            efficiency=floor / measured, achieved_bandwidth=achieved,
            bandwidth_utilisation=achieved / t["bandwidth"],
            flops_utilisation=float(np.divide(t["flops"] / measured, t["peak"])),
            flags=tuple(flags), routing=t["routing"],
            strict_floor_step_time_s=strict if spec.is_moe else None,
            uniform_floor_step_time_s=uniform if spec.is_moe else None,
        ))
    return result
