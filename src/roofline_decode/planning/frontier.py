"""The throughput-interactivity frontier: tokens/s per device against tokens/s per user.

Serving benchmarks publish this chart: each configuration (device, tensor-parallel degree,
batch) is a point at x = tokens/s one user sees (1 / step time) and y = tokens/s each device
delivers (B / step time / n).  A bigger batch moves a configuration right-to-left along its
curve (more throughput per device, less speed per user); the **Pareto envelope** keeps the
points no other point beats on both axes.  Here every point is a *floor* (the tensor-parallel
decode floor, :func:`~roofline_decode.planning.tensor_parallel_floor`), so the envelope bounds
what any serving stack can reach on that hardware.

Points whose weights and KV cache do not fit each device's usable memory are kept but marked
(``fits`` False) and left out of the envelope.  Energy per token (the data-movement floor and
the estimate at board power) and, with a price per device-hour, dollars per million tokens are
alternative y axes (:mod:`roofline_decode.floors.energy`).

Examples
--------
>>> front = frontier("llama-3.1-8b", ["h200-sxm"], 4096, batch=[1, 8, 64], tp=(1, 2))
>>> [(p.num_devices, int(p.batch)) for p in front.envelope()]
[(1, 64), (2, 64), (1, 8), (2, 8), (2, 1)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["frontier", "Frontier", "FrontierPoint", "FRONTIER_Y"]

#: The y quantities of the frontier: name -> (attribute, True where larger is better).
FRONTIER_Y = {
    "throughput": ("tokens_per_s_per_device", True),
    "energy": ("joules_per_token_floor", False),
    "energy_at_board_power": ("joules_per_token_at_board_power", False),
    "cost": ("usd_per_million_tokens", False),
}
DEFAULT_BATCHES = tuple(2.0 ** np.arange(0, 11))  # 1 ... 1024


@dataclass(frozen=True)
class FrontierPoint:
    """One configuration: a device type, a tensor-parallel degree and a batch (SI units)."""

    accelerator: str
    num_devices: int
    batch: float
    step_time_s: float
    tokens_per_s_per_user: float
    tokens_per_s_per_device: float
    fits: bool
    joules_per_token_floor: float
    joules_per_token_at_board_power: float
    usd_per_million_tokens: float
    parallel: str | None = None  # the layout's text for frontier(parallel=...); None for tp=

    def as_record(self) -> dict[str, Any]:
        record = dict(self.__dict__)
        return {k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in record.items()}


@dataclass(frozen=True)
class Frontier:
    """All points of :func:`frontier`, and their Pareto envelopes."""

    model: str
    context: float
    points: tuple[FrontierPoint, ...]
    price_per_hour: float | dict[str, float | None] | None = None
    notes: tuple[str, ...] = ()

    def envelope(self, y: str = "throughput") -> list[FrontierPoint]:
        """The fitting points no other fitting point beats on both axes: faster per user and
        better on ``y`` (higher tokens/s per device; lower energy or cost per token), sorted
        from the most throughput-oriented (slowest per user) to the fastest per user.

        Along the envelope tokens/s per user increases strictly while ``y`` gets strictly
        worse (the frontier is monotone).  Points whose ``y`` is unavailable (NaN: an
        unsourced memory energy, no price) are left out.
        """
        attribute, larger_is_better = _y(y)
        if y == "cost" and self.price_per_hour is None:
            raise InvalidValueError("y", y, "a price: frontier(..., price_per_hour=...) for the cost axis")
        candidates = [p for p in self.points if p.fits and np.isfinite(getattr(p, attribute))]
        sign = 1.0 if larger_is_better else -1.0
        # fastest per user first; keep a point when it beats every faster one on y
        ordered = sorted(candidates, key=lambda p: (-p.tokens_per_s_per_user, -sign * getattr(p, attribute)))
        kept: list[FrontierPoint] = []
        best = -np.inf
        for p in ordered:
            score = sign * getattr(p, attribute)
            if score > best + 1e-9 * abs(best if np.isfinite(best) else 0.0):  # float ties are not improvements
                if kept and kept[-1].tokens_per_s_per_user == p.tokens_per_s_per_user:
                    kept.pop()  # same speed per user, better y
                kept.append(p)
                best = score
        return kept[::-1]

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per point (SI units; NaN as None), with ``on_envelope`` (throughput)."""
        on = {id(p) for p in self.envelope()}
        return [{"model": self.model, "context": self.context, **p.as_record(), "on_envelope": id(p) in on}
                for p in self.points]


def _y(y: str) -> tuple[str, bool]:
    if not isinstance(y, str) or y not in FRONTIER_Y:
        raise InvalidValueError("y", y, f"one of {', '.join(FRONTIER_Y)}")
    return FRONTIER_Y[y]


