"""``sweep``: decode floors for every model × accelerator over a batch × context grid.

Bytes and FLOPs are computed once per model and timed per device
(:mod:`roofline_decode.floors.step_timing`); :class:`SweepResult` is the list of floors with its table
and frame views.  Separate from :mod:`roofline_decode.floors.decode`, which keeps the one-point entry
:func:`~roofline_decode.floors.decode.decode_floor`; both names are imported from there.  (Not named
``sweep``: a submodule of that name would hide the function ``roofline_decode.sweep``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import Broadcastable
from ..checks import flag
from ..errors import InvalidValueError
from .results import DecodeFloor
from .grid import DEFAULT_CONTEXT, KvLike, WeightsLike, checked_array
from .routing import Routing, resolve_routing
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .step_timing import load_profile, timed_step
from .traffic import step_traffic
from .records import ToDataFrame
from .layout import Options, chain_of, check_layout, decode_layout_floor, layout_of
from .layout_links import link_bandwidth_of

if TYPE_CHECKING:
    import xarray as xr

    from ..specs.latency import LatencyProfile
    from ..specs.parallel import Parallel

__all__ = ["SweepResult", "sweep"]

#: A model or accelerator as the entry points take it: the spec, a catalog id, or a file path.
ModelRef = Model | str | PathLike[str]
AcceleratorRef = Accelerator | str | PathLike[str]


def _id_list(name: str, value: Any, kinds: tuple[type, ...]) -> list[Any]:
    """One id/spec or a non-empty list, tuple or array of them (each checked when loaded, so
    the items are whatever the caller passed)."""
    from os import PathLike

    if isinstance(value, (*kinds, PathLike)):
        return [value]
    if isinstance(value, (list, tuple, np.ndarray)) and len(value):
        return list(value)
    raise InvalidValueError(name, value, "an id, a spec, or a non-empty list of them")


class SweepResult(ToDataFrame, list[DecodeFloor]):
    """The floors of a sweep: a list of :class:`DecodeFloor` (of
    :class:`~roofline_decode.floors.parallel.ParallelFloor` under a layout of several devices,
    whose records are theirs and have no frame views), one per (model, accelerator),
    each over the batch × context grid (axis 0: batch, axis 1: context).  ``to_dataframe()``
    (pandas) and ``to_xarray()`` (dimensions model, accelerator, batch, context) need the
    ``[frames]`` extra."""

    def to_xarray(self) -> xr.Dataset:
        """Every numeric field as an :class:`xarray.Dataset` over (model, accelerator, batch, context)."""
        from ..views.frame import sweep_to_xarray

        return sweep_to_xarray(self)

    def to_records(self) -> list[dict[str, Any]]:
        return [record for floor in self for record in floor.to_records()]

    def __str__(self) -> str:
        return "\n\n".join(str(floor) for floor in self)


def sweep(models: ModelRef | Sequence[ModelRef], accelerators: AcceleratorRef | Sequence[AcceleratorRef],
          batch: Broadcastable = 1, context: Broadcastable = DEFAULT_CONTEXT, *, sparse: bool = False,
          routing: Broadcastable = "uniform", latency: LatencyProfile | str | None = None, weights: WeightsLike = None,
          kv: KvLike = None, parallel: Parallel | str | None = None, mla_layout: str = "sharded",
          link_bandwidth: float | None = None, node_size: int | None = None,
          scale_out_bandwidth: float | None = None) -> SweepResult:
    """Floors for every model × accelerator over the outer product of ``batch`` and ``context``.

    Bytes and FLOPs are computed once per model on the whole grid; only the timing is
    repeated per accelerator.  ``sparse``, ``routing``, ``latency``, ``weights`` and ``kv`` as in
    :func:`decode_floor` (the formats apply to every model); a measured expert count is one number
    or one per batch (along the batch axis), for MoE models only.  ``parallel`` (and its
    options, as in :func:`decode_floor`): every floor under that layout, a
    :class:`~roofline_decode.floors.parallel.ParallelFloor` each (a layout of one device: the
    plain floors).

    Examples
    --------
    >>> result = sweep(["llama-3.1-8b"], ["a100-80gb-sxm", "h100-sxm"], batch=[1, 8, 64], context=[1024, 8192])
    >>> [r.step_time_s.shape for r in result]
    [(3, 2), (3, 2)]
    """
    from ..catalog import load_accelerator, load_model

    sparse = flag("sparse", sparse)
    models = _id_list("models", models, (str, Model))
    accelerators = _id_list("accelerators", accelerators, (str, Accelerator))
    batch_axis = checked_array("batch", batch, 1.0, inclusive=True).ravel()[:, None]
    context_axis = checked_array("context", context, 0.0, inclusive=True).ravel()[None, :]
    batch_grid, context_grid = np.broadcast_arrays(batch_axis, context_axis)
    devices = [load_accelerator(a) for a in accelerators]
    profile = None if latency is None else load_profile(latency)
    result = SweepResult()
    layout = layout_of(parallel)
    spread = layout is not None and layout.num_devices > 1
    for model in models:
        model = load_model(model, weights=weights, kv=kv)
        chosen = _sweep_routing(routing, model, batch_axis)
        if layout is not None and spread:
            check_layout(model, layout)
            options = Options(link_bandwidth=link_bandwidth, node_size=node_size,
                              scale_out_bandwidth=scale_out_bandwidth, mla_layout=mla_layout, sparse=sparse)
            for device in devices:
                link = link_bandwidth_of(device, link_bandwidth, layout.num_devices)[0]
                chain, chain_notes = chain_of(model, layout, batch_grid, link, profile)
                result.append(decode_layout_floor(  # type: ignore[arg-type]  # a list of either kind
                    model, device, batch_grid, context_grid, layout, chosen, options, check=False, chain=chain,
                    chain_notes=chain_notes, latency_profile=None if profile is None else profile.label))
            continue
        traffic = step_traffic(model, batch_grid, context_grid, chosen)
        result.extend(timed_step(model, device, batch_grid, context_grid, traffic, sparse, context_axis, chosen, profile)
                      for device in devices)
    return result


def _sweep_routing(routing: Broadcastable, model: Model, batch_axis: np.ndarray) -> Routing:
    """The routing of one model of a sweep: a count lies along the batch axis (and is refused
    for a dense model, which has no routed experts to count)."""
    if isinstance(routing, str) or not model.is_moe:
        return resolve_routing(routing, model)
    try:
        counts = np.asarray(routing, dtype=float) if not isinstance(routing, (bool, np.bool_)) else routing
    except (TypeError, ValueError, OverflowError):  # not numbers: resolve_routing names what is allowed
        return resolve_routing(routing, model, batch_axis)
    if isinstance(counts, np.ndarray) and counts.ndim == 1 and counts.size == batch_axis.size:
        routing = counts[:, None]
    elif isinstance(counts, np.ndarray) and counts.size > 1:
        raise InvalidValueError("routing", routing, f"one count, or one per batch ({batch_axis.size} values)")
    return resolve_routing(routing, model, batch_axis)
