"""Plot measured step times against the floor and the calibrated prediction (matplotlib, lazy)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import MissingExtraError

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from .calibrate import CalibratedPrediction
    from .compare import Comparison, RowComparison

__all__ = ["plot_measurements"]


def plot_measurements(comparison: Comparison, calibrated: Sequence[CalibratedPrediction] | None = None,
                      ax: Axes | None = None) -> Axes:
    """Measured step time, floor and (optionally) calibrated time with its band, per row.

    Parameters
    ----------
    comparison : Comparison
        From :func:`~roofline_decode.measure.compare`.
    calibrated : sequence of CalibratedPrediction, optional
        One prediction per row (scalar arrays), e.g. from ``Calibration.predict``.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.

    Returns
    -------
    matplotlib.axes.Axes
    """
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise MissingExtraError("matplotlib", "plot", "plotting measurements") from None
    if ax is None:
        _, ax = plt.subplots(figsize=(max(6.0, 0.45 * len(comparison) + 2), 4.5))
    x = np.arange(len(comparison))
    measured = np.array([c.measured_step_time_s for c in comparison]) * 1e3
    floor = np.array([c.floor_step_time_s for c in comparison]) * 1e3
    # measured: open circles drawn last, so a calibrated diamond under one stays visible
    ax.scatter(x, measured, marker="o", s=55, facecolors="none", edgecolors="C0", linewidths=1.6, label="measured",
               zorder=5)
    ax.scatter(x, floor, marker="_", s=300, color="C3", label="floor", zorder=2)
    impossible = [i for i, c in enumerate(comparison) if c.impossible]
    if impossible:
        ax.scatter(x[impossible], measured[impossible], marker="x", s=80, color="k", label="faster than floor", zorder=4)
    if calibrated is not None:
        step = np.array([float(p.step_time_s) for p in calibrated]) * 1e3
        low = np.array([float(p.lower_s) for p in calibrated]) * 1e3
        high = np.array([float(p.upper_s) for p in calibrated]) * 1e3
        has_band = np.isfinite(low) & np.isfinite(high)
        ax.scatter(x, step, marker="D", s=18, color="C2", label="calibrated", zorder=3)
        if has_band.any():
            ax.errorbar(x[has_band], step[has_band],
                        yerr=[step[has_band] - low[has_band], high[has_band] - step[has_band]],
                        fmt="none", ecolor="C2", capsize=3, label="calibrated band")
    ax.set_xticks(x)
    ax.set_xticklabels([_row_label(c) for c in comparison], rotation=60, ha="right", fontsize=8)
    ax.set_yscale("log")
    _readable_log_axis(ax)
    ax.tick_params(axis="y", which="both", labelsize=8)
    ax.set_ylabel("step time [ms]")
    ax.set_title(("measured vs floor" + (" vs calibrated" if calibrated is not None else ""))
                 + f"\n{_names([c.model for c in comparison])} on {_names([c.accelerator for c in comparison])}",
                 fontsize=11)
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return ax


def _names(values: Iterable[object]) -> str:
    """One name, or "3 models" style counts when the rows differ."""
    unique = list(dict.fromkeys(str(v) for v in values))
    return unique[0] if len(unique) == 1 else ", ".join(unique) if len(unique) <= 3 else f"{len(unique)} kinds"


def _row_label(comparison: RowComparison) -> str:
    """The row's own label, else the resolved model (never "?"), weight format, B and T."""
    row = comparison.row
    if row.label:
        return row.label
    return f"{comparison.model} {comparison.weight_format} B={row.batch:g} T={row.context:g}"


def _ms(value: float, _: object = None) -> str:
    return f"{value:g}" if value > 0 else ""


#: Labelled ticks per decade of the log step-time axis, by how many decades it spans: a narrow
#: range (measured 4 to 18 ms) gets 4, 5, 6, 7, 8, 9, 10, 15 ms, a wide one 1, 10, 100 ms.
_TICKS_PER_DECADE = ((1.0, (1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0)), (2.0, (1.0, 2.0, 3.0, 5.0)),
                     (4.0, (1.0, 2.0, 5.0)), (np.inf, (1.0,)))


def _readable_log_axis(ax: Axes) -> None:
    """Plain millisecond labels (3, 10, 30 rather than 3x10^0, 10^1, 3x10^1) on the log y axis,
    enough of them to read a value whatever the range spans (the axis once showed a single
    tick over a range of less than a decade); the other ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    low, high = ax.get_ylim()
    decades = np.log10(high / low) if low > 0 and high > low else 1.0
    subs = next(subs for span, subs in _TICKS_PER_DECADE if decades <= span)
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
    ax.yaxis.set_major_formatter(FuncFormatter(_ms))
    ax.yaxis.set_minor_locator(LogLocator(base=10, subs=tuple(np.arange(1.0, 10.0))))
    ax.yaxis.set_minor_formatter(NullFormatter())
