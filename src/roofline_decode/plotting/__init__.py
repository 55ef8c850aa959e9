"""Plots of decode floors (a view: it draws what :func:`~roofline_decode.decode_floor` and
:func:`~roofline_decode.sweep` compute, it computes no physics of its own).

matplotlib is imported on first use, so ``import roofline_decode.plotting`` stays cheap; without
it every function raises :class:`~roofline_decode.MissingExtraError` naming the ``plot`` extra.
Every function takes ``ax=None`` (draw on a new figure) and returns the Axes it drew on; none
calls ``plt.show()``.  Models and accelerators are catalog ids or spec objects.

- :func:`ridge_plot` — decode operating points on the roofline of one or more accelerators.
- :func:`batch_plot` — aggregate tokens/s and per-sequence ms/token against batch.
- :func:`context_plot` — step time against context for several batches.
- :func:`breakdown_plot` — bytes (weights / KV read / KV write) and time terms, stacked.
- :func:`layers_plot` — a step's memory and compute time, each stacked by layer kind.
- :func:`capacity_map` — the batch × context plane shaded by verdict, with a latency contour.
- :func:`ttft_plot` — time to first token (prefill floor) against prompt length, several devices.
- :func:`speculative_plot` — speculative-decoding speedup against batch, one line per acceptance.
- :func:`frontier_plot` — tokens/s per device (or energy, cost per token) against tokens/s per user.
- :func:`deployment_frontier_plot` — the deployment search's frontier on N GPUs (aggregated and
  disaggregated), with the best deployment under SLOs.
- :func:`save` — write the figure as PNG, SVG or PDF (by extension).
- :func:`max_batch`, :func:`usable_memory`, :func:`resident_bytes` — the capacity rule the
  plots shade by (the planning module's, see :mod:`roofline_decode.floors.capacity`).
"""

from ._common import (
    OKABE_ITO, PALETTE, SAVE_FORMATS, check_output_path, headless, max_batch, resident_bytes, save, usable_memory,
)
from .breakdown import breakdown_plot
from .capacity import capacity_map
from .deployment import deployment_frontier_plot
from .frontier import frontier_plot
from .layers import layers_plot
from .request import speculative_plot, ttft_plot
from .ridge import ridge_plot
from .sweeps import batch_plot, context_plot

__all__ = [
    "OKABE_ITO",
    "PALETTE",
    "SAVE_FORMATS",
    "batch_plot",
    "breakdown_plot",
    "capacity_map",
    "check_output_path",
    "context_plot",
    "deployment_frontier_plot",
    "frontier_plot",
    "headless",
    "layers_plot",
    "max_batch",
    "resident_bytes",
    "ridge_plot",
    "save",
    "speculative_plot",
    "ttft_plot",
    "usable_memory",
]
