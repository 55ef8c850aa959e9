"""The page's number cells: a value in SI units (``data-value``) beside its display in human units."""

from __future__ import annotations

import html
import math
from typing import Any

__all__ = ["display", "cell"]


def display(value: float) -> str:
    """A number as the page shows it: 4 significant digits, plain between 1e-3 and 1e6, else
    ``1.234e7``; ``n/a`` for NaN, ``inf``.  (``page.js`` applies the same rule.)"""
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if value == 0:
        return "0"
    if 1e-3 <= abs(value) < 1e6:
        text = repr(float(f"{value:.4g}"))
        return text[:-2] if text.endswith(".0") else text
    mantissa, exponent = f"{value:.3e}".split("e")
    return f"{mantissa}e{int(exponent)}"


def cell(value: Any, scale: float | None, **attributes: str) -> str:
    """A ``<td>``: ``value`` in SI units as ``data-value`` (``repr``: reads back to the same
    float) and shown times ``scale`` (:func:`display`); text or yes/no where ``scale`` is None.
    ``attributes`` become ``data-*`` attributes (``_`` as ``-``)."""
    attrs = "".join(f' data-{k.replace("_", "-")}="{html.escape(v)}"' for k, v in attributes.items())
    if scale is None:
        text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
        raw = str(value).lower() if isinstance(value, bool) else str(value)
        return f'<td class="{html.escape(text)}"{attrs} data-value="{html.escape(raw)}">{html.escape(text)}</td>'
    return f'<td{attrs} data-value="{value!r}">{html.escape(display(value * scale))}</td>'
