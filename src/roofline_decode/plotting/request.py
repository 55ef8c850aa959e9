"""Request plots: TTFT against prompt length, speculative speedup over batch × acceptance.

Views only: they draw what :func:`~roofline_decode.floors.prefill.prefill_floor` and
:func:`~roofline_decode.floors.speculative.speculative_floor` compute.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .._typing import Broadcastable
from ..floors.grid import DEFAULT_CONTEXT
from ._common import (
    AcceleratorLike,
    ModelLike,
    WeightsLike,
    axis_values,
    color,
    new_axes,
    plain_formatter,
    resolve_accelerators,
    resolve_model,
    single_accelerator,
    tokens_formatter,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from ..formats import NumberFormat
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["ttft_plot", "speculative_plot"]

#: default prompt lengths of the TTFT plot [tokens]
DEFAULT_PROMPTS = np.unique(np.round(np.geomspace(64, 131072, 64)))
#: default batches and acceptance rates of the speculative plot
DEFAULT_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
DEFAULT_ACCEPTANCE = (0.5, 0.6, 0.7, 0.8, 0.9)


def ttft_plot(model: ModelLike, accelerators: AcceleratorLike | Sequence[AcceleratorLike],
              prompt: Broadcastable | None = None, batch: float = 1, *, chunk: float | None = None,
              weights: WeightsLike = None, kv: str | NumberFormat | None = None, sparse: bool = False,
              parallel: Parallel | str | None = None, ax: Axes | None = None) -> Axes:
    """Time to first token (the prefill floor) against prompt length on one or more devices.

    Solid where the prefill is compute-bound, dashed where memory-bound; a dot marks the
    prompt length at which it turns compute-bound.  A device that publishes no compute peak
    has no TTFT floor (:func:`~roofline_decode.floors.prefill.prefill_floor` gives NaN): its
    points are missing and its legend entry says why.  Under a ``parallel`` layout
    (``"tp8"``) each device type is the layout's prefill (``prefill_floor(..., parallel=)``,
    communication included), and the dot the first swept prompt whose busiest device is
    compute-bound.

    Examples
    --------
    >>> ax = ttft_plot("llama-3.1-8b", ["a100-80gb-sxm", "h100-sxm"])
    >>> ax.get_xlabel()
    'prompt length [tokens]'
    """
    from ..floors import NO_COMPUTE_PEAK
    from ..floors.layout_result import ParallelFloor
    from ..floors.prefill import prefill_floor

    spec = resolve_model(model, weights, kv)
    devices = resolve_accelerators(accelerators)
    prompts = axis_values("prompt", prompt, DEFAULT_PROMPTS, several=True)
    ax = new_axes(ax)
    drawn = False
    layout = ""
    for i, device in enumerate(devices):
        r = prefill_floor(spec, device, prompts, batch, chunk=chunk, sparse=sparse, parallel=parallel)
        ms = r.ttft_s * 1e3
        compute = r.compute_time_s >= r.memory_time_s
        label = device.id or device.name
        if isinstance(r, ParallelFloor):
            layout = f", {r.parallel} ({r.num_devices} devices each)"
        if np.isnan(ms).all():  # no peak: no TTFT floor to draw, only the reason in the legend
            ax.plot([], [], color=color(i), lw=2, ls=":", label=f"{label}: {NO_COMPUTE_PEAK}, no TTFT floor")
            continue
        drawn = True
        ax.plot(prompts, np.where(compute, ms, np.nan), color=color(i), lw=2, label=f"{label}")
        ax.plot(prompts, np.where(compute, np.nan, ms), color=color(i), lw=2, ls="--")
        if compute.any() and not compute.all():  # join the two regimes
            j = int(np.argmax(compute))
            ax.plot(prompts[j - 1:j + 1], ms[j - 1:j + 1], color=color(i), lw=2, ls="--")
        if isinstance(r, ParallelFloor):  # the first swept prompt that is compute-bound
            if compute.any():
                j = int(np.argmax(compute))
                ax.plot([prompts[j]], [ms[j]], "o", color=color(i), ms=6)
            continue
        star = float(r.compute_bound_prompt.flat[0])
        if np.isfinite(star) and prompts[0] <= star <= prompts[-1]:
            at = prefill_floor(spec, device, star, batch, chunk=None, sparse=sparse)
            ax.plot([star], [float(at.ttft_s) * 1e3], "o", color=color(i), ms=6)
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(tokens_formatter())  # 256, 4k, 128k rather than 2^8, 2^12, 2^17
    if drawn:
        ax.set_yscale("log")
        ax.yaxis.set_major_formatter(plain_formatter())  # 10, 100, 1000 rather than 10^1, 10^2, 10^3
        ax.yaxis.set_minor_formatter(plain_formatter(minor=True))
    else:  # not one device with a peak: an empty frame over the prompts, saying why
        ax.set_xlim(float(prompts[0]), float(prompts[-1]))
        ax.set_yticks([])
        ax.text(0.5, 0.5, f"{NO_COMPUTE_PEAK}:\nno floor of the time to first token", transform=ax.transAxes,
                ha="center", va="center", color="0.3")
    ax.set_xlabel("prompt length [tokens]")
    ax.set_ylabel("time to first token, floor [ms]")
    chunk_text = "" if chunk is None else f", {int(chunk)}-token chunks"
    ax.set_title(f"{spec.name}: prefill floor at batch {batch:g}{chunk_text}{layout}\n"
                 "solid: compute-bound, dashed: memory-bound, dot: shortest compute-bound prompt")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left")
    return ax


def speculative_plot(model: Model | str, accelerator: AcceleratorLike | Sequence[AcceleratorLike], *,
                     draft: Model | str | None = None, mtp_layers: int | None = None, k: int = 4,
                     batch: Broadcastable | None = None, acceptance: Broadcastable | None = None,
                     context: float = DEFAULT_CONTEXT, sparse: bool = False, parallel: Parallel | str | None = None,
                     draft_parallel: Parallel | str | None = None, ax: Axes | None = None) -> Axes:
    """Speedup of speculative decoding over plain decoding against batch, one line per acceptance.

    The dotted line at 1 is break-even; the vertical line marks the batch at which plain
    decoding turns compute-bound (beyond it speculation cannot pay), when it is finite.  On a
    device without a compute peak that batch is not known: the title says the speedups compare
    memory floors.  Under a ``parallel`` layout (``"tp4"``) both the plain and the speculative
    steps are the layout's (``speculative_floor(..., parallel=, draft_parallel=)``: the draft
    on the target's layout unless ``draft_parallel`` says otherwise) and the title names it.

    Examples
    --------
    >>> ax = speculative_plot("llama-3.1-8b", "h100-sxm", draft="llama-3.2-1b")
    >>> ax.get_ylabel()
    'speedup over plain decoding'
    >>> ax = speculative_plot("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", parallel="tp4")
    >>> ax.get_title().splitlines()[0]
    'Llama-3.1-70B with Llama-3.2-1B on h100-sxm: k = 4, context 4096, layout tp4 (4 devices)'
    """
    from ..floors.layout import layout_of
    from ..floors.speculative import speculative_floor

    device = single_accelerator(accelerator)
    batches = axis_values("batch", batch, DEFAULT_BATCHES, several=True)
    rates = axis_values("acceptance", acceptance, DEFAULT_ACCEPTANCE)
    r = speculative_floor(model, device, draft=draft, mtp_layers=mtp_layers, k=k, acceptance=rates[:, None],
                          batch=batches[None, :], context=context, sparse=sparse, parallel=parallel,
                          draft_parallel=draft_parallel)
    layout, draft_layout = layout_of(parallel), layout_of(draft_parallel)
    ax = new_axes(ax)
    for i, a in enumerate(rates):
        ax.plot(batches, r.speedup[i], color=color(i), lw=2, marker="o", ms=3, label=f"a = {a:g}")
    ax.axhline(1.0, color="0.3", ls=":", lw=1)
    critical = float(r.plain_critical_batch.flat[0])
    if np.isfinite(critical):
        ax.axvline(critical, color="0.3", ls="--", lw=1)
        ax.annotate("plain decode compute-bound", (critical, ax.get_ylim()[0]), rotation=90, va="bottom",
                    ha="right", fontsize=8, color="0.3")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("batch [sequences]")
    ax.set_ylabel("speedup over plain decoding")
    title = f"{r.model} with {r.draft} on {r.accelerator}: k = {k}, context {context:g}"
    if layout is not None and layout.num_devices > 1:
        title += f", layout {layout} ({layout.num_devices} devices)"
    if draft_layout is not None:
        title += f", draft {draft_layout}"
    if np.isnan(critical):  # no compute peak: where plain decoding turns compute-bound cannot be told
        from ..floors import NO_COMPUTE_PEAK

        title += (f"\n{NO_COMPUTE_PEAK}: speedups of memory floors, the batch where speculation stops paying "
                  "unknown")
    ax.set_title(title)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(title="acceptance", loc="best")
    return ax
