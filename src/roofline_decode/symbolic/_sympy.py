"""Lazy import of sympy: the symbolic layer is an optional extra (``roofline_decode[symbolic]``)."""

from __future__ import annotations

from types import ModuleType

from ..errors import MissingExtraError

__all__ = ["require_sympy"]


def require_sympy(feature: str = "roofline_decode.symbolic") -> ModuleType:
    """Import and return :mod:`sympy`, or raise :class:`MissingExtraError` naming the extra."""
    try:
        import sympy
    except ImportError:
        raise MissingExtraError("sympy", "symbolic", feature) from None
    module: ModuleType = sympy  # sympy ships no types: Any to mypy, a module all the same
    return module
