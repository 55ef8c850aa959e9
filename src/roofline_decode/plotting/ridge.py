"""``ridge_plot``: decode operating points on the roofline of one or several accelerators."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import Broadcastable
from ..units import TFLOP
from ._common import (
    MARKERS,
    AcceleratorLike,
    ModelLike,
    WeightsLike,
    axis_values,
    color,
    context_label,
    hardware_label,
    new_axes,
    plain_formatter,
    precision_label,
    resolve_accelerators,
    resolve_model,
    layout_share,
    share_fits,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..floors.sweeps import SweepResult
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

    from ..formats import NumberFormat
    from ..specs.latency import LatencyProfile

#: Default batch sweep of :func:`ridge_plot`: powers of two from 1 to 1024.
RIDGE_BATCHES = tuple(2**k for k in range(11))


def _batches_to_label(x: np.ndarray, batch: np.ndarray, max_labels: int = 7) -> list[int]:
    """Indices of operating points to label with their batch, skipping crowded ones (log spacing)."""
    chosen: list[int] = []
    step = max(1, int(np.ceil(len(batch) / max_labels)))
    for i in range(0, len(batch), step):
        if chosen and x[i] < x[chosen[-1]] * 1.35:
            continue
        chosen.append(i)
    last = len(batch) - 1
    if last not in chosen and x[last] >= x[chosen[-1]] * 1.35:
        chosen.append(last)
    return chosen


def ridge_plot(model: ModelLike, accelerators: AcceleratorLike | Sequence[AcceleratorLike],
               batch: Broadcastable | None = None, context: Broadcastable = 4096, *, weights: WeightsLike = None,
               kv: str | NumberFormat | None = None, sparse: bool = False,
               latency: LatencyProfile | str | None = None, parallel: Parallel | str | None = None,
               ax: Axes | None = None, label_batches: bool = True) -> Axes:
    """Decode operating points of a batch sweep on the roofline of each accelerator (log-log).

    For every accelerator the roofline is drawn from the floor's ``memory_bandwidth`` (the
    slope, attained FLOP/s = BW × intensity) and its dense ``peak_flops`` (the flat roof), the
    ridge point ``peak / BW`` is marked with a diamond, and each decode step of the sweep is
    placed at x = ``arithmetic_intensity`` [FLOP/B], y = ``flops / step_time_s`` [FLOP/s] (the
    FLOP rate the floor attains).  A box lists the critical batch (the smallest batch that is
    compute-bound) at each context; it is infinite when the intensity saturates below the
    ridge, as it does at long context.

    Parameters
    ----------
    model : str, Path or Model
        Catalog id, config.json path or :class:`~roofline_decode.Model`.
    accelerators : str, Accelerator or sequence of them
        One or several catalog ids or :class:`~roofline_decode.Accelerator` objects.
    batch : array_like, optional
        Batch sizes of the sweep [1] (default 1, 2, 4, ..., 1024).
    context : float or array_like
        Context(s) T [tokens]; each context gets its own marker shape (default 4096).
    weights, kv : str, optional
        Weight and KV-cache formats, e.g. ``"fp8"`` (default: the model's).
    sparse : bool
        Use 2:4 sparse peaks instead of dense ones.
    latency : LatencyProfile or str, optional
        A latency profile (preset id or object): each device also gets its serial-chain
        ceiling, the FLOP rate FLOPs / T_chain each step of the sweep could attain if only the
        chain limited it (dotted); steps under it are latency-bound.
    parallel : Parallel or str, optional
        A parallel layout (``"tp8"``, ``"dp8 ep8"``, :class:`~roofline_decode.Parallel`): each step
        is the busiest device's share (``decode_floor(..., parallel=)``), placed at its FLOPs per
        device / bytes per device, attained FLOPs per device / step time (communication
        included); "does not fit" compares what one device holds with its usable memory, and the
        box gives the first swept batch that is compute-bound per device.  None (default): one
        device holds the whole model.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure if omitted.
    label_batches : bool
        Write ``B=…`` next to some operating points of the first context.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes drawn on (matplotlib is imported on first call; ``plt.show`` is never called).

    Examples
    --------
    >>> import matplotlib; matplotlib.use("Agg")
    >>> ax = ridge_plot("llama-3.1-8b", ["h100-sxm", "mi300x"], context=[0, 4096])
    >>> ax.get_xlabel()
    'arithmetic intensity [FLOP/B]'
    """
    from ..floors import NO_COMPUTE_PEAK
    from ..floors.sweeps import sweep
    from ..views.table import NOT_DEFINED

    spec = resolve_model(model, weights, kv)
    devices = resolve_accelerators(accelerators)
    batches = axis_values("batch", batch, RIDGE_BATCHES)
    contexts = axis_values("context", context, [4096])
    floors = sweep([spec], devices, batch=batches, context=contexts, sparse=sparse, latency=latency)
    points = _operating_points(spec, devices, floors, batches, contexts, sparse, latency, parallel)
    intensity, attained, fits, layout = points
    ax = new_axes(ax, (9.0, 6.0))

    # the roof of each context: the effective peak FLOPs / compute time, which depends on the
    # context alone where FLOP groups run at different precisions (one value otherwise)
    roofs = [np.unique(np.broadcast_to(fl.peak_flops, fl.shape)[0, :]) for fl in floors]
    ridges = [float(p) / fl.memory_bandwidth for fl, r in zip(floors, roofs) for p in r if np.isfinite(p)]
    x_low = float(np.min(intensity)) / 2.5
    x_high = max([float(np.max(intensity))] + ridges) * 3.0
    peaks = [float(p) for r in roofs for p in r if np.isfinite(p)]
    y_low = min(float(np.min(a)) for a in attained) / 4.0 / TFLOP
    y_high = max(peaks or [fl.memory_bandwidth * x_high for fl in floors]) * (10.0 if len(devices) > 1 else 4.0) / TFLOP

    xs = np.geomspace(x_low, x_high, 400)

    def other_peaks(index: int) -> list[float]:
        return [float(p) for k, r in enumerate(roofs) if k != index for p in r if np.isfinite(p)]

    critical_lines = []
    any_miss = False
    for i, (device, fl) in enumerate(zip(devices, floors)):
        c = color(i)
        finite = [float(p) for p in roofs[i] if np.isfinite(p)]
        ridge_text = "/".join(f"{p / fl.memory_bandwidth:.0f}" for p in finite)
        effective = " effective" if np.ndim(fl.peak_flops) else ""
        label = hardware_label(device, fl) + (f";{effective} ridge {ridge_text} FLOP/B" if finite else "")
        if not finite:  # no published peak: the bandwidth slope alone, no roof, never above another's roof
            ceiling = min(other_peaks(i), default=np.inf)
            end = float(np.max(intensity)) * 1.25
            shown = (xs <= end) & (fl.memory_bandwidth * xs <= max(ceiling, float(np.max(attained[i]))))
            ax.plot(xs[shown], fl.memory_bandwidth * xs[shown] / TFLOP, color=c, lw=2.2,
                    label=f"{label} (no roof drawn)", zorder=3,
                    gid="bandwidth-only")
        for k, peak in enumerate(finite):
            roof = np.minimum(fl.memory_bandwidth * xs, peak)
            ax.plot(xs, roof / TFLOP, color=c, lw=2.2 if k == 0 else 1.4, label=label if k == 0 else None, zorder=3)
            if np.isfinite(peak):
                ridge = peak / fl.memory_bandwidth
                ax.plot([ridge, ridge], [y_low, peak / TFLOP], color=c, lw=0.9, ls=(0, (2, 3)), alpha=0.6, zorder=2)
                ax.plot([ridge], [peak / TFLOP], marker="D", ms=8, color=c, mec="black", mew=0.8,
                        ls="none", zorder=6, gid="ridge-point")
        if fl.latency_profile is not None:  # the chain: attained <= FLOPs / T_chain, per step of the sweep
            ax.plot(intensity[:, 0], fl.flops[:, 0] / np.asarray(fl.chain_time_s)[:, 0] / TFLOP, color=c, lw=1.6,
                    ls=(0, (4, 2, 1, 2)), alpha=0.85, zorder=4, gid="chain-ceiling")
        for j, ctx in enumerate(contexts):
            ax.plot(intensity[:, j], attained[i][:, j] / TFLOP, ls=(0, (1, 1.5)), lw=1.2, color=c,
                    marker=MARKERS[j % len(MARKERS)], ms=5.5, mfc=c if j == 0 else "white", mec=c, mew=1.2,
                    zorder=5, gid="operating-points")
            misses = ~fits[i][:, j]
            if misses.any():  # weights + KV cache exceed the device's usable memory
                ax.plot(intensity[misses, j], attained[i][misses, j] / TFLOP, ls="none", marker="x", ms=9,
                        mew=1.6, color="0.15", zorder=6, gid="does-not-fit")
                any_miss = True
        if layout is None:
            critical = [fl.critical_batch.reshape(len(batches), len(contexts))[0, j] for j in range(len(contexts))]
            cells = [(f"{np.ceil(b):.0f}" if np.isfinite(b) else "∞") for b in critical]
        else:  # the first swept batch whose busiest device is compute-bound
            bound = np.asarray(layout[i].compute_time_s) >= np.asarray(layout[i].memory_time_s)
            cells = [f"{batches[np.argmax(bound[:, j])]:g}" if bound[:, j].any() else f"> {batches[-1]:g}"
                     for j in range(len(contexts))]
        cells = [cell + (f" @ {context_label(t)}" if len(contexts) > 1 else "") for cell, t in zip(cells, contexts)]
        if not fl.compute_bounded:  # no roof to reach: not a KV-cache effect
            cells = [f"{NOT_DEFINED} ({NO_COMPUTE_PEAK})"]
        critical_lines.append(f"{device.name}: " + ", ".join(cells))

    if label_batches:
        # label on the lowest roof, below its points, so labels sit in empty space
        lowest = int(np.argmin([fl.memory_bandwidth for fl in floors]))
        for k in _batches_to_label(intensity[:, 0], batches):
            ax.annotate(f"B={batches[k]:g}", (intensity[k, 0], attained[lowest][k, 0] / TFLOP),
                        xytext=(0, -13), textcoords="offset points", ha="center", va="top", fontsize=7.5,
                        color="0.25", gid="batch-label",
                        bbox=dict(boxstyle="square,pad=0.1", facecolor="white", edgecolor="none", alpha=0.75))

    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(x_low, x_high)
    ax.set_ylim(y_low, y_high)
    from matplotlib.ticker import LogLocator, NullFormatter

    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(plain_formatter())
        axis.set_minor_locator(LogLocator(base=10.0, subs=(2.0, 5.0)))  # few minor ticks over many decades
        axis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("arithmetic intensity [FLOP/B]")
    ax.set_ylabel("attained FLOP rate = FLOPs / step time [TFLOP/s]")
    ax.grid(True, which="major", color="0.88", lw=0.7)
    ax.set_axisbelow(True)

    handles, labels = ax.get_legend_handles_labels()
    from matplotlib.lines import Line2D

    for j, ctx in enumerate(contexts):
        handles.append(Line2D([], [], ls="none", marker=MARKERS[j % len(MARKERS)], color="0.3",
                              mfc="0.3" if j == 0 else "white", ms=6))
        labels.append(f"decode steps, context {context_label(ctx)} tokens")
    handles.append(Line2D([], [], ls="none", marker="D", color="0.6", mec="black", ms=7))
    labels.append("ridge point = peak / bandwidth")
    if any_miss:
        handles.append(Line2D([], [], ls="none", marker="x", color="0.15", ms=8, mew=1.6))
        labels.append("does not fit: weights + KV cache > usable memory")
    if floors[0].latency_profile is not None:
        handles.append(Line2D([], [], color="0.3", lw=1.6, ls=(0, (4, 2, 1, 2))))
        labels.append(f"serial-chain ceiling FLOPs / T_chain ({floors[0].latency_profile}, "
                      f"context {context_label(contexts[0])})")
    ax.legend(handles, labels, loc="upper left", fontsize=8, framealpha=0.92)

    box = ("critical batch B* (compute-bound from):\n" if layout is None else
           f"first swept batch compute-bound per device ({layout[0].parallel}):\n") + "\n".join(critical_lines)
    if "∞" in box:
        box += "\n∞: memory-bound at any batch (each sequence's KV\nreads keep the intensity below the ridge)"
    ax.text(0.985, 0.025, box, transform=ax.transAxes, ha="right", va="bottom", multialignment="left", fontsize=7.5,
            gid="critical-batch",
            bbox=dict(boxstyle="round,pad=0.4", facecolor="white", edgecolor="0.7", alpha=0.92), zorder=7)

    names = devices[0].name if len(devices) == 1 else f"{len(devices)} accelerators"
    if layout is not None:
        names += f", {layout[0].parallel} ({layout[0].num_devices} devices each; per device)"
        ax.set_xlabel("arithmetic intensity per device [FLOP/B]")
        ax.set_ylabel("attained FLOP rate per device = FLOPs / step time [TFLOP/s]")
    ax.set_title(f"Decode roofline: {spec.name} on {names}\n{precision_label(*floors)}", fontsize=11)
    return ax


def _operating_points(spec: Model, devices: list[Accelerator], floors: SweepResult, batches: np.ndarray,
                      contexts: np.ndarray, sparse: bool, latency: LatencyProfile | str | None,
                      parallel: Parallel | str | None) -> tuple[Any, list[Any], list[np.ndarray], list[Any] | None]:
    """(intensity, attained FLOP/s per device, fits per device, the layout floors or None) of the
    sweep: the single-device floors', or under a layout of several devices each device's share."""
    layout = [layout_share(spec, d, batches[:, None], contexts[None, :], sparse=sparse, latency=latency,
                           parallel=parallel) for d in devices]
    shares = [share for share in layout if share is not None]
    if shares and len(shares) == len(devices):  # else no layout, or one device: the plain floors
        intensity = np.asarray(shares[0].flops_per_device) / np.asarray(shares[0].bytes_read_per_device)
        attained = [np.asarray(fl.flops_per_device) / fl.step_time_s for fl in shares]
        return intensity, attained, [share_fits(fl, d) for fl, d in zip(shares, devices)], shares
    # the same for every accelerator: bytes and FLOPs of the model
    return (floors[0].arithmetic_intensity, [fl.flops / fl.step_time_s for fl in floors],
            [np.asarray(fl.fits) for fl in floors], None)
