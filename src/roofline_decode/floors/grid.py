"""The one rule for batch and context (and other grid inputs), applied by every entry point.

:func:`checked_array` turns a user's batch or context into a float array or raises an
:class:`~roofline_decode.errors.InvalidValueError` naming the argument; :func:`broadcast_grid`
broadcasts checked axes with an error that names them (docs/inputs.md).
"""

from __future__ import annotations

import numbers
from typing import TYPE_CHECKING, TypeAlias

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidValueError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ..formats import NumberFormat

__all__ = ["MAX_GRID_VALUE", "DEFAULT_CONTEXT", "checked_array", "broadcast_grid", "WeightsLike", "KvLike"]

#: The context T [tokens] of a decode step when none is given: one default for every estimator
#: (decode, sweep, speculative, parallel, offload, calibrated prediction), the CLI and the plots.
#: A typical chat turn, not a bound over contexts: ``context=0`` (``--context 0``) is the
#: weights-only step, the fastest any context allows.  A prefix already cached before a prefill
#: (``cached``, ``prefill_context``, ``shared_prefix``) is another quantity and defaults to 0.
DEFAULT_CONTEXT = 4096

#: ``weights=`` of every estimator, as :func:`roofline_decode.load_model` takes it: a format name
#: or :class:`~roofline_decode.NumberFormat` for every weight group, a llama.cpp preset
#: (``"Q4_K_M"``), or a dict of formats per weight group; None keeps the model's.
WeightsLike: TypeAlias = "str | NumberFormat | Mapping[str, str | NumberFormat] | None"
#: ``kv=`` of every estimator: the KV-cache format (a name or a NumberFormat); None keeps the model's.
KvLike: TypeAlias = "str | NumberFormat | None"

#: Largest batch or context accepted: 2**53, the largest whole number a float holds exactly.
#: Every product of bounded inputs stays finite, so no result overflows to inf or NaN.
MAX_GRID_VALUE = float(2**53)


def checked_array(name: str, value: object, minimum: float, inclusive: bool) -> np.ndarray:
    """``value`` as a float array under the one rule for batch and context (and other grids).

    The rule, applied by every entry point (``decode_floor``, ``sweep``, planning, plots, CLI):

    * a real number or an array (or nested list) of real numbers: Python or numpy ints and
      floats; fractional values are allowed (a mean batch of continuous batching, a mean
      context over the steps of a request);
    * finite, above ``minimum`` (or equal, if ``inclusive``) and at most
      :data:`MAX_GRID_VALUE` = 2**53, so no result overflows;
    * booleans, complex numbers, strings, ``None`` and empty arrays are refused.

    Returns the array; otherwise raises an InvalidValueError naming ``name`` and the first bad value.
    """
    allowed = (f"real numbers {'>=' if inclusive else '>'} {minimum:g} and <= 2**53 "
               "(no booleans, complex numbers or strings)")
    try:
        array = np.asarray(value)
        if isinstance(value, (list, tuple)) and array.dtype.kind in "iuf":  # [True, 2] would read as [1, 2]
            flags = [isinstance(v, (bool, np.bool_)) for v in np.asarray(value, dtype=object).ravel()]
            if any(flags):
                raise InvalidValueError(name, True, allowed)
    except (TypeError, ValueError, OverflowError) as exc:
        if isinstance(exc, InvalidValueError):
            raise
        raise InvalidValueError(name, value, "a number or an array of numbers of one shape") from None
    if array.dtype.kind == "O":  # Python ints beyond int64, Fractions, mixed objects
        flat = array.ravel()
        if not all(isinstance(v, numbers.Real) and not isinstance(v, (bool, np.bool_)) for v in flat):
            bad = next(v for v in flat if not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_)))
            raise InvalidValueError(name, bad, allowed)
        converted = []
        for v in flat:
            try:
                converted.append(float(v))
            except OverflowError:
                raise InvalidValueError(name, shown_value(v), allowed) from None
        array = np.asarray(converted, dtype=float).reshape(array.shape)
    elif array.dtype.kind not in "iuf":
        first = array.flat[0].item() if array.size else value
        raise InvalidValueError(name, first if array.dtype.kind in "bc" else value, allowed)
    array = array.astype(float)
    if array.size == 0:
        raise InvalidValueError(name, value, allowed + " (got an empty array)")
    with np.errstate(invalid="ignore"):
        low = (array < minimum) if inclusive else (array <= minimum)
        bad = ~np.isfinite(array) | low | (array > MAX_GRID_VALUE)
    if bad.any():  # a scalar is shown as given (context=-5), an array by its first bad element
        shown = shown_value(value) if array.ndim == 0 and isinstance(value, numbers.Real) else array[bad].flat[0].item()
        raise InvalidValueError(name, shown, allowed)
    return array


def shown_value(value: object) -> object:
    """A value for a message: an integer of hundreds of digits by its length."""
    if isinstance(value, int) and abs(value) > 10**30:
        return f"<an integer of {len(str(abs(value)))} digits>"
    return value


def broadcast_grid(**arrays: ArrayLike) -> tuple[np.ndarray, ...]:
    """The arrays broadcast against each other; an InvalidValueError naming them and their
    shapes when they do not broadcast (``batch=[1, 2], context=[1, 2, 3]``)."""
    try:
        return tuple(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise InvalidValueError(
            " and ".join(arrays), shapes,
            "shapes that broadcast together (equal, or 1 along each differing axis); "
            "use sweep() for the outer product",
        ) from None
