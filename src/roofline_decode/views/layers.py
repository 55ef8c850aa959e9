"""The per-layer table of a decode step (:meth:`DecodeFloor.layers`) as text, HTML or rows of cells.

One table per grid point: a row per kind of layer (bytes, FLOPs, intensity, its share of the
step's bytes, memory and compute time on the device, bound), then the step's own totals, which
the rows add up to.  Human units (GB, GFLOP, ms); the records and DataFrame of
:class:`~roofline_decode.floors.layers.LayerTable` keep SI units.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import numpy as np

from ..units import GB, format_number, format_table

if TYPE_CHECKING:
    from ..floors.layers import LayerTable

__all__ = ["LAYER_HEADERS", "layer_rows", "render_layers_html", "render_layers_text"]

LAYER_HEADERS = ["layer", "n", "weights GB", "KV+state GB", "total GB", "% bytes", "GFLOP", "FLOP/B", "mem ms",
                 "comp ms", "bound"]


def _cells(weights: float, kv: float, total: float, step_total: float, flops: float, memory: float,
           compute: float, bound: str) -> list[str]:
    intensity = flops / total if total > 0 else 0.0
    share = 100 * total / step_total if step_total > 0 else 0.0
    return [format_number(weights / GB), format_number(kv / GB), format_number(total / GB), f"{share:.1f}",
            format_number(flops / 1e9), format_number(intensity), format_number(memory * 1e3),
            format_number(compute * 1e3), bound]


def layer_rows(table: LayerTable, index: int = 0) -> list[list[str]]:
    """Formatted cells of :data:`LAYER_HEADERS` at grid point ``index`` (flat, C order): one
    row per layer kind, then ``step`` with the floor's own totals."""
    floor = table.floor
    shape = floor.shape

    def at(value: Any) -> float:
        return float(np.broadcast_to(value, shape).ravel()[index])

    step_total = at(floor.bytes_total)
    rows = []
    for row in table:
        rows.append([row.kind, str(row.layers) if row.layers else "-", *_cells(
            at(row.weight_bytes), at(row.kv_read_bytes) + at(row.kv_write_bytes), at(row.bytes_total), step_total,
            at(row.flops), at(row.memory_time_s), at(row.compute_time_s),
            str(np.broadcast_to(row.bound, shape).ravel()[index]))])
    rows.append(["step", str(floor.spec.num_layers), *_cells(
        at(floor.weight_bytes), at(floor.kv_read_bytes) + at(floor.kv_write_bytes), step_total, step_total,
        at(floor.flops), at(floor.memory_time_s), at(floor.compute_time_s),
        str(np.broadcast_to(floor.bound, shape).ravel()[index]))])
    return rows


def point_title(table: LayerTable, index: int = 0) -> str:
    floor = table.floor
    shape = floor.shape
    batch = float(np.broadcast_to(floor.batch, shape).ravel()[index])
    context = float(np.broadcast_to(floor.context, shape).ravel()[index])
    return (f"{floor.model} on {floor.accelerator} per layer kind, batch {batch:g}, context {context:g} "
            f"({floor.weight_format} weights, {floor.kv_format} KV)")


LEGEND = ("n: layers of that kind; each row's times are its own bytes / bandwidth and FLOPs at its groups' peaks; "
          "the rows add up to the step, whose time is max(mem, comp), not the sum of the rows' times")


def render_layers_text(table: LayerTable) -> str:
    """One titled table per grid point, and the legend."""
    points = int(np.prod(table.floor.shape))
    blocks = [point_title(table, i) + "\n" + format_table(LAYER_HEADERS, layer_rows(table, i), align="right")
              for i in range(points)]
    return "\n\n".join(blocks) + "\n" + LEGEND


def render_layers_html(table: LayerTable, index: int | None = None) -> str:
    """The tables as HTML (every grid point, or the one at ``index``); cells carry
    ``data-layer`` and ``data-column`` attributes so a page script or test can find them."""
    points = range(int(np.prod(table.floor.shape))) if index is None else [index]
    parts = []
    for i in points:
        head = "".join(f"<th>{html.escape(h)}</th>" for h in LAYER_HEADERS)
        body = "".join(
            f'<tr data-layer="{html.escape(row[0])}">' + "".join(
                f'<td data-column="{html.escape(h)}">{html.escape(c)}</td>' for h, c in zip(LAYER_HEADERS, row))
            + "</tr>" for row in layer_rows(table, i))
        parts.append(f"<p><b>{html.escape(point_title(table, i))}</b></p>"
                     f'<table class="layers"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')
    return "".join(parts) + f"<p>{html.escape(LEGEND)}</p>"
