"""The deployment search space and its vectorised evaluation (used by :func:`~roofline_decode.planning.deployments`).

* :func:`candidate_layouts`: every :class:`~roofline_decode.Parallel` layout of ``n`` devices
  (``n`` a power of two up to the GPU count, or the GPU count itself) whose degrees divide
  ``n`` and that :func:`~roofline_decode.floors.layout.check_layout` accepts;
* :func:`evaluate_chunk`: the points of every aggregated deployment (``gpus // n`` replicas of
  a layout) and every disaggregated pairing (``x`` prefill workers of one layout and ``y``
  decode workers of another, ``x·n_p + y·n_d <= gpus``; the x that another x of the same
  pairing beats on every metric are left out, see :func:`_disaggregated`) of a chunk of decode
  layouts, over each layout's client grid, as columns (numpy arrays); the pairings of one
  class of device counts (n_p, n_d) are one broadcast over prefill layout x decode layout x
  y x clients x x;
* :func:`envelope_mask` and :func:`best_index`: the Pareto envelope of tokens/s per GPU
  against tokens/s per user, and the best point under the SLOs.

The curves come from :mod:`~roofline_decode.planning.deployments_curves` (the one seam to the
serving floors).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..specs.model import Model
    from ..specs.parallel import Parallel
    from .deployments_curves import LayoutCurves

__all__ = ["COLUMNS", "MODES", "Stack", "candidate_layouts", "device_counts", "evaluate_chunk", "envelope_mask",
           "best_index", "candidates", "chunks_by_size", "meets", "concat", "take"]

#: Serving modes searched (``mode`` column: the index).
MODES = ("aggregated", "disaggregated")

#: The columns of a point table, in order: ``mode`` (index of :data:`MODES`), ``prefill``
#: and ``decode`` (layout indices; the same layout for an aggregated replica),
#: ``prefill_workers`` and ``decode_workers`` (the replicas, twice, when aggregated),
#: ``devices`` used, ``concurrency`` (all clients), ``running`` (sequences admitted),
#: ``ttft_s``, ``tpot_s``, ``requests_per_s``, ``tokens_per_s_per_gpu``, ``tokens_per_s_per_user``.
COLUMNS = ("mode", "prefill", "decode", "prefill_workers", "decode_workers", "devices", "concurrency", "running",
           "ttft_s", "tpot_s", "requests_per_s", "tokens_per_s_per_gpu", "tokens_per_s_per_user")


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def device_counts(gpus: int) -> list[int]:
    """Devices per replica or worker searched: the powers of two up to ``gpus``, and ``gpus``."""
    counts = {1 << k for k in range(gpus.bit_length()) if 1 << k <= gpus}
    return sorted(counts | {gpus})


def candidate_layouts(model: Model, gpus: int) -> list[Parallel]:
    """Every layout of :func:`device_counts` devices the model takes (tp, pp, attention_dp, ep
    divisors of the devices, moe_tp = tp·attention_dp / ep; ep = 1 on a dense model), in
    order of devices, then pp, tp, ep."""
    from ..errors import InvalidValueError
    from ..floors.layout import check_layout
    from ..specs.parallel import Parallel

    layouts: list[Parallel] = []
    for n in device_counts(gpus):
        for pp in _divisors(n):
            if pp > model.num_layers:
                continue
            stage = n // pp
            for tp in _divisors(stage):
                for ep in (_divisors(stage) if model.is_moe else [1]):
                    try:
                        layout = Parallel(tp=tp, pp=pp, ep=ep, attention_dp=stage // tp, moe_tp=stage // ep)
                        check_layout(model, layout)
                    except InvalidValueError:
                        continue
                    layouts.append(layout)
    return layouts


@dataclass(frozen=True)
class Stack:
    """The curves of the layouts that fit, stacked: (layouts, grid) arrays, (layouts,) vectors and
    ``decode_tpot_s`` (layouts, decode workers, grid)."""

    layouts: tuple[Parallel, ...]
    devices: np.ndarray
    clients: np.ndarray
    valid: np.ndarray
    running: np.ndarray
    ttft_s: np.ndarray
    tpot_s: np.ndarray
    rate: np.ndarray
    decode_tpot_s: np.ndarray
    decode_rate: np.ndarray
    prefill_s: np.ndarray
    prefill_rate: np.ndarray

    @classmethod
    def of(cls, curves: list[LayoutCurves]) -> Stack:
        from .deployments_curves import pad_rows

        def rows(name: str) -> np.ndarray:
            return np.array([getattr(c, name) for c in curves], dtype=bool if name == "valid" else float)

        workers = max(c.decode_tpot_s.shape[0] for c in curves)
        return cls(layouts=tuple(c.layout for c in curves), devices=np.array([c.devices for c in curves], dtype=float),
                   decode_tpot_s=pad_rows(curves, "decode_tpot_s", workers),
                   **{name: rows(name) for name in ("clients", "valid", "running", "ttft_s", "tpot_s", "rate",
                                                    "decode_rate", "prefill_s", "prefill_rate")})


def _aggregated(stack: Stack, rows: np.ndarray, gpus: int, osl: float) -> dict[str, np.ndarray]:
    """Points of ``gpus // n`` replicas of each layout of ``rows``, over its client grid."""
    n = stack.devices[rows][:, None]
    replicas = np.floor(gpus / n) + np.zeros_like(stack.clients[rows])
    rate = replicas * stack.rate[rows]
    keep = stack.valid[rows].ravel()
    index = np.broadcast_to(rows[:, None], replicas.shape).astype(float)
    columns = {
        "mode": np.zeros(replicas.shape), "prefill": index, "decode": index, "prefill_workers": replicas,
        "decode_workers": replicas, "devices": replicas * n, "concurrency": replicas * stack.clients[rows],
        "running": replicas * stack.running[rows], "ttft_s": stack.ttft_s[rows], "tpot_s": stack.tpot_s[rows],
        "requests_per_s": rate, "tokens_per_s_per_gpu": rate * osl / (replicas * n),
        "tokens_per_s_per_user": 1.0 / stack.tpot_s[rows],
    }
    return {name: np.ascontiguousarray(value).ravel()[keep] for name, value in columns.items()}


