"""Human-readable tables of decode floors for terminals and notebooks (human units)."""

from __future__ import annotations

import html

import numpy as np

from .units import GB, format_number

HEADERS = [
    "batch", "context", "weights GB", "KV read GB", "total GB", "GFLOP", "mem ms", "comp ms",
    "step ms", "tok/s", "FLOP/B", "bound", "B*",
]


def floor_rows(floor) -> list[list[str]]:
    """One row of formatted cells per grid point of a :class:`DecodeFloor`."""
    shape = floor.shape
    columns = [
        floor.batch, floor.context, floor.weight_bytes / GB, floor.kv_read_bytes / GB,
        floor.bytes_total / GB, floor.flops / 1e9, floor.memory_time_s * 1e3, floor.compute_time_s * 1e3,
        floor.step_time_s * 1e3, floor.tokens_per_s, floor.arithmetic_intensity, floor.bound, floor.critical_batch,
    ]
    flat = [np.broadcast_to(c, shape).ravel() for c in columns]
    rows = []
    for i in range(int(np.prod(shape))):
        row = []
        for j, column in enumerate(flat):
            value = column[i]
            if isinstance(value, str | np.str_):
                row.append(str(value))
            elif j < 2:
                row.append(f"{int(value)}" if float(value).is_integer() else f"{value:g}")
            elif j == len(flat) - 1:
                row.append(format_number(float(np.ceil(value)) if np.isfinite(value) else value, 6))
            else:
                row.append(format_number(float(value), 4))
        rows.append(row)
    return rows


def title(floor) -> str:
    return (
        f"{floor.model} on {floor.accelerator}: {floor.weight_format} weights, {floor.kv_format} KV, "
        f"computing in {floor.compute_precision}; ridge point {floor.ridge_point:.4g} FLOP/B"
    )


def render_text(floor) -> str:
    rows = floor_rows(floor)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(HEADERS)]
    lines = [title(floor), "  ".join(h.rjust(w) for h, w in zip(HEADERS, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(row, widths)) for row in rows]
    return "\n".join(lines)


def render_html(floor) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in HEADERS)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in floor_rows(floor)
    )
    return f"<p><b>{html.escape(title(floor))}</b></p><table><tr>{head}</tr>{body}</table>"
