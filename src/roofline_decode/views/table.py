"""Human-readable tables of decode floors for terminals and notebooks (human units)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np

from ..units import GB, format_number, format_table

if TYPE_CHECKING:
    from ..floors.results import DecodeFloor

#: Table cell of a quantity that is not defined (NaN): the ridge point and critical batch of a
#: device with no compute peak published.  ``inf`` in the B* column: memory-bound at any batch.
NOT_DEFINED = "n/a"

HEADERS = [
    "batch", "context", "weights GB", "KV read GB", "total GB", "GFLOP", "mem ms", "comp ms",
    "step ms", "tok/s", "FLOP/B", "bound", "B*", "fits",
]


def headers(floor: DecodeFloor) -> list[str]:
    """Column headers of :func:`floor_rows`: a ``chain ms`` column after ``comp ms`` only when
    the floor was computed with a latency profile."""
    if floor.latency_profile is None:
        return list(HEADERS)
    at = HEADERS.index("comp ms") + 1
    return [*HEADERS[:at], "chain ms", *HEADERS[at:]]


def floor_rows(floor: DecodeFloor) -> list[list[str]]:
    """One row of formatted cells per grid point of a :class:`DecodeFloor`."""
    shape = floor.shape
    columns: list[np.ndarray | float | bool] = [
        floor.batch, floor.context, floor.weight_bytes / GB, floor.kv_read_bytes / GB,
        floor.bytes_total / GB, floor.flops / 1e9, floor.memory_time_s * 1e3, floor.compute_time_s * 1e3,
        floor.step_time_s * 1e3, floor.tokens_per_s, floor.arithmetic_intensity, floor.bound, floor.critical_batch,
        floor.fits,
    ]
    if floor.latency_profile is not None:
        columns.insert(HEADERS.index("comp ms") + 1, floor.chain_time_s * 1e3)
    flat = [np.broadcast_to(c, shape).ravel() for c in columns]
    rows: list[list[str]] = []
    for i in range(int(np.prod(shape))):
        row: list[str] = []
        for j, column in enumerate(flat):
            value = column[i]
            if isinstance(value, bool | np.bool_):  # fits: weights + KV cache within usable memory
                row.append("yes" if value else "no")
            elif isinstance(value, str | np.str_):
                row.append(str(value))
            elif np.isnan(value):  # not defined: no compute peak published
                row.append(NOT_DEFINED)
            elif j < 2:
                row.append(f"{int(value)}" if float(value).is_integer() else f"{value:g}")
            elif j == len(flat) - 2:  # B*
                row.append(format_number(float(np.ceil(value)) if np.isfinite(value) else value, 6))
            else:
                row.append(format_number(float(value), 4))
        rows.append(row)
    return rows


def title(floor: DecodeFloor) -> str:
    head = f"{floor.model} on {floor.accelerator}: {floor.weight_format} weights, {floor.kv_format} KV, "
    latency = "" if floor.latency_profile is None else f"; serial chain under latency profile {floor.latency_profile}"
    if not floor.compute_bounded:
        return head + f"{floor.compute_precision}: ridge point and B* {NOT_DEFINED}, memory floor only" + latency
    ridge = np.asarray(floor.ridge_point)
    if ridge.ndim == 0:
        ridge_text = f"ridge point {float(ridge):.4g} FLOP/B"
    else:  # several precisions: the effective peak (FLOPs / compute time) varies with the context
        low, high = float(np.nanmin(ridge)), float(np.nanmax(ridge))
        ridge_text = f"effective ridge point {low:.4g}" + (f"-{high:.4g}" if high > low else "") + " FLOP/B"
    return head + f"computing in {floor.compute_precision}; {ridge_text}" + latency


def legend(floor: DecodeFloor) -> list[str]:
    """Lines under the table: what ``inf`` in the B* column means, then the result's notes."""
    lines: list[str] = []
    if floor.compute_bounded:  # a peak is published: the B* column holds numbers
        text = "B* (critical batch): the smallest batch at which a step is compute-bound (FLOPs / peak >= bytes / bandwidth)"
        if np.isinf(np.asarray(floor.critical_batch)).any():
            # what each sequence brings: a KV cache, a recurrent state, or both (hybrids)
            model = floor.spec
            per_sequence = ("KV reads" if model.num_recurrent_layers == 0
                            else "recurrent-state reads and writes" if model.num_attention_layers == 0
                            else "KV and recurrent-state reads")
            text += ("; inf: never compute-bound at that context, memory-bound at any batch "
                     f"(each sequence's {per_sequence} keep the intensity below the ridge)")
        lines.append(text)
    return lines + [f"note: {note}" for note in floor.notes]


def render_text(floor: DecodeFloor) -> str:
    return "\n".join([title(floor), format_table(headers(floor), floor_rows(floor), align="right"), *legend(floor)])


def render_html(floor: DecodeFloor) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers(floor))
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in floor_rows(floor)
    )
    notes = "".join(f"<br>{html.escape(line)}" for line in legend(floor))
    return f"<p><b>{html.escape(title(floor))}</b></p><table><tr>{head}</tr>{body}</table>" + (
        f"<p>{notes[4:]}</p>" if notes else "")