def frontier(model: Model | str | Path, accelerators: Accelerator | str | Sequence[Accelerator | str],
             context: float, *, batch: Any = None, tp: Any = None,
             price_per_hour: float | dict[str, float] | None = None, routing: Any = "uniform",
             parallel: Any = None) -> Frontier:
    """Tokens/s per device against tokens/s per user, for each device, layout (or TP degree) and batch.

    Parameters
    ----------
    model : Model or str
        The model (catalog id or spec).
    accelerators : str, Accelerator or a list of them
        Device types to compare.
    context : float
        Tokens cached per sequence [tokens] (one value).
    batch : sequence of float, optional
        Batches to sweep (default 1, 2, 4, ..., 1024 and, for each device and TP degree, the
        largest batch whose weights and KV cache fit, often the cheapest point per token).
    tp : sequence of int
        Tensor-parallel degrees (each a whole number >= 1; default 1, 2, 4, 8 when no
        ``parallel`` is given): a thin wrapper of ``parallel=[Parallel(tp=n), ...]``, the same
        numbers.
    parallel : Parallel, str or a sequence of them, optional
        Layouts to compare instead of ``tp`` (:class:`~roofline_decode.Parallel` or its text,
        such as ``["tp8", "dp8 ep8"]``): each point is the busiest device's strict decode floor
        (:func:`~roofline_decode.decode_floor` with ``parallel=``), its tokens/s per device
        divided over all the layout's devices, and ``FrontierPoint.parallel`` names it.
    price_per_hour : float or dict, optional
        Price of one device-hour [$/h] for the cost axis (none bundled: prices change); a dict
        gives each accelerator id its own price (every id of ``accelerators`` needs one).
    routing : str
        MoE routing assumption, as :func:`~roofline_decode.decode_floor`.

    Returns
    -------
    Frontier
        Every point (``fits`` marks those whose weights and KV cache fit each device's usable
        memory) and :meth:`Frontier.envelope`.  A device with no interconnect figure gets only
        its single-device points (a note says so): tensor parallelism needs a link bandwidth.

    Examples
    --------
    DeepSeek-V3 on eight H200s, tensor against attention-DP expert parallelism:

    >>> front = frontier("deepseek-v3", "h200-sxm", 4096, batch=[64, 256], parallel=["tp8", "dp8 ep8"])
    >>> [(p.parallel, int(p.batch), round(p.tokens_per_s_per_device)) for p in front.points]
    [('tp8', 64, 509), ('tp8', 256, 1650), ('dp8 ep8', 64, 424), ('dp8 ep8', 256, 1420)]
    """
    from ..catalog import load_accelerator, load_model
    from ..checks import whole_number
    from ..floors.energy import checked_price
    from ..floors.grid import checked_array
    from ..specs.accelerator import Accelerator as AcceleratorSpec
    from ..floors.capacity import usable_memory
    from ..floors.layout import check_layout
    from ..floors.parallel import tensor_parallel_floor
    from ..specs.model import Model as ModelSpec
    from .layouts import layout_decode_floor, planned_layouts

    spec = model if isinstance(model, ModelSpec) else load_model(model)
    listed: list[Any] = list(accelerators) if isinstance(accelerators, (list, tuple)) else [accelerators]
    loaded = [a if isinstance(a, AcceleratorSpec) else load_accelerator(a) for a in listed]
    devices = list({(d.id or d.name): d for d in reversed(loaded)}.values())[::-1]  # each device once
    if not devices:
        raise InvalidValueError("accelerators", accelerators, "at least one accelerator")
    if isinstance(context, (str, bytes, bool)) or np.ndim(context) != 0:
        raise InvalidValueError("context", context, "one finite number >= 0 (tokens cached per sequence)")
    context_value = float(checked_array("context", context, 0.0, inclusive=True))
    batches = (np.asarray(DEFAULT_BATCHES) if batch is None else checked_array("batch", batch, 1.0, inclusive=True)).ravel()
    if batches.size == 0:
        raise InvalidValueError("batch", batch, "at least one batch >= 1")
    if parallel is not None:
        if tp is not None:
            raise InvalidValueError("tp", tp, "None when parallel= is given (the layouts hold the degrees)")
        layouts = planned_layouts(parallel)
        for layout in layouts:
            check_layout(spec, layout)
        degrees: list[Any] = []
    else:
        layouts = []
        tp = (1, 2, 4, 8) if tp is None else tp
        listed_degrees = [tp] if np.ndim(tp) == 0 else list(tp)
        if not listed_degrees:
            raise InvalidValueError("tp", tp, "whole numbers >= 1 (tensor-parallel degrees)")
        degrees = list(dict.fromkeys(whole_number("tp", n) for n in listed_degrees))
    prices: dict[str, float | None]
    if isinstance(price_per_hour, dict):
        missing = [d.id or d.name for d in devices if (d.id or d.name) not in price_per_hour]
        if missing:
            raise InvalidValueError("price_per_hour", price_per_hour, f"a price for every accelerator (missing: {', '.join(missing)})")
        prices = {key: checked_price(value) for key, value in price_per_hour.items()}
    else:
        single = None if price_per_hour is None else checked_price(price_per_hour)
        prices = {d.id or d.name: single for d in devices}
    points: list[FrontierPoint] = []
    notes: list[str] = []
    for device in devices:
        room = usable_memory(device)
        price = prices[device.id or device.name]
        skipped = [int(d) for d in degrees if int(d) > 1 and device.interconnect is None]
        if skipped:
            notes.append(f"{device.id or device.name}: no interconnect figure, so no tensor-parallel points "
                         f"(TP {', '.join(map(str, skipped))} left out)")
        if parallel is not None:
            for layout in layouts:
                if layout.num_devices > 1 and device.interconnect is None:
                    notes.append(f"{device.id or device.name}: no interconnect figure, so no {layout} points")
                    continue
                def floor_of(b: Any, layout: Parallel = layout) -> Any:
                    return layout_decode_floor(spec, device, b, context_value, layout, routing=routing)
                points.extend(_points(floor_of, batches if batch is not None else
                                      _with_largest_fitting(floor_of, batches, room), room, price, str(layout)))
            notes.extend(n for n in _device_notes(device) if n not in notes)
            continue
        for n in (int(d) for d in degrees if int(d) not in skipped):
            def tp_floor(b: Any, n: int = n) -> Any:
                return tensor_parallel_floor(spec, device, batch=b, context=context_value, num_devices=n,
                                             routing=routing)
            grid = batches if batch is not None else _with_largest_fitting(tp_floor, batches, room)
            points.extend(_points(tp_floor, grid, room, price, None))
        notes.extend(n for n in _device_notes(device) if n not in notes)
    return Frontier(model=spec.name, context=float(context_value), points=tuple(points),
                    price_per_hour=prices if isinstance(price_per_hour, dict) else next(iter(prices.values())),
                    notes=tuple(notes))


