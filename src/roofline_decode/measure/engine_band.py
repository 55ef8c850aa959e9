"""The band of an engine profile's prediction at the queried point: what it rests on, and how
far it widens when the query reaches beyond the devices and models the profile was fitted on.

A profile's held-out errors e = log(measured / predicted) come in groups: each device's rows
predicted from the other devices (leave-one-device-out), each model's rows from the other
models (leave-one-model-out), or, on one device, rows held out in ten interleaved folds.  They
are split into

* a group offset o_g, the median error of held-out group g (a device's or a model's overall
  miss; folds have none), and
* the within-group scatter e − o_g, whose central quantiles (w_lo, w_hi) at each level are the
  band of a query on a device *and* a model the profile has seen.

A query on a device or a model the profile has not seen meets a new offset of that kind.  For
each kind (devices, models) with G held-out groups, s² = Σ o_g² / G over them (about 0: the
fit's prediction is the centre), and the prior spread σ₀ of per-device scale factors of the
profile with the most devices (llama.cpp-cuda, 15 GPUs) worth ν₀ = 2 groups (conjugate
scaled-inverse-χ² prior on the offset variance), the prediction interval of one more offset is

.. math:: h = t_\\nu \\, \\tilde{s} \\sqrt{1 + 1/G}, \\quad
          \\tilde{s}^2 = \\frac{\\nu_0 \\sigma_0^2 + G s^2}{\\nu_0 + G}, \\quad \\nu = \\nu_0 + G - 1

(Student's t: s̃ rests on few numbers; with no group of that kind, e.g. a profile fitted on one
device asked about another, h = t_{ν₀} σ₀ from the prior alone).  The half-widths of the kinds
the query has not seen add in quadrature to each side of the within-group band about its
median c: lo = c − sqrt((c − w_lo)² + h_dev² + h_model²), hi likewise.  The band a query gets
(:func:`query_band`) is the profile's pooled band (the quantiles of all held-out errors,
:func:`~.engine_fit.band_of`) where it has seen the device and the model, else the wider of
that and the band above on each side.

The band is also conditioned on what the query is (regimes, batch extrapolation, device offsets of
seen models only): :mod:`.band_terms`.

Tried on benchmarks/expected_accuracy.py's device splits and left out (90 % band coverage of
the other device's TPOT rows and median band width; TensorRT-LLM / vLLM / SGLang fitted on H100,
then fitted on H200; before any widening 48 % x1.75 / 59 % x1.95 / 27 % x1.79, then 100 % x4.7 /
84 % x2.3 / 95 % x4.8; the kept band: 91 % x3.8 / 89 % x3.4 / 82 % x4.7, then 100 % x10.7 /
94 % x3.4 / 98 % x9.3):

* the spread of the leave-one-model-out parameter vectors' predictions at the queried point
  (jackknife), z times it in quadrature with the pooled band: 50 % / 68 % / - (SGLang's H100 rows
  hold one model: no jackknife); it stays near 0.05 in log where the fit extrapolates to new
  models (TensorRT-LLM's misses there are 0.4) and reaches 0.3-0.8 where the parameters absorb
  model structure (the TensorRT-LLM and SGLang H200 fits: bands 6.6x and 21x wide);
* a device-transfer term alone, z σ₀ in quadrature: 64 % x2.2 / 70 % x2.4 / 41 % x2.3;
* device and model offsets pooled into one kind, with z σ₀ for a one-device profile: 81 % x2.8 /
  82 % x2.7 / 68 % x3.7, then 100 % x9.2 / 97 % x5.7 / 98 % x8.3 (a new device of a seen model
  then pays the model offsets' spread); without the prior (ν₀ = 0) 86 % x3.2 / 79 % x2.5 / 41 %
  x2.3, then 17x / 8x / 11x wide;
* split conformal quantiles of the grouped hold-outs: with G < 9 groups the 90 % level has no
  finite group-level quantile, and row-level conformal quantiles are the pooled band itself.

References: J. Aitchison and I. R. Dunsmore, *Statistical Prediction Analysis* (1975), ch. 5
(normal prediction interval for one new observation from G); A. Gelman et al., *Bayesian Data
Analysis*, 3rd ed. (2013), §3.2-3.3 (scaled-inverse-χ² prior, Student-t predictive); J. Lei et
al., "Distribution-free predictive inference for regression", JASA 113 (2018) 1094-1111 (split
conformal).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from ._stats import student_t_quantile
from .band_terms import (MANY_CLIENTS, band_regime, batch_basis, batch_half_width, batch_slopes, batch_term,
                         step_regime, ttft_regime)
from .engine_fit import BAND_LEVELS, band_of, held_out

__all__ = ["PRIOR_GROUPS", "KINDS", "NO_OFFSET", "DEVICE_PRIOR_ENGINE", "transfer_of", "transfer_to_dict", "transfer_from_dict",
           "offset_term", "transfer_band", "query_band", "band_basis", "held_out_seen", "model_seen",
           "transfer_coverage", "with_model_hold_outs", "hold_out_coverage", "MIN_REGIME_ROWS", "MIN_REGIME_GROUPS", "MANY_CLIENTS", "batch_slopes", "batch_term",
           "batch_half_width", "band_regime", "batch_basis", "step_regime", "ttft_regime"]

#: ν₀: the weight, in groups, of the prior offset spread σ₀ (:data:`DEVICE_PRIOR_ENGINE`'s) beside a
#: profile's own G offsets.
PRIOR_GROUPS = 2
#: Kinds of held-out groups with an offset (group labels ``"device:ID"``, ``"model:NAME"``).
KINDS = ("device", "model")
#: Group label of held-out rows without a group offset (interleaved folds of one device).
NO_OFFSET = ""
#: Fewest held-out rows a regime needs for its own band (fewer: the pooled band serves it).
MIN_REGIME_ROWS = 40
#: Fewest models (groups of the model kind; of any kind where rows carry no model) a regime's rows
#: must span for its own band: one or two models' scatter says little of the next model's.
MIN_REGIME_GROUPS = 3
#: The profile whose spread of per-device scales is the prior σ₀ of every other profile's offsets.
DEVICE_PRIOR_ENGINE = "llama.cpp-cuda"


def transfer_of(errors: np.ndarray, groups: np.ndarray, models: list[str] | None,
                sigma_prior: float | None, regimes: np.ndarray | None = None,
                pure: np.ndarray | None = None) -> dict[str, Any]:
    """The band pieces of held-out ``errors`` [log] with their ``groups`` labels (``"device:ID"``,
    ``"model:NAME"``, :data:`NO_OFFSET` for fold rows): within-group quantiles per level, per kind
    the offsets' count and RMS [log], the fitted model names and the prior σ₀ [log]; with
    ``regimes`` (each row's regime label, known at query time), per regime of at least
    :data:`MIN_REGIME_ROWS` rows its own within-group quantiles, centre and pooled band
    (``"regimes"``; a regime with fewer rows keeps the pooled ones).  With ``pure`` (each row's
    model seen by its fit, :func:`held_out_seen`), a device's offset is the median of its rows of
    seen models only: its rows of a model new to the fit too (a new model on a new device) are
    centred on their own median and leave the device offsets, whose model part the model
    hold-outs measure (TensorRT-LLM's and SGLang's devices share no model: no device offsets).

    >>> t = transfer_of(np.array([0.1, 0.3, -0.2, 0.0]), np.array(["model:a"] * 2 + ["model:b"] * 2), None, None)
    >>> models = t.get("model")
    >>> models.get("groups"), round(models.get("sigma_offset"), 3), tuple(round(x, 3) for x in t["within"].get(0.5))
    (2, 0.158, (-0.1, 0.1))
    """
    errors = np.asarray(errors, dtype=float)
    groups = np.asarray(groups).astype(str)
    within, offsets = _split(errors, groups, pure)
    out: dict[str, Any] = {"within": band_of(within), "centre": float(np.median(within)),
                           "models": sorted(set(models)) if models else [],
                           "sigma_prior": None if sigma_prior is None else float(sigma_prior), **offsets}
    out["regimes"] = {}
    labels = np.asarray(regimes if regimes is not None else []).astype(str)
    if len(set(labels.tolist())) >= 2:  # one regime alone is the pooled band
        for name in sorted(set(labels.tolist())):
            rows = labels == name
            kinds = [g for g in set(groups[rows].tolist()) if g.startswith("model:")] or set(groups[rows].tolist())
            if rows.sum() >= MIN_REGIME_ROWS and len(kinds) >= MIN_REGIME_GROUPS:
                w, _ = _split(errors[rows], groups[rows], None if pure is None else pure[rows])
                out["regimes"][name] = {"rows": int(rows.sum()), "centre": float(np.median(w)), "within": band_of(w),
                                        "band": band_of(errors[rows])}
    return out


def _split(errors: np.ndarray, groups: np.ndarray, pure: np.ndarray | None = None
           ) -> tuple[np.ndarray, dict[str, dict[str, float]]]:
    """The within-group errors [log] and, per kind, the count and RMS of the group offsets."""
    within = errors.copy()
    offsets: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for g in sorted(set(groups.tolist()) - {NO_OFFSET}):
        kind = g.split(":", 1)[0]
        if kind not in KINDS:
            raise InvalidValueError("groups", g, "device:ID, model:NAME or '' (a fold)")
        rows = groups == g
        if pure is not None and kind == "device":
            for part, counted in ((rows & pure, True), (rows & ~pure, False)):
                if part.any():
                    centre = float(np.median(errors[part]))
                    within[part] = errors[part] - centre
                    if counted:
                        offsets[kind].append(centre)
            continue
        offsets[kind].append(float(np.median(errors[rows])))
        within[rows] = errors[rows] - offsets[kind][-1]
    return within, {kind: {"groups": len(v), "sigma_offset": float(np.sqrt(np.mean(np.square(v)))) if v else 0.0}
                    for kind, v in offsets.items()}


def transfer_to_dict(transfer: dict[str, Any]) -> dict[str, Any]:
    """JSON form of :func:`transfer_of`'s result (levels as text keys)."""
    out = {**transfer, "within": {f"{k:g}": list(v) for k, v in transfer["within"].items()}}
    if transfer.get("regimes"):
        out["regimes"] = {name: {"rows": r["rows"], "centre": r["centre"],
                                 "within": {f"{k:g}": list(v) for k, v in r["within"].items()},
                                 "band": {f"{k:g}": list(v) for k, v in r["band"].items()}}
                          for name, r in transfer["regimes"].items()}
    if transfer.get("batch"):
        out["batch"] = {"fitted_max": transfer["batch"]["fitted_max"],
                        "slope": {f"{k:g}": v for k, v in transfer["batch"]["slope"].items()}}
    return out


def _levels(data: Any, what: str) -> dict[float, tuple[float, float]]:
    """Level -> (low, high) of a JSON band, checked."""
    out = {float(k): (float(v[0]), float(v[1])) for k, v in data.items()}
    if set(out) != set(BAND_LEVELS) or not all(lo <= hi and math.isfinite(lo) and math.isfinite(hi)
                                               for lo, hi in out.values()):
        raise ValueError(f"{what} needs levels {BAND_LEVELS} with finite low <= high")
    return out


def transfer_from_dict(data: Any) -> dict[str, Any] | None:
    """The ``transfer`` entry of a profile file, checked (None: a profile written before it existed)."""
    if data is None:
        return None
    within = _levels(data["within"], "transfer.within")
    prior = data.get("sigma_prior")
    if prior is not None and not 0 <= float(prior) < math.inf:
        raise ValueError("transfer.sigma_prior must be a finite number >= 0")
    out: dict[str, Any] = {"within": within, "centre": float(data["centre"]),
                           "models": [str(m) for m in data.get("models", [])],
                           "sigma_prior": None if prior is None else float(prior)}
    for kind in KINDS:
        groups, sigma = int(data[kind]["groups"]), float(data[kind]["sigma_offset"])
        if groups < 0 or not 0 <= sigma < math.inf:
            raise ValueError(f"transfer.{kind} needs groups >= 0 and a finite sigma_offset >= 0")
        out[kind] = {"groups": groups, "sigma_offset": sigma}
    out["regimes"] = {str(name): {"rows": int(r["rows"]), "centre": float(r["centre"]),
                                  "within": _levels(r["within"], f"transfer.regimes.{name}.within"),
                                  "band": _levels(r["band"], f"transfer.regimes.{name}.band")}
                      for name, r in (data.get("regimes") or {}).items()}
    batch = data.get("batch")
    if batch:
        slope = {float(k): float(v) for k, v in batch["slope"].items()}
        fitted_max = float(batch["fitted_max"])
        if set(slope) != set(BAND_LEVELS) or not all(0 <= v < math.inf for v in slope.values()) or not fitted_max >= 1:
            raise ValueError(f"transfer.batch needs fitted_max >= 1 and a finite slope >= 0 at levels {BAND_LEVELS}")
        out["batch"] = {"fitted_max": fitted_max, "slope": slope}
    return out


def offset_term(offsets: dict[str, Any], sigma_prior: float | None, level: float) -> float:
    """The half-width h [log] of a new offset of one kind at the two-sided ``level`` (module
    docstring) from its ``offsets`` (``groups`` G, RMS ``sigma_offset``) and the prior σ₀; 0 with
    no spread to go on (fewer than two offsets and no prior).

    >>> round(offset_term({"groups": 3, "sigma_offset": 0.13}, 0.174, 0.9), 3)
    0.367
    >>> round(offset_term({"groups": 3, "sigma_offset": 0.13}, None, 0.9), 3)   # t_2 x 0.13 x sqrt(4/3)
    0.438
    >>> round(offset_term({"groups": 0, "sigma_offset": 0.0}, 0.174, 0.9), 3)   # t_2 x 0.174: prior alone
    0.508
    """
    groups = int(offsets["groups"])
    weight = PRIOR_GROUPS if sigma_prior is not None else 0
    if groups + weight < 2:
        return 0.0
    variance = (weight * (sigma_prior or 0.0) ** 2 + groups * offsets["sigma_offset"] ** 2) / (weight + groups)
    mean_part = math.sqrt(1 + 1 / groups) if groups else 1.0
    return _t_quantile((1 + level) / 2, weight + max(groups - 1, 0)) * math.sqrt(variance) * mean_part


@lru_cache(maxsize=256)
def _t_quantile(probability: float, dof: int) -> float:
    """Student's t quantile, cached (a band asks for a few (level, dof) pairs, many times)."""
    return student_t_quantile(probability, dof)


def transfer_band(transfer: dict[str, Any], level: float, device_seen: Any, model_seen: Any,
                  regime: Any = None) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of log(measured / predicted) at ``level`` for queries whose device and model
    the profile has or has not seen (booleans, broadcast; module docstring).

    A profile fitted on three models of one device (model offsets RMS 0.13, prior 0.174), asked
    about a new model on a new device: the within band widened by both offset terms in
    quadrature; on its own device and model, the within band:

    >>> t = {"within": {0.9: (-0.24, 0.21)}, "centre": 0.0, "sigma_prior": 0.174, "models": ["a"],
    ...      "device": {"groups": 0, "sigma_offset": 0.0}, "model": {"groups": 3, "sigma_offset": 0.13}}
    >>> tuple(round(float(x), 2) for x in transfer_band(t, 0.9, False, False))
    (-0.67, 0.66)
    >>> tuple(round(float(x), 2) for x in transfer_band(t, 0.9, True, True))
    (-0.24, 0.21)
    """
    if level not in transfer["within"]:
        raise InvalidValueError("level", level, "one of " + ", ".join(f"{v:g}" for v in BAND_LEVELS))
    device = np.asarray(offset_term(transfer["device"], transfer["sigma_prior"], level))
    model = np.asarray(offset_term(transfer["model"], transfer["sigma_prior"], level))
    extra = (np.where(np.asarray(device_seen, dtype=bool), 0.0, device**2)
             + np.where(np.asarray(model_seen, dtype=bool), 0.0, model**2))
    c, (lo, hi) = _regime_pick(transfer, regime, level, "within")
    low: np.ndarray = c - np.sqrt((c - lo) ** 2 + extra)
    high: np.ndarray = c + np.sqrt((hi - c) ** 2 + extra)
    return low, high


def _regime_pick(transfer: dict[str, Any], regime: Any, level: float, key: str
                 ) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """(centre, (low, high)) of ``transfer``'s ``key`` band (``"within"`` or ``"band"``, the
    latter only of regimes) per queried regime label (the pooled within band where the profile
    holds no such regime)."""
    regimes = transfer.get("regimes") or {}
    c = np.asarray(transfer["centre"], dtype=float)
    lo, hi = (np.asarray(x, dtype=float) for x in transfer["within"][level])
    if regime is None or not regimes:
        return c, (lo, hi)
    labels = np.asarray(regime).astype(str)
    for name, r in regimes.items():
        here = labels == name
        c = np.where(here, r["centre"] if key == "within" else c, c)
        lo = np.where(here, r[key][level][0], lo)
        hi = np.where(here, r[key][level][1], hi)
    return c, (lo, hi)


def band_basis(transfer: dict[str, Any], device_seen: bool, model_seen: bool) -> str:
    """The label of what :func:`query_band` rests on for one query.

    >>> t = {"sigma_prior": 0.17, "device": {"groups": 0}, "model": {"groups": 3}}
    >>> band_basis(t, False, True)
    "widened for a device not fitted: a new device's offset (0 held-out device offsets, llama.cpp-cuda's device spread 0.17 as prior)"
    """
    if device_seen and model_seen:
        return "as pooled (device and model among those fitted)"
    prior = transfer.get("sigma_prior")
    parts, unseen = [], []
    for kind, seen in (("device", device_seen), ("model", model_seen)):
        if seen:
            continue
        unseen.append(kind)
        groups = int(transfer[kind]["groups"])
        if groups < 2 and prior is None:
            parts.append(f"no measure of a new {kind}'s offset ({groups} held-out {kind} offsets, no prior)")
        else:
            parts.append(f"a new {kind}'s offset ({groups} held-out {kind} offsets"
                         + (f", {DEVICE_PRIOR_ENGINE}'s device spread {prior:.2g} as prior" if prior is not None else "")
                         + ")")
    return f"widened for a {' and '.join(unseen)} not fitted: " + " + ".join(parts)


def held_out_seen(device_ids: Any, models: list[str] | None, by_model: bool) -> tuple[np.ndarray, np.ndarray]:
    """(device seen, model seen) of each pooled held-out row of a profile fit: its device rows
    (leave-one-device-out on several devices: the device unseen, the model seen when another device
    ran it; folds of one device: both seen), then with ``by_model`` its model rows (the model
    unseen, the device seen)."""
    ids = np.asarray(device_ids).astype(str)
    several = len(set(ids.tolist())) >= 2
    seen_d = np.full(len(ids), not several)
    if models is None or not several:
        seen_m = np.ones(len(ids), dtype=bool)
    else:
        names = np.asarray(models).astype(str)
        seen_m = np.array([bool(np.any((names == m) & (ids != d))) for d, m in zip(ids, names)], dtype=bool)
    if by_model:
        seen_d = np.concatenate([seen_d, np.ones(len(ids), dtype=bool)])
        seen_m = np.concatenate([seen_m, np.zeros(len(ids), dtype=bool)])
    return seen_d, seen_m


def with_model_hold_outs(held: np.ndarray, groups: np.ndarray, method: str, models: list[str] | None,
                         fit_predict: Callable[[np.ndarray, np.ndarray], np.ndarray], y: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, str]:
    """(pooled errors, model hold-out errors or None, their group labels, the band method) of a
    profile fit: with two or more ``models``, each model's rows predicted from a fit on the
    others join the device (or fold) hold-outs ``held`` [log], labelled ``"model:NAME"``."""
    if models is None or len(set(models)) < 2:
        return held, None, groups, method
    by_model = held_out(np.asarray(models), fit_predict, y)
    return (np.concatenate([held, by_model]), by_model,
            np.concatenate([groups, np.char.add("model:", np.asarray(models).astype(str))]),
            method + " and leave-one-model-out, pooled")


def hold_out_coverage(band: dict[float, tuple[float, float]], transfer: dict[str, Any], held: np.ndarray,
                      by_model: np.ndarray | None, seen: tuple[np.ndarray, np.ndarray], regime: Any
                      ) -> dict[str, float]:
    """The 90 % coverage of the device (``held_out_coverage_90``) and, where there are any, the
    model hold-outs (``held_out_model_coverage_90``) by their :func:`query_band`; ``seen`` is
    :func:`held_out_seen` of the pooled rows (device rows first)."""
    n = len(held)
    out = {"held_out_coverage_90": transfer_coverage(band, transfer, held, seen[0][:n], seen[1][:n], regime=regime)}
    if by_model is not None:
        out["held_out_model_coverage_90"] = transfer_coverage(band, transfer, by_model, seen[0][n:], seen[1][n:],
                                                              regime=regime)
    return out


def transfer_coverage(band: dict[float, tuple[float, float]], transfer: dict[str, Any], errors: np.ndarray,
                      device_seen: np.ndarray, model_seen: np.ndarray, level: float = 0.9,
                      regime: Any = None) -> float:
    """The share of held-out ``errors`` [log] inside their :func:`query_band` at ``level``."""
    low, high = query_band(band, transfer, level, device_seen, model_seen, regime)
    return float(np.mean((errors >= low) & (errors <= high)))


def query_band(band: dict[float, tuple[float, float]], transfer: dict[str, Any] | None, level: float,
               device_seen: Any, model_seen: Any, regime: Any = None, batch: Any = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) [log] of a profile's band at ``level`` for the queried points: its pooled
    ``band`` where the profile has seen the device and the model, else that band widened to
    :func:`transfer_band` where it reaches further; the pooled band alone in profiles written
    before ``transfer``.

    A one-device profile: on its device, the pooled band; on another, widened by t_2 x 0.174:

    >>> t = {"within": {0.9: (-0.2, 0.2)}, "centre": 0.0, "sigma_prior": 0.174, "models": ["a"],
    ...      "device": {"groups": 0, "sigma_offset": 0.0}, "model": {"groups": 3, "sigma_offset": 0.13}}
    >>> low, high = query_band({0.9: (-0.3, 0.25)}, t, 0.9, np.array((True, False)), True)
    >>> " ".join(f"{x:.2f}" for x in (*low, *high))
    '-0.30 -0.55 0.25 0.55'
    """
    shape = np.broadcast(np.asarray(device_seen), np.asarray(model_seen), np.asarray(regime),
                         np.asarray(0.0 if batch is None else batch)).shape
    if transfer is None:
        return np.full(shape, band[level][0]), np.full(shape, band[level][1])
    _, (lo, hi) = _regime_pick({**transfer, "within": band}, regime, level, "band")  # the pooled band, or the regime's
    low, high = transfer_band(transfer, level, device_seen, model_seen, regime)
    both = np.asarray(device_seen, dtype=bool) & np.asarray(model_seen, dtype=bool)
    low, high = np.where(both, lo, np.minimum(low, lo)), np.where(both, hi, np.maximum(high, hi))
    extra = batch_half_width(transfer, level, batch)
    if np.any(extra > 0):
        c, _ = _regime_pick(transfer, regime, level, "within")
        low = c - np.sqrt(np.maximum(c - low, 0.0) ** 2 + extra**2)
        high = c + np.sqrt(np.maximum(high - c, 0.0) ** 2 + extra**2)
    return np.broadcast_to(low, shape).copy(), np.broadcast_to(high, shape).copy()


def model_seen(transfer: dict[str, Any] | None, names: Any) -> np.ndarray:
    """Whether each model name is among those the profile was fitted on (True where the profile
    records none: its band has no model term)."""
    names = np.asarray(names).astype(str)
    if transfer is None or not transfer["models"]:
        return np.ones(names.shape, dtype=bool)
    return np.isin(names, transfer["models"])
