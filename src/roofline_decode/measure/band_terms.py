"""The terms that condition an engine profile's band on what the query is
(:mod:`.engine_band` applies them).

Each was tested on benchmarks/expected_accuracy.py's splits (coverage / median width of the 90 %
band, before -> after):

* **regime** (:func:`step_regime`): a decode step whose riding prompts take longer than its own floor
  (``"prefill-heavy"``) scatters differently from a pure ``"decode"`` step, so each regime of at
  least :data:`~.engine_band.MIN_REGIME_ROWS` held-out rows spanning :data:`~.engine_band.MIN_REGIME_GROUPS` models has its
  own within-group quantiles and pooled band (``transfer["regimes"]``; offsets stay pooled).  TPOT,
  TensorRT-LLM / vLLM / SGLang: fit H100 -> H200 91 % x4.12 -> 92 % x4.01, 94 % x3.40 -> 94 % x3.17,
  87 % x4.32 (unchanged); H200 -> H100 100 % x6.59 -> 100 % x6.50, 96 % x3.61 -> 98 % x3.34,
  97 % x6.81 -> 97 % x5.79; by model 95 % x3.31 -> 95 % x3.55, 93 % x4.17 -> 97 % x4.06,
  91 % x6.72 -> 92 % x5.74.
* **batch extrapolation** (:func:`batch_slopes`): a query beyond the largest fitted batch B_fit
  widens by k · log2(B / B_fit) in quadrature, k from the fit's own rows: those up to the batch
  nearest below the geometric middle of its batches predict the larger ones, and k is the level
  quantile of the excess over the within band per doubling (``transfer["batch"]``).  Fit B <= 8,
  predict B > 8: 76 % x1.88 -> 92 % x2.93, 69 % x2.10 -> 90 % x3.05, 76 % x2.65 -> 89 % x3.43;
  HF eager 100 % x9.69 -> 100 % x10.18.
* **device offsets of seen models only** (:func:`~.engine_band.transfer_of`'s ``pure``): a device's held-out rows
  of a model its fit never saw carry that model's offset too; counted apart, vLLM by model TPOT
  x4.06 -> x3.98, TTFT x13.3 -> x12.6, batch x3.05 -> x3.01, the rest unchanged; TensorRT-LLM's and
  SGLang's devices share no model, so a new device of theirs rests on the prior alone.
* **TTFT regime** (:func:`ttft_regime`): many clients (C > :data:`MANY_CLIENTS`) put a heavy right
  tail on TTFT (requests waiting behind others' prefills and the scheduler, which no floor holds),
  so the TTFT band has a regime of its own there, by the rules above.  90 % band of the TTFT
  splits fit H100 -> H200 / H200 -> H100 / by model, TensorRT-LLM: 86 % x8.64 -> 86 % x7.13,
  100 % x37.0 -> 99 % x35.2, 93 % x12.8 -> 94 % x11.7; vLLM: 91 % x30.1 -> 88 % x3.90, 92 % x6.15
  -> 92 % x5.00, 92 % x15.1 -> 92 % x13.3; SGLang: 83 % x9.31 (unchanged), 98 % x50.4 -> 94 %
  x12.1, 92 % x31.0 -> 90 % x12.1.  The threshold was chosen on these splits from C > 8, 16, 32,
  48, 64, 96, 128: 64-128 narrow all nine (96: x7.1 / x34 / x11.7; x3.9 / x5.5 / x13.6; x9.3 /
  x23 / x23; 128 about as before on TensorRT-LLM), 8-48 widen some (C > 48: SGLang H200 -> H100
  x112).  Those are medians over the rows, most of few clients; the many-clients rows' own band is
  wider (vLLM by model x15.9 -> x4490: gpt-oss-120b at C = 512 waits 100-460 s for a slot) and
  covers them no better (vLLM 35 / 66 / 54 %, SGLang H100 -> H200 66 %, before and after).

Regimes tried and left out (TTFT widths as above, before: x8.6 / x37 / x12.8; x30 / x6.2 /
x15.1; x9.3 / x50 / x31): the other clients' prefill share (C − 1) T_pf / (O T_step) > 0.1, own
within quantiles: x8.3 / x33 / x13.5; x58 / x8.9 / x14.3; x8.5 / x128 / x32; with offsets per regime
too: x6.9 / x18 / x10.6; x59 / x8.7 / x5.7; x8.5 / x179 / x51 (thresholds 0.03-1: up to x1265, one
model's offset of 2.0 in a regime of few models); C > 16 with offsets per regime: x13 / x23 / x14;
x5.2 / x8.3 / x7.6; x6.4 (78 %) / x125 / x26.  Queued rows (queue floor > 0): 3 / 4 / 0, too few.
TPOT by MoE vs dense (own within quantiles; H100 -> H200 / H200 -> H100 / by model): x4.35 / x4.83 /
x2.65; x8.32 / x3.93 / x4.07; x4.32 / x5.83 / x5.83; with three models required, no change.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .engine_fit import BAND_LEVELS

__all__ = ["MANY_CLIENTS", "step_regime", "ttft_regime", "band_regime", "batch_slopes", "batch_term",
           "batch_half_width", "batch_basis"]

#: Client concurrency above which a TTFT query is in the ``"many-clients"`` regime (:func:`ttft_regime`).
MANY_CLIENTS = 64


def step_regime(prefill_s: Any, floor_s: Any) -> np.ndarray:
    """The regime of each decode step from its floor terms (known at query time):
    ``"prefill-heavy"`` where the prompts riding along the step take longer than the step's own
    floor (T_pf > T_floor [s]), else ``"decode"``.

    >>> step_regime([0.0, 0.004, 0.02], 0.01).tolist()
    ['decode', 'decode', 'prefill-heavy']
    """
    out: np.ndarray = np.where(np.asarray(prefill_s, dtype=float) > np.asarray(floor_s, dtype=float),
                               "prefill-heavy", "decode")
    return out


def ttft_regime(clients: Any) -> np.ndarray:
    """The TTFT regime of each query from its client concurrency C (known at query time):
    ``"many-clients"`` where C > :data:`MANY_CLIENTS`, else ``"few-clients"``.

    >>> ttft_regime([1, 64, 65]).tolist()
    ['few-clients', 'few-clients', 'many-clients']
    """
    out: np.ndarray = np.where(np.asarray(clients, dtype=float) > MANY_CLIENTS, "many-clients", "few-clients")
    return out


def batch_basis(transfer: dict[str, Any] | None, batch: Any) -> str:
    """The label's words for the batch-extrapolation term ('' where no queried batch lies beyond
    the fitted ones).

    >>> batch_basis({"batch": {"fitted_max": 64.0, "slope": {0.9: 0.2}}}, [32, 256])
    ', widened for a batch beyond the fitted ones (up to 64; 0.2 in log per doubling at the 90 % level)'
    """
    info = (transfer or {}).get("batch")
    if not info or batch is None or not np.any(np.asarray(batch, dtype=float) > info["fitted_max"]):
        return ""
    return (f", widened for a batch beyond the fitted ones (up to {info['fitted_max']:g}; "
            f"{info['slope'][0.9]:.2g} in log per doubling at the 90 % level)")


def batch_term(batch: np.ndarray, y: np.ndarray, fit_predict: Callable[[np.ndarray, np.ndarray], np.ndarray],
               transfer: dict[str, Any]) -> dict[str, Any] | None:
    """The band's batch-extrapolation term of a fit on rows at ``batch`` measuring ``y``
    (``fit_predict(train, out)``: the prediction of the ``out`` rows by a fit on the ``train``
    rows): the rows up to the batch B_cut nearest below the geometric middle of the fitted batches
    predict the larger ones, and their errors per doubling beyond B_cut give the slope
    (:func:`batch_slopes`); None with fewer than three distinct batches (nothing to extrapolate from)."""
    unique = np.unique(batch)
    if len(unique) < 3:
        return None
    cut = float(unique[unique <= math.sqrt(unique[0] * unique[-1])][-1])
    train = batch <= cut
    if train.sum() < 3:
        return None
    errors = np.log(y[~train] / fit_predict(train, ~train))
    return {"fitted_max": float(unique[-1]), "slope": batch_slopes(errors, np.log2(batch[~train] / cut), transfer)}


def batch_half_width(transfer: dict[str, Any] | None, level: float, batch: Any) -> np.ndarray:
    """The batch-extrapolation half-width [log] k · max(0, log2(B / B_fit)) of queries at ``batch``
    B beyond the largest fitted batch B_fit (0 in profiles without the term)."""
    info = (transfer or {}).get("batch")
    if not info or batch is None:
        return np.zeros(np.shape(batch))
    d = np.maximum(np.log2(np.asarray(batch, dtype=float) / info["fitted_max"]), 0.0)
    out: np.ndarray = info["slope"][level] * d
    return out


def band_regime(transfer: dict[str, Any] | None, regime: Any) -> str:
    """The words of the label for the regime a query's band used.

    >>> band_regime({"regimes": {"light": {"rows": 120}}}, "light")
    "regime 'light' (its 120 held-out rows' own quantiles)"
    >>> band_regime({"regimes": {}}, "loaded")
    "regime 'loaded' (pooled quantiles: the profile holds no band of its own for it)"
    """
    regimes = (transfer or {}).get("regimes") or {}
    names = list(dict.fromkeys(str(x) for x in np.asarray(regime).ravel()))
    return " and ".join(f"regime '{name}' (its {regimes[name]['rows']} held-out rows' own quantiles)" if name in regimes
                        else f"regime '{name}' (pooled quantiles: the profile holds no band of its own for it)"
                        for name in names)


def batch_slopes(errors: np.ndarray, distance: np.ndarray, transfer: dict[str, Any]) -> dict[float, float]:
    """Level -> slope k [log per doubling] of the batch-extrapolation term from the ``errors``
    [log] of rows predicted by a fit on smaller batches, ``distance`` [doublings] log2 of each
    row's batch over the largest fitted one: the ``level`` quantile of
    k_i = sqrt(max(0, (e_i − c)² − w_i²)) / d_i, w_i the within band's side e_i lies on, so that
    widening the within band by k·d in quadrature covers that share of those rows (each level's
    k at least the narrower levels', so the bands stay nested).

    >>> t = {"centre": 0.0, "within": {lv: (-0.1, 0.1) for lv in BAND_LEVELS}}
    >>> k = batch_slopes(np.array([0.5, -0.3, 0.05, 0.2]), np.array([1.0, 2.0, 1.0, 3.0]), t)
    >>> round(k[0.5], 3), round(k[0.9], 3)
    (0.1, 0.385)
    """
    e = np.asarray(errors, dtype=float)
    d = np.asarray(distance, dtype=float)
    out = {}
    c = transfer["centre"]
    for level in BAND_LEVELS:
        lo, hi = transfer["within"][level]
        side = np.where(e >= c, hi - c, c - lo)
        ratio = np.sqrt(np.maximum((e - c) ** 2 - side**2, 0.0)) / np.maximum(d, 1e-12)
        out[level] = float(np.quantile(ratio[d > 0], level)) if np.any(d > 0) else 0.0
    for lower, level in zip(BAND_LEVELS, BAND_LEVELS[1:]):  # a wider level never widens less (nested bands)
        out[level] = max(out[level], out[lower])
    return out