def _best_of_cell(per_gpu: np.ndarray, valid: np.ndarray, ttft: np.ndarray, tpot: np.ndarray, ttft_bound: float | None,
                  tpot_bound: float | None) -> np.ndarray:
    """Where a point has the most tokens/s per GPU of its cell (decode layout, y, clients: axes 1
    to 3, one TPOT and so one speed per user), over all points or over those meeting the SLOs:
    any other point of the cell is beaten by one at the same speed per user, so it is on no
    frontier and not the best point."""
    ok = np.broadcast_to(np.asarray(ttft <= ttft_bound if ttft_bound is not None else True), per_gpu.shape)
    if tpot_bound is not None:
        ok = ok & (tpot <= tpot_bound)
    best = np.max(np.where(valid, per_gpu, -np.inf), axis=(0, 4), keepdims=True)
    best_slo = np.max(np.where(valid & ok, per_gpu, -np.inf), axis=(0, 4), keepdims=True)
    kept: np.ndarray = (per_gpu >= best) | (ok & (per_gpu >= best_slo))
    return kept


def _disaggregated(stack: Stack, rows: np.ndarray, gpus: int, osl: float, transfer: dict[tuple[int, int], float],
                   slo: tuple[float | None, float | None] | None, counted: list[int]) -> list[dict[str, np.ndarray]]:
    """Points of the pairings of a prefill layout (any) with a decode layout of ``rows``: one
    broadcast per class (n_p, n_d) over (prefill layout, decode layout, y, clients, x).

    For y decode workers at c clients each the pairing's rate is min(A, x·r_P), where A (the
    latency term and the decode workers' ceiling) does not depend on x and r_P is a prefill
    worker's ceiling.  TPOT and tokens/s per user do not depend on x, TTFT falls as x rises, and
    tokens/s per GPU rises with x while x·r_P < A and falls after.  So every x below
    floor(A/r_P) is beaten on every metric by floor(A/r_P), every x above ceil(A/r_P) by
    ceil(A/r_P): only those two (within 1 <= x <= (gpus − y·n_d)/n_p) are evaluated; the
    frontier and the best point under any SLO are those of all pairings.  With ``slo`` only the
    best points of each cell are kept (:func:`_best_of_cell`); ``counted`` gets the number of
    points evaluated per class."""
    steps = osl - 1.0
    parts = []
    counts = np.unique(stack.devices).astype(int)
    for n_p in counts:
        prefill = np.flatnonzero(stack.devices == n_p)
        for n_d in counts:
            decode = rows[stack.devices[rows] == n_d]
            y = np.arange(1, (gpus - n_p) // n_d + 1, dtype=float) if gpus >= n_p + n_d else np.zeros(0)
            if decode.size == 0 or y.size == 0:
                continue
            ys = y[None, None, :, None, None]
            x_max = np.floor((gpus - ys * n_d) / n_p)

            def by_decode(values: np.ndarray) -> np.ndarray:
                picked: np.ndarray = values[decode][None, :, None, :, None]  # noqa: B023 (used inside the loop)
                return picked

            def by_prefill(values: np.ndarray) -> np.ndarray:
                return values[prefill][:, None, None, None, None]  # noqa: B023

            service = by_prefill(stack.prefill_s) + transfer[int(n_p), int(n_d)]
            tpot = stack.decode_tpot_s[decode][:, y.astype(int) - 1, :][None, :, :, :, None]
            clients = ys * by_decode(stack.clients)
            running = ys * by_decode(stack.running)
            prompt_rate = by_prefill(stack.prefill_rate)
            with np.errstate(divide="ignore", invalid="ignore"):
                decode_side = np.minimum(clients / (service + steps * tpot), ys * by_decode(stack.decode_rate))
                balance = decode_side / prompt_rate
                low = np.clip(np.floor(balance), 1.0, x_max)
                high = np.clip(np.ceil(balance), 1.0, x_max)
                xs = np.concatenate(np.broadcast_arrays(low, high), axis=-1)
                rate = np.minimum(decode_side, xs * prompt_rate)
                ttft = service + np.maximum(clients - running, 0.0) / rate
            devices = xs * n_p + ys * n_d
            per_gpu = rate * osl / devices
            shape = xs.shape
            second = np.zeros(shape, bool)
            second[..., 1] = True
            valid = np.broadcast_to(by_decode(stack.valid), shape) & ~(second & (xs == low))
            counted.append(int(valid.sum()))
            if slo is not None:  # per (decode layout, y, clients): one TPOT, so one speed per user
                valid = valid & _best_of_cell(per_gpu, valid, ttft, tpot, *slo)
            keep = valid.ravel()
            columns = {
                "mode": np.ones(1), "prefill": prefill[:, None, None, None, None].astype(float),
                "decode": decode[None, :, None, None, None].astype(float), "prefill_workers": xs,
                "decode_workers": ys, "devices": devices, "concurrency": clients, "running": running, "ttft_s": ttft,
                "tpot_s": tpot, "requests_per_s": rate, "tokens_per_s_per_gpu": per_gpu,
                "tokens_per_s_per_user": 1.0 / tpot,
            }
            parts.append({name: np.broadcast_to(value, shape).ravel()[keep] for name, value in columns.items()})
    return parts


def chunks_by_size(stack: Stack, gpus: int, elements: int) -> list[np.ndarray]:
    """The decode layouts in consecutive chunks whose pairings broadcast at most ``elements``
    points each (a layout whose pairings alone exceed it is a chunk of its own)."""
    devices = stack.devices.astype(int)
    counts, per_count = np.unique(devices, return_counts=True)
    grid = stack.clients.shape[1]
    sizes = [grid + sum(int(k) * max((gpus - int(n_p)) // int(n), 0) * grid * 2 for n_p, k in zip(counts, per_count))
             for n in devices]
    chunks: list[list[int]] = [[]]
    total = 0
    for row, size in enumerate(sizes):
        if chunks[-1] and total + size > elements:
            chunks.append([])
            total = 0
        chunks[-1].append(row)
        total += size
    return [np.array(chunk, dtype=int) for chunk in chunks]


def evaluate_chunk(stack: Stack, rows: np.ndarray, gpus: int, osl: float, modes: tuple[str, ...],
                   transfer: dict[tuple[int, int], float] | None,
                   slo: tuple[float | None, float | None] | None = None) -> tuple[dict[str, np.ndarray], int]:
    """The points whose decode layout (or replica layout) is one of ``rows``, as columns, and
    their count.  With ``slo`` = (ttft, tpot) each part keeps only the points that can be on
    the frontier, on the frontier of the points meeting the SLOs, or tied with one of them
    (:func:`candidates`): what :func:`envelope_mask` and :func:`best_index` need."""
    parts, counted = [], []
    if "aggregated" in modes:
        parts.append(_aggregated(stack, rows, gpus, osl))
        counted.append(int(parts[0]["ttft_s"].size))
    if "disaggregated" in modes and transfer is not None:
        parts.extend(_disaggregated(stack, rows, gpus, osl, transfer, slo, counted))
    count = sum(counted)
    if slo is not None:
        parts = [take(part, candidates(part, *slo)) for part in parts]
    return concat(parts), count


def meets(points: dict[str, np.ndarray], ttft: float | None, tpot: float | None) -> np.ndarray:
    """Where TTFT <= ``ttft`` and TPOT <= ``tpot`` (None: no bound) and the rates are finite."""
    ok = np.isfinite(points["tokens_per_s_per_gpu"]) & np.isfinite(points["tokens_per_s_per_user"])
    if ttft is not None:
        ok &= points["ttft_s"] <= ttft
    if tpot is not None:
        ok &= points["tpot_s"] <= tpot
    mask: np.ndarray = ok
    return mask


def _weakly_kept(points: dict[str, np.ndarray], rows: np.ndarray) -> np.ndarray:
    """Of ``rows``, those whose tokens/s per GPU is at least that of every faster point (two
    sort keys only): a superset of the envelope and of its ties, cheap on millions of points."""
    if rows.size == 0:
        return rows
    per_gpu, per_user = points["tokens_per_s_per_gpu"][rows], points["tokens_per_s_per_user"][rows]
    order = np.lexsort((-per_gpu, -per_user))
    ranked = per_gpu[order]
    before = np.maximum.accumulate(np.concatenate([[-np.inf], ranked[:-1]]))
    kept: np.ndarray = rows[order[ranked >= before]]
    return kept


def candidates(points: dict[str, np.ndarray], ttft: float | None, tpot: float | None) -> np.ndarray:
    """A mask of the points that :func:`envelope_mask` (of all points, or of those meeting the
    SLOs) and :func:`best_index` can pick: leaving the others out changes neither (a point left
    out gives fewer tokens/s per GPU than some faster point, so it is never the running best)."""
    mask = np.zeros(points["ttft_s"].shape, bool)
    finite = np.isfinite(points["tokens_per_s_per_gpu"]) & np.isfinite(points["tokens_per_s_per_user"])
    mask[_weakly_kept(points, np.flatnonzero(finite))] = True
    mask[_weakly_kept(points, np.flatnonzero(meets(points, ttft, tpot)))] = True
    return mask


def concat(parts: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Point tables one after another (an empty table for none)."""
    if not parts:
        return {name: np.zeros(0) for name in COLUMNS}
    return {name: np.concatenate([part[name] for part in parts]) for name in COLUMNS}


def take(points: dict[str, np.ndarray], index: np.ndarray) -> dict[str, np.ndarray]:
    """The rows ``index`` (indices or a mask) of a point table."""
    return {name: value[index] for name, value in points.items()}


def _order(points: dict[str, np.ndarray]) -> np.ndarray:
    """Fastest per user first, then most per GPU; the remaining columns break ties (so a chunked
    search keeps the same representative of equal points as a whole one)."""
    keys = [points[name] for name in reversed(COLUMNS) if name not in ("tokens_per_s_per_user", "tokens_per_s_per_gpu")]
    return np.lexsort((*keys, -points["tokens_per_s_per_gpu"], -points["tokens_per_s_per_user"]))


def envelope_mask(points: dict[str, np.ndarray]) -> np.ndarray:
    """Points no other point beats on both axes (tokens/s per user and per GPU, finite ones):
    walking from the fastest per user, a point is kept when it gives strictly more tokens/s per
    GPU than every faster point (an equal speed per user keeps its best point only)."""
    mask = np.zeros(points["tokens_per_s_per_gpu"].shape, bool)
    finite = np.isfinite(points["tokens_per_s_per_gpu"]) & np.isfinite(points["tokens_per_s_per_user"])
    candidates = np.flatnonzero(finite)
    if candidates.size == 0:
        return mask
    order = candidates[_order(take(points, candidates))]
    per_gpu = points["tokens_per_s_per_gpu"][order]
    before = np.maximum.accumulate(np.concatenate([[-np.inf], per_gpu[:-1]]))
    mask[order[per_gpu > before]] = True
    return mask


def best_index(points: dict[str, np.ndarray], ttft: float | None, tpot: float | None) -> int | None:
    """The point with the most tokens/s per GPU among those with TTFT <= ``ttft`` and TPOT <=
    ``tpot`` [s] (None: no bound), ties to the faster per user; None where no point meets them."""
    ok = meets(points, ttft, tpot)
    rows = np.flatnonzero(ok)
    if rows.size == 0:
        return None
    sub = take(points, rows)
    return int(rows[np.lexsort((*[sub[name] for name in reversed(COLUMNS)], -sub["tokens_per_s_per_user"],
                                       -sub["tokens_per_s_per_gpu"]))[0]])
