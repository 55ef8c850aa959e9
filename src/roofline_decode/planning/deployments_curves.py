"""The one seam between the deployment search and the serving floors: each layout's curves.

:func:`layout_curves` evaluates one :class:`~roofline_decode.Parallel` layout over a whole
grid of client counts in one pass of :func:`~roofline_decode.serving_floor`'s worker
(:class:`~roofline_decode.floors.serving_worker.Worker`: every step below is one stacked
layout floor) and returns the arrays :mod:`~roofline_decode.planning.deployments_search`
combines, with :func:`~roofline_decode.serving_floor`'s conventions (docs/serving.md):

* as an **aggregated replica** at ``c`` clients: TTFT, TPOT and the request rate, exactly
  ``serving_floor(model, device, c, isl, osl, parallel=layout)``;
* as a **decode worker** holding ``c`` clients, one of ``y`` decode workers: TPOT (the
  decode step of the sequences a request sees, 1 + (y·c − 1)/y at most, as
  ``serving_floor(mode="disaggregated")`` takes it), the sequences it runs and its rate
  ceiling B / ((osl − 1)·step(B));
* as a **prefill worker**: one prompt alone (its part of TTFT) and its prompt-rate ceiling
  (the prompt's own work, the weights shared with other prompts).

A test holds the points of the search equal to ``serving_floor`` at the same layouts, workers
and clients.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..floors.layout import Options
    from ..floors.prefill import Timing
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["LayoutCurves", "layout_curves", "mean_context"]


@dataclass(frozen=True)
class LayoutCurves:
    """One layout over a client grid of K counts (SI units; rates in requests/s).

    ``valid`` (K,): the grid point is a new one (the appended fitting batch can repeat a grid
    value); ``running`` (K,): sequences admitted, B = min(c, what fits); ``ttft_s``, ``tpot_s``,
    ``rate`` (K,): an aggregated replica's floors and request-rate ceiling; ``decode_tpot_s``
    (Y, K): a decode worker's TPOT, one of y = 1 ... Y decode workers (NaN past the y this
    layout can have); ``decode_rate`` (K,): a decode worker's rate ceiling; ``prefill_s``: one
    prompt alone; ``prefill_rate``: prompts per second a prefill worker can at most do."""

    layout: Parallel
    devices: int
    clients: np.ndarray
    valid: np.ndarray
    running: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    rate: np.ndarray
    decode_tpot_s: np.ndarray
    decode_rate: np.ndarray
    prefill_s: float
    prefill_rate: float
    max_running: float


def mean_context(isl: float, osl: float) -> float:
    """Mean context over a request's decode steps, isl + (osl − 2)/2 [tokens] (DESIGN.md §4b)."""
    from ..floors.request import mean_decode_context

    return float(mean_decode_context(isl, osl))


def layout_curves(model: Model, device: Accelerator, layout: Parallel, isl: int, osl: int, clients: np.ndarray, *,
                  timing: Timing, options: Options, reserve: float, routing: str = "uniform",
                  decode_workers: int = 1, fit_point: bool = True) -> LayoutCurves | None:
    """The curves of ``layout`` over ``clients`` (client counts of one replica or worker), None
    where its weights leave no room for one sequence at the mean decode context.

    ``decode_workers``: the most decode workers of this layout a pairing can have (rows of
    ``decode_tpot_s``).  ``fit_point`` appends one client count to the grid: the largest
    admitted batch (what fits), often the most throughput a layout gives; it is marked invalid
    where it is not below the grid's largest count or is already in the grid, so every layout
    has the same number of points.
    """
    from .. import formulas as f
    from ..floors.serving_worker import Worker, sequences_that_fit

    steps = osl - 1.0
    context = mean_context(isl, osl)
    fit_mean, fit_end = (float(v) for v in sequences_that_fit(model, device, layout, np.array([context, isl + steps]),
                                                              reserve, 0.0, routing))
    if fit_mean < 1:
        return None
    grid: np.ndarray = np.asarray(clients, dtype=float).ravel()
    valid: np.ndarray = np.ones(grid.shape, bool)
    if fit_point:
        extra = min(fit_mean, float(grid.max()))
        valid = np.append(valid, extra < grid.max() and not np.isin(extra, grid))
        grid = np.append(grid, extra)
    high = np.minimum(grid, fit_mean)
    floor_batch = np.maximum(fit_end, np.minimum(high, 1.0))
    low = np.minimum(grid, floor_batch)  # aggregated: the TPOT floor's batch (no eviction)
    y = np.arange(1.0, decode_workers + 1.0)[:, None]
    low_y = np.minimum(1.0 + (y * grid - 1.0) / y, floor_batch)  # a decode worker's request sees itself and the others
    seen, seen_high = (np.asarray(f.steady_decode_batch(b, osl), dtype=float) for b in (low, high))
    prompt = np.full(grid.shape, float(isl))
    # one pass: the aggregated steps (decode alone, with its prompts, the most admitted with
    # theirs, all admitted beside B / (osl - 1) prompts), a decode worker's steps for each y, at B
    worker = Worker.build(model, device, timing, layout, (seen, seen, seen_high, high, *low_y, high),
                          np.asarray(context), prompt, None, routing, options)
    ride = np.asarray(f.prefill_tokens_per_step(low, isl, osl), dtype=float)
    ride_high = np.asarray(f.prefill_tokens_per_step(high, isl, osl), dtype=float)
    zeros = np.zeros((decode_workers + 1, grid.size))
    requests = np.concatenate([np.stack([0.0 * ride, ride / isl, ride_high / isl, high / steps]), zeros])
    step = worker.step(requests).step
    tpot, tpot_high, work = step[1], step[2], step[3]
    prefill = float(worker.prefill_alone().step.ravel()[0])
    prompt_work = float(worker.prompt_work().ravel()[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        slots = high / (np.maximum(prefill, tpot_high) + steps * tpot_high)
        rate = np.minimum(slots, (high / steps) / work)
        ttft = np.maximum(prefill, tpot) + np.maximum(grid - high, 0.0) / rate
    return LayoutCurves(layout=layout, devices=layout.num_devices, clients=grid, valid=valid, running=high,
                        ttft_s=ttft, tpot_s=tpot, rate=rate, decode_tpot_s=step[4:4 + decode_workers],
                        decode_rate=high / (steps * step[-1]), prefill_s=prefill,
                        prefill_rate=1.0 / prompt_work if prompt_work > 0 else float("inf"), max_running=fit_mean)


def pad_rows(curves: list[LayoutCurves], name: str, rows: int) -> np.ndarray:
    """``name`` of every curve stacked, each padded with NaN rows to ``rows`` (decode_tpot_s)."""
    stacked = []
    for c in curves:
        value: Any = getattr(c, name)
        stacked.append(np.concatenate([value, np.full((rows - value.shape[0], value.shape[1]), np.nan)]))
    return np.array(stacked, dtype=float)
