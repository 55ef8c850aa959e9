"""Small statistics helpers (no scipy): Student's t quantile and weighted least squares.

The t distribution's CDF is evaluated through the regularised incomplete beta function
(continued fraction, modified Lentz method; Press et al., *Numerical Recipes*, 3rd ed., §6.4),
and inverted by bisection.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["student_t_quantile", "student_t_cdf", "weighted_least_squares"]


def _beta_continued_fraction(a: float, b: float, x: float) -> float:
    tiny, eps = 1e-300, 1e-15
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for numerator in (m * (b - m) * x / ((a + m2 - 1) * (a + m2)),
                          -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < eps:
            break
    return h


def _regularized_beta(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_continued_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_continued_fraction(b, a, 1.0 - x) / b


def student_t_cdf(t: float, dof: float) -> float:
    """P(X <= t) for Student's t with ``dof`` degrees of freedom.

    >>> round(student_t_cdf(2.228, 10), 4)
    0.975
    """
    tail = 0.5 * _regularized_beta(dof / 2.0, 0.5, dof / (dof + t * t))
    return 1.0 - tail if t >= 0 else tail


def student_t_quantile(probability: float, dof: float) -> float:
    """The ``probability`` quantile of Student's t with ``dof`` (> 0) degrees of freedom.

    >>> round(student_t_quantile(0.95, 1), 4), round(student_t_quantile(0.975, 10), 3)
    (6.3138, 2.228)
    """
    if not 0.0 < probability < 1.0 or not dof > 0:
        raise ValueError(f"probability must be in (0, 1) and dof > 0, got {probability!r}, {dof!r}")
    if probability < 0.5:
        return -student_t_quantile(1.0 - probability, dof)
    low, high = 0.0, 1.0
    while student_t_cdf(high, dof) < probability:
        high *= 2.0
    for _ in range(200):
        mid = 0.5 * (low + high)
        if student_t_cdf(mid, dof) < probability:
            low = mid
        else:
            high = mid
        if high - low <= 1e-12 * max(1.0, high):
            break
    return 0.5 * (low + high)


def weighted_least_squares(design: np.ndarray, target: np.ndarray,
                           weights: np.ndarray) -> tuple[np.ndarray, int, np.ndarray | None]:
    """Solve min Σ w_i (y_i − X_i β)² with column scaling for conditioning.

    Returns ``(beta, rank, unscaled_covariance)`` where ``unscaled_covariance`` is
    (Xᵀ W X)⁻¹ (multiply by the residual variance to get Cov(β)).
    """
    root = np.sqrt(weights)[:, None]
    scale = np.max(np.abs(design), axis=0)
    scale[scale == 0] = 1.0
    scaled = design / scale * root
    solution, _, rank, _ = np.linalg.lstsq(scaled, target * root[:, 0], rcond=None)
    beta = solution / scale
    if rank < design.shape[1]:
        return beta, int(rank), None
    inverse = np.linalg.inv(scaled.T @ scaled)
    return beta, int(rank), inverse / np.outer(scale, scale)
