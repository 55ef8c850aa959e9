"""Units as plain floats, and human formatting at the edges.

Inside the library every quantity is in SI base units: bytes [B], FLOPs, seconds [s],
bytes per second [B/s], FLOPs per second [FLOP/s].  Multiply by these constants to convert *in*
and divide to convert *out*.  Decimal (GB = 1e9) and binary (GiB = 2**30) units stay separate;
bandwidth is always decimal (DESIGN.md §3).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

KB, MB, GB, TB, PB = 1e3, 1e6, 1e9, 1e12, 1e15
KiB, MiB, GiB, TiB = 2.0**10, 2.0**20, 2.0**30, 2.0**40
GFLOP, TFLOP, PFLOP = 1e9, 1e12, 1e15
ms, us, ns = 1e-3, 1e-6, 1e-9

#: Units accepted in spec files, by quantity, with their factor to SI.
BYTE_UNITS = {"B": 1.0, "KB": KB, "MB": MB, "GB": GB, "TB": TB, "KiB": KiB, "MiB": MiB, "GiB": GiB, "TiB": TiB}
BANDWIDTH_UNITS = {
    "B/s": 1.0, "MB/s": MB, "GB/s": GB, "TB/s": TB, "MiB/s": MiB, "GiB/s": GiB, "TiB/s": TiB,
    "Gbit/s": GB / 8, "Tbit/s": TB / 8,
}
FLOPS_UNITS = {
    "FLOP/s": 1.0, "GFLOP/s": GFLOP, "TFLOP/s": TFLOP, "PFLOP/s": PFLOP,
    "OP/s": 1.0, "GOP/s": 1e9, "TOP/s": 1e12, "POP/s": 1e15,
}
POWER_UNITS = {"W": 1.0, "kW": 1e3}
TIME_UNITS = {"s": 1.0, "ms": ms, "us": us, "ns": ns}

__all__ = [
    "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "GFLOP", "TFLOP", "PFLOP",
    "ms", "us", "ns", "BYTE_UNITS", "BANDWIDTH_UNITS", "FLOPS_UNITS", "POWER_UNITS",
    "TIME_UNITS", "format_bytes", "format_seconds", "format_rate", "format_number",
]


def _scaled(value: float, steps: list[tuple[float, str]], digits: int) -> str:
    if not math.isfinite(value):
        return "inf" if value > 0 else str(value)
    for factor, suffix in steps:
        if abs(value) >= factor:
            return f"{value / factor:.{digits}g} {suffix}"
    factor, suffix = steps[-1]
    return f"{value / factor:.{digits}g} {suffix}"


def format_bytes(value: float, digits: int = 4) -> str:
    """Format a byte count in decimal units, e.g. ``format_bytes(16.06e9) == '16.06 GB'``."""
    return _scaled(value, [(TB, "TB"), (GB, "GB"), (MB, "MB"), (KB, "kB"), (1.0, "B")], digits)


def format_seconds(value: float, digits: int = 4) -> str:
    """Format a duration, e.g. ``format_seconds(0.0048) == '4.8 ms'``."""
    return _scaled(value, [(1.0, "s"), (ms, "ms"), (us, "us"), (ns, "ns")], digits)


def format_rate(value: float, unit: str, digits: int = 4) -> str:
    """Format a rate with an SI prefix, e.g. ``format_rate(3.35e12, 'B/s') == '3.35 TB/s'``."""
    steps = [(1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1.0, "")]
    return _scaled(value, [(f, p + unit) for f, p in steps], digits)


def format_number(value: float, digits: int = 4) -> str:
    """Format a plain number compactly (``inf`` stays ``inf``)."""
    if not math.isfinite(value):
        return "inf" if value > 0 else str(value)
    return f"{value:.{digits}g}"


def format_table(headers: Sequence[object], rows: Sequence[Sequence[object]], align: str = "left",
                 indent: str = "") -> str:
    """Columns of text padded to their widest cell, two spaces apart, trailing blanks cut.

    ``align`` is ``"left"`` (labels) or ``"right"`` (numbers); ``indent`` prefixes each line.
    """
    pad = str.ljust if align == "left" else str.rjust
    widths = [max([len(str(h))] + [len(str(row[i])) for row in rows]) for i, h in enumerate(headers)]
    return "\n".join(
        (indent + "  ".join(pad(str(cell), w) for cell, w in zip(line, widths))).rstrip()
        for line in [list(headers), *rows]
    )
