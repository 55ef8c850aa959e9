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

A **prior** (maximum a posteriori fit) adds one pseudo-row per parameter θ_j with a stated
physical value m_j and scale s_j: the fit minimises Σ_i w_i r_i² + λ Σ_j ((θ_j − m_j) / s_j)², with
r_i the relative (log) residual of row i and λ = σ² N / G (:func:`prior_strength`): σ the log
error a row keeps once its model's structure is known (:data:`ROW_SIGMA`), N rows in G groups (one
model on one device): the rows of one group share its structural error, so they weigh as G
observations, not N.  A parameter then moves from its physical value only as far as several models
ask, and cannot absorb one model's structure (e.g. a 1.3 ms per-step cost fitted to one model's
slow rows, paid by every other model).  Bounds stay θ >= 0.

Reference: P. J. Huber, "Robust estimation of a location parameter", Ann. Math. Statist. 35
(1964) 73-101; P. W. Holland and R. E. Welsch, "Robust regression using iteratively reweighted
least-squares", Commun. Statist. A6 (1977) 813-827; the prior as pseudo-observations (ridge
regression toward m): A. E. Hoerl and R. W. Kennard, Technometrics 12 (1970) 55-67; A. Gelman
et al., *Bayesian Data Analysis* (3rd ed., 2013), §14.8.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import InvalidValueError

__all__ = ["BAND_LEVELS", "LOSSES", "HUBER_LOG", "ROW_SIGMA", "Prior", "STEP_PRIOR", "loss_weights", "irls",
           "band_of", "error_statistics", "held_out", "prior_strength", "prior_rows"]

#: Band levels stored with every profile (two-sided, central).
BAND_LEVELS = (0.5, 0.8, 0.9, 0.95)
#: Losses of the profile fits (module docstring).
LOSSES = ("relative", "log")
#: Huber threshold of the ``"log"`` loss on |log(measured / predicted)| [1].
HUBER_LOG = 0.5
_ROUNDS = 12
#: Log error [1] a row keeps about a fit once its model's structure is known: the standard deviation
#: of the production rows of one model, device and layout about their group's median under a fit
#: (0.03-0.55, most 0.1-0.2), rounded up to 0.25 so the prior stays a prior.
ROW_SIGMA = 0.25
#: parameter name -> (physical value m, scale s) of a MAP fit (module docstring)
Prior = dict[str, tuple[float, float]]

#: The physical values (value, scale) the production engines' step models are pulled toward
#: (SI units; the step model of :mod:`.engine_profile`), each stated before any fit:
#:
#: * t_layer 5 ± 5 µs: one decoder layer is 5-10 kernels; under CUDA graphs each costs its launch
#:   gap and tail, 0.5-1 µs on Hopper;
#: * t_step 1 ± 1 ms: a serving engine's per-step host work (scheduling the batch, sampling,
#:   streaming tokens out, a host-device synchronisation), a Python loop of order a millisecond;
#: * q 5 ± 10 µs per sequence: its share of that work (sampler row, block table, detokenizing);
#: * c_ar 10 ± 10 µs: an NVLink all-reduce of one decode activation (kB to MB) is latency-bound,
#:   5-20 µs for NCCL or a one-shot custom all-reduce on 2-8 GPUs (NCCL on two H100 of an HGX node,
#:   CUDA graphs, kB messages: about 6 µs, github.com/NVIDIA/nccl/issues/1259); t_hop the same for a
#:   P2P hand-off;
#: * c_peer 2 ± 2 µs per all-reduce per device beyond the first: the latency term of the α-β model
#:   grows with the ranks (a ring passes 2 (n - 1) messages, a one-shot all-reduce reads n - 1 peers'
#:   buffers), about a microsecond per NVLink message;
#: * u_w, u_kv, u_moe, u_c 0.43 ± 0.5 (η = 0.7): decode kernels stream at 60-90 % of HBM peak and
#:   GEMMs reach 60-80 % of dense peak;
#: * k_pf 1.5 ± 1: prefill riding along a step runs compute-bound at a prefill efficiency of 0.6-0.7;
#: * k_comm 1.3 ± 0.5: collectives of many bytes reach 70-80 % of the link bandwidth;
#: * t_exp 1 ± 1 µs per expert a device runs: a grouped GEMM of few tokens per expert pays about one
#:   tile's pipeline fill per expert, plus the permutation of its tokens.
STEP_PRIOR: Prior = {"t_layer": (5e-6, 5e-6), "t_step": (1e-3, 1e-3), "q": (5e-6, 1e-5), "c_ar": (1e-5, 1e-5),
                     "t_hop": (1e-5, 1e-5), "u_w": (0.43, 0.5), "u_kv": (0.43, 0.5), "u_moe": (0.43, 0.5),
                     "u_c": (0.43, 0.5), "k_pf": (1.5, 1.0), "k_comm": (1.3, 0.5), "t_exp": (1e-6, 1e-6),
                     "c_peer": (2e-6, 2e-6)}


def prior_strength(groups: np.ndarray | list[str], sigma: float = ROW_SIGMA) -> float:
    """λ = σ² N / G of the prior pseudo-rows for ``groups`` (one label per row; N rows, G labels).

    >>> prior_strength(["a", "a", "a", "b"], 0.5)
    0.5
    """
    labels = np.asarray(groups)
    if labels.size == 0:
        raise InvalidValueError("groups", 0, "at least one row")
    return float(sigma**2 * labels.size / len(set(labels.tolist())))


def prior_rows(names: tuple[str, ...] | list[str], prior: Prior, strength: float
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(design rows, targets, weights) of the pseudo-rows pulling the parameters ``names`` (the
    columns of the design, in order) toward ``prior`` with weight λ / s² each; a name the prior
    does not hold gets none.

    >>> a, t, w = prior_rows(("t_step", "c_ar"), {"c_ar": (1e-5, 1e-5)}, 0.5)
    >>> a.tolist(), t.tolist(), [round(x / 1e9, 6) for x in w]
    ([[0.0, 1.0]], [1e-05], [5.0])
    """
    held = [j for j, name in enumerate(names) if name in prior]
    bad = [k for k, (m, s) in prior.items() if not (np.isfinite(m) and m >= 0 and np.isfinite(s) and s > 0)]
    if bad:
        raise InvalidValueError(f"prior[{bad[0]}]", prior[bad[0]], "(value >= 0, scale > 0), finite")
    design = np.zeros((len(held), len(names)))
    design[np.arange(len(held)), held] = 1.0
    targets = np.array([prior[names[j]][0] for j in held], dtype=float)
    weights = np.array([strength / prior[names[j]][1] ** 2 for j in held], dtype=float)
    return design, targets, weights


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
