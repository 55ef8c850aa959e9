"""Non-negative least squares (numpy only): the Lawson-Hanson active-set method.

Solves ``min ||A x - b||_2`` subject to ``x >= 0`` exactly (finite termination) for the small
problems of the calibration (a handful of columns).  Reference: C. L. Lawson and R. J. Hanson,
*Solving Least Squares Problems* (Prentice-Hall, 1974; SIAM reprint 1995), chapter 23,
algorithm NNLS.
"""

from __future__ import annotations

import numpy as np

__all__ = ["nnls", "weighted_nnls"]


def nnls(matrix: np.ndarray, target: np.ndarray, max_iterations: int | None = None) -> np.ndarray:
    """The x >= 0 that minimises ||matrix @ x - target||.

    >>> a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> [round(v, 6) + 0.0 for v in nnls(a, np.array([2.0, -1.0, 1.0]))]
    [1.5, 0.0]
    """
    a = np.asarray(matrix, dtype=np.float64)
    b = np.asarray(target, dtype=np.float64)
    m, n = a.shape
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    tolerance = 10 * np.finfo(float).eps * np.linalg.norm(a, 1) * max(m, n)
    limit = max_iterations or 3 * n + 30
    gram, moment = a.T @ a, a.T @ b

    def solve(passive_set: np.ndarray) -> np.ndarray:
        # normal equations on the passive set (a handful of scaled columns: well conditioned)
        try:
            return np.linalg.solve(gram[np.ix_(passive_set, passive_set)], moment[passive_set])
        except np.linalg.LinAlgError:
            return np.linalg.lstsq(a[:, passive_set], b, rcond=None)[0]

    gradient = moment - gram @ x
    for _ in range(limit):
        if passive.all() or np.max(np.where(passive, -np.inf, gradient)) <= tolerance:
            break
        passive[int(np.argmax(np.where(passive, -np.inf, gradient)))] = True
        for _ in range(limit):
            if not passive.any():
                break
            z = np.zeros(n)
            z[passive] = solve(passive)
            if np.all(z[passive] > 0):
                x = z
                break
            blocking = passive & (z <= 0)
            step = np.min(x[blocking] / (x[blocking] - z[blocking]))
            x = x + step * (z - x)
            passive &= x > tolerance
            x[~passive] = 0.0
        gradient = moment - gram @ x
    return x


def weighted_nnls(design: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """min Σ w_i (y_i - X_i β)² with β >= 0; columns scaled to unit maximum for conditioning."""
    root = np.sqrt(weights)
    scale: np.ndarray = np.max(np.abs(design), axis=0)
    scale[scale == 0] = 1.0
    solution = nnls(design / scale * root[:, None], target * root)
    unscaled: np.ndarray = solution / scale
    return unscaled
