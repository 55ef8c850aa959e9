"""``capacity_map``: which (batch, context) pairs fit, which are memory- or compute-bound."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._typing import Broadcastable
from ..units import GB
from ._common import (
    CONTEXT_AXIS_LABEL, OKABE_ITO, AcceleratorLike, ModelLike, WeightsLike, axis_values, batch_axis, check_slo,
    fits, layout_share, longest_context, memory_label, new_axes, resolve_model, share_fits, single_accelerator,
    title, token_axis,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..specs.parallel import Parallel

#: Verdict codes of the map and their legend text.
VERDICTS = ("fits, memory-bound", "fits, compute-bound", "does not fit in memory")
VERDICT_COLORS = (OKABE_ITO["sky_blue"], OKABE_ITO["orange"], "#BBBBBB")


def capacity_map(model: ModelLike, accelerator: AcceleratorLike | Sequence[AcceleratorLike],
                 batch: Broadcastable | None = None, context: Broadcastable | None = None, *,
                 slo_ms: float | None = None, weights: WeightsLike = None, kv: str | NumberFormat | None = None,
                 sparse: bool = False, parallel: Parallel | str | None = None, ax: Axes | None = None) -> Axes:
    """The batch × context plane shaded by verdict, with a contour at a per-token latency target.

    Each cell is one decode floor of the sweep: *does not fit* where the weights plus the KV
    cache of every sequence (:func:`~roofline_decode.plotting.resident_bytes`) exceed the
    accelerator's memory, else *compute-bound* or *memory-bound* from the floor's ``bound``.
    With ``slo_ms``, a black contour marks where the step floor (the time each sequence waits
    per token) equals the target; cells below and left of it meet it.

    Parameters
    ----------
    model, accelerator
        The model and one accelerator, as in :func:`~roofline_decode.plotting.batch_plot`.
    batch : array_like, optional
        Batch sizes [1], at least two (default 1…4096, log-spaced).
    context : array_like, optional
        Contexts T [tokens], at least two (default 256 to the model's maximum position, at most 128k).
    slo_ms : float, optional
        Per-token latency target [ms]; draws its contour when given.
    weights, kv, sparse, ax
        As in :func:`~roofline_decode.plotting.batch_plot`.
    parallel : Parallel or str, optional
        A parallel layout (``"tp8"``, ``"dp8 ep8"``): each cell is the layout's step
        (``decode_floor(..., parallel=)``): *does not fit* where the busiest device's share
        exceeds its memory, *compute-bound* where its compute time reaches its memory time,
        and the latency contour is the layout's step time.  None (default): one device.

    Returns
    -------
    matplotlib.axes.Axes
        The map, batch on x and context on y, with the verdict legend.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> ax = capacity_map("llama-3.1-8b", "h100-sxm", slo_ms=20)
    >>> ax.get_ylabel()
    'context T [tokens cached per sequence]'
    """
    from matplotlib.colors import BoundaryNorm, ListedColormap
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from ..floors.sweeps import sweep

    spec = resolve_model(model, weights, kv)
    device = single_accelerator(accelerator)
    batches = axis_values("batch", batch, np.round(np.geomspace(1, 4096, 61)), several=True)
    contexts = axis_values("context", context, np.geomspace(256, max(longest_context(spec), 512.0), 61), several=True)
    slo_ms = check_slo(slo_ms)
    floor = sweep([spec], [device], batch=batches, context=contexts, sparse=sparse)[0]
    verdict = np.where(~fits(spec, floor, device), 2, np.where(floor.bound == "compute", 1, 0))
    step_time, where = floor.step_time_s, ""
    share = layout_share(spec, device, batches[:, None], contexts[None, :], sparse=sparse, parallel=parallel)
    if share is not None:
        compute_bound = np.asarray(share.compute_time_s) >= np.asarray(share.memory_time_s)
        verdict = np.where(~share_fits(share, device), 2, np.where(compute_bound, 1, 0))
        step_time, where = share.step_time_s, f"\n{share.parallel} ({share.num_devices} devices)"

    ax = new_axes(ax)
    cmap = ListedColormap(VERDICT_COLORS)
    ax.pcolormesh(batches, contexts, verdict.T, cmap=cmap, norm=BoundaryNorm([-0.5, 0.5, 1.5, 2.5], 3),
                  shading="nearest", rasterized=True, gid="verdict")
    handles: list[Artist] = [Patch(facecolor=c, edgecolor="0.5", label=v) for c, v in zip(VERDICT_COLORS, VERDICTS)]
    if slo_ms is not None:
        step_ms = step_time.T * 1e3
        if step_ms.min() <= slo_ms <= step_ms.max():
            contour = ax.contour(batches, contexts, step_ms, levels=[slo_ms], colors="black", linewidths=2.2)
            contour.set_gid("latency-contour")
            handles.append(Line2D([], [], color="black", lw=2.2,
                                  label=f"step floor = {slo_ms:g} ms/token (faster below and left)"))
        else:
            side = "every cell is faster" if step_ms.max() < slo_ms else "no cell meets it"
            handles.append(Line2D([], [], color="black", lw=2.2, ls="none",
                                  label=f"target {slo_ms:g} ms/token: {side}"))
    if (verdict == 2).all() and share is not None:
        ax.text(0.5, 0.5, f"nothing fits: a device's share of the weights is {share.weight_bytes_per_device / GB:.4g} "
                f"GB\nof {memory_label(device)} (try fp8 or int4 weights, or more devices)",
                transform=ax.transAxes, ha="center", va="center", fontsize=10, gid="nothing-fits",
                bbox=dict(facecolor="white", edgecolor="0.6", alpha=0.95))
    elif (verdict == 2).all():
        ax.text(0.5, 0.5, f"nothing fits: the weights alone take {spec.weight_bytes / GB:.4g} GB\n"
                f"of {memory_label(device)} (try fp8 or int4 weights, or more devices)",
                transform=ax.transAxes, ha="center", va="center", fontsize=10, gid="nothing-fits",
                bbox=dict(facecolor="white", edgecolor="0.6", alpha=0.95))
    batch_axis(ax)  # batches are > 0 (the sweep checked)
    if contexts[0] > 0:
        ax.set_yscale("log", base=2)
    token_axis(ax.yaxis, contexts[-1], log=contexts[0] > 0)
    if contexts[0] > 0:  # the top of the plane (the model's longest context) gets its own tick
        from matplotlib.ticker import FixedLocator

        top = float(contexts[-1])
        ticks = [t for t in ax.yaxis.get_major_locator().tick_values(float(contexts[0]), top)
                 if contexts[0] <= t <= top and t < top / 1.4]
        ax.yaxis.set_major_locator(FixedLocator([*ticks, top]))
    ax.set_ylabel(CONTEXT_AXIS_LABEL)
    ax.legend(handles=handles, loc="upper right", fontsize=8, framealpha=0.95)
    capacity = memory_label(device)
    ax.set_title(f"Capacity map: {title(spec, floor, device)}, {capacity}" + (" per device" if where else "") + where,
                 fontsize=11)
    return ax
