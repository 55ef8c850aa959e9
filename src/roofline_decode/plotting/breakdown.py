"""``breakdown_plot``: what a decode step moves (bytes, stacked) and how long each bound takes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._typing import Broadcastable
from ..errors import InvalidValueError
from ..units import GB
from ._common import (
    CONTEXT_AXIS_LABEL, OKABE_ITO, AcceleratorLike, ModelLike, WeightsLike, axis_values, batch_axis, context_label,
    geometric_batches, longest_context, memory_label, new_axes, resolve_model, single_accelerator, single_value,
    layout_share, share_fits, title, token_axis,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..specs.parallel import Parallel

#: Parts of ``DecodeFloor.breakdown()["bytes"]`` that are weight reads.
WEIGHT_PARTS = ("attention_weights", "mlp_weights", "norms_and_biases", "embedding", "lm_head")


def _sweep_axis(batch: Broadcastable | None, context: Broadcastable | None, over: str | None) -> str:
    if over is None:
        many_b = batch is not None and np.size(batch) > 1
        many_t = context is not None and np.size(context) > 1
        if many_b and many_t:
            raise InvalidValueError("over", None, "'batch' or 'context' when both batch and context have several values")
        over = "context" if many_t else "batch"
    if over not in ("batch", "context"):
        raise InvalidValueError("over", over, "'batch' or 'context'")
    return over


def breakdown_plot(model: ModelLike, accelerator: AcceleratorLike | Sequence[AcceleratorLike],
                   batch: Broadcastable | None = None, context: Broadcastable | None = None, *,
                   over: str | None = None, weights: WeightsLike = None, kv: str | NumberFormat | None = None,
                   sparse: bool = False, parallel: Parallel | str | None = None, ax: Axes | None = None) -> Axes:
    """Bytes moved per step, stacked (weights / KV read / KV write), with the time terms on a twin axis.

    The left axis stacks the floor's ``breakdown()["bytes"]`` parts in GB: weight reads (all
    weight parts together), KV-cache reads and the KV write of the new token.  The right axis
    shows ``memory_time_s``, ``compute_time_s`` and the floor ``step_time_s`` in ms, scaled so
    that bytes / bandwidth lines up with the top of the stack.

    Parameters
    ----------
    model, accelerator
        A model and one accelerator (ids, paths or objects), as in
        :func:`~roofline_decode.plotting.batch_plot`.
    batch, context : array_like, optional
        The swept axis gets at least two values, the other one a single value.  Defaults: sweep
        batch 1…1024 at context 4096; with ``over="context"``, context 0…128k at batch 1.
    over : {"batch", "context"}, optional
        Which axis to sweep (inferred from which argument has several values).
    weights, kv, sparse, ax
        Formats, sparse peaks and the Axes to draw on, as in
        :func:`~roofline_decode.plotting.batch_plot`.
    parallel : Parallel or str, optional
        A parallel layout (``"tp8"``, ``"dp8 ep8"``): the busiest device's bytes per step
        (weights, KV read, KV written), its memory, compute and communication times and the step
        of the layout, and the fit of what one device holds.  None (default): one device.

    Returns
    -------
    matplotlib.axes.Axes
        The bytes Axes; the time axis is its twin, ``ax.twin``.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> ax = breakdown_plot("llama-3.1-8b", "h100-sxm", context=[0, 32768, 65536], batch=8)
    >>> ax.get_xlabel()
    'context T [tokens cached per sequence]'
    """
    from ..floors.decode import decode_floor

    spec = resolve_model(model, weights, kv)
    device = single_accelerator(accelerator)
    over = _sweep_axis(batch, context, over)
    if over == "batch":
        xs = axis_values("batch", batch, geometric_batches(1024.0), several=True)
        fixed = single_value("context", 4096 if context is None else context)
        floor = decode_floor(spec, device, batch=xs, context=fixed, sparse=sparse)
        where = f"context {context_label(fixed)} tokens"
    else:
        xs = axis_values("context", context, np.linspace(0.0, longest_context(spec), 65), several=True)
        fixed = single_value("batch", 1 if batch is None else batch)
        floor = decode_floor(spec, device, batch=fixed, context=xs, sparse=sparse)
        where = f"batch {fixed:g}"
    share = layout_share(spec, device, xs if over == "batch" else fixed, fixed if over == "batch" else xs,
                         sparse=sparse, parallel=parallel)
    colors = [OKABE_ITO["blue"], OKABE_ITO["vermillion"], OKABE_ITO["bluish_green"]]
    if share is None:
        parts = floor.breakdown()["bytes"]
        weight_gb = sum(parts[k] for k in WEIGHT_PARTS) / GB
        stack = [weight_gb, parts["kv_read"] / GB, parts["kv_write"] / GB]
        labels = ["weights read", "KV cache read", "KV cache written (new token)"]
        if "recurrent_state" in parts:  # Mamba-2 / Gated DeltaNet: a fixed state read and written back
            stack.append(parts["recurrent_state"] / GB)
            labels.append("recurrent state read + written")
            colors.append(OKABE_ITO["reddish_purple"])
        bytes_total, memory, compute, step = floor.bytes_total, floor.memory_time_s, floor.compute_time_s, floor.step_time_s
        fitting = np.ravel(floor.fits)
    else:  # the busiest device of the layout (its KV read holds a recurrent state's read and write)
        stack = [np.ravel(np.broadcast_to(getattr(share, f"{k}_bytes_per_device"), share.shape)) / GB
                 for k in ("weight_read", "kv_read", "kv_write")]
        labels = ["weights read", "KV cache (and state) read", "KV cache written (new token)"]
        bytes_total, memory, compute, step = (np.ravel(np.broadcast_to(getattr(share, k), share.shape)) for k in (
            "bytes_read_per_device", "memory_time_s", "compute_time_s", "step_time_s"))
        fitting = np.ravel(share_fits(share, device))
        where += f"\n{share.parallel}: the busiest of {share.num_devices} devices"

    ax = new_axes(ax)
    twin = ax.twinx()
    ax.twin = twin  # type: ignore[attr-defined]  # an extra attribute: the twin Axes, documented as ax.twin
    areas = ax.stackplot(xs, *stack, labels=labels, colors=colors, alpha=0.78, lw=0)
    bandwidth = floor.memory_bandwidth
    top_gb = max(float(np.max(bytes_total)), float(np.max(step)) * bandwidth) / GB * 1.45  # room for the legend
    ax.set_ylim(0, top_gb)
    twin.set_ylim(0, top_gb * GB / bandwidth * 1e3)  # aligned: bytes / bandwidth = memory time
    lines = twin.plot(xs, memory * 1e3, color="black", lw=1.4, label="memory time = bytes / bandwidth")
    if floor.compute_bounded:
        lines += twin.plot(xs, compute * 1e3, color=OKABE_ITO["orange"], lw=2.0, ls="--",
                           label="compute time = FLOPs / peak (" + (
                               floor.compute_precision if len(set(floor.compute_precisions.values())) <= 1
                               else "each FLOP group at its precision, see title") + ")")
    if share is not None:
        lines += twin.plot(xs, np.ravel(np.broadcast_to(share.communication_time_s, share.shape)) * 1e3,
                           color=OKABE_ITO["sky_blue"], lw=1.6, ls="-.", label="communication time (links)")
    lines += twin.plot(xs, step * 1e3, color=OKABE_ITO["reddish_purple"], lw=3.0, alpha=0.55,
                       label="step floor = max of the two" if share is None else "step floor of the layout")

    if over == "batch":
        batch_axis(ax)
    else:
        token_axis(ax.xaxis, xs[-1])
        ax.set_xlabel(CONTEXT_AXIS_LABEL)
    ax.set_xlim(xs[0], xs[-1])
    misses = ~fitting
    if misses.any():  # weights + KV cache exceed usable memory from here on (fits is monotone in B and T)
        start = float(xs[int(np.argmax(misses))])
        handles_extra = [ax.axvspan(start, xs[-1], facecolor="none", edgecolor="0.45", hatch="///", lw=0,
                                    label=f"does not fit in {memory_label(device)}" + (
                                        "" if share is None else " per device"), gid="does-not-fit")]
        ax.axvline(start, color="0.3", lw=1.2)
        ax.annotate(f"capacity limit: does not fit from {'B' if over == 'batch' else 'T'} = {start:,.0f}", (start, 1.0),
                    xycoords=("data", "axes fraction"), xytext=(3, 3), textcoords="offset points", ha="left",
                    va="bottom", fontsize=8, color="0.2", gid="capacity-label", annotation_clip=False)
    else:
        handles_extra = []
    ax.set_ylabel("bytes moved per step [GB]" if share is None else "bytes moved per step and device [GB]")
    twin.set_ylabel("time per step [ms]")
    ax.grid(True, color="0.88", lw=0.7)
    ax.set_axisbelow(True)
    # a part thinner than 1% of the axis everywhere cannot be seen: drawn, but not in the legend
    visible = [area for area, part in zip(areas, stack) if float(np.max(part)) >= 0.01 * top_gb]
    handles = visible + lines + handles_extra
    ax.legend(handles, [str(h.get_label()) for h in handles], loc="upper left", fontsize=8, framealpha=0.92)
    ax.set_title(f"Step breakdown: {title(spec, floor, device)}, {where}", fontsize=11, pad=16 if misses.any() else 6)
    return ax

