"""The fitting pieces the engine profiles share (:mod:`.engine_profile`, :mod:`.engine_ttft`):
the losses, the held-out bands and the error statistics.

Losses of a bounded (non-negative) least-squares fit of a time model ŷ to measured times y:

* ``"relative"``: minimise Σ ((y − ŷ) / y)²;
* ``"log"``: minimise the Huber loss of log(y / ŷ) (threshold :data:`HUBER_LOG`), by iteratively
  reweighted least squares: weights 1 / ŷ² (Gauss-Newton on log ŷ, since (y − ŷ) / ŷ ≈ log(y / ŷ))
  times the Huber weight min(1, h / |log(y / ŷ)|).  Symmetric in over- and under-prediction,
  where the relative loss charges an under-prediction at most 1 and an over-prediction any
  amount, which biases a fit across models of very different speeds low; the Huber tail keeps
  a few rows whose stated layout is not the one that ran from steering the fit.

Reference: P. J. Huber, "Robust estimation of a location parameter", Ann. Math. Statist. 35
(1964) 73-101; P. W. Holland and R. E. Welsch, "Robust regression using iteratively reweighted
least-squares", Commun. Statist. A6 (1977) 813-827.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InvalidValueError

__all__ = ["BAND_LEVELS", "LOSSES", "HUBER_LOG", "loss_weights", "irls", "band_of", "error_statistics", "held_out"]

#: Band levels stored with every profile (two-sided, central).
BAND_LEVELS = (0.5, 0.8, 0.9, 0.95)
#: Losses of the profile fits (module docstring).
LOSSES = ("relative", "log")
#: Huber threshold of the ``"log"`` loss on |log(measured / predicted)| [1].
HUBER_LOG = 0.5
_ROUNDS = 12


def loss_weights(y: np.ndarray, predicted: np.ndarray | None, loss: str) -> np.ndarray:
    """Least-squares weights of the rows for ``loss`` at the current prediction (None: first round).

    >>> loss_weights(np.array([2.0]), None, "relative").tolist()
    [0.25]

    A row predicted exactly weighs 1 / ŷ²; one off by a factor e (|log| = 1 > h = 0.5) half that:

    >>> loss_weights(np.array([2.0, 2.0]), np.array([2.0, 2.0 * np.exp(-1.0)]), "log").round(3).tolist()
    [0.25, 0.924]
    """
    if loss not in LOSSES:
        raise InvalidValueError("loss", loss, " or ".join(LOSSES))
    if predicted is None or loss == "relative":
        out: np.ndarray = 1.0 / y**2
        return out
    r = np.abs(np.log(y / predicted))
    weights: np.ndarray = np.minimum(1.0, HUBER_LOG / np.maximum(r, 1e-12)) / predicted**2
    return weights


def irls(fit: Callable[[np.ndarray], np.ndarray], predict: Callable[[np.ndarray], np.ndarray], y: np.ndarray,
         loss: str) -> np.ndarray:
    """Parameters of ``fit(weights)`` reweighted for ``loss`` until they settle (at most 12 rounds);
    ``predict(parameters)`` gives ŷ."""
    p = fit(loss_weights(y, None, loss))
    if loss == "relative":
        return p
    for _ in range(_ROUNDS):
        new = fit(loss_weights(y, predict(p), loss))
        done = np.allclose(new, p, rtol=1e-9, atol=1e-15)
        p = new
        if done:
            break
    return p


def held_out(groups: np.ndarray, fit_predict: Callable[[np.ndarray, np.ndarray], np.ndarray],
             y: np.ndarray) -> np.ndarray:
    """log(y / ŷ) of each row predicted by a fit on the rows of the other groups
    (``fit_predict(train_mask, predict_mask)`` -> ŷ of the predicted rows)."""
    out = np.empty(len(y))
    for g in sorted(set(groups.tolist())):
        rows = groups == g
        out[rows] = np.log(y[rows] / fit_predict(~rows, rows))
    return out


def band_of(log_errors: np.ndarray) -> dict[float, tuple[float, float]]:
    """Level -> (low, high) central quantiles of held-out log errors."""
    return {level: (float(np.quantile(log_errors, (1 - level) / 2)), float(np.quantile(log_errors, (1 + level) / 2)))
            for level in BAND_LEVELS}


def error_statistics(log_errors: np.ndarray, prefix: str, band: dict[float, tuple[float, float]] | None = None
                     ) -> dict[str, float]:
    """``{prefix}median``, ``p90``, ``max`` of |y / ŷ − 1| (log_errors = log(y / ŷ)) and, with a
    ``band``, ``{prefix}coverage_90``: the share of rows inside its 90 % band."""
    rel = np.abs(np.exp(log_errors) - 1.0)
    out = {f"{prefix}median": float(np.median(rel)), f"{prefix}p90": float(np.quantile(rel, 0.9)),
           f"{prefix}max": float(np.max(rel))}
    if band is not None:
        lo, hi = band[0.9]
        out[f"{prefix}coverage_90"] = float(np.mean((log_errors >= lo) & (log_errors <= hi)))
    return out
