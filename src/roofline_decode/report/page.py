"""The report page: HTML sections over a :class:`~roofline_decode.report.data.ReportData`.

One function per section, each ``(data) -> str`` (an HTML fragment), listed in
:data:`SECTIONS` in page order; :func:`render_page` puts them in one document with the inline
CSS (``page.css``), the precomputed grid (JSON) and the control's script (``page.js``).  Every
number cell carries the library's value in SI units (``data-value``, Python's ``repr``, which
reads back to the same float) beside its display in human units, so a test or a reader can take
the exact figure out of the page.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

import numpy as np

from ..units import GB
from .answers import expectation, expectation_serving, search
from .cells import cell as _cell
from .cells import display
from .data import FLOOR_COLUMNS, LAYER_COLUMNS, LAYOUT_COLUMNS, SERVING_COLUMNS, STEP

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from .data import ReportData

__all__ = ["SECTIONS", "display", "render_page"]


def _escape(text: str) -> str:
    return html.escape(text)


def header(data: ReportData) -> str:
    from .. import __version__

    model = data.model
    devices = ", ".join(d.name for d in data.accelerators)
    return (f"<h1>{_escape(model.name)}: decode floors on {_escape(devices)}</h1>"
            f'<p class="lead">{_escape(model.weight_format.name)} weights, {_escape(model.kv_format.name)} KV cache, '
            f"MoE routing {_escape(data.routing)}; chosen point batch {data.batch:g}, context {data.context:g} tokens. "
            "Floors: T_step = max(bytes / bandwidth, FLOPs / peak), no step of any engine can be faster. "
            f"Made by roofline_decode {__version__}; this file needs no network.</p>")


def control(data: ReportData) -> str:
    i, j = data.batches.index(data.batch), data.contexts.index(data.context)
    return ('<form id="control" onsubmit="return false">'
            f'<span><label for="batch-index">batch</label> <input type="range" id="batch-index" min="0" '
            f'max="{len(data.batches) - 1}" step="1" value="{i}"> <output id="batch-value">{data.batch:g}</output></span>'
            f'<span><label for="context-index">context</label> <input type="range" id="context-index" min="0" '
            f'max="{len(data.contexts) - 1}" step="1" value="{j}"> <output id="context-value">{data.context:g}</output>'
            '</span><span class="muted">moves the floor table, the notes' + (", the deployment table" if data.layout
                                                                            else "")
            + " and the per-layer tables over a precomputed grid; the plots, the breakdown and the expected, serving "
            "and deployment-search sections stay at the chosen point</span></form>")


def floors(data: ReportData) -> str:
    head = "<th></th>" + "".join(f"<th>{_escape(f.accelerator)}</th>" for f in data.point)
    values = [data.floor_values(floor) for floor in data.point]
    rows = "".join(
        f"<tr><td>{_escape(label)}</td>" + "".join(
            _cell(v[key], scale, table="floors", device=floor.accelerator, key=key)
            for v, floor in zip(values, data.point)) + "</tr>"
        for key, label, scale in FLOOR_COLUMNS)
    return (("<h2>Floors</h2>" if data.parallel is None else "<h2>Floors: one device holding the whole model</h2>")
            + f'<div class="scroll"><table class="floors"><thead><tr>{head}</tr></thead><tbody>{rows}'
            "</tbody></table></div>"
            '<p class="muted">B*: the smallest batch at which the step is compute-bound at that context (inf: '
            "memory-bound at any batch). max batch: the largest batch whose weights and KV cache fit the usable memory "
            "of one device. Compute precision: " + "; ".join(
                f"{_escape(f.accelerator)} {_escape(f.compute_precision)}" for f in data.point) + ".</p>")


def deployment(data: ReportData) -> str:
    """The layout floor of each accelerator at the chosen point (empty without a layout)."""
    if not data.layout:
        return ""
    first = data.layout[0]
    head = "<th></th>" + "".join(f"<th>{_escape(f.accelerator)}</th>" for f in data.layout)
    values = [data.layout_values(f, d) for f, d in zip(data.layout, data.accelerators)]
    rows = "".join(
        f"<tr><td>{_escape(label)}</td>" + "".join(
            _cell(v[key], scale, table="layout", device=f.accelerator, key=key) for v, f in zip(values, data.layout))
        + "</tr>" for key, label, scale in LAYOUT_COLUMNS)
    fits = "".join(_cell(v["fits"], None, table="layout", device=f.accelerator, key="fits")
                   for v, f in zip(values, data.layout))
    notes = "".join(f"<h3>{_escape(f.accelerator)}</h3><ul class=\"notes\">" + "".join(
        f"<li>{_escape(n)}</li>" for n in f.notes) + "</ul>" for f in data.layout if f.notes)
    return (f"<h2>Deployment: {_escape(str(first.parallel))} ({first.num_devices} devices)</h2>"
            f"<p>The step at the control's batch and context (it opens at batch {data.batch:g}, context "
            f"{data.context:g}) on {first.num_devices} devices of each accelerator (decode_floor(..., parallel=)), "
            "seen from the busiest device; tokens/s counts all devices. The control moves this table over the same "
            "grid; the notes below and the plots stay at the chosen point and draw this layout per device; the "
            "floor table above and the per-layer tables are one device holding the whole model.</p>"
            f'<div class="scroll"><table class="layout"><thead><tr>{head}</tr></thead><tbody>{rows}'
            f"<tr><td>fits (resident per device within its usable memory)</td>{fits}</tr></tbody></table></div>"
            + ("<p class=\"muted\">Link overrides (" + ", ".join(_link_text(k, v) for k, v in data.links.items())
               + ") apply to this table; the plots use each device's own interconnect figure.</p>"
               if data.links else "") + notes)


def serving(data: ReportData) -> str:
    """The serving floors (serving_floor) of each accelerator, when input and output lengths were given."""
    if not data.serving:
        return ""
    first = data.serving[0]
    head = "<th></th>" + "".join(f"<th>{_escape(f.accelerator)}</th>" for f in data.serving)
    rows = "".join(
        f"<tr><td>{_escape(label)}</td>" + "".join(
            _cell(str(np.asarray(getattr(f, key))) if scale is None else float(np.asarray(getattr(f, key))), scale,
                  table="serving", device=f.accelerator, key=key) for f in data.serving) + "</tr>"
        for key, label, scale in SERVING_COLUMNS)
    notes = "".join(f"<h3>{_escape(f.accelerator)}</h3><ul class=\"notes\">" + "".join(
        f"<li>{_escape(n)}</li>" for n in f.notes) + "</ul>" for f in data.serving if f.notes)
    return (f"<h2>Serving: {data.batch:g} clients, {float(np.asarray(first.input_length)):g} tokens in, "
            f"{float(np.asarray(first.output_length)):g} out ({_escape(first.mode)}, {_escape(first.layout)})</h2>"
            "<p>serving_floor: a closed loop of clients as vLLM's and SGLang's benchmarks run it; times are floors, "
            "rates ceilings.</p>"
            f'<div class="scroll"><table class="serving"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
            "</div>" + notes)


def _link_text(name: str, value: float) -> str:
    """``link_bandwidth 450 GB/s``, ``node_size 8``: a link override as the page says it."""
    return f"{name} {value:g}" if name == "node_size" else f"{name} {value / 1e9:g} GB/s"


def limits(data: ReportData) -> str:
    parts = ["<h2>Fit and limits</h2>"]
    for floor in data.point:
        notes = floor.to_records()[0]["notes"] or [
            "none: the point fits and no assumption beyond the conventions applies"]
        parts.append(
            f"<h3>{_escape(floor.accelerator)}</h3><p>weights {display(floor.spec.weight_bytes / GB)} GB; usable memory "
            f"{display(floor.usable_memory / GB)} GB; KV cache per sequence at the chosen context ({data.context:g}) "
            f"{display(float(np.max(floor.kv_bytes_per_sequence)) / GB)} GB.</p>"
            f'<ul class="notes" data-device="{_escape(floor.accelerator)}">'
            + "".join(f"<li>{_escape(n)}</li>" for n in notes) + "</ul>")
    return "".join(parts)


def layers(data: ReportData) -> str:
    parts = ["<h2>Per layer kind</h2>",
             '<p class="muted">Each row: that kind of layer over the whole model (n layers); its times are its own '
             "bytes / bandwidth and FLOPs at its compute groups' peaks. The rows add up to the step's bytes and "
             "FLOPs; the step time is max(memory, compute) of the sums, not the sum of the rows' times. The bar "
             "charts (at the chosen point) stack the rows' memory and compute times.</p>"]
    from .figures import layers_svg

    head = "<th>layer</th><th>n</th>" + "".join(f"<th>{_escape(h)}</th>" for _, h, _ in LAYER_COLUMNS)
    for index, floor in enumerate(data.point):
        rows = []
        for values in data.layer_values(floor, floor.layers()):
            n = str(values["layers"]) if values["layers"] else "-"
            step = ' class="step"' if values["layer"] == STEP else ""
            rows.append(f'<tr{step} data-layer="{_escape(values["layer"])}"><td>{_escape(values["layer"])}</td><td>{n}</td>'
                        + "".join(_cell(values[key], scale, key=key) for key, _, scale in LAYER_COLUMNS) + "</tr>")
        parts.append(f"<h3>{_escape(floor.accelerator)}</h3>"
                     f'<div class="scroll"><table class="layers" data-device="{_escape(floor.accelerator)}">'
                     f'<thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'
                     f'<div class="figure">{layers_svg(data, index)}</div>')
    return "".join(parts)


def breakdown(data: ReportData) -> str:
    from .figures import breakdown_svg

    floor = data.point[0]
    parts = floor.breakdown()
    rows = "".join(f"<tr><td>{_escape(name)}</td>{_cell(float(value), 1e-9, key=name, kind='bytes')}</tr>"
                   for name, value in parts["bytes"].items())
    flops = "".join(f"<tr><td>{_escape(name)}</td>{_cell(float(value), 1e-9, key=name, kind='flops')}</tr>"
                    for name, value in parts["flops"].items())
    return ("<h2>Bytes and FLOPs of the step</h2>"
            f"<p>At batch {data.batch:g}, context {data.context:g} (device independent).</p>"
            '<div style="display:flex;gap:3em;flex-wrap:wrap">'
            f'<table class="breakdown"><thead><tr><th>bytes</th><th>GB</th></tr></thead><tbody>{rows}</tbody></table>'
            f'<table class="breakdown"><thead><tr><th>FLOPs</th><th>GFLOP</th></tr></thead><tbody>{flops}</tbody>'
            f'</table></div><div class="figure">{breakdown_svg(data)}</div>')


def ridge(data: ReportData) -> str:
    from .figures import ridge_svg

    per_device = f", per device of {_escape(str(data.parallel))}" if data.parallel is not None else ""
    return ("<h2>Ridge plot</h2>"
            f"<p>The batch grid at context {data.context:g} on each accelerator's roofline{per_device}.</p>"
            f'<div class="figure">{ridge_svg(data)}</div>')


def frontier(data: ReportData) -> str:
    from ..planning import frontier as frontier_of
    from .figures import frontier_svg

    front = frontier_of(data.model, list(data.accelerators), data.context, routing=data.routing)
    rows = "".join(
        f"<tr><td>{_escape(p.accelerator)}</td><td>{p.num_devices}</td>"
        + _cell(p.batch, 1.0, key="batch", table="frontier")
        + _cell(p.tokens_per_s_per_user, 1.0, key="tokens_per_s_per_user", table="frontier")
        + _cell(p.tokens_per_s_per_device, 1.0, key="tokens_per_s_per_device", table="frontier")
        + _cell(p.step_time_s, 1e3, key="step_time_s", table="frontier") + "</tr>"
        for p in front.envelope())
    table = ('<table class="frontier"><thead><tr><th>accelerator</th><th>devices (TP)</th><th>batch</th>'
             "<th>tok/s per user</th><th>tok/s per device</th><th>step ms</th></tr></thead>"
             f"<tbody>{rows}</tbody></table>" if rows else "<p>No configuration fits: the envelope is empty.</p>")
    notes = "".join(f"<li>{_escape(n)}</li>" for n in front.notes)
    return ("<h2>Throughput-interactivity frontier</h2>"
            f"<p>Tokens/s per device against tokens/s per user at context {data.context:g}, tensor-parallel degrees "
            "1 to 8 (where a device has an interconnect figure); every point is a floor. The Pareto envelope, from "
            "the most throughput per device to the fastest per user:</p>"
            + table + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + f'<div class="figure">{frontier_svg(data)}</div>')


def _figure_rows(device: Accelerator) -> str:
    from ..catalog_docs import printed

    rows = []
    for key, figure in device.figures.items():
        source = device.sources.get(figure.source)
        where = (f'<a href="{_escape(source.url)}">{_escape(source.title)}</a>'
                 f"{', ' + _escape(source.publisher) if source.publisher else ''} (retrieved {_escape(source.retrieved)})"
                 if source is not None else _escape(figure.source))
        how = "; ".join(_escape(text) for text in (figure.derivation, figure.note) if text)
        rows.append(f'<tr data-figure="{_escape(key)}"><td>{_escape(key)}</td>'
                    f'<td data-value="{figure.value!r}" data-si-value="{figure.si_value!r}" title="{_escape(printed(figure))}">'
                    f"{figure.value:g}</td>"
                    f"<td>{_escape(figure.unit)}</td><td>{_escape(figure.kind)}</td><td>{where}</td><td>{how}</td></tr>")
    return "".join(rows)


def sources(data: ReportData) -> str:
    parts = ["<h2>Device figures and their sources</h2>"]
    for device in data.accelerators:
        parts.append(f"<h3>{_escape(device.name)} [{_escape(device.id or '')}]</h3>")
        if not device.figures:
            parts.append("<p>No figures with provenance: the device was built from plain numbers.</p>")
            continue
        parts.append(f'<table class="sources" data-device="{_escape(device.id or device.name)}"><thead><tr>'
                     "<th>figure</th><th>value</th><th>unit</th><th>kind</th><th>source</th><th>how</th></tr></thead>"
                     f"<tbody>{_figure_rows(device)}</tbody></table>")
    return "".join(parts)


#: The sections in page order; each takes the report's data and returns an HTML fragment.
SECTIONS: tuple[Callable[[ReportData], str], ...] = (header, control, floors, expectation, deployment, serving,
                                                       expectation_serving, search, limits, layers, breakdown, ridge,
                                                       frontier, sources)


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def render_page(data: ReportData) -> str:
    """The whole self-contained HTML document."""
    grid = json.dumps(data.grid_json(), separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    body = "".join(section(data) for section in SECTIONS)
    title = f"{data.model.name} decode floors: " + ", ".join(d.id or d.name for d in data.accelerators)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{_escape(title)}</title><style>{_asset('page.css')}</style></head><body>{body}"
            f'<script type="application/json" id="report-grid">{grid}</script>'
            f"<script>{_asset('page.js')}</script></body></html>\n")
