"""Parse JSON and TOML text with one kind of failure for every bad input.

``json`` and ``tomllib`` raise a RecursionError on deeply nested input (``[[[[...]]]]`` 5,000
deep) and a bare ValueError on an integer of more than 4,300 digits; the readers of config,
spec and measurement files catch :class:`ParseProblem` alone and name their file.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

__all__ = ["ParseProblem", "parse_json", "parse_toml"]


class ParseProblem(ValueError):
    """The text is not valid JSON/TOML, or is nested too deeply, or holds a number too long.

    ``where`` is ``"(file)"`` when the bytes are not UTF-8 text, else ``"(json)"``/``"(toml)"``.
    """

    def __init__(self, message: str, where: str):
        super().__init__(message)
        self.where = where


_LEAD = {"JSON": "not valid JSON", "TOML": "malformed TOML"}


def _problem(exc: BaseException, language: str) -> ParseProblem:
    lead, where = _LEAD[language], f"({language.lower()})"
    if isinstance(exc, RecursionError):
        return ParseProblem(f"{lead}: nested too deeply", where)
    if isinstance(exc, json.JSONDecodeError):
        return ParseProblem(f"{lead}: {exc.msg} at line {exc.lineno} column {exc.colno}", where)
    if isinstance(exc, UnicodeDecodeError):
        return ParseProblem(f"not UTF-8 text: {exc.reason} at byte {exc.start}", "(file)")
    message = str(exc)
    if "integer string conversion" in message:
        return ParseProblem(f"{lead}: an integer of more than 4300 digits", where)
    return ParseProblem(f"{lead}: {message}", where)


def parse_json(text: str | bytes) -> Any:
    """``json.loads(text)``; any failure is a :class:`ParseProblem`."""
    try:  # bytes are UTF-8 (json.loads would guess UTF-16 from a byte-order mark)
        return json.loads(text.decode("utf-8") if isinstance(text, bytes) else text)
    except (RecursionError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise _problem(exc, "JSON") from None


def parse_toml(data: bytes) -> dict[str, Any]:
    """``tomllib.loads`` of UTF-8 bytes; any failure is a :class:`ParseProblem`."""
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (RecursionError, ValueError) as exc:  # TOMLDecodeError and UnicodeDecodeError are ValueErrors
        raise _problem(exc, "TOML") from None
