"""Argument checks shared by the floors and the planners: every problem is an InvalidValueError."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

from .errors import InvalidValueError


#: Largest whole number accepted (the largest a float holds exactly; as for batch and context).
MAX_WHOLE = 2**53


def _number(name: str, value: Any, allowed: str) -> float:
    """A real number (no booleans, strings, complex numbers or None) as a float."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, numbers.Real):
        raise InvalidValueError(name, value, allowed)
    try:
        return float(value)
    except (TypeError, ValueError, OverflowError):
        shown = f"<an integer of {len(str(abs(value)))} digits>" if isinstance(value, int) else value
        raise InvalidValueError(name, shown, allowed) from None


def whole_number(name: str, value: Any, low: int = 1) -> int:
    """``value`` as an int, if it is a whole number >= ``low`` and <= 2**53."""
    allowed = f"a whole number from {low} to 2**53"
    number = _number(name, value, allowed)
    if not number.is_integer() or not low <= number <= MAX_WHOLE:
        raise InvalidValueError(name, value, allowed)
    return int(number)


def fraction(name: str, value: Any, closed: bool = True) -> float:
    """``value`` as a float in [0, 1] (``closed``) or [0, 1)."""
    allowed = "a fraction in [0, 1]" if closed else "a fraction in [0, 1)"
    number = _number(name, value, allowed)
    if not (0 <= number <= 1 if closed else 0 <= number < 1):
        raise InvalidValueError(name, value, allowed)
    return number


def non_negative(name: str, value: Any, allowed: str) -> float:
    """``value`` as a finite float >= 0."""
    number = _number(name, value, allowed)
    if not math.isfinite(number) or number < 0:
        raise InvalidValueError(name, value, allowed)
    return number


def positive(name: str, value: Any, allowed: str) -> float:
    """``value`` as a finite float > 0."""
    if non_negative(name, value, allowed) == 0:
        raise InvalidValueError(name, value, allowed)
    return float(value)


#: Largest latency accepted [s] (a LatencyProfile's figures, a collective's fixed cost): kernel
#: launches, collectives and host round trips take microseconds to milliseconds; a second or more
#: is a unit slip (ms or us typed as s) and would turn every floor into "0 tokens/s" (1e300 s
#: overflows the step time to inf).
MAX_LATENCY = 1.0


def collective_latency(value: Any) -> float:
    """``value`` as a fixed cost per collective [s]: finite, from 0 to :data:`MAX_LATENCY`."""
    allowed = f"a finite time from 0 to {MAX_LATENCY:g} s per collective"
    number = non_negative("collective_latency", value, allowed)
    if number > MAX_LATENCY:
        raise InvalidValueError("collective_latency", value, allowed)
    return number


def flag(name: str, value: Any) -> bool:
    """``value`` as a bool, if it is one (Python's or numpy's); a string such as ``"no"`` or
    ``"false"`` is refused, not read as true as ``bool("no")`` would."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise InvalidValueError(name, value, "True or False")


def check_slo_ms(value: Any) -> float | None:
    """A per-token latency target ``slo_ms`` in milliseconds (None: no target)."""
    return None if value is None else positive("slo_ms", value, "a finite time > 0 in milliseconds")


def renamed(new_name: str, new_value: Any, old_name: str, old_value: Any) -> Any:
    """The value of a renamed keyword: ``old_value`` (with a DeprecationWarning) when only it is given."""
    if old_value is None:
        return new_value
    import warnings

    warnings.warn(f"{old_name}= is deprecated; use {new_name}= (same meaning and unit)", DeprecationWarning,
                  stacklevel=3)
    if new_value is not None:
        raise InvalidValueError(old_name, old_value, f"nothing: {new_name}= is given (use only {new_name}=)")
    return old_value
