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

A query on a device or a model it has not seen meets a new offset.  With G groups of offsets,
s² = Σ o_g² / G (about 0: the fit's prediction is the centre) and the prior spread σ₀ of
per-device scale factors of the profile with the most devices (llama.cpp-cuda, 15 GPUs) worth
ν₀ = 2 groups (conjugate scaled-inverse-χ² prior on the offset variance), the prediction
interval of one more offset is ± t_ν · s̃ · sqrt(1 + 1/G), s̃² = (ν₀ σ₀² + G s²) / (ν₀ + G),
ν = ν₀ + G − 1 (Student's t: s̃ rests on few numbers; a one-model, one-device profile, G = 0,
gets t_{ν₀} σ₀).  A profile fitted on one device has no device offset to learn from, so where
the queried device is not the fitted one a device-transfer term ± z σ₀ joins it.  The terms add
in quadrature to each side of the within-group band about its median c:

.. math:: lo = c - \\sqrt{(c - w_{lo})^2 + (t_\\nu \\tilde{s} \\sqrt{1 + 1/G})^2 + (z \\sigma_0)^2}

(hi likewise), each term present only where the query needs it.  The band a query gets
(:func:`query_band`) is the profile's pooled band (the quantiles of all held-out errors,
:func:`~.engine_fit.band_of`) where it has seen the device and the model, else the wider of
that and the band above on each side.

Tried on benchmarks/expected_accuracy.py's device splits and left out (90 % band coverage of
the other device's TPOT rows and median band width, TensorRT-LLM / vLLM / SGLang fitted on H100,
before any widening 48 % x1.75 / 59 % x1.95 / 27 % x1.79):

* the spread of the leave-one-model-out parameter vectors' predictions at the queried point
  (jackknife), z times it in quadrature with the pooled band: 50 % / 68 % / - (SGLang's H100 rows
  hold one model: no jackknife); it stays near 0.05 in log where the fit extrapolates to new
  models (TensorRT-LLM's misses there are 0.4) and reaches 0.3-0.8 where the parameters absorb
  model structure (the H200 fits: bands 6-20x wide);
* the device-transfer term alone (z σ₀ in quadrature): 64 % x2.2 / 70 % x2.4 / 41 % x2.3;
* the t-inflated offsets without the prior (ν₀ = 0): 86 % x3.2 / 79 % x2.5 / 41 % x2.3, but the
  H200 fits' bands 17x / 8x / 11x wide (ν₀ = 2, kept: 81 % x2.8 / 82 % x2.7 / 68 % x3.7 and
  9x / 6x / 8x);
* split conformal quantiles of the grouped hold-outs: with G < 9 groups the 90 % level has no
  finite group-level quantile, and row-level conformal quantiles are the pooled band itself.

References: J. Aitchison and I. R. Dunsmore, *Statistical Prediction Analysis* (1975), ch. 5
(normal prediction interval for one new observation from G); A. Gelman et al., *Bayesian Data
Analysis*, 3rd ed. (2013), §3.2-3.3 (scaled-inverse-χ² prior, Student-t predictive); J. Lei et al., "Distribution-free
predictive inference for regression", JASA 113 (2018) 1094-1111 (split conformal).
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from ..errors import InvalidValueError
from ._stats import student_t_quantile
from .engine_fit import BAND_LEVELS

__all__ = ["PRIOR_GROUPS", "NO_OFFSET", "DEVICE_PRIOR_ENGINE", "transfer_of", "transfer_to_dict", "transfer_from_dict",
           "offset_term", "transfer_band", "query_band", "band_basis", "held_out_seen", "model_seen",
           "transfer_coverage"]

#: ν₀: the weight, in groups, of the prior offset spread σ₀ (:data:`DEVICE_PRIOR_ENGINE`'s) beside a
#: profile's own G offsets.
PRIOR_GROUPS = 2
#: Group label of held-out rows without a group offset (interleaved folds of one device).
NO_OFFSET = ""
#: The profile whose spread of per-device scales stands in for a one-device profile's device transfer.
DEVICE_PRIOR_ENGINE = "llama.cpp-cuda"


