"""Type aliases of the public signatures (``mypy --strict`` over the package, issue 19).

An argument typed :data:`Broadcastable` follows numpy broadcasting against the other
broadcastable arguments of the same call (a number, a nested sequence or an array).  The formulas
of :mod:`roofline_decode.formulas` type theirs :data:`Operand` (numbers and numpy arrays, not
Python lists) and also take sympy symbols and expressions there, which mypy sees as ``Any``
because sympy ships no type information.
"""

from __future__ import annotations

from typing import Any, TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: a number, sequence or array that broadcasts against the call's other broadcastable arguments
Broadcastable: TypeAlias = ArrayLike
#: a float64 array (what the estimators return for grids)
FloatArray: TypeAlias = NDArray[np.float64]
#: an argument of a formula (:mod:`roofline_decode.formulas`): a number, a numpy scalar or array,
#: or a sympy expression (``Any`` to mypy), broadcast against the formula's other arguments with
#: numpy rules.  Narrower than :data:`Broadcastable`: a formula applies ``+ - * / **`` to its
#: arguments as given, so a (nested) Python list is not one (``numpy.asarray`` it first)
Operand: TypeAlias = float | np.number[Any] | NDArray[Any]
#: a sympy expression or symbol (sympy ships no type information: ``Any`` to mypy; the name
#: documents the intent)
SympyExpr: TypeAlias = Any
#: what a formula returns: a float64 array or numpy scalar for numbers, a sympy expression for
#: symbols (sympy is untyped, so the union is ``Any`` to mypy; the name documents the intent)
ArrayOrExpr: TypeAlias = Any

__all__ = ["ArrayOrExpr", "Broadcastable", "FloatArray", "Operand", "SympyExpr"]
