"""The numbers of a report: the floors at the chosen point, and a batch x context grid of them.

:func:`report_data` evaluates :func:`~roofline_decode.decode_floor` once at the chosen point of
each accelerator (the numbers the page opens with) and once over a grid of batches and contexts
(the numbers the page's control shows), with the per-layer split of both
(:meth:`~roofline_decode.DecodeFloor.layers`).  Everything the page shows is copied from these
results unchanged (SI units; the page scales them for display only), so a test can compare the
page with the library number for number.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..floors.layers import LayerTable
    from ..floors.layout_result import ParallelFloor
    from ..floors.serving import ServingFloor
    from ..measure.expected import Expected
    from ..planning.deployments import Deployments
    from ..specs.parallel import Parallel
    from ..floors.results import DecodeFloor
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

__all__ = ["FLOOR_COLUMNS", "LAYER_COLUMNS", "LAYOUT_COLUMNS", "SERVING_COLUMNS", "EXPECTED_COLUMNS",
           "EXPECTED_SERVING_COLUMNS", "DEPLOYMENT_COLUMNS", "STEP", "DEFAULT_BATCHES", "DEFAULT_CONTEXTS", "ReportData", "report_data"]

#: Columns of the floor table: (key of the DecodeFloor, header, display scale; None: text).
FLOOR_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("step_time_s", "step ms", 1e3), ("tokens_per_s", "tok/s", 1.0),
    ("per_sequence_tokens_per_s", "tok/s per sequence", 1.0), ("memory_time_s", "mem ms", 1e3),
    ("compute_time_s", "comp ms", 1e3), ("weight_bytes", "weights GB", 1e-9), ("kv_read_bytes", "KV read GB", 1e-9),
    ("bytes_total", "total GB", 1e-9), ("flops", "GFLOP", 1e-9), ("arithmetic_intensity", "FLOP/B", 1.0),
    ("ridge_point", "ridge FLOP/B", 1.0), ("critical_batch", "B*", 1.0), ("max_batch", "max batch", 1.0),
    ("bound", "bound", None), ("fits", "fits", None),
)

#: Columns of the per-layer tables: (key of a LayerRow, header, display scale; None: text).
#: ``kv_bytes`` is the KV (and recurrent state) read plus written, ``share`` the row's part of
#: the step's bytes.
LAYER_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("weight_bytes", "weights GB", 1e-9), ("kv_bytes", "KV+state GB", 1e-9), ("bytes_total", "total GB", 1e-9),
    ("share", "% bytes", 100.0), ("flops", "GFLOP", 1e-9), ("arithmetic_intensity", "FLOP/B", 1.0),
    ("memory_time_s", "mem ms", 1e3), ("compute_time_s", "comp ms", 1e3), ("bound", "bound", None),
)

#: Rows of the deployment table under a parallel layout: (key of the ParallelFloor, label,
#: display scale; None: text).  Per-device quantities are the busiest device's.
LAYOUT_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("step_time_s", "step ms", 1e3), ("tokens_per_s", "tok/s (all devices)", 1.0),
    ("memory_time_s", "mem ms", 1e3), ("compute_time_s", "comp ms", 1e3),
    ("communication_time_s", "communication ms", 1e3), ("weight_read_bytes_per_device", "weights read GB/device", 1e-9),
    ("kv_read_bytes_per_device", "KV read GB/device", 1e-9), ("bytes_read_per_device", "total GB/device", 1e-9),
    ("flops_per_device", "GFLOP/device", 1e-9), ("resident_bytes_per_device", "resident GB/device", 1e-9),
    ("bound", "bound", None),
)

#: Rows of the serving table: (key of the ServingFloor, label, display scale; None: text).
SERVING_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("ttft_s", "TTFT ms", 1e3), ("tpot_s", "TPOT ms", 1e3), ("itl_s", "ITL ms", 1e3), ("e2e_latency_s", "E2E s", 1.0),
    ("requests_per_s", "requests/s", 1.0), ("output_tokens_per_s_per_gpu", "output tok/s per GPU", 1.0),
    ("output_tokens_per_s_per_user", "output tok/s per user", 1.0), ("running_batch", "running batch", 1.0),
    ("queued", "queued clients", 1.0), ("limited_by", "limited by", None),
)

#: Rows of the expected-performance table (an engine profile's expectation, not a floor):
#: (key of :func:`expected_values`, label, display scale; None: text).
EXPECTED_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("floor_step_time_s", "floor it rests on, step ms", 1e3), ("step_time_s", "expected step ms", 1e3),
    ("lower_s", "90 % band, low ms", 1e3), ("upper_s", "90 % band, high ms", 1e3),
    ("tokens_per_s", "expected tok/s", 1.0), ("tokens_per_s_lower", "90 % band, low tok/s", 1.0),
    ("tokens_per_s_upper", "90 % band, high tok/s", 1.0), ("basis", "basis", None),
)

#: Rows of the expected serving table: (key of :func:`expected_values`, label, display scale).
EXPECTED_SERVING_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("ttft_floor_s", "TTFT floor ms", 1e3), ("ttft_s", "expected TTFT ms", 1e3),
    ("ttft_lower_s", "TTFT 90 % band, low ms", 1e3), ("ttft_upper_s", "TTFT 90 % band, high ms", 1e3),
    ("floor_step_time_s", "TPOT floor ms", 1e3), ("step_time_s", "expected TPOT ms", 1e3),
    ("lower_s", "TPOT 90 % band, low ms", 1e3), ("upper_s", "TPOT 90 % band, high ms", 1e3),
)

#: Columns of the deployment frontier table: (attribute of a DeploymentPoint, header, display
#: scale; None: text).
DEPLOYMENT_COLUMNS: tuple[tuple[str, str, float | None], ...] = (
    ("mode", "mode", None), ("label", "deployment", None), ("devices", "GPUs", 1.0), ("concurrency", "clients", 1.0),
    ("ttft_s", "TTFT ms", 1e3), ("tpot_s", "TPOT ms", 1e3), ("tokens_per_s_per_gpu", "tok/s/GPU", 1.0),
    ("tokens_per_s_per_user", "tok/s/user", 1.0), ("usd_per_million_tokens", "$/M output tokens", 1.0),
)

#: The kind of the last row of the per-layer tables: the step's own numbers.
STEP = "step"

#: Batches of the page's control (the chosen batch is added).
DEFAULT_BATCHES = tuple(float(2**k) for k in range(11))
#: Contexts of the page's control (the chosen context is added; those beyond the model's
#: positions are left out).
DEFAULT_CONTEXTS = (0.0, 1024.0, 2048.0, 4096.0, 8192.0, 16384.0, 32768.0, 65536.0, 131072.0)

#: Most grid points per accelerator (the page stays a few hundred kB).
MAX_GRID_POINTS = 400


@dataclass(frozen=True)
class ReportData:
    """The model, the accelerators, the chosen point, and each accelerator's floor at the
    point (``point``) and over the grid ``batches`` x ``contexts`` (``grid``)."""

    model: Model
    accelerators: tuple[Accelerator, ...]
    batch: float
    context: float
    batches: tuple[float, ...]
    contexts: tuple[float, ...]
    point: tuple[DecodeFloor, ...]
    grid: tuple[DecodeFloor, ...]
    routing: str
    sparse: bool = False
    #: the parallel layout and each accelerator's layout floor at the point (empty without one)
    parallel: Parallel | None = None
    layout: tuple[ParallelFloor, ...] = ()
    #: link overrides of the layout (link_bandwidth, node_size, scale_out_bandwidth; SI units)
    links: dict[str, Any] = field(default_factory=dict)
    #: the serving floors of each accelerator (concurrency = the chosen batch; empty unless asked)
    serving: tuple[ServingFloor, ...] = ()
    #: each accelerator's layout floor over the grid (the control moves the deployment table)
    layout_grid: tuple[ParallelFloor, ...] = ()
    #: each accelerator's deployment search on ``gpus`` devices (empty unless asked)
    deployments: tuple[Deployments, ...] = ()
    #: the engine profile, and each accelerator's expected step at the point (and serving run)
    engine: str | None = None
    expected: tuple[Expected, ...] = ()
    #: (a str: why there is no expectation for that accelerator, e.g. no sequence fits one device)
    expected_serving: tuple[Expected | str, ...] = ()

    def layout_values(self, share: ParallelFloor, device: Accelerator, index: int = 0) -> dict[str, Any]:
        """The :data:`LAYOUT_COLUMNS` of a layout floor at flat grid ``index``, and ``fits``
        (the busiest device's resident bytes within its usable memory)."""
        from ..floors.capacity import usable_memory

        values = {key: _at(share, key, index) for key, _, _ in LAYOUT_COLUMNS}
        values["fits"] = bool(_at(share, "resident_bytes_per_device", index) <= usable_memory(device))
        return values

    def floor_values(self, floor: DecodeFloor, index: int = 0) -> dict[str, Any]:
        """The :data:`FLOOR_COLUMNS` of ``floor`` at flat grid ``index`` (floats, str, bool)."""
        return {key: _at(floor, key, index) for key, _, _ in FLOOR_COLUMNS}

    def layer_values(self, floor: DecodeFloor, table: LayerTable, index: int = 0) -> list[dict[str, Any]]:
        """Per row of ``table``: its kind, layer count and :data:`LAYER_COLUMNS` at ``index``;
        then the step's own totals (kind :data:`STEP`), which the rows add up to."""
        step = float(np.broadcast_to(floor.bytes_total, floor.shape).ravel()[index])
        rows = []
        for row in table:
            values: dict[str, Any] = {"layer": row.kind, "layers": row.layers}
            for key in ("weight_bytes", "bytes_total", "flops", "arithmetic_intensity", "memory_time_s",
                        "compute_time_s"):
                values[key] = float(np.broadcast_to(getattr(row, key), floor.shape).ravel()[index])
            values["kv_bytes"] = float(np.broadcast_to(row.kv_read_bytes + row.kv_write_bytes,
                                                       floor.shape).ravel()[index])
            values["share"] = values["bytes_total"] / step if step > 0 else 0.0
            values["bound"] = str(np.broadcast_to(row.bound, floor.shape).ravel()[index])
            rows.append(values)
        step_row: dict[str, Any] = {"layer": STEP, "layers": floor.spec.num_layers}
        for key in ("weight_bytes", "bytes_total", "flops", "arithmetic_intensity", "memory_time_s", "compute_time_s",
                    "bound"):
            step_row[key] = _at(floor, key, index)
        step_row["kv_bytes"] = float(np.broadcast_to(floor.kv_read_bytes + floor.kv_write_bytes,
                                                     floor.shape).ravel()[index])
        step_row["share"] = 1.0 if step > 0 else 0.0
        return [*rows, step_row]

    def grid_json(self) -> dict[str, Any]:
        """What the page's script reads: the grid axes, and per accelerator each floor column and
        each layer row's columns as lists over the flat (batch, context) grid (C order), with
        the notes of each point as indices into ``notes``."""
        notes: dict[str, int] = {}
        devices = []
        for floor in self.grid:
            size = int(np.prod(floor.shape))
            columns = {key: [_jsonable(_at(floor, key, i)) for i in range(size)] for key, _, _ in FLOOR_COLUMNS}
            table = floor.layers()
            per_point = [self.layer_values(floor, table, i) for i in range(size)]
            layers = [{"layer": row["layer"], "layers": row["layers"],
                       **{key: [_jsonable(point[r][key]) for point in per_point] for key, _, _ in LAYER_COLUMNS}}
                      for r, row in enumerate(per_point[0])]
            point_notes = [[notes.setdefault(n, len(notes)) for n in record["notes"]] for record in floor.to_records()]
            devices.append({"id": floor.accelerator, "columns": columns, "layers": layers, "notes": point_notes})
        for entry, share, device in zip(devices, self.layout_grid, self.accelerators):
            size = int(np.prod(share.shape))
            values = [self.layout_values(share, device, i) for i in range(size)]
            entry["layout"] = {key: [_jsonable(v[key]) for v in values] for key in values[0]}
        return {"batches": list(self.batches), "contexts": list(self.contexts), "devices": devices,
                "notes": list(notes), "floor_columns": [[k, h, s] for k, h, s in FLOOR_COLUMNS],
                "layer_columns": [[k, h, s] for k, h, s in LAYER_COLUMNS],
                "layout_columns": [[k, h, s] for k, h, s in LAYOUT_COLUMNS] + [["fits", "fits", None]]}


def expected_values(e: Expected | str) -> dict[str, Any]:
    """The numbers of one expectation at its (single) point: the keys of
    :data:`EXPECTED_COLUMNS` and :data:`EXPECTED_SERVING_COLUMNS` present (floats, SI units;
    ``upper`` NaN: the band has no upper end), ``basis`` and ``label``; for a str (why there is
    no expectation) every number NaN, basis ``"none"`` and the str as the label."""
    if isinstance(e, str):
        nan = float("nan")
        return {**{key: nan for key, _, scale in EXPECTED_COLUMNS + EXPECTED_SERVING_COLUMNS if scale is not None},
                "basis": "none", "label": e}

    def one(value: Any) -> float:
        return float(np.ravel(value)[0])

    low, high = e.tokens_per_s_band
    values: dict[str, Any] = {"floor_step_time_s": one(e.floor_step_time_s), "step_time_s": one(e.step_time_s),
                              "lower_s": one(e.lower_s), "upper_s": one(e.upper_s), "tokens_per_s": one(e.tokens_per_s),
                              "tokens_per_s_lower": one(low), "tokens_per_s_upper": one(high), "basis": e.basis,
                              "label": e.label}
    for key in ("ttft_floor_s", "ttft_s", "ttft_lower_s", "ttft_upper_s"):
        if getattr(e, key) is not None:
            values[key] = one(getattr(e, key))
    return values


def _at(floor: Any, key: str, index: int) -> Any:
    value = np.broadcast_to(getattr(floor, key), floor.shape).ravel()[index]
    if key == "bound":
        return str(value)
    if key == "fits":
        return bool(value)
    return float(value)


def _jsonable(value: Any) -> Any:
    """JSON has no infinities or NaN: they travel as the strings JavaScript's Number() reads."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    return value


def _axis(values: Sequence[float], chosen: float, limit: float) -> tuple[float, ...]:
    """``values`` up to ``limit`` and the ``chosen`` one, sorted, each once (floats)."""
    return tuple(sorted({float(v) for v in values if v <= limit} | {float(chosen)}))


def report_data(model: Model, accelerators: Sequence[Accelerator], batch: float, context: float, *,
                routing: str = "uniform", sparse: bool = False,
                batches: Sequence[float] | None = None, contexts: Sequence[float] | None = None,
                parallel: Parallel | str | None = None, links: dict[str, Any] | None = None,
                input_length: float | None = None, output_length: float | None = None, gpus: int | None = None,
                ttft: float | None = None, tpot: float | None = None, price_per_hour: Any = None,
                engine: str | None = None) -> ReportData:
    """The floors of ``model`` on each accelerator at (``batch``, ``context``) and over the grid
    of ``batches`` x ``contexts`` (defaults :data:`DEFAULT_BATCHES`, :data:`DEFAULT_CONTEXTS`
    up to the model's positions; the chosen point is always on the grid), under ``parallel``
    also the layout floor at the point and over the grid; with ``gpus`` each accelerator's
    deployment search (:func:`~roofline_decode.planning.deployments`, needs the lengths); with
    ``engine`` each accelerator's expected step (:func:`~roofline_decode.measure.expected.expected`)."""
    from ..floors.decode import decode_floor

    if not accelerators:
        raise InvalidValueError("accelerators", "[]", "at least one accelerator")
    positions = float(model.max_position_embeddings or math.inf)
    batch_axis = _axis(DEFAULT_BATCHES if batches is None else batches, batch, math.inf)
    context_axis = _axis(DEFAULT_CONTEXTS if contexts is None else contexts, context, max(positions, context))
    if len(batch_axis) * len(context_axis) > MAX_GRID_POINTS:
        raise InvalidValueError("batches x contexts", f"{len(batch_axis)} x {len(context_axis)}",
                                f"at most {MAX_GRID_POINTS} grid points")
    point = tuple(decode_floor(model, device, batch=batch, context=context, routing=routing, sparse=sparse)
                  for device in accelerators)
    b, t = np.asarray(batch_axis)[:, None], np.asarray(context_axis)[None, :]
    grid = tuple(decode_floor(model, device, batch=b, context=t, routing=routing, sparse=sparse)
                 for device in accelerators)
    links = links or {}
    layout: tuple[ParallelFloor, ...] = ()
    layout_grid: tuple[Any, ...] = ()
    if parallel is not None:
        from ..floors.layout_result import ParallelFloor

        shares = [decode_floor(model, device, batch=batch, context=context, routing=routing, sparse=sparse,
                               parallel=parallel, **links) for device in accelerators]
        layout = tuple(share for share in shares if isinstance(share, ParallelFloor))  # none for one device
        if layout:
            layout_grid = tuple(decode_floor(model, device, batch=b, context=t, routing=routing, sparse=sparse,
                                             parallel=parallel, **links) for device in accelerators)
    serving: tuple[ServingFloor, ...] = ()
    if input_length is not None or output_length is not None:
        from ..floors.serving import serving_floor

        if input_length is None or output_length is None:
            raise InvalidValueError("input_length/output_length", f"{input_length}/{output_length}",
                                    "both, for the serving floors (or neither)")
        serving = tuple(serving_floor(model, device, batch, input_length, output_length, parallel=parallel,
                                      routing=routing, sparse=sparse, **links) for device in accelerators)
    searches = _searches(model, accelerators, gpus, input_length, output_length, ttft, tpot, price_per_hour,
                         routing=routing, sparse=sparse)
    expectations: tuple[Expected, ...] = ()
    expectations_serving: tuple[Expected | str, ...] = ()
    if engine is not None:
        from ..measure.expected import expected

        chosen = layout[0].parallel if layout else None
        # a decode step: a tp x pp layout as itself; with EP or attention DP (no profile term for a
        # decode step) its devices as one tensor-parallel group, as the page says
        step_layout: dict[str, Any] = ({} if chosen is None else {"parallel": chosen}
                                       if chosen.ep == 1 and chosen.attention_dp == 1
                                       else {"tensor_parallel": chosen.num_devices})
        expectations = tuple(expected(model, device, batch=batch, context=context, engine=engine, routing=routing,
                                      **step_layout) for device in accelerators)
        if serving:
            expectations_serving = tuple(_expected_serving(model, device, batch, engine, chosen, routing,
                                                           input_length, output_length) for device in accelerators)
    return ReportData(model, tuple(accelerators), float(batch), float(context), batch_axis, context_axis,
                      point, grid, routing, sparse, layout[0].parallel if layout else None, layout, links, serving,
                      layout_grid, searches, engine, expectations, expectations_serving)


def _expected_serving(model: Model, device: Accelerator, clients: float, engine: str, parallel: Parallel | None,
                      routing: str, input_length: Any, output_length: Any) -> Expected | str:
    """The engine's expected serving run under ``parallel`` (any layout, as the production profiles
    were fitted), or why there is none (the profiles' serving step needs a sequence whose KV cache
    fits the devices of one replica)."""
    from ..errors import RooflineError
    from ..measure.expected import expected

    try:
        return expected(model, device, batch=clients, engine=engine, parallel=parallel, routing=routing,
                        prompt=input_length, output=output_length)
    except RooflineError as exc:
        return f"no expectation: {str(exc).splitlines()[0]}"


def _searches(model: Model, accelerators: Sequence[Accelerator], gpus: int | None, input_length: float | None,
              output_length: float | None, ttft: float | None, tpot: float | None, price_per_hour: Any, *,
              routing: str, sparse: bool) -> tuple[Deployments, ...]:
    """Each accelerator's deployment search on ``gpus`` devices (none without ``gpus``)."""
    if gpus is None:
        for name, value in (("ttft", ttft), ("tpot", tpot), ("price_per_hour", price_per_hour)):
            if value is not None:
                raise InvalidValueError(name, value, "only with gpus= (the deployment search)")
        return ()
    if input_length is None or output_length is None:
        raise InvalidValueError("gpus", gpus, "with input_length and output_length (the deployment search's requests)")
    from ..planning.deployments import deployments

    return tuple(deployments(model, device, gpus, input_length, output_length, ttft, tpot,  # type: ignore[arg-type]
                             price_per_hour=price_per_hour, routing=routing, sparse=sparse)
                 for device in accelerators)
