"""The one exception hierarchy of roofline_decode.

Every error the library raises on bad input derives from :class:`RooflineError`, so a caller
(or the CLI) can catch them all in one place.  Each message names the field, the value and what
is allowed.  Subclasses also derive from the matching built-in (``ValueError``, ``LookupError``,
``ImportError``) so generic handlers keep working.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "RooflineError",
    "InvalidValueError",
    "UnknownFormatError",
    "UnknownIdError",
    "SpecFileError",
    "ConfigError",
    "MissingExtraError",
    "close_matches",
    "is_real",
]


def is_real(value: object) -> bool:
    """Whether ``value`` is a real number (int, float, numpy scalar): not a bool, str or complex."""
    import numbers

    return isinstance(value, numbers.Real) and not isinstance(value, bool) and type(value).__name__ != "bool_"


class RooflineError(Exception):
    """Base class of every error raised by roofline_decode on bad input."""


class InvalidValueError(RooflineError, ValueError):
    """A number or option is outside what the library accepts (negative, NaN, unknown choice)."""

    def __init__(self, field: str, value: object, allowed: str):
        self.field, self.value, self.allowed = field, value, allowed
        super().__init__(f"{field}={value!r} is invalid: expected {allowed}")


def close_matches(name: str, candidates: Iterable[str], n: int = 5) -> list[str]:
    """Return up to ``n`` candidates that look like ``name`` (case-insensitive)."""
    candidates = list(candidates)
    lowered = {c.lower(): c for c in candidates}
    hits = difflib.get_close_matches(name.lower(), list(lowered), n=n, cutoff=0.5)
    substring = [c for c in candidates if name.lower() in c.lower() and c not in hits]
    return ([lowered[h] for h in hits] + substring)[:n]


class UnknownIdError(RooflineError, LookupError):
    """An id (model, accelerator, memory tier) is not in the catalog."""

    def __init__(self, kind: str, name: str, known: Iterable[str]):
        known = sorted(known)
        self.kind, self.name, self.known = kind, name, known
        matches = close_matches(name, known)
        hint = (
            f"did you mean {', '.join(matches)}?"
            if matches
            else f"known ids: {', '.join(known[:12])}{' ...' if len(known) > 12 else ''}"
        )
        label = kind if kind.endswith("format") else f"{kind} id"
        super().__init__(f"unknown {label} {name!r}: {hint}")

    def __str__(self) -> str:  # LookupError/KeyError would repr() the message
        message: str = self.args[0]
        return message


class UnknownFormatError(UnknownIdError):
    """A number format name is not known."""

    def __init__(self, name: str, known: Iterable[str], field: str = "format"):
        super().__init__(f"{field} number format", name, known)


class SpecFileError(RooflineError, ValueError):
    """A hardware spec file (TOML) is malformed; the message names the file and the field."""

    def __init__(self, path: str | Path, field: str, problem: str):
        self.path, self.field, self.problem = str(path), field, problem
        super().__init__(f"{path}: {field}: {problem}")


class ConfigError(RooflineError, ValueError):
    """A model configuration (HF config.json or dict) is malformed or unsupported."""

    def __init__(self, source: str | Path, field: str, problem: str):
        self.source, self.field, self.problem = str(source), field, problem
        super().__init__(f"{source}: {field}: {problem}")


class MissingExtraError(RooflineError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, package: str, extra: str, feature: str):
        super().__init__(
            f"{feature} needs the optional dependency {package!r}: "
            f"pip install 'roofline_decode[{extra}]' (or pip install -e '.[{extra}]' in a source checkout)"
        )