def transfer_of(errors: np.ndarray, groups: np.ndarray, devices: int, models: list[str] | None,
                sigma_prior: float | None) -> dict[str, Any]:
    """The band pieces of held-out ``errors`` [log] with their ``groups`` labels (:data:`NO_OFFSET`
    for fold rows): within-group quantiles per level, the offsets' RMS and count, the fitted
    model names and, for a one-device profile, ``sigma_device`` [log].

    >>> t = transfer_of(np.array([0.1, 0.3, -0.2, 0.0]), np.array(["a", "a", "b", "b"]), 2, None, None)
    >>> t["groups"], round(t["sigma_offset"], 3), tuple(round(x, 3) for x in t["within"].get(0.5))
    (2, 0.158, (-0.1, 0.1))
    """
    errors = np.asarray(errors, dtype=float)
    groups = np.asarray(groups)
    within = errors.copy()
    offsets = []
    for g in sorted(set(groups.tolist()) - {NO_OFFSET}):
        rows = groups == g
        offsets.append(float(np.median(errors[rows])))
        within[rows] = errors[rows] - offsets[-1]
    return {"within": {level: (float(np.quantile(within, (1 - level) / 2)), float(np.quantile(within, (1 + level) / 2)))
                       for level in BAND_LEVELS},
            "centre": float(np.median(within)), "groups": len(offsets),
            "sigma_offset": float(np.sqrt(np.mean(np.square(offsets)))) if offsets else 0.0,
            "devices": int(devices), "models": sorted(set(models)) if models else [],
            "sigma_prior": None if sigma_prior is None else float(sigma_prior),
            "sigma_device": None if devices >= 2 or sigma_prior is None else float(sigma_prior)}


def transfer_to_dict(transfer: dict[str, Any]) -> dict[str, Any]:
    """JSON form of :func:`transfer_of`'s result (levels as text keys)."""
    return {**transfer, "within": {f"{k:g}": list(v) for k, v in transfer["within"].items()}}


def transfer_from_dict(data: Any) -> dict[str, Any] | None:
    """The ``transfer`` entry of a profile file, checked (None: a profile written before it existed)."""
    if data is None:
        return None
    within = {float(k): (float(v[0]), float(v[1])) for k, v in data["within"].items()}
    if set(within) != set(BAND_LEVELS) or not all(lo <= hi and math.isfinite(lo) and math.isfinite(hi)
                                                  for lo, hi in within.values()):
        raise ValueError(f"transfer.within needs levels {BAND_LEVELS} with finite low <= high")
    sigma, device, prior = float(data["sigma_offset"]), data.get("sigma_device"), data.get("sigma_prior")
    if not (math.isfinite(sigma) and sigma >= 0) or not all(v is None or 0 <= float(v) < math.inf
                                                            for v in (device, prior)):
        raise ValueError("transfer sigmas must be finite numbers >= 0")
    if int(data["groups"]) < 0 or int(data["devices"]) < 1:
        raise ValueError("transfer needs groups >= 0 and devices >= 1")
    return {"within": within, "centre": float(data["centre"]), "groups": int(data["groups"]), "sigma_offset": sigma,
            "devices": int(data["devices"]), "models": [str(m) for m in data.get("models", [])],
            "sigma_prior": None if prior is None else float(prior),
            "sigma_device": None if device is None else float(device)}


def offset_term(transfer: dict[str, Any], level: float) -> float:
    """The half-width [log] of a new group offset at the two-sided ``level`` (module docstring):
    t_{ν₀+G−1} · s̃ · sqrt(1 + 1/G), s̃² = (ν₀ σ₀² + G s²) / (ν₀ + G) (no group: t_{ν₀} σ₀); 0
    with no spread to go on.

    >>> t = {"groups": 3, "sigma_offset": 0.13, "sigma_prior": 0.174}
    >>> round(offset_term(t, 0.9), 3), round(offset_term({**t, "sigma_prior": None}, 0.9), 3)
    (0.367, 0.438)
    """
    groups, prior = int(transfer["groups"]), transfer.get("sigma_prior")
    weight = PRIOR_GROUPS if prior is not None else 0
    if groups + weight < 2:
        return 0.0
    variance = (weight * (prior or 0.0) ** 2 + groups * transfer["sigma_offset"] ** 2) / (weight + groups)
    mean_part = math.sqrt(1 + 1 / groups) if groups else 1.0
    return student_t_quantile((1 + level) / 2, weight + max(groups - 1, 0)) * math.sqrt(variance) * mean_part


