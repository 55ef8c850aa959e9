"""Read JSON from files nobody vouches for: bounded size, depth and integer length.

``json.loads`` trusts its input: a file as large as the disk is read whole, ``[[[[...`` 5,000
deep raises a RecursionError, an integer of a million digits takes quadratic time where
``sys.set_int_max_str_digits(0)`` lifts Python's guard, and ``/dev/zero`` never ends.  The
readers of config.json files, engine benchmark outputs and saved calibrations load through
this module instead and turn its one failure, :class:`JSONProblem`, into their own
:class:`~roofline_decode.errors.RooflineError` naming the file.

Limits (each reader may pass its own):

* ``max_bytes``: the file is read up to this many bytes and refused beyond
  (:data:`MAX_FILE_BYTES` by default);
* ``max_depth``: arrays and objects nest at most this deep (:data:`MAX_DEPTH`; the files read
  here nest 2 to 6 levels);
* integers have at most :data:`MAX_INT_DIGITS` digits (Python's own default guard).

Non-finite numbers (``NaN``, ``Infinity``, ``1e400``) parse as floats: some tools write them
in fields nobody reads (SGLang's ``"request_rate": Infinity``); a reader refuses them in the
fields it reads (:func:`first_non_finite` finds the first one of a whole document).

Examples
--------
>>> loads('{"a": [1, 2.5]}')
{'a': [1, 2.5]}
>>> try:
...     loads("[" * 100 + "]" * 100)
... except JSONProblem as exc:
...     print(exc.where, exc.problem)
(json) not valid JSON: nested too deeply (more than 64 levels of arrays and objects)
>>> first_non_finite({"fit": {"beta": [1.0, float("nan")]}})
('fit.beta[1]', nan)
"""

from __future__ import annotations

import json
import math
import reprlib
from os import PathLike
from pathlib import Path
from typing import Any

__all__ = ["JSONProblem", "MAX_DEPTH", "MAX_FILE_BYTES", "MAX_INT_DIGITS", "read_limited", "decode_utf8", "loads",
           "load_file", "first_non_finite", "shown"]

#: Deepest nesting of arrays and objects accepted.
MAX_DEPTH = 64
#: Largest file read by default [B] (256 MiB).
MAX_FILE_BYTES = 256 * 2**20
#: Most digits of an integer literal (Python's default ``sys.get_int_max_str_digits()``).
MAX_INT_DIGITS = 4300


class JSONProblem(ValueError):
    """The file cannot be read, is too large, is not UTF-8, is not valid JSON, nests too deeply
    or holds an integer too long.

    ``where`` is ``"(file)"`` for the first three, ``"(json)"`` for the others; ``problem``
    says what is wrong and what is allowed; ``syntax`` is true for text that is not JSON at all
    (a reader may then try another format), false for a file refused by a limit.
    """

    def __init__(self, where: str, problem: str, syntax: bool = False):
        super().__init__(f"{where}: {problem}")
        self.where, self.problem, self.syntax = where, problem, syntax


def read_limited(path: str | PathLike[str], max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of ``path``, refused when there are more than ``max_bytes`` (read no further:
    a device file such as ``/dev/zero`` ends there too)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise JSONProblem("(file)", f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise JSONProblem("(file)", f"larger than {max_bytes:,} bytes, the most this reader accepts")
    return data


def decode_utf8(data: bytes) -> str:
    """``data`` as UTF-8 text (a byte-order mark is kept, and refused by the JSON parser)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JSONProblem("(file)", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def _integer(text: str) -> int:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        raise JSONProblem("(json)", f"not valid JSON: an integer of more than {MAX_INT_DIGITS} digits ({digits})")
    return int(text)


def _too_deep(value: Any, max_depth: int) -> bool:
    """Whether arrays and objects in ``value`` nest deeper than ``max_depth``."""
    stack = [(value, 1)] if isinstance(value, (list, dict)) else []
    while stack:
        container, depth = stack.pop()
        if depth > max_depth:
            return True
        items = container.values() if isinstance(container, dict) else container
        stack.extend((item, depth + 1) for item in items if isinstance(item, (list, dict)))
    return False


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``json.loads(text)`` within the limits; any failure is a :class:`JSONProblem`."""
    if isinstance(text, bytes):
        text = decode_utf8(text)
    deep = JSONProblem("(json)", f"not valid JSON: nested too deeply (more than {max_depth} levels of arrays "
                                 "and objects)")
    try:
        value = json.loads(text, parse_int=_integer)
    except RecursionError:  # deeper than the interpreter's recursion limit (about 1,000)
        raise deep from None
    except json.JSONDecodeError as exc:
        raise JSONProblem("(json)", f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                          syntax=True) from None
    except ValueError as exc:  # a JSONProblem from _integer, or int()'s own digit limit
        if isinstance(exc, JSONProblem):
            raise
        raise JSONProblem("(json)", f"not valid JSON: {exc}") from None
    if _too_deep(value, max_depth):
        raise deep
    return value


def load_file(path: str | PathLike[str], *, max_bytes: int = MAX_FILE_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document in ``path``, within the limits; any failure is a :class:`JSONProblem`."""
    return loads(read_limited(Path(path), max_bytes), max_depth=max_depth)


def first_non_finite(value: Any, path: str = "") -> tuple[str, float] | None:
    """(JSON path, value) of the first NaN or infinite float in ``value``, or None.

    The path reads ``key.inner[3]`` (objects by key, arrays by index)."""
    if isinstance(value, float):
        return None if math.isfinite(value) else (path or "(root)", value)
    if isinstance(value, dict):
        items: Any = ((f"{path}.{key}" if path else str(key), item) for key, item in value.items())
    elif isinstance(value, list):
        items = ((f"{path}[{i}]", item) for i, item in enumerate(value))
    else:
        return None
    for where, item in items:
        if isinstance(item, (float, list, dict)):
            found = first_non_finite(item, where)
            if found is not None:
                return found
    return None


class _Short(reprlib.Repr):
    """reprlib's short repr; an integer too long to print is described by its size."""

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<an integer of about {int(x.bit_length() * math.log10(2)) + 1} digits>"
        return repr(x)


_SHORT = _Short()
_SHORT.maxstring = _SHORT.maxother = 60
_SHORT.maxlevel = 3


def shown(value: Any) -> str:
    """A short ``repr(value)`` for messages: long strings, containers and integers abbreviated.

    >>> shown([1.5] * 100), shown(2**1000)
    ('[1.5, 1.5, 1.5, 1.5, 1.5, 1.5, ...]', '<an integer of about 302 digits>')
    """
    return _SHORT.repr(value)
