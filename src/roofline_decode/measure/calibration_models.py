"""The nested step-time models of :func:`~roofline_decode.measure.calibrate`, their bounded fit
and the leave-one-out choice between them.

Every model has the form

.. math:: T = t_0\\,n + q\\,B + \\max\\left(\\frac{W}{\\eta_w\\,BW} + \\frac{K}{\\eta_{kv}\\,BW},\\;
          \\frac{F}{\\eta_c\\,P}\\right)

with W the weight bytes, K the KV bytes (read and written), F the FLOPs of the step (DESIGN.md
§4), BW the (aggregate) bandwidth and P the dense peak of the compute precision.  The fixed cost
comes in one of two units (:data:`FIXED_COSTS`): per step (n = 1, t0 [s per step]) or per layer
(n = L, the depth of the model of the row: t0 is then t_layer [s per layer], so that a fit on
one model predicts a deeper one of the same engine and device with a proportionally larger fixed
cost).  The host time a step cannot beat, t_h, takes the same unit (an eager loop launches its
kernels layer by layer).  On rows of one depth the two units are the same model
(t0 = L · t_layer); they differ only in what they predict for another depth, or in the fit when
the rows mix depths.  With both costs non-negative, the fixed cost of a model of depth L' fitted
at depth L lies between the per-step prediction (t0) and the per-layer one (t0 · L' / L).  Writing each
efficiency as ``1 / (1 + u)`` with ``u >= 0`` keeps it in (0, 1] and makes the model linear and
non-negative in ``(t0, u_w, u_kv, q, u_c)`` once it is known which rows are compute-bound, so the
fit is an exact non-negative least-squares problem (:mod:`._nnls`); the assignment of rows to
the memory or compute side is iterated until it no longer changes.  The candidates, simplest
first:

==================  ==========================================  ============
name                parameters                                  ties
==================  ==========================================  ============
``bandwidth``       t0, η                                       η_w = η_kv = η, q = 0
``bandwidth+batch`` t0, η, q                                    η_w = η_kv = η
``streams``         t0, η_w, η_kv                               q = 0
``streams+batch``   t0, η_w, η_kv, q
==================  ==========================================  ============

each with η_c added when some rows are compute-bound (otherwise η_c = 1: the floor's compute
time, still a bound).  A parameter the rows cannot separate from the ones before it (all rows
read the same weight bytes, or share one batch) is held at its bound and reported as not
identifiable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar, Literal, TypeAlias

import numpy as np

from .._typing import Broadcastable
from ._nnls import weighted_nnls

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

__all__ = ["MODELS", "PARAMETERS", "FIXED_COSTS", "FixedCost", "choose", "Terms", "ModelFit", "fit_model", "floor_terms", "leave_one_out"]

#: Free parameters of each candidate, in the order they enter (earlier ones win a collinearity).
MODELS: dict[str, tuple[str, ...]] = {
    "bandwidth": ("t0", "u_bytes"),
    "bandwidth+batch": ("t0", "u_bytes", "q"),
    "streams": ("t0", "u_w", "u_kv"),
    "streams+batch": ("t0", "u_w", "u_kv", "q"),
    "bandwidth+host": ("t0", "u_bytes", "t_h"),
    "streams+batch+host": ("t0", "u_w", "u_kv", "q", "t_h"),
}
#: Full parameter vector: overhead [s], weight / KV / compute excess [1], per-sequence cost [s],
#: host time a step cannot beat [s].
PARAMETERS = ("t0", "u_w", "u_kv", "q", "u_c", "t_h")
#: Unit of the fixed cost t0: one per step, or one per layer of the model of the row.
FixedCost: TypeAlias = Literal["layer", "step"]
FIXED_COSTS: tuple[FixedCost, ...] = ("layer", "step")


@dataclass(frozen=True)
class Terms:
    """Per-row floor terms [s] (aggregate over the devices), batch, the strict floor [s], the
    model's depth L and the units of fixed cost of each row (1 per step, or L: see
    :data:`FIXED_COSTS`)."""

    weights_s: np.ndarray
    kv_s: np.ndarray
    compute_s: np.ndarray
    batch: np.ndarray
    strict_floor_s: np.ndarray
    layers: np.ndarray
    fixed: np.ndarray

    FIELDS: ClassVar[tuple[str, ...]] = ("weights_s", "kv_s", "compute_s", "batch", "strict_floor_s", "layers", "fixed")

    def take(self, index: np.ndarray) -> Terms:
        return Terms(*(np.asarray(getattr(self, f))[index] for f in self.FIELDS))

    def ravel(self) -> Terms:
        return Terms(*(np.ravel(getattr(self, f)) for f in self.FIELDS))

    def with_fixed_cost(self, fixed_cost: FixedCost) -> Terms:
        """The same rows with the fixed cost counted per ``"layer"`` (n = L) or per ``"step"`` (n = 1)."""
        fixed = np.asarray(self.layers, dtype=float) if fixed_cost == "layer" else np.ones_like(self.layers, dtype=float)
        return replace(self, fixed=fixed)

    def __len__(self) -> int:
        return int(np.size(self.weights_s))


def floor_terms(model: Model, device: Accelerator | str, batch: Broadcastable, context: Broadcastable,
                devices: int = 1, routing: str | float = "uniform", fixed_cost: FixedCost = "step") -> Terms:
    """Weight, KV and compute times [s] on ``devices`` devices (aggregate bandwidth and peak),
    and the strict floor [s] (MoE ``routing="identical"``), broadcast over batch and context;
    the fixed cost counted per ``fixed_cost`` (one per step, or one per layer of ``model``)."""
    from ..floors.decode import decode_floor

    floor = decode_floor(model, device, batch=batch, context=context, routing=routing)
    bandwidth = devices * floor.memory_bandwidth
    weights = np.asarray(floor.weight_bytes, dtype=float) / bandwidth
    kv = (np.asarray(floor.kv_read_bytes) + np.asarray(floor.kv_write_bytes)) / bandwidth
    # 0 where the device publishes no peak for the compute precision: η_c is then never fitted
    compute = np.asarray(floor.compute_time_s, dtype=float) / devices
    strict = np.maximum(weights + kv, compute)
    if model.is_moe and not (isinstance(routing, str) and routing == "identical"):
        s = decode_floor(model, device, batch=batch, context=context, routing="identical")
        strict = np.maximum(np.asarray(s.memory_time_s), np.asarray(s.compute_time_s)) / devices
    shape = np.broadcast(weights, kv, compute, floor.batch).shape
    layers = float(model.num_layers)
    terms = Terms(*(np.broadcast_to(np.asarray(a, dtype=float), shape) for a in
                    (weights, kv, compute, floor.batch, strict, layers, 1.0)))
    return terms.with_fixed_cost(fixed_cost)


def full_vector(names: tuple[str, ...], beta: np.ndarray) -> np.ndarray:
    """(t0, u_w, u_kv, q, u_c) from a model's free parameters (tied ones copied, absent ones 0)."""
    out = dict.fromkeys(PARAMETERS, 0.0)
    for name, value in zip(names, beta):
        if name == "u_bytes":
            out["u_w"] = out["u_kv"] = float(value)
        else:
            out[name] = float(value)
    return np.array([out[p] for p in PARAMETERS])


