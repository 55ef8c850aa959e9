"""Checked reads of one field of an engine benchmark record (:mod:`.engines`).

Engine outputs come from files nobody vouches for: a count may be ``true``, ``-3``, ``1e400``
(JSON reads it as infinity) or the string ``"-inf"``; a type name may be a number.  Each
reader here returns the value only when it is what the field allows, else raises
:class:`BadField` naming the key, the value and what is allowed; the loader turns it into a
:class:`~roofline_decode.measure.rows.MeasurementFileError` naming the file and the row.
Numbers may be JSON numbers or the text of a CSV or markdown cell; booleans are never numbers.
"""

from __future__ import annotations

import math
from typing import Any

from .._json_limits import shown

__all__ = ["BadField", "MAX_TOKENS", "MAX_BATCH", "MAX_DEVICES", "MAX_REQUESTS", "present", "number", "count",
           "text", "count_text"]

#: Most tokens a count of tokens (prompt, generated, cached, or their total over a run) may hold.
MAX_TOKENS = 2**53
#: Most sequences decoded together (a batch, a concurrency) [1].
MAX_BATCH = 2**24
#: Most devices (tensor or pipeline parallel) of one run.
MAX_DEVICES = 2**20
#: Most requests of one serving run.
MAX_REQUESTS = 2**40

#: Longest text of a number read from a cell (a longer one is refused before it is parsed).
_MAX_NUMBER_TEXT = 64


class BadField(ValueError):
    """A field of a record holds a value its reader does not allow."""

    def __init__(self, key: str, value: Any, allowed: str):
        self.key, self.value, self.allowed = key, value, allowed
        super().__init__(f"{key}={shown(value)} is invalid: expected {allowed}")

    @property
    def problem(self) -> str:
        """The message without the key (the loader names the column itself)."""
        return f"{shown(self.value)} is invalid: expected {self.allowed}"


def present(rec: dict[str, Any], key: str) -> bool:
    """Whether ``rec`` states ``key`` (null and the empty cell state nothing)."""
    value = rec.get(key)
    return value is not None and not (isinstance(value, str) and not value.strip())


def _as_float(key: str, value: Any, allowed: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise BadField(key, value, allowed)
    if isinstance(value, str):
        cell = value.strip()
        if len(cell) > _MAX_NUMBER_TEXT:
            raise BadField(key, value, allowed)
        try:
            result = float(cell)
        except ValueError:
            raise BadField(key, value, allowed) from None
    elif isinstance(value, int) and abs(value) > 2**1023:
        raise BadField(key, value, allowed)  # beyond any float
    else:
        result = float(value)
    if not math.isfinite(result):
        raise BadField(key, value, allowed)
    return result


def number(rec: dict[str, Any], key: str, allowed: str, *, minimum: float = 0.0, positive: bool = False,
           default: Any = KeyError) -> Any:
    """``rec[key]`` as a finite float >= ``minimum`` (> 0 with ``positive``); ``default`` when the
    record does not state it (a KeyError when no default is given).  ``allowed`` says what the
    field holds, with its unit, for the message."""
    if not present(rec, key):
        if default is KeyError:
            raise KeyError(key)
        return default
    value = rec[key]
    what = f"{allowed}: a finite number {'> 0' if positive else f'>= {minimum:g}'}"
    result = _as_float(key, value, what)
    if result < minimum or (positive and result <= 0):
        raise BadField(key, value, what)
    return result


def count(rec: dict[str, Any], key: str, allowed: str, *, minimum: int = 0, maximum: int = MAX_TOKENS,
          default: Any = KeyError) -> Any:
    """``rec[key]`` as a whole number in [minimum, maximum] (``default`` as in :func:`number`)."""
    if not present(rec, key):
        if default is KeyError:
            raise KeyError(key)
        return default
    value = rec[key]
    what = f"{allowed}: a whole number from {minimum:,} to {maximum:,}"
    if isinstance(value, int) and not isinstance(value, bool):
        if not minimum <= value <= maximum:
            raise BadField(key, value, what)
        return value
    result = _as_float(key, value, what)
    if not (result.is_integer() and minimum <= result <= maximum):
        raise BadField(key, value, what)
    return int(result)


def count_text(key: str, digits: str, allowed: str, maximum: int = MAX_TOKENS) -> int:
    """A count written as decimal ``digits`` (from a test name such as ``tg128``)."""
    if len(digits) > 16 or int(digits) > maximum:
        raise BadField(key, digits, f"{allowed}: a whole number from 0 to {maximum:,}")
    return int(digits)


def text(rec: dict[str, Any], key: str, allowed: str, default: str = "") -> str:
    """``rec[key]`` as text; ``default`` when absent or null; a non-text value is refused."""
    value = rec.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise BadField(key, value, allowed)
    return value