def transfer_band(transfer: dict[str, Any], level: float, device_seen: Any, model_seen: Any
                  ) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) of log(measured / predicted) at ``level`` for queries whose device and model
    the profile has or has not seen (booleans, broadcast; module docstring).

    A profile fitted on three models of one device (offsets RMS 0.13, no prior), asked about a new
    model on a new device: the within band widened by t_2 x 0.13 x sqrt(4/3) and z x 0.174 in
    quadrature; on its own device and model, the within band:

    >>> t = {"within": {0.9: (-0.24, 0.21)}, "centre": 0.0, "groups": 3, "sigma_offset": 0.13,
    ...      "devices": 1, "models": ["a"], "sigma_device": 0.174}
    >>> tuple(round(float(x), 2) for x in transfer_band(t, 0.9, False, False))
    (-0.58, 0.56)
    >>> tuple(round(float(x), 2) for x in transfer_band(t, 0.9, True, True))
    (-0.24, 0.21)
    """
    if level not in transfer["within"]:
        raise InvalidValueError("level", level, "one of " + ", ".join(f"{v:g}" for v in BAND_LEVELS))
    seen_d = np.asarray(device_seen, dtype=bool)
    seen_m = np.asarray(model_seen, dtype=bool)
    offset = offset_term(transfer, level)
    z = NormalDist().inv_cdf((1 + level) / 2)
    device = 0.0 if transfer["sigma_device"] is None else z * transfer["sigma_device"]
    extra = np.where(seen_d & seen_m, 0.0, offset**2) + np.where(seen_d, 0.0, device**2)
    c = transfer["centre"]
    lo, hi = transfer["within"][level]
    low: np.ndarray = c - np.sqrt((c - lo) ** 2 + extra)
    high: np.ndarray = c + np.sqrt((hi - c) ** 2 + extra)
    return low, high


def band_basis(transfer: dict[str, Any], device_seen: bool, model_seen: bool) -> str:
    """The label of what :func:`query_band` rests on for one query.

    >>> band_basis({"groups": 3, "sigma_prior": 0.17, "sigma_device": 0.17}, False, False)[:80]
    'widened for a device or model not fitted: a new device/model offset (spread of 3'
    """
    if device_seen and model_seen:
        return "as pooled (device and model among those fitted)"
    groups, prior = int(transfer["groups"]), transfer.get("sigma_prior")
    if groups == 0 and prior is None:
        parts = ["no measure of a new device's or model's offset (one model on one device)"]
    else:
        source = f"spread of {groups} held-out group offsets" + (
            f", with {DEVICE_PRIOR_ENGINE}'s device spread {prior:.2g} as prior" if prior is not None else "")
        parts = [f"a new device/model offset ({source}, t-inflated)"]
    if not device_seen and transfer.get("sigma_device") is not None:
        parts.append(f"a device-transfer term (fitted on one device; {DEVICE_PRIOR_ENGINE}'s spread of per-device "
                     f"scales, {transfer['sigma_device']:.2g} in log)")
    return "widened for a device or model not fitted: " + " + ".join(parts)


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


def transfer_coverage(band: dict[float, tuple[float, float]], transfer: dict[str, Any], errors: np.ndarray,
                      device_seen: np.ndarray, model_seen: np.ndarray, level: float = 0.9) -> float:
    """The share of held-out ``errors`` [log] inside their :func:`query_band` at ``level``."""
    low, high = query_band(band, transfer, level, device_seen, model_seen)
    return float(np.mean((errors >= low) & (errors <= high)))


def query_band(band: dict[float, tuple[float, float]], transfer: dict[str, Any] | None, level: float,
               device_seen: Any, model_seen: Any) -> tuple[np.ndarray, np.ndarray]:
    """(low, high) [log] of a profile's band at ``level`` for the queried points: its pooled
    ``band`` where the profile has seen the device and the model, else that band widened to
    :func:`transfer_band` where it reaches further; the pooled band alone in profiles written
    before ``transfer``.

    >>> t = {"within": {0.9: (-0.2, 0.2)}, "centre": 0.0, "groups": 3, "sigma_offset": 0.13,
    ...      "devices": 1, "models": ["a"], "sigma_device": 0.174}
    >>> low, high = query_band({0.9: (-0.3, 0.25)}, t, 0.9, np.array((True, False)), True)
    >>> " ".join(f"{x:.2f}" for x in (*low, *high))
    '-0.30 -0.56 0.25 0.56'
    """
    shape = np.broadcast(np.asarray(device_seen), np.asarray(model_seen)).shape
    lo, hi = band[level]
    if transfer is None:
        return np.full(shape, lo), np.full(shape, hi)
    low, high = transfer_band(transfer, level, device_seen, model_seen)
    both = np.asarray(device_seen, dtype=bool) & np.asarray(model_seen, dtype=bool)
    return np.where(both, lo, np.minimum(low, lo)), np.where(both, hi, np.maximum(high, hi))


def model_seen(transfer: dict[str, Any] | None, names: Any) -> np.ndarray:
    """Whether each model name is among those the profile was fitted on (True where the profile
    records none: its band has no model term)."""
    names = np.asarray(names).astype(str)
    if transfer is None or not transfer["models"]:
        return np.ones(names.shape, dtype=bool)
    return np.isin(names, transfer["models"])
