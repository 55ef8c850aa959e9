"""The throughput-interactivity frontier chart (:func:`roofline_decode.planning.frontier`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from .._typing import Broadcastable
from ._common import MARKERS, ModelLike, WeightsLike, color, new_axes, plain_formatter, resolve_model

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..specs.accelerator import Accelerator

__all__ = ["frontier_plot"]

_Y_LABELS = {
    "throughput": "tokens/s per device (floor)",
    "energy": "J per output token (data-movement floor)",
    "energy_at_board_power": "J per output token at board power (estimate)",
    "cost": r"\$ per million output tokens",
}


def frontier_plot(model: ModelLike, accelerators: Accelerator | str | Sequence[Accelerator | str],
                  context: float = 4096, *, batch: Broadcastable | None = None, tp: Sequence[int] | int | None = None,
                  y: str = "throughput", price_per_hour: float | dict[str, float] | None = None,
                  weights: WeightsLike = None, kv: str | NumberFormat | None = None, routing: str = "uniform",
                  parallel: Any = None, ax: Axes | None = None) -> Axes:
    """Tokens/s per user (x) against tokens/s per device, or energy or cost per token (y).

    One curve per device (colour) and tensor-parallel degree (marker), over batch; points whose
    weights and KV cache do not fit each device's memory are drawn as grey crosses and left out
    of the Pareto envelope (thick black line); a curve with no fitting point gets no legend entry.
    The legend sits to the right of the axes.  ``y``: ``"throughput"`` (default), ``"energy"``
    (the data-movement floor; devices whose memory has no sourced access energy are left out
    and named in the legend title), ``"energy_at_board_power"`` (an estimate) or ``"cost"``
    (needs ``price_per_hour``).  ``routing``: the MoE routing assumption, as
    :func:`~roofline_decode.planning.frontier` takes it.  ``tp`` (default 1, 2, 4, 8) or
    ``parallel`` (a sequence of layouts, such as ``["tp8", "dp8 ep8"]``): the configurations of
    each device, as :func:`~roofline_decode.planning.frontier` takes them; a layout's curve is
    labelled with its text.

    Examples
    --------
    >>> ax = frontier_plot("deepseek-v3", "h200-sxm", batch=[16, 64, 256], parallel=["tp8", "dp8 ep8"])
    >>> [t.get_text() for t in ax.get_legend().get_texts()][:2]
    ['h200-sxm tp8', 'h200-sxm dp8 ep8']

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ..planning.frontier import FRONTIER_Y, frontier

    spec = resolve_model(model, weights, kv)
    front = frontier(spec, accelerators, context, batch=batch, tp=tp, price_per_hour=price_per_hour, routing=routing,
                     parallel=parallel)
    envelope = front.envelope(y)  # checks y and the price
    attribute = FRONTIER_Y[y][0]
    if not any(np.isfinite(getattr(p, attribute)) for p in front.points):
        from ..errors import InvalidValueError

        why = [n for n in front.notes if "unavailable" in n] if y == "energy" else []
        raise InvalidValueError("y", y, "a quantity these devices have ("
                                + ("; ".join(why) or "no board power in their specs") + ")")
    ax = new_axes(ax, figsize=(10.5, 6.0))
    devices = list(dict.fromkeys(p.accelerator for p in front.points))
    # one curve per device and configuration: a TP degree (tp=), or a layout in the order given (parallel=)
    configurations = (sorted({(p.num_devices, None) for p in front.points}) if parallel is None
                      else list(dict.fromkeys((p.num_devices, p.parallel) for p in front.points)))
    marked_unfit = False
    for i, device in enumerate(devices):
        for j, (n, layout) in enumerate(configurations):
            pts = [p for p in front.points if p.accelerator == device and p.num_devices == n
                   and p.parallel == layout and np.isfinite(getattr(p, attribute))]
            if not pts:
                continue
            x = np.array([p.tokens_per_s_per_user for p in pts])
            v = np.array([getattr(p, attribute) for p in pts])
            ok = np.array([p.fits for p in pts])
            ax.plot(x, v, color=color(i), lw=1.0, alpha=0.35)
            if np.any(ok):
                ax.plot(x[ok], v[ok], ls="none", marker=MARKERS[j % len(MARKERS)], ms=5, color=color(i),
                        label=f"{device} TP{n}" if layout is None else f"{device} {layout}")
            if np.any(~ok):
                ax.plot(x[~ok], v[~ok], ls="none", marker="x", ms=5, color="0.6")
                marked_unfit = True
    if marked_unfit:  # one legend entry, after the curves
        ax.plot([], [], ls="none", marker="x", ms=5, color="0.6", label="does not fit memory")
    if envelope:
        ax.plot([p.tokens_per_s_per_user for p in envelope], [getattr(p, attribute) for p in envelope],
                color="black", lw=2.2, ls="--", label="Pareto envelope", zorder=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis in (ax.xaxis, ax.yaxis):  # 200, 500, 1000 rather than 2x10^2, 5x10^2, 10^3
        axis.set_major_formatter(plain_formatter())
        axis.set_minor_formatter(plain_formatter(minor=True))
    ax.set_xlabel("tokens/s per user (1 / step time)")
    label = _Y_LABELS[y]
    if y == "cost":
        prices = front.price_per_hour
        label += (" at the given price per device-hour" if isinstance(prices, dict)
                  else rf" at \${prices:g} per device-hour (every device)")
    ax.set_ylabel(label)
    ax.set_title(f"{front.model}: decode frontier at context {front.context:g} (floors; batch along each curve)")
    missing = [n.split(":")[0] for n in front.notes if y == "energy" and "unavailable" in n]
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
              title=f"no sourced memory energy:\n{', '.join(missing)}" if missing else None, title_fontsize=7)
    ax.grid(True, which="both", alpha=0.25)
    return ax
