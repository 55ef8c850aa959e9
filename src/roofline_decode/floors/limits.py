"""Fit and limits of a decode floor: does the grid point fit in memory, and is its context
within the model's positions?

A floor says how fast a step *could* run; it says nothing about whether the weights and the
KV cache are resident.  :func:`grid_limits` answers that for every grid point with the
planning module's usable-memory rule (:func:`roofline_decode.floors.capacity.usable_memory`:
capacity as printed read as binary, cut to what the device itself can fill (ECC on GDDR
data-center cards, macOS's GPU share of unified memory), minus a 2 GiB runtime reserve) on one
device, and words
the notes a :class:`~roofline_decode.DecodeFloor` carries.  All of it is vectorised: the KV
bytes per sequence are computed on the context axis once and broadcast against the batch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .routing import compact
from ..units import GB

if TYPE_CHECKING:
    from .results import DecodeFloor
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

__all__ = ["GridLimits", "grid_limits", "context_limits", "point_notes"]


@dataclass(frozen=True)
class GridLimits:
    """Capacity and position limits over a grid (arrays have the grid's shape)."""

    fits: np.ndarray
    max_batch: np.ndarray
    kv_bytes_per_sequence: np.ndarray
    usable_memory: float
    beyond_positions: np.ndarray
    notes: tuple[str, ...]


def _max_batch(model: Model, context: np.ndarray, usable: float, weights: float,
               per_sequence: np.ndarray) -> np.ndarray:
    """Largest whole batch at each context (planning's rule, :func:`~roofline_decode.floors.capacity.max_batch`,
    on the ``per_sequence`` bytes already computed); at context 0 a sequence holds only its
    fixed recurrent state (+inf where it holds nothing and the ``weights`` [B] fit), 0 where the
    weights alone do not fit."""
    from .capacity import batch_that_fits, resident_kv_bytes

    # max_batch counts a context below one token as one: only a fractional context needs its own bytes
    fractional = (context > 0) & (context < 1)
    at_least_one = resident_kv_bytes(model, np.maximum(context, 1.0)) if fractional.any() else per_sequence
    largest = batch_that_fits(usable, weights, at_least_one)
    state = model.recurrent_state_bytes_per_sequence  # held at every context, 0 included
    if state > 0:
        at_zero = float(batch_that_fits(usable, weights, np.asarray(float(state))))
    else:
        at_zero = np.inf if weights <= usable else 0.0
    return np.where(context > 0, largest, at_zero)


class ContextLimits(NamedTuple):
    """What fits at each context (arrays of the context's shape)."""

    kv_bytes_per_sequence: np.ndarray  # resident KV cache of one sequence [B]
    capacity: np.ndarray  # the real-valued batch that fills the usable memory [1]
    max_batch: np.ndarray  # the largest whole batch that fits [1] (planning's rule)


def context_limits(model: Model, accelerator: Accelerator, context_axis: np.ndarray | float,
                   usable: float, weights: float | None = None) -> ContextLimits:
    """The :class:`ContextLimits` at each context of ``context_axis`` (checked contexts) with
    ``usable`` bytes (:func:`~roofline_decode.floors.capacity.usable_memory`) and the model's
    ``weights`` [B] (default: ``model.weight_bytes``, a sum over its weight groups on each
    access): :func:`grid_limits` computes them on a grid's context axis, the scalar fast path
    once per context."""
    from .capacity import resident_kv_bytes

    per_sequence = resident_kv_bytes(model, np.asarray(context_axis, dtype=float))
    weights = model.weight_bytes if weights is None else weights
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # a tiny KV per sequence: unbounded
        capacity = np.where(per_sequence > 0, (usable - weights) / per_sequence, np.inf if weights <= usable else -np.inf)
    largest = _max_batch(model, np.asarray(context_axis, dtype=float), usable, weights, np.asarray(per_sequence))
    return ContextLimits(per_sequence, capacity, largest)


def grid_limits(model: Model, accelerator: Accelerator, batch: np.ndarray, context: np.ndarray, context_axis: np.ndarray) -> GridLimits:
    """Fit, largest batch and position limit at each grid point, and the summary notes.

    ``context_axis`` is the context before it was broadcast against the batch (the limits
    per context are computed on it once).
    """
    from .capacity import usable_memory

    usable = usable_memory(accelerator)
    per_sequence, capacity, largest = context_limits(model, accelerator, context_axis, usable)
    fits = compact(batch) <= capacity  # one comparison per distinct point, broadcast back
    if np.shape(fits) != batch.shape:
        fits = np.broadcast_to(fits, batch.shape)
    largest = np.broadcast_to(largest, batch.shape)
    positions = model.max_position_embeddings
    beyond = np.broadcast_to(np.asarray(context_axis) >= positions if positions else False, batch.shape)
    name = accelerator.id or accelerator.name
    notes: list[str] = []
    if not fits.all():
        notes.append(fit_note(model, name, batch, context, per_sequence, fits, usable))
    if beyond.any():
        first = float(np.min(context[beyond]))
        notes.append(f"context {first:g}{' and more' if np.any(context[beyond] > first) else ''} is beyond "
                     f"{model.name}'s max_position_embeddings = {positions}: the model has no position for the "
                     "new token; the floor extrapolates")
    return GridLimits(fits=fits, max_batch=largest, kv_bytes_per_sequence=per_sequence, usable_memory=usable,
                      beyond_positions=beyond, notes=tuple(notes))


def fit_note(model: Model, name: str, batch: np.ndarray, context: np.ndarray, per_sequence: np.ndarray,
              fits: np.ndarray, usable: float, weight_bytes: float | None = None) -> str:
    """The note of a grid that does not fit everywhere; ``weight_bytes``: the model's, where the
    caller has it (``Model.weight_bytes`` sums every weight group on each access)."""
    weights = model.weight_bytes if weight_bytes is None else weight_bytes
    where = f"> {usable / GB:.4g} GB usable on {name} (2 GiB reserve)"
    if weights > usable:
        return (f"does not fit: the weights alone ({weights / GB:.4g} GB) {where}; shard them "
                "(planning.plan) or offload")
    if fits.size == 1:
        resident = weights + float(batch.flat[0]) * float(np.ravel(per_sequence)[0])
        return (f"does not fit: {resident / GB:.4g} GB resident (weights {weights / GB:.4g} GB + KV "
                f"cache of {float(batch.flat[0]):g} sequences at {float(context.flat[0]):g} tokens) {where}")
    misses = fits.size - int(np.count_nonzero(fits))
    return (f"does not fit at {misses} of {fits.size} grid points (weights + KV cache {where}); "
            "see fits, resident_bytes and max_batch")


def point_notes(floor: DecodeFloor) -> list[list[str]]:
    """The notes of each grid point (flat order): its own limits (beyond memory, beyond the
    positions, inside the on-chip cache), then the result's assumptions (fallbacks, routing)."""
    from .capacity import onchip_cache_bytes, onchip_cache_note

    fits = np.ravel(floor.fits)
    beyond = np.ravel(np.broadcast_to(floor.beyond_positions, floor.shape))
    cache = 0.0 if floor.device is None else onchip_cache_bytes(floor.device)
    cached = cache > 0 and floor.spec.weight_bytes <= cache  # else no point is inside the cache
    # read only where a point misses, or may sit in the on-chip cache
    resident = np.ravel(floor.resident_bytes) if cached or not fits.all() else np.empty(0)
    usable = f"{floor.usable_memory / GB:.4g} GB usable on {floor.accelerator}"
    out: list[list[str]] = []
    for i in range(fits.size):
        own: list[str] = []
        if not fits[i]:
            own.append(f"does not fit: {resident[i] / GB:.4g} GB resident > {usable}")
        if cached and floor.device is not None and (note := onchip_cache_note(resident[i], floor.device)):
            own.append(note)
        if beyond[i]:
            own.append(f"context beyond max_position_embeddings = {floor.spec.max_position_embeddings}")
        out.append(own + list(floor.assumptions))
    return out
