"""``batch_plot`` and ``context_plot``: throughput and latency floors along one axis of the grid."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._typing import Broadcastable
from ..units import GB
from ._common import (
    CONTEXT_AXIS_LABEL, OKABE_ITO, AcceleratorLike, ModelLike, WeightsLike, axis_values, batch_axis, check_slo,
    color, context_label, count_formatter, fits, geometric_batches, longest_context, max_batch, memory_label,
    new_axes, plain_formatter, resolve_accelerators, resolve_model, single_accelerator, single_value, title,
    token_axis, layout_share, share_fits,
)

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..specs.latency import LatencyProfile
    from ..specs.parallel import Parallel


def batch_plot(model: ModelLike, accelerator: AcceleratorLike | Sequence[AcceleratorLike],
               batch: Broadcastable | None = None, context: Broadcastable = 4096, *, slo_ms: float | None = None,
               weights: WeightsLike = None, kv: str | NumberFormat | None = None, sparse: bool = False,
               latency: LatencyProfile | str | None = None, parallel: Parallel | str | None = None,
               ax: Axes | None = None) -> Axes:
    """Aggregate tokens/s and per-sequence ms/token against batch, at one context.

    The aggregate rate (``tokens_per_s``, left axis) rises with batch while the step is
    memory-bound, because every sequence shares the one pass over the weights; per-sequence
    latency (``step_time_s`` in ms, right axis) stays nearly flat until KV reads or FLOPs take
    over.  The compute-bound region (batch >= the floor's ``critical_batch``) is shaded, and
    the capacity limit (the largest batch whose weights and KV cache fit the accelerator's
    memory, see :func:`~roofline_decode.plotting.max_batch`) is a hatched region.

    Parameters
    ----------
    model : str, Path or Model
        Catalog id, config.json path or :class:`~roofline_decode.Model`.
    accelerator : str, Accelerator or sequence of them
        One accelerator; several draw one aggregate tokens/s curve each on one Axes (solid up
        to the capacity limit, dotted beyond; with ``slo_ms`` a star at the largest batch
        meeting the target), without the latency axis and the shaded regions.
    batch : array_like, optional
        Batch sizes [1], at least two; default: 48 whole sizes from 1 to max(1024, twice the
        capacity limit), at most 65536.
    context : float
        Tokens cached per sequence T (default 4096).
    slo_ms : float, optional
        Per-token latency target [ms], drawn as a horizontal line on the latency axis.
    weights, kv : str, optional
        Weight and KV-cache formats (default: the model's).
    sparse : bool
        Use 2:4 sparse peaks.
    latency : LatencyProfile or str, optional
        A latency profile (preset id or object): the serial chain T_chain becomes a third
        floor on the latency axis (a horizontal line) and the step never drops below it.
    parallel : Parallel or str, optional
        A parallel layout (``"tp8"``, ``"dp8 ep8"``): the layout's step (``decode_floor(...,
        parallel=)``, communication included) and its aggregate tokens/s over all its devices;
        the compute-bound region starts at the first swept batch whose busiest device is
        compute-bound, the capacity limit at the last swept batch whose share fits one device.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure if omitted.

    Returns
    -------
    matplotlib.axes.Axes
        The tokens/s Axes; for one accelerator the ms/token axis is its twin, ``ax.twin``.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> ax = batch_plot("llama-3.1-8b", "h100-sxm", context=4096)
    >>> ax.get_ylabel(), ax.twin.get_ylabel()
    ('aggregate decode rate [tokens/s]', 'per-sequence latency [ms/token]')
    """
    from ..floors.decode import decode_floor
    from ..floors import NO_COMPUTE_PEAK

    devices = resolve_accelerators(accelerator)
    if len(devices) > 1:
        from .batch_devices import batch_plot_devices

        return batch_plot_devices(model, devices, batch, context, slo_ms=slo_ms, weights=weights, kv=kv,
                                  sparse=sparse, latency=latency, parallel=parallel, ax=ax)
    slo_ms = check_slo(slo_ms)
    spec = resolve_model(model, weights, kv)
    device = devices[0]
    ctx = single_value("context", context)
    limit = max_batch(spec, device, ctx)
    default = geometric_batches(min(max(1024.0, 2.0 * limit), 65536.0))
    batches = axis_values("batch", batch, default, several=True)
    floor = decode_floor(spec, device, batch=batches, context=ctx, sparse=sparse, latency=latency)
    critical = float(np.ravel(floor.critical_batch)[0])
    rate_values, step_values, where, swept = floor.tokens_per_s, floor.step_time_s, "", ""
    share = layout_share(spec, device, batches, ctx, sparse=sparse, latency=latency, parallel=parallel)
    if share is not None:  # the layout's step; its limits read off the swept batches
        rate_values, step_values = share.tokens_per_s, share.step_time_s
        bound = np.ravel(np.asarray(share.compute_time_s) >= np.asarray(share.memory_time_s))
        critical = float(batches[np.argmax(bound)]) if bound.any() else np.inf
        fitting = np.ravel(share_fits(share, device))
        limit = np.inf if fitting.all() else float(batches[np.flatnonzero(fitting)[-1]]) if fitting.any() else 0.0
        where, swept = f"\n{share.parallel} ({share.num_devices} devices)", " (swept, per device)"

    ax = new_axes(ax)
    twin = ax.twinx()
    ax.twin = twin  # type: ignore[attr-defined]  # an extra attribute: the twin Axes, documented as ax.twin
    # the legend and the annotations live on ax: draw it above the twin's lines (ax made transparent)
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    rate = ax.plot(batches, rate_values, color=OKABE_ITO["blue"], lw=2.4, label="aggregate tokens/s (left)")
    step_lines = twin.plot(batches, step_values * 1e3, color=OKABE_ITO["vermillion"], lw=2.0, ls="--",
                           label="per-sequence ms/token (right)")
    batch_axis(ax)  # the twin shares it
    ax.set_yscale("log")
    twin.set_yscale("log")
    b_low, b_high = batches[0], batches[-1]
    ax.set_xlim(b_low, b_high)
    ax.yaxis.set_major_formatter(count_formatter())
    ax.yaxis.set_minor_formatter(count_formatter(minor=True))
    twin.yaxis.set_minor_formatter(plain_formatter(minor=True))
    twin.yaxis.set_major_formatter(plain_formatter())

    extras: list[Artist] = []
    legend_title = None
    if np.isfinite(critical) and critical <= b_high:
        span = ax.axvspan(max(critical, b_low), b_high, color=OKABE_ITO["orange"], alpha=0.16, lw=0,
                          label=f"compute-bound (B ≥ B* = {np.ceil(critical):.0f}{swept})", gid="compute-bound")
        ax.axvline(critical, color=OKABE_ITO["orange"], lw=1.4)
        # labels sit just above the frame, beside their line: never on a curve
        ax.annotate(f"memory → compute B* = {np.ceil(critical):.0f}", (critical, 1.0), xycoords=("data", "axes fraction"),
                    xytext=(-3, 3), textcoords="offset points", ha="right", va="bottom", fontsize=8,
                    color="0.2", gid="critical-batch", annotation_clip=False)
        extras.append(span)
    else:
        reason = (f"B* = {np.ceil(critical):.0f}" if np.isfinite(critical)
                  else NO_COMPUTE_PEAK if np.isnan(critical) or not floor.compute_bounded
                  else "no swept batch is compute-bound per device" if share is not None
                  else f"B* = ∞ at {context_label(ctx)} context")
        legend_title = f"memory-bound over the whole range ({reason})"  # nothing shaded: no legend entry
    if limit < b_high:
        start = max(limit, b_low)
        span = ax.axvspan(start, b_high, facecolor="none", edgecolor="0.45", hatch="///", lw=0,
                          label=f"does not fit in {memory_label(device)}", gid="capacity-limit")
        ax.axvline(start, color="0.3", lw=1.4)
        if limit >= b_low:
            text = f"capacity limit B = {limit:.0f}{swept}"
        elif share is not None:
            text = f"nothing fits: a device's share of the weights is {share.weight_bytes_per_device / GB:.4g} GB"
        else:
            text = f"nothing fits: weights alone are {spec.weight_bytes / GB:.4g} GB"
        ax.annotate(text, (start, 1.0), xycoords=("data", "axes fraction"), xytext=(3, 3),
                    textcoords="offset points", ha="left", va="bottom", fontsize=8, color="0.2", gid="capacity-label",
                    annotation_clip=False)
        extras.append(span)

    if floor.latency_profile is not None:
        chain_ms = float(np.ravel(floor.chain_time_s)[0]) * 1e3
        extras.append(twin.axhline(chain_ms, color=OKABE_ITO["bluish_green"], lw=1.6, ls=(0, (4, 2, 1, 2)),
                                   label=f"serial chain {chain_ms:.3g} ms ({floor.latency_profile}, right)",
                                   gid="chain-floor"))
        low, high = twin.get_ylim()
        twin.set_ylim(min(low, chain_ms / 1.5), max(high, chain_ms * 1.5))
    if slo_ms is not None:
        extras.append(twin.axhline(slo_ms, color=OKABE_ITO["reddish_purple"], lw=1.6, ls="-.",
                                   label=f"latency target {slo_ms:g} ms/token (right)", gid="latency-target"))
        low, high = twin.get_ylim()
        twin.set_ylim(min(low, slo_ms / 1.5), max(high, slo_ms * 1.5))
    for axes in (ax, twin):
        _span_at_least(axes, 10.0)
    ax.set_ylabel("aggregate decode rate [tokens/s]", color=OKABE_ITO["blue"])
    twin.set_ylabel("per-sequence latency [ms/token]", color=OKABE_ITO["vermillion"])
    ax.grid(True, which="major", color="0.88", lw=0.7)
    handles = rate + step_lines + extras
    # below the axes: the legend never covers a curve
    ax.legend(handles, [str(h.get_label()) for h in handles], loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=2,
              fontsize=8, title=legend_title, title_fontsize=8, frameon=False)
    ax.set_title(f"Batching: {title(spec, floor, device)}{where}, context {context_label(ctx)} tokens", fontsize=11,
                 pad=16)
    return ax


def _span_at_least(axes: Axes, factor: float) -> None:
    """Widen a log y axis to span at least ``factor`` so small changes do not look steep."""
    low, high = axes.get_ylim()
    if high / low < factor:
        middle = np.sqrt(low * high)
        axes.set_ylim(middle / np.sqrt(factor), middle * np.sqrt(factor))


def context_plot(model: ModelLike, accelerator: AcceleratorLike | Sequence[AcceleratorLike],
                 context: Broadcastable | None = None, batch: Broadcastable = (1, 8, 64), *,
                 slo_ms: float | None = None, weights: WeightsLike = None, kv: str | NumberFormat | None = None,
                 sparse: bool = False, parallel: Parallel | str | None = None, ax: Axes | None = None) -> Axes:
    """Step time against context for several batches: KV reads grow linearly with context.

    Each batch is one line of ``step_time_s`` [ms]; the intercept at context 0 is the weight
    pass, the slope the batch's KV reads (or attention FLOPs where compute-bound).  Where the
    KV cache no longer fits the accelerator's memory the line turns dotted and an ``x`` marks
    the last context that fits.

    Parameters
    ----------
    model : str, Path or Model
        As in :func:`batch_plot`.
    accelerator : str or Accelerator
        One accelerator (unlike :func:`batch_plot`, which compares several).
    context : array_like, optional
        Contexts T [tokens], at least two; default 65 points from 0 to the model's maximum
        position (at most 128k).
    batch : array_like
        Batches, one line each (default 1, 8, 64).
    slo_ms : float, optional
        Per-token latency target [ms], drawn as a horizontal line.
    weights, kv, sparse, ax
        As in :func:`batch_plot`.
    parallel : Parallel or str, optional
        A parallel layout (``"tp8"``, ``"dp8 ep8"``): the step of the layout
        (``decode_floor(..., parallel=)``, communication included), and "does not fit" what one
        device holds against its usable memory.  None (default): one device.

    Returns
    -------
    matplotlib.axes.Axes
        One line of step time [ms] per batch, context on x.

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> ax = context_plot("llama-3.1-8b", "h100-sxm", batch=[1, 16])
    >>> [line.get_label() for line in ax.get_lines()][:2]
    ['B = 1', 'B = 16']
    """
    from ..floors.sweeps import sweep

    slo_ms = check_slo(slo_ms)
    spec = resolve_model(model, weights, kv)
    device = single_accelerator(accelerator)
    contexts = axis_values("context", context, np.linspace(0.0, longest_context(spec), 65), several=True)
    batches = axis_values("batch", batch, [1, 8, 64])
    floor = sweep([spec], [device], batch=batches, context=contexts, sparse=sparse)[0]
    ok = fits(spec, floor, device)
    step_time, where = floor.step_time_s, ""
    share = layout_share(spec, device, batches[:, None], contexts[None, :], sparse=sparse, parallel=parallel)
    if share is not None:  # several devices (a one-device layout is the plain floor)
        step_time, ok = share.step_time_s, share_fits(share, device)
        where = f", {share.parallel} ({share.num_devices} devices)"

    ax = new_axes(ax)
    for i, b in enumerate(batches):
        c = color(i)
        ms = step_time[i] * 1e3
        ax.plot(contexts, np.where(ok[i], ms, np.nan), color=c, lw=2.2, label=f"B = {b:g}", gid="fits")
        if not ok[i].all():
            first_out = int(np.argmin(ok[i]))
            tail = slice(max(first_out - 1, 0), None)
            ax.plot(contexts[tail], ms[tail], color=c, lw=1.4, ls=":", gid="does-not-fit")
            if first_out > 0:
                ax.plot([contexts[first_out - 1]], [ms[first_out - 1]], marker="X", ms=9, color=c, mec="black",
                        ls="none", gid="capacity-limit")
    if slo_ms is not None:
        ax.axhline(slo_ms, color="black", lw=1.4, ls="-.", label=f"latency target {slo_ms:g} ms/token",
                   gid="latency-target")
    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    if not ok.all():
        handles += [Line2D([], [], color="0.4", ls=":", lw=1.4),
                    Line2D([], [], color="0.4", marker="X", mec="black", ls="none", ms=8)]
        labels += [f"KV cache does not fit in {memory_label(device)}" + (" per device" if where else ""),
                   "last context that fits"]
    ax.legend(handles, labels, loc="upper left", fontsize=8, framealpha=0.92)
    ax.set_xlim(contexts[0], contexts[-1])
    ax.set_ylim(bottom=0)
    token_axis(ax.xaxis, contexts[-1])
    ax.set_xlabel(CONTEXT_AXIS_LABEL)
    ax.set_ylabel("decode step floor = per-sequence latency [ms/token]")
    ax.grid(True, color="0.88", lw=0.7)
    ax.set_title(f"Context: {title(spec, floor, device)}{where}", fontsize=11)
    return ax
