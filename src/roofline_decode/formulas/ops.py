"""The few non-arithmetic operations formulas need, working on numpy and sympy alike.

Formulas are written with ``+ - * / **`` and these helpers only, so the symbolic layer can call
the *same* functions on sympy symbols (DESIGN.md §2).  sympy is never imported here unless a
symbolic argument is actually passed in.
"""

from __future__ import annotations

import numpy as np

from .._typing import ArrayOrExpr, Operand


#: Types that are never symbolic: checked first, so a call on numbers costs a type look-up.
_NUMERIC = frozenset({float, int, np.ndarray, np.float64, np.int64, np.bool_})


def is_symbolic(*values: object) -> bool:
    """True if any value is a sympy expression (detected without importing sympy)."""
    for value in values:
        if value.__class__ not in _NUMERIC and hasattr(value, "free_symbols"):
            return True
    return False


def maximum(a: Operand, b: Operand) -> ArrayOrExpr:
    """Element-wise maximum: ``numpy.maximum`` or ``sympy.Max``."""
    if is_symbolic(a, b):
        import sympy

        return sympy.Max(a, b)
    return np.maximum(a, b)


def minimum(a: Operand, b: Operand) -> ArrayOrExpr:
    """Element-wise minimum: ``numpy.minimum`` or ``sympy.Min``."""
    if is_symbolic(a, b):
        import sympy

        return sympy.Min(a, b)
    return np.minimum(a, b)


def ratio_or_infinite(numerator: Operand, denominator: Operand) -> ArrayOrExpr:
    """``numerator / denominator`` where ``denominator > 0``, else +infinity.

    Symbolic arguments give a ``sympy.Piecewise``.
    """
    if is_symbolic(numerator, denominator):
        import sympy

        return sympy.Piecewise((numerator / denominator, denominator > 0), (sympy.oo, True))
    numerator = np.asarray(numerator, dtype=float)
    denominator = np.asarray(denominator, dtype=float)
    # divide only where the denominator is positive (no warning to silence), +inf elsewhere
    out = np.full(np.broadcast_shapes(numerator.shape, denominator.shape), np.inf)
    return np.divide(numerator, denominator, out=out, where=denominator > 0)


def floor(x: Operand) -> ArrayOrExpr:
    """Largest integer <= x: ``numpy.floor`` or ``sympy.floor``."""
    if is_symbolic(x):
        import sympy

        return sympy.floor(x)
    return np.floor(x)


def ceiling(x: Operand) -> ArrayOrExpr:
    """Smallest integer >= x: ``numpy.ceil`` or ``sympy.ceiling``."""
    if is_symbolic(x):
        import sympy

        return sympy.ceiling(x)
    return np.ceil(x)


def remainder(a: Operand, b: Operand) -> ArrayOrExpr:
    """Element-wise remainder ``a mod b`` (b > 0): ``numpy.mod`` or ``sympy.Mod``."""
    if is_symbolic(a, b):
        import sympy

        return sympy.Mod(a, b)
    return np.mod(a, b)
