"""The one seam between the deployment search and the serving floors: each layout's curves.

:func:`layout_curves` evaluates one :class:`~roofline_decode.Parallel` layout over a whole
grid of client counts (one replica or worker) in a few vectorised floor calls and returns the
arrays :mod:`~roofline_decode.planning.deployments_search` combines:

* as an **aggregated replica** (prefill and decode on the same devices) at ``c`` clients:
  TTFT, TPOT and the replica's request rate;
* as a **decode worker** at ``c`` clients of its own: TPOT, the sequences it runs and its
  request-rate ceiling;
* as a **prefill worker**: one prompt alone (its part of TTFT) and the worker's prompt-rate
  ceiling.

Conventions (closed-loop clients, each sending ``isl``-token prompts and reading ``osl``
tokens; DESIGN.md §4c): the running batch B = min(c, sequences whose KV cache at the mean
decode context isl + (osl − 2)/2 fits beside the weights on every device); a request holds its
slot one prefill step and osl − 1 decode steps, so a steady decode step carries
1 + (B − 1)(osl − 1)/osl sequences (the others are in their prefill step); TPOT >= that
decode step's floor (the prompts riding along are left out: a lower bound); TTFT >= the
request's own prefill floor on the layout, plus the wait of the clients that hold no slot,
(c − B)/rate (Little's law); the request rate <= B / (TTFT_own + (osl − 1)·TPOT), <= the
rate at which the devices could do the prompts' work alone (a prefill worker's ceiling) and
<= B / ((osl − 1)·step(B)), the decode steps of all B sequences (the devices' decode ceiling).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["LayoutCurves", "layout_curves", "mean_context", "PROMPT_BATCH"]

#: Prompts per step at which a prefill worker's marginal time per prompt is read: the weights
#: are then spread over so many prompts that the marginal time is the prompt's own work.
PROMPT_BATCH = float(2**16)


@dataclass(frozen=True)
class LayoutCurves:
    """One layout over a client grid (arrays of the grid's shape; SI units, rates in requests/s).

    ``valid``: the grid point is a new one (the appended fitting batch can repeat a grid
    value); ``running``: sequences admitted (B); ``prefill_s``: one prompt alone;
    ``prefill_rate``: prompts per second a prefill worker of this layout can at most do;
    ``decode_tpot_s`` / ``decode_rate``: as a decode worker (every admitted sequence decodes in
    every step; the rate ceiling B / ((osl − 1)·TPOT))."""

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


def _step(model: Model, device: Accelerator, layout: Parallel, batch: np.ndarray, context: float,
          routing: str, mla_layout: str) -> Any:
    from ..floors.decode import decode_floor

    return decode_floor(model, device, batch=batch, context=context, routing=routing,
                        parallel=layout if layout.num_devices > 1 else None, mla_layout=mla_layout)


def _fit(usable: float, weights: float, per_sequence: float) -> float:
    """Sequences of ``per_sequence`` bytes that fit beside ``weights`` in ``usable`` bytes (0: none)."""
    from ..floors.capacity import batch_that_fits

    if weights > usable:
        return 0.0
    return float(np.max(batch_that_fits(usable, weights, np.asarray(per_sequence, dtype=float))))


def layout_curves(model: Model, device: Accelerator, layout: Parallel, isl: float, osl: float, clients: np.ndarray,
                  *, usable: float, routing: str = "uniform", mla_layout: str = "sharded",
                  fit_point: bool = True) -> LayoutCurves | None:
    """The curves of ``layout`` over ``clients`` (client counts of one replica or worker), None
    where its weights leave no room for one sequence at the mean decode context.

    ``fit_point`` appends one client count to the grid: the largest admitted batch (what
    fits), often the most throughput a layout gives; it is marked invalid (``valid`` False)
    where it is not below the grid's largest count or is already in the grid, so every layout
    has the same number of points.  Two floor calls: the prefill of one and of many prompts
    (its row at the mean decode context gives the capacity) and the decode steps of the grid.
    """
    from ..floors.capacity import kv_bytes_per_sequence
    from ..floors.prefill import prefill_floor

    context = mean_context(isl, osl)
    several = layout.num_devices > 1
    # one prefill call: one prompt alone, and many (the marginal prompt), at isl; its row at the
    # mean decode context gives the weights and one sequence's KV cache on the busiest device
    prefill = prefill_floor(model, device, np.array([[float(isl)], [context]]),
                            batch=np.array([1.0, PROMPT_BATCH, 2 * PROMPT_BATCH]), routing=routing,
                            parallel=layout if several else None, mla_layout=mla_layout)
    if several:
        weights = float(prefill.weight_bytes_per_device)  # type: ignore[union-attr]
        per_sequence = float(np.asarray(prefill.kv_bytes_per_device)[1, 0])  # type: ignore[union-attr]
    else:
        weights, per_sequence = model.weight_bytes, float(np.max(kv_bytes_per_sequence(model, context)))
    fit = _fit(usable, weights, per_sequence)
    if fit < 1:
        return None
    grid: np.ndarray = np.asarray(clients, dtype=float).ravel()
    valid: np.ndarray = np.ones(grid.shape, bool)
    if fit_point:
        extra = min(fit, float(grid.max()))
        valid = np.append(valid, extra < grid.max() and not np.isin(extra, grid))
        grid = np.append(grid, extra)
    running = np.minimum(grid, fit)
    steps = osl - 1.0
    seen = 1.0 + (running - 1.0) * steps / osl  # the sequences a steady step decodes (aggregated)
    decode = np.asarray(_step(model, device, layout, np.concatenate([seen, running]), context, routing,
                              mla_layout).step_time_s, dtype=float)
    tpot, decode_tpot = decode[:grid.size], decode[grid.size:]
    one, many, twice = (float(t) for t in np.asarray(prefill.ttft_s, dtype=float)[0])
    prefill_rate = PROMPT_BATCH / (twice - many) if twice > many else np.inf
    decode_rate = running / (steps * decode_tpot)
    with np.errstate(divide="ignore"):
        rate = np.minimum(np.minimum(running / (one + steps * tpot), prefill_rate), decode_rate)
        ttft = one + np.maximum(grid - running, 0.0) / rate
    return LayoutCurves(layout=layout, devices=layout.num_devices, clients=grid, valid=valid,
                        running=running, ttft_s=ttft, tpot_s=tpot, rate=rate, decode_tpot_s=decode_tpot,
                        decode_rate=decode_rate, prefill_s=one, prefill_rate=float(prefill_rate),
                        max_running=fit)
