"""The planners' decode floor under a :class:`~roofline_decode.Parallel` layout.

:func:`plan`, :func:`frontier`, :func:`serving_rate` and :func:`offload_floor` take
``parallel=`` (issue 26 item 1: one layout accepted everywhere).  They time the step the way
their tensor-parallel wrappers always did, with their own collective options
(``collective_latency``, ``overlap_communication``) on top of the layout's busiest device
(:func:`~roofline_decode.floors.layout.decode_layout_floor`): with ``parallel=Parallel(tp=n)``
the bytes, FLOPs and times are those of ``tp=n`` (``num_devices=n``), only the notes differ
(a layout adds what it knows of the scale-up domain).

:func:`layout_capacity` gives what capacity planning needs from a layout: the weights one
device holds and the KV cache each more sequence adds to the busiest device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..floors.layout_result import ParallelFloor
    from ..floors.routing import Routing
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["planned_layout", "planned_layouts", "layout_decode_floor", "layout_capacity"]


def planned_layout(parallel: object) -> Parallel | None:
    """``parallel`` as a :class:`~roofline_decode.Parallel` (a layout, its text such as
    ``"tp4"``, or a dict of degrees); None for None."""
    from ..floors.layout import layout_of

    return layout_of(parallel)


def planned_layouts(parallel: object) -> list[Parallel]:
    """One layout or a sequence of them (each as :func:`planned_layout` takes it), each once,
    in order; an empty sequence is refused naming ``parallel``."""
    listed = list(parallel) if isinstance(parallel, (list, tuple)) else [parallel]
    layouts: list[Parallel] = []
    for item in listed:
        layout = planned_layout(item)
        if layout is None:
            raise InvalidValueError("parallel", item, "a Parallel layout or its text such as 'tp4' (not None) "
                                                      "in the sequence of layouts")
        if layout not in layouts:
            layouts.append(layout)
    if not layouts:
        raise InvalidValueError("parallel", parallel, "at least one layout (a Parallel or its text such as 'tp4')")
    return layouts


def layout_decode_floor(model: Model, accelerator: Accelerator, batch: Any, context: Any, layout: Parallel, *,
                        routing: Routing | str | float = "uniform", collective_latency: float = 0.0,
                        overlap_communication: bool = True, link_bandwidth: float | None = None,
                        node_size: int | None = None, scale_out_bandwidth: float | None = None) -> ParallelFloor:
    """The decode floor of ``batch`` sequences at ``context`` on the busiest device of
    ``layout``, with the planner's collective options (defaults: the strict floor).

    Examples
    --------
    >>> from roofline_decode import Parallel, load_accelerator, load_model
    >>> r = layout_decode_floor(load_model("llama-3.1-70b"), load_accelerator("h100-sxm"), 16, 32768,
    ...                         Parallel(tp=4))
    >>> r.num_devices, round(float(r.step_time_s) * 1e3, 2)
    (4, 23.2)
    """
    from ..checks import collective_latency as checked_collective_latency
    from ..checks import flag
    from ..floors.grid import broadcast_grid, checked_array
    from ..floors.layout import Options, check_layout, decode_layout_floor
    from ..floors.routing import resolve_routing

    check_layout(model, layout)
    latency = checked_collective_latency(collective_latency)
    overlap = flag("overlap_communication", overlap_communication)
    batch_array = checked_array("batch", batch, 1.0, inclusive=True)
    context_array = checked_array("context", context, 0.0, inclusive=True)
    chosen = resolve_routing(routing, model, batch_array)
    batch_array, context_array = broadcast_grid(batch=batch_array, context=context_array)
    options = Options(collective_latency=latency, overlap_communication=overlap, link_bandwidth=link_bandwidth,
                      node_size=node_size, scale_out_bandwidth=scale_out_bandwidth)
    return decode_layout_floor(model, accelerator, batch_array, context_array, layout, chosen, options, check=False)


def layout_capacity(model: Model, accelerator: Accelerator, context: float, layout: Parallel,
                    **links: Any) -> tuple[float, float]:
    """(weights one device of ``layout`` holds [B], KV cache one more sequence adds to the
    busiest device [B]) at ``context``: resident bytes are linear in the batch, so the floor at
    batch 1 gives both (a pipeline stage holds 1/pp of each; attention DP spreads the
    sequences over its groups, the even split)."""
    one = layout_decode_floor(model, accelerator, np.ones(1), np.full(1, float(context)), layout, **links)
    return float(one.weight_bytes_per_device), float(np.asarray(one.kv_bytes_per_device).ravel()[0])
