"""``layers_plot``: where a decode step's time goes, by layer kind (:meth:`DecodeFloor.layers`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._typing import Broadcastable
from ._common import (
    PALETTE, AcceleratorLike, ModelLike, WeightsLike, context_label, new_axes, resolve_model,
    single_accelerator, single_value, title,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..formats import NumberFormat

__all__ = ["layers_plot"]

#: Palette entries dark enough for white text (blue, vermillion, bluish green, black).
_DARK = (0, 1, 2, 6)
#: Hatches that tell apart layer kinds beyond the palette's eight colours.
_HATCHES = ("", "//", "..", "xx")


def layers_plot(model: ModelLike, accelerator: AcceleratorLike, batch: Broadcastable = 1,
                context: Broadcastable = 4096, *, weights: WeightsLike = None, kv: str | NumberFormat | None = None,
                sparse: bool = False, routing: str = "uniform", ax: Axes | None = None) -> Axes:
    """The memory time and the compute time of one decode step, each a bar stacked by layer kind.

    The top bar stacks each layer kind's bytes / bandwidth, the bottom bar each kind's FLOPs at
    its compute groups' peaks (:meth:`~roofline_decode.DecodeFloor.layers`); the bars end at
    the step's memory and compute times, and a dashed line marks the step floor, the longer of
    the two.  A kind's segment is labelled with its share of that bar where it is wide enough to
    hold the text.

    Parameters
    ----------
    model : str, Path or Model
        Catalog id, config.json path or :class:`~roofline_decode.Model`.
    accelerator : str or Accelerator
        One accelerator.
    batch, context : float
        The point [sequences], [tokens].
    weights, kv : str, optional
        Weight and KV-cache formats (default: the model's).
    sparse : bool
        Use 2:4 sparse peaks.
    routing : {"uniform", "identical"}
        MoE routing assumption.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ..floors.decode import decode_floor

    spec = resolve_model(model, weights, kv)
    device = single_accelerator(accelerator)
    b, t = single_value("batch", batch), single_value("context", context)
    floor = decode_floor(spec, device, batch=b, context=t, sparse=sparse, routing=routing)
    table = floor.layers()
    ax = new_axes(ax, figsize=(10.0, 4.2))
    bars = (("memory time\n(bytes / bandwidth)", "memory_time_s"), ("compute time\n(FLOPs / peak)", "compute_time_s"))
    for y, (_, field) in enumerate(reversed(bars)):
        total = float(np.asarray(getattr(floor, field))) * 1e3
        left = 0.0
        for i, row in enumerate(table):
            width = float(np.asarray(getattr(row, field))) * 1e3
            ax.barh(y, width, left=left, height=0.6, color=PALETTE[i % len(PALETTE)], edgecolor="white",
                    linewidth=0.6, hatch=_HATCHES[i // len(PALETTE) % len(_HATCHES)],
                    label=row.kind if y == 0 else None)
            if total > 0 and width >= 0.06 * max(total, float(np.asarray(floor.step_time_s)) * 1e3):
                ax.text(left + width / 2, y, f"{100 * width / total:.0f}%", ha="center", va="center", fontsize=8,
                        color="white" if i % len(PALETTE) in _DARK else "black")
            left += width
    step = float(np.asarray(floor.step_time_s)) * 1e3
    ax.axvline(step, color="0.35", ls="--", lw=1.5,
               label=f"step floor {step:.4g} ms ({np.asarray(floor.bound)})")
    ax.set_yticks([0, 1], [label for label, _ in reversed(bars)])
    ax.set_xlabel("time per step [ms]")
    ax.set_xlim(0, step * 1.05 if step > 0 else 1.0)
    ax.set_title(f"{title(spec, floor, device)}, batch {b:g}, context {context_label(t)}: time by layer kind",
                 fontsize=10)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    ax.grid(True, axis="x", alpha=0.3)
    return ax
