"""``batch_plot`` with several accelerators: aggregate tokens/s against batch, one curve per device."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._typing import Broadcastable
from ._common import (
    ModelLike, WeightsLike, axis_values, batch_axis, check_slo, color, context_label, count_formatter,
    geometric_batches, hardware_label, layout_share, max_batch, new_axes, precision_label, resolve_model, share_fits,
    single_value,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..specs.accelerator import Accelerator
    from ..specs.latency import LatencyProfile
    from ..specs.parallel import Parallel


def batch_plot_devices(model: ModelLike, devices: Sequence[Accelerator], batch: Broadcastable | None = None,
                       context: Broadcastable = 4096, *, slo_ms: float | None = None, weights: WeightsLike = None,
                       kv: str | NumberFormat | None = None, sparse: bool = False,
                       latency: LatencyProfile | str | None = None, parallel: Parallel | str | None = None,
                       ax: Axes | None = None) -> Axes:
    """Aggregate tokens/s against batch for several accelerators on one Axes (see ``batch_plot``).

    Each device is one solid curve up to its capacity limit (the largest batch whose weights and
    KV cache fit, marked with a dot) and a thin dotted one beyond, where the batch does not fit.
    With ``slo_ms`` a star marks the largest batch of each curve whose per-sequence step time
    meets the target.  The legend sits below the Axes, so it never covers a curve.  Under a
    ``parallel`` layout each curve is the layout's aggregate tokens/s, solid while the busiest
    device's share fits its memory.
    """
    from ..floors.sweeps import sweep

    slo_ms = check_slo(slo_ms)
    spec = resolve_model(model, weights, kv)
    ctx = single_value("context", context)
    limits = [max_batch(spec, device, ctx) for device in devices]
    default = geometric_batches(min(max(1024.0, 2.0 * max(limits)), 65536.0))
    batches = axis_values("batch", batch, default, several=True)
    floors = sweep([spec], devices, batch=batches, context=[ctx], sparse=sparse, latency=latency)

    ax = new_axes(ax)
    any_target = False
    layout = ""
    for i, (device, floor, limit) in enumerate(zip(devices, floors, limits)):
        c = color(i)
        rate = np.ravel(floor.tokens_per_s)
        step_ms = np.ravel(floor.step_time_s) * 1e3
        fits = batches <= limit
        share = layout_share(spec, device, batches, ctx, sparse=sparse, latency=latency, parallel=parallel)
        if share is not None:
            rate, step_ms = np.ravel(share.tokens_per_s), np.ravel(share.step_time_s) * 1e3
            fits = np.ravel(share_fits(share, device))
            layout = f", {share.parallel} ({share.num_devices} devices each)"
        label = hardware_label(device, floor) + ("" if fits.any() else "; nothing fits")
        if fits.any():
            ax.plot(batches[fits], rate[fits], color=c, lw=2.2, label=label, gid="tokens-per-s")
            last = int(np.flatnonzero(fits)[-1])
            ax.plot([batches[last]], [rate[last]], ls="none", marker="o", ms=6, color=c, mec="black", mew=0.7,
                    zorder=5, gid="capacity-limit")
        if (~fits).any():
            start = max(int(np.flatnonzero(~fits)[0]) - 1, 0)  # join the dotted part to the solid one
            ax.plot(batches[start:], rate[start:], color=c, lw=1.1, ls=(0, (1, 2)),
                    label=None if fits.any() else label, gid="does-not-fit")
        if slo_ms is not None:
            meets = np.flatnonzero((step_ms <= slo_ms) & fits)
            if meets.size:
                k = int(meets[-1])
                ax.plot([batches[k]], [rate[k]], ls="none", marker="*", ms=12, color=c, mec="black", mew=0.7,
                        zorder=6, gid="latency-target")
                any_target = True
    batch_axis(ax)
    ax.set_yscale("log")
    ax.set_xlim(batches[0], batches[-1])
    ax.yaxis.set_major_formatter(count_formatter())
    ax.yaxis.set_minor_formatter(count_formatter(minor=True))
    ax.set_ylabel("aggregate decode rate [tokens/s]")
    ax.grid(True, which="major", color="0.88", lw=0.7)

    from matplotlib.lines import Line2D

    handles, labels = ax.get_legend_handles_labels()
    handles.append(Line2D([], [], ls="none", marker="o", color="0.5", mec="black", ms=6))
    labels.append("capacity limit (dotted beyond: does not fit)")
    if any_target:
        handles.append(Line2D([], [], ls="none", marker="*", color="0.5", mec="black", ms=11))
        labels.append(f"largest batch within {slo_ms:g} ms/token")
    ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.13), ncols=1, fontsize=8, frameon=False)
    import textwrap

    ax.set_title(f"Batching: {spec.name} on {len(devices)} accelerators{layout}, context {context_label(ctx)} tokens\n"
                 + textwrap.fill(precision_label(*floors), 80), fontsize=11)
    return ax
