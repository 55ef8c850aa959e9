"""Plot measured step times against the floor and the calibrated prediction (matplotlib, lazy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import MissingExtraError

__all__ = ["plot_measurements"]


def plot_measurements(comparison, calibrated: Any = None, ax=None):
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
    ax.scatter(x, measured, marker="o", color="C0", label="measured", zorder=3)
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
    ax.set_xticklabels([c.row.describe() for c in comparison], rotation=60, ha="right", fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("step time [ms]")
    ax.set_title("measured vs floor" + (" vs calibrated" if calibrated is not None else ""))
    ax.legend(fontsize=8)
    ax.grid(True, axis="y", which="both", alpha=0.3)
    return ax