def sides(terms: Terms, full: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(compute-side rows, host-side rows) under the parameters ``full``."""
    t0, u_w, u_kv, q, u_c, t_h = full
    memory = (1 + u_w) * terms.weights_s + (1 + u_kv) * terms.kv_s
    compute = (1 + u_c) * terms.compute_s
    device = t0 * terms.fixed + q * terms.batch + np.maximum(memory, compute)
    return compute > memory, (t_h * terms.fixed > device) & (t_h > 0)


def columns(terms: Terms, names: tuple[str, ...], compute: np.ndarray,
            host: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(design, base): step time = base + design @ beta for the given compute- and host-side rows."""
    host = np.zeros(len(terms), dtype=bool) if host is None else host
    device = ~host
    memory = ~compute
    values = {
        "t_h": np.where(host, np.asarray(terms.fixed, dtype=float), 0.0),
        "t0": np.asarray(terms.fixed, dtype=float) * np.ones(len(terms)),
        "u_bytes": np.where(memory, terms.weights_s + terms.kv_s, 0.0),
        "u_w": np.where(memory, terms.weights_s, 0.0),
        "u_kv": np.where(memory, terms.kv_s, 0.0),
        "q": np.asarray(terms.batch, dtype=float) * np.ones(len(terms)),
        "u_c": np.where(compute, terms.compute_s, 0.0),
    }
    base = np.where(compute, terms.compute_s, terms.weights_s + terms.kv_s)
    design = np.stack([values[n] if n == "t_h" else np.where(device, values[n], 0.0) for n in names], axis=1) \
        if names else np.zeros((len(terms), 0))
    return design, np.where(host, 0.0, base)


def _identifiable(design: np.ndarray, weights: np.ndarray, tolerance: float = 1e-3) -> list[int]:
    """Indices of columns that each add to the span of the columns kept before them (in order).

    A column whose (weighted) distance from that span is below ``tolerance`` of its norm is not
    identifiable: e.g. the weight bytes of one model vary with the batch only by the gathered
    embedding rows (a few parts per million), which cannot separate η_w from t0.  A rejected
    column does not enter the span the later ones are compared with (it once did: a weight
    column rejected next to t0 still carried the batch through its embedding rows, and so hid
    the KV column, which grows with the batch, behind it).
    """
    scaled = design * np.sqrt(weights)[:, None]
    norms = np.linalg.norm(scaled, axis=0)
    kept: list[int] = []
    basis = np.zeros((scaled.shape[0], 0))
    for j in range(scaled.shape[1]):
        if norms[j] == 0:
            continue
        column = scaled[:, j] / norms[j]
        residual = column - basis @ (basis.T @ column)
        residual = residual - basis @ (basis.T @ residual)  # twice is enough (Gram-Schmidt)
        if np.linalg.norm(residual) >= tolerance:
            kept.append(j)
            basis = np.column_stack([basis, residual / np.linalg.norm(residual)])
    return kept


def _best_subset(design: np.ndarray, target: np.ndarray, weights: np.ndarray, kept: list[int]) -> list[int]:
    """``kept``, unless its bounded fit holds a parameter at its bound while another set of as many
    identifiable columns fits with every parameter inside its bounds: then the best such set
    (smallest weighted residual; ties, within 1e-9, go to the earlier set).

    Columns the rows cannot separate (a per-sequence cost, a fixed cost and the bytes term at one
    context are three lines in two directions) are not interchangeable once the parameters are
    bounded: the first two in order may fit the rows only with one of them at its bound, while
    another pair fits them with both.  When the first ones fit inside their bounds they are kept:
    the in-sample residual alone does not say which set extrapolates better.
    """
    from itertools import combinations

    candidates = [j for j in range(design.shape[1]) if np.any(design[:, j] != 0)]
    if len(kept) >= len(candidates) or np.all(weighted_nnls(design[:, kept], target, weights) > 0):
        return kept
    best, best_sse = kept, math.inf
    slack = 1e-9 * float(np.sum(weights * target**2))
    for subset in combinations(candidates, len(kept)):
        chosen = list(subset)
        if chosen == kept or len(_identifiable(design[:, chosen], weights)) < len(chosen):
            continue
        beta = weighted_nnls(design[:, chosen], target, weights)
        if not np.all(beta > 0):
            continue
        value = float(np.sum(weights * (target - design[:, chosen] @ beta) ** 2))
        if value < best_sse - slack:
            best, best_sse = chosen, value
    return best


@dataclass(frozen=True)
class ModelFit:
    """One candidate fitted to rows: its free parameters and where they stand."""

    name: str
    names: tuple[str, ...]          # the candidate's parameters (with u_c if compute is fitted)
    identified: tuple[str, ...]     # those the rows separate (the others are held at 0)
    beta: np.ndarray                # value of each of ``names``
    full: np.ndarray                # (t0, u_w, u_kv, q, u_c)
    compute: np.ndarray             # rows on the compute side
    host: np.ndarray                # rows on the host side (step time = t_h)
    fitted_s: np.ndarray
    unscaled_covariance: np.ndarray | None  # (XᵀWX)⁻¹ over the free (non-zero, identified) parameters
    free: tuple[str, ...]

    def predict(self, terms: Terms) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(step time [s], design over the free parameters, compute-side mask) for new rows."""
        compute, host = sides(terms, self.full)
        design, base = columns(terms, self.free, compute, host)
        beta = np.array([self.beta[self.names.index(n)] for n in self.free])
        return base + design @ beta, design, compute


#: (parameter names, their values, the full vector, identifiable columns, compute-side rows, host-side rows)
_Solution: TypeAlias = tuple[tuple[str, ...], np.ndarray, np.ndarray, list[int], np.ndarray, np.ndarray]


def _solve(names: tuple[str, ...], terms: Terms, y: np.ndarray, weights: np.ndarray, compute: np.ndarray,
           host: np.ndarray, fit_compute: bool | None, use_compute: bool) -> _Solution:
    """Iterate the side assignment from a start; returns (names, beta, full, kept, compute, host)."""
    for _ in range(50):
        names_now = names + (("u_c",) if use_compute else ())
        design, base = columns(terms, names_now, compute, host)
        kept = _identifiable(design, weights)
        if kept and len(kept) < design.shape[1]:
            kept = _best_subset(design, y - base, weights, kept)
        beta = np.zeros(len(names_now))
        if kept:
            beta[kept] = weighted_nnls(design[:, kept], y - base, weights)
        full = full_vector(names_now, beta)
        new_compute, new_host = sides(terms, full)
        if "t_h" not in names:
            new_host = host
        if fit_compute is None and not use_compute and new_compute.any():
            use_compute, compute = True, new_compute
            continue
        if np.array_equal(new_compute, compute) and np.array_equal(new_host, host):
            break
        compute, host = new_compute, new_host
    return names_now, beta, full, kept, compute, host


def fit_model(name: str, terms: Terms, y: np.ndarray, weights: np.ndarray, fit_compute: bool | None,
              start: tuple[np.ndarray, np.ndarray] | None = None) -> ModelFit:
    """Bounded least squares of candidate ``name`` (iterating the compute- and host-side assignment).

    With a host arm the start matters: the rows are ordered by their device time under the fit
    without it, and the splits into the fastest 1/8, 1/4, 1/2 and 3/4 (host side) and the rest
    are tried; the one with the smallest weighted residual is kept.  ``start`` (compute-side,
    host-side rows: a fit of nearly the same rows) replaces that search.
    """
    names = MODELS[name]
    compute = terms.compute_s > terms.weights_s + terms.kv_s
    use_compute = bool(compute.any()) if fit_compute is None else fit_compute
    none = np.zeros(len(y), dtype=bool)
    if start is not None:
        host = start[1] if "t_h" in names else none
        best = _solve(names, terms, y, weights, start[0], host, fit_compute, use_compute or bool(start[0].any()))
    else:
        best = _solve(names, terms, y, weights, compute, none, fit_compute, use_compute)
    if "t_h" in names and start is None:
        device_names = tuple(n for n in names if n != "t_h")
        device_fit = _solve(device_names, terms, y, weights, compute, none, fit_compute, use_compute)
        order = np.argsort(_device_time(terms, device_fit[2]))
        best_sse = math.inf
        for k in sorted({max(1, min(len(y) - 1, round(f * len(y)))) for f in (0.125, 0.25, 0.5, 0.75)}):
            host = np.zeros(len(y), dtype=bool)
            host[order[:k]] = True
            trial = _solve(names, terms, y, weights, device_fit[4], host, fit_compute, use_compute)
            design, base = columns(terms, trial[0], trial[4], trial[5])
            sse = float(np.sum(weights * (y - base - design @ trial[1]) ** 2))
            if sse < best_sse - 1e-15:
                best, best_sse = trial, sse
    names, beta, full, kept, compute, host = best
    identified = tuple(names[j] for j in kept)
    free = tuple(n for n in identified if beta[names.index(n)] > 0)
    design, base = columns(terms, free, compute, host)
    beta_free = np.array([beta[names.index(n)] for n in free])
    fitted = base + design @ beta_free
    unscaled = None
    if free:
        scaled = design * np.sqrt(weights)[:, None]
        gram = scaled.T @ scaled
        if np.linalg.matrix_rank(gram) == len(free):
            unscaled = np.linalg.inv(gram)
    return ModelFit(name=name, names=names, identified=identified, beta=beta, full=full, compute=compute,
                    host=host, fitted_s=fitted, unscaled_covariance=unscaled, free=free)


def _device_time(terms: Terms, full: np.ndarray) -> np.ndarray:
    t0, u_w, u_kv, q, u_c, _ = full
    time: np.ndarray = t0 * terms.fixed + q * terms.batch + np.maximum((1 + u_w) * terms.weights_s + (1 + u_kv) * terms.kv_s,
                                                         (1 + u_c) * terms.compute_s)
    return time


def leave_one_out(name: str, terms: Terms, y: np.ndarray, weights: np.ndarray, fit_compute: bool | None,
                  full_fit: ModelFit | None = None) -> np.ndarray:
    """Each row's prediction error (predicted - measured, [s]) from a fit on the other rows
    (started from ``full_fit``'s compute- and host-side rows when given)."""
    n = len(y)
    errors = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        start = None if full_fit is None else (full_fit.compute[keep], full_fit.host[keep])
        fit = fit_model(name, terms.take(keep), y[keep], weights[keep], fit_compute, start)
        predicted, _, _ = fit.predict(terms.take(np.array([i])))
        errors[i] = predicted[0] - y[i]
    return errors


def extrapolation_fold(name: str, terms: Terms, y: np.ndarray, weights: np.ndarray,
                       fit_compute: bool | None, full_fit: ModelFit | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """(errors [s], rows) of the quarter of rows with the most bytes moved, predicted from the rest.

    Users extrapolate towards larger batches and contexts; this fold asks each candidate to do
    that with the rows at hand.  None when the rest is too small to fit the candidate.
    """
    n = len(y)
    k = max(1, n // 4)
    order = np.argsort(terms.weights_s + terms.kv_s, kind="stable")
    held = np.zeros(n, dtype=bool)
    held[order[n - k:]] = True
    needed = len(full_fit.identified) if full_fit is not None else len(MODELS[name])
    if n - k < needed + 1:
        return None
    start = None if full_fit is None else (full_fit.compute[~held], full_fit.host[~held])
    fit = fit_model(name, terms.take(~held), y[~held], weights[~held], fit_compute, start)
    predicted, _, _ = fit.predict(terms.take(held))
    errors: np.ndarray = predicted - y[held]
    return errors, held


def score(errors: np.ndarray, y: np.ndarray, weighting: str) -> float:
    """RMS prediction error: relative (share of the measured time) or absolute [s]."""
    e = errors / y if weighting == "relative" else errors
    return math.sqrt(float(np.mean(e**2)))


def choose(names: tuple[str, ...], units: tuple[FixedCost, ...], rows: Terms, y: np.ndarray, weights: np.ndarray,
           fit_compute: bool | None, weighting: str
           ) -> tuple[tuple[str, FixedCost], ModelFit, dict[str, float], float | None, str]:
    """Fit every candidate (each model with each unit of the fixed cost) and keep the one with the
    smallest cross-validated RMS error: (chosen, its fit, scores by label, its larger CV error or
    None, reason).

    The score averages the leave-one-out error and :func:`extrapolation_fold`'s; ties within 1 %
    go to the earlier candidate (simpler models first; per layer before per step), candidates
    that identify the same parameters are scored once.  Labels are the model names, with
    ``/layer`` or ``/step`` when both units compete.
    """
    n = len(y)
    keys = [(name, unit) for name in names for unit in units]
    label = {c: c[0] if len(units) == 1 else f"{c[0]}/{c[1]}" for c in keys}
    unit_terms = {unit: rows.with_fixed_cost(unit) for unit in units}
    fits = {c: fit_model(c[0], unit_terms[c[1]], y, weights, fit_compute) for c in keys}
    scores: dict[tuple[str, FixedCost], float] = {}
    cv_errors: dict[tuple[str, FixedCost], float] = {}
    seen: set[tuple[object, ...]] = set()
    for c in keys:
        name, unit = c
        effective = fits[c].identified
        if (unit, *effective) in seen:  # what the rows identify equals a simpler candidate's: the same model
            continue
        seen.add((unit, *effective))
        if n >= len(effective) + 1 and n >= 3:
            terms = unit_terms[unit]
            loo = score(leave_one_out(name, terms, y, weights, fit_compute, fits[c]), y, weighting)
            fold = extrapolation_fold(name, terms, y, weights, fit_compute, fits[c])
            extrapolated = loo if fold is None else score(fold[0], y[fold[1]], weighting)
            cv_errors[c] = max(loo, extrapolated)
            scores[c] = math.sqrt((loo**2 + extrapolated**2) / 2)
    if not scores:
        return keys[0], fits[keys[0]], {}, None, \
            f"{n} rows: too few to compare models by cross-validation; the simplest candidate"
    best = min(scores.values())
    chosen = next(c for c in keys if c in scores and scores[c] <= best * 1.01 + 1e-12)
    listing = ", ".join(f"{label[k]} {v:.3%}" if weighting == "relative" else f"{label[k]} {v:.3g} s"
                        for k, v in scores.items())
    reason = ("smallest cross-validated RMS error (leave-one-out and predicting the quarter of rows with "
              f"the most bytes from the rest; ties within 1% go to the simpler model"
              f"{', per layer before per step' if len(units) > 1 else ''}): {listing}")
    return chosen, fits[chosen], {label[k]: v for k, v in scores.items()}, cv_errors.get(chosen), reason
