"""The report's plots as inline SVG (matplotlib, headless; no file, no network).

Each function draws one of :mod:`roofline_decode.plotting`'s plots for the report's model and
accelerators and returns the ``<svg>`` element as text.  Text stays text (``svg.fonttype``
``none``: smaller, and searchable in the page) and the element ids are seeded, so the same
report is the same file.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from .data import ReportData

__all__ = ["svg_of", "ridge_svg", "breakdown_svg", "frontier_svg", "layers_svg", "deployment_svg"]


def svg_of(ax: Axes) -> str:
    """The figure of ``ax`` as an inline ``<svg>`` element (the figure is closed)."""
    import matplotlib
    import matplotlib.pyplot as plt

    figure = cast("Figure", ax.figure)  # the plotting functions draw on a Figure, never a SubFigure
    buffer = io.StringIO()
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "roofline-decode"}):
        figure.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def _plotting() -> Any:
    from .. import plotting

    plotting.headless()
    return plotting


def ridge_svg(data: ReportData) -> str:
    """Operating points of the batch grid at the chosen context on each accelerator's roofline."""
    plotting = _plotting()
    return svg_of(plotting.ridge_plot(data.model, list(data.accelerators), batch=list(data.batches),
                                      context=data.context, parallel=data.parallel))


def breakdown_svg(data: ReportData) -> str:
    """Bytes per step over the batch grid, stacked, with the time terms (first accelerator; a
    grid of one batch draws the plot's own batches: a line needs two)."""
    plotting = _plotting()
    batches = list(data.batches) if len(data.batches) > 1 else None
    return svg_of(plotting.breakdown_plot(data.model, data.accelerators[0], batch=batches,
                                          context=data.context, parallel=data.parallel))


def frontier_svg(data: ReportData) -> str:
    """Tokens/s per device against tokens/s per user at the chosen context (tensor-parallel
    degrees 1 to 8 where a device has an interconnect figure)."""
    plotting = _plotting()
    return svg_of(plotting.frontier_plot(data.model, list(data.accelerators), context=data.context,
                                         routing=data.routing))


def layers_svg(data: ReportData, index: int) -> str:
    """The memory and compute time of the step at the chosen point by layer kind, on accelerator
    ``index``."""
    plotting = _plotting()
    return svg_of(plotting.layers_plot(data.model, data.accelerators[index], batch=data.batch, context=data.context,
                                       routing=data.routing, sparse=data.sparse))


def deployment_svg(data: ReportData, index: int) -> str:
    """The deployment frontier of accelerator ``index``'s search (every point kept, each mode's
    frontier, the floor-optimal frontier and the best point under the SLOs)."""
    plotting = _plotting()
    return svg_of(plotting.deployment_frontier_plot(result=data.deployments[index]))
