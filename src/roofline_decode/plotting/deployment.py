"""The deployment frontier chart (:func:`roofline_decode.planning.deployments`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ._common import ModelLike, WeightsLike, color, new_axes, plain_formatter, resolve_model

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..planning.deployments import Deployments
    from ..specs.accelerator import Accelerator

__all__ = ["deployment_frontier_plot"]


def deployment_frontier_plot(model: ModelLike | None = None, device: Accelerator | str | None = None,
                             gpus: int | None = None, isl: int = 1024, osl: int = 1024, *, ttft: float | None = None,
                             tpot: float | None = None, modes: Any = ("aggregated", "disaggregated"),
                             result: Deployments | None = None, weights: WeightsLike = None,
                             kv: str | NumberFormat | None = None, ax: Axes | None = None) -> Axes:
    """Tokens/s per GPU against tokens/s per user of every deployment searched on ``gpus`` devices.

    The points the search keeps (those that can be on a frontier) are drawn faintly, aggregated
    and disaggregated in two colours, each mode's own frontier dashed; the floor-optimal
    frontier (an upper bound no real deployment exceeds) is the thick line, each of its points
    coloured by mode; with SLOs the
    shaded band is what TPOT <= ``tpot`` leaves out (x < 1 / tpot) and the star is the best
    deployment with TTFT <= ``ttft`` and TPOT <= ``tpot``, labelled.  Pass a ``result`` of
    :func:`~roofline_decode.planning.deployments` to draw it without searching again.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ..errors import InvalidValueError
    from ..planning.deployments import deployments

    if result is None:
        if model is None or device is None or gpus is None:
            raise InvalidValueError("result", None, "a Deployments result, or model, device and gpus to search")
        result = deployments(resolve_model(model, weights, kv), device, gpus, isl, osl, ttft, tpot, modes=modes)
    ax = new_axes(ax, figsize=(10.0, 6.0))
    points = result.points
    names = {0: "aggregated", 1: "disaggregated"}
    for mode, name in names.items():
        mine = points["mode"] == mode
        if mine.any():
            ax.scatter(points["tokens_per_s_per_user"][mine], points["tokens_per_s_per_gpu"][mine], s=6,
                       color=color(mode), alpha=0.25, linewidths=0, label=f"{name} (searched)")
    for mode, name in names.items():
        own = result.frontier(mode=name)
        if own and name in result.modes and len(result.modes) > 1:
            ax.plot([p.tokens_per_s_per_user for p in own], [p.tokens_per_s_per_gpu for p in own], color=color(mode),
                    lw=1.2, ls="--", zorder=3, label=f"{name} only: its frontier")
    front = result.frontier()
    if front:
        x = [p.tokens_per_s_per_user for p in front]
        y = [p.tokens_per_s_per_gpu for p in front]
        ax.plot(x, y, color="black", lw=2.0, zorder=4, label="floor-optimal frontier (upper bound)")
        for mode, name in names.items():
            on = [p for p in front if p.mode == name]
            if on:
                ax.plot([p.tokens_per_s_per_user for p in on], [p.tokens_per_s_per_gpu for p in on], ls="none",
                        marker="o", ms=6, mec="black", color=color(mode), zorder=5)
    ax.set_xscale("log")
    ax.set_yscale("log")
    if result.tpot is not None:  # shade to the axes' left edge, wherever autoscaling puts it
        left = min(ax.get_xlim()[0], 1.0 / result.tpot / 1.5)
        ax.axvspan(left, 1.0 / result.tpot, color="0.85", alpha=0.5, zorder=0,
                   label=f"TPOT > {result.tpot * 1e3:g} ms")
        ax.set_xlim(left=left)
    best = result.best
    if best is not None:
        ax.plot([best.tokens_per_s_per_user], [best.tokens_per_s_per_gpu], marker="*", ms=18, color="gold",
                mec="black", zorder=6, ls="none", label="best under the SLOs")
        ax.annotate(f"{best.label}\n{best.concurrency:,} clients", (best.tokens_per_s_per_user, best.tokens_per_s_per_gpu),
                    xytext=(14, -26), textcoords="offset points", fontsize=8, zorder=7,
                    bbox=dict(boxstyle="round", fc="white", ec="0.7", alpha=0.9))
    for axis in (ax.xaxis, ax.yaxis):  # 200, 500, 1000 rather than 2x10^2
        axis.set_major_formatter(plain_formatter())
        axis.set_minor_formatter(plain_formatter(minor=True))
    ax.set_xlabel("output tokens/s per user (1 / TPOT)")
    ax.set_ylabel("output tokens/s per GPU")
    slo = ", ".join(text for text in (None if result.ttft is None else f"TTFT <= {result.ttft * 1e3:g} ms",
                                       None if result.tpot is None else f"TPOT <= {result.tpot * 1e3:g} ms") if text)
    ax.set_title(f"{result.model} on {result.gpus} x {result.device_label}: ISL {result.isl:,}, OSL {result.osl:,}"
                 + (f", {slo}" if slo else "") + " (floors)", fontsize=10)
    if np.any(np.isfinite(points["tokens_per_s_per_gpu"])):
        ax.legend(fontsize=8, loc="lower left")
    ax.grid(True, which="both", alpha=0.25)
    return ax