def _points(floor_of: Callable[[Any], Any], grid: np.ndarray, room: float, price: float | None,
            layout: str | None) -> list[FrontierPoint]:
    """The points of one device and layout over the batches ``grid`` (``floor_of(batch)``: its floor;
    ``layout`` None for the tensor-parallel degrees of ``tp=``)."""
    floor = floor_of(grid)
    n = floor.num_devices
    step = np.broadcast_to(floor.step_time_s, grid.shape)
    fits = np.broadcast_to(floor.resident_bytes_per_device <= room, grid.shape)
    floor_energy = np.broadcast_to(floor.joules_per_token_floor, grid.shape)
    board_energy = np.broadcast_to(floor.joules_per_token_at_board_power, grid.shape)
    cost = (np.broadcast_to(floor.cost_per_million_tokens(price), grid.shape) if price is not None
            else np.full(grid.shape, np.nan))
    return [FrontierPoint(
        accelerator=floor.accelerator, num_devices=n, batch=float(b), step_time_s=float(step[i]),
        tokens_per_s_per_user=float(1.0 / step[i]), tokens_per_s_per_device=float(b / step[i] / n),
        fits=bool(fits[i]), joules_per_token_floor=float(floor_energy[i]),
        joules_per_token_at_board_power=float(board_energy[i]), usd_per_million_tokens=float(cost[i]), parallel=layout)
        for i, b in enumerate(grid)]


def _with_largest_fitting(floor_of: Callable[[Any], Any], batches: np.ndarray, room: float) -> np.ndarray:
    """The default batch grid plus the largest batch that fits each device (often the cheapest
    point per token): resident bytes grow linearly in the batch (weights + B x bytes per
    sequence), so two floors (``floor_of(batch)``) give the slope; the point is checked against
    the floor itself."""

    def resident(b: float) -> float:
        return float(np.max(floor_of(b).resident_bytes_per_device))

    first, slope = resident(1.0), resident(2.0) - resident(1.0)
    if first > room or slope <= 0:
        return batches
    largest = float(np.floor((room - first) / slope)) + 1.0
    while largest > 1 and resident(largest) > room:  # a rounding step at the boundary
        largest -= 1
    if largest > 2**53 or largest in batches:
        return batches
    return np.sort(np.append(batches, largest))


def _device_notes(device: Accelerator) -> list[str]:
    from ..specs.memory_energy import access_energy_of

    energy, note = access_energy_of(device.memory_type)
    label = device.id or device.name
    return [f"{label}: {note}"] if note else []
