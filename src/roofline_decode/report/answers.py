"""The report's answers beyond the floors: the expected performance of an engine and the
deployment search on N GPUs, each a section of the page (``(data) -> str``, listed in
:data:`~roofline_decode.report.page.SECTIONS`).

Every number cell carries the library's value unchanged (``data-value``, SI units), as in the
rest of the page: the expected numbers are :func:`~roofline_decode.measure.expected.expected`'s,
the deployment frontier is :meth:`~roofline_decode.planning.Deployments.frontier`'s.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

from .cells import cell
from .data import DEPLOYMENT_COLUMNS, EXPECTED_COLUMNS, EXPECTED_SERVING_COLUMNS, expected_values

if TYPE_CHECKING:
    from ..measure.expected import Expected
    from ..planning.deployments import DeploymentPoint, Deployments
    from .data import ReportData

__all__ = ["expectation", "expectation_serving", "search"]

#: What every expected-performance table says first.
NOT_FLOORS = ("Expected numbers are not floors: they are an engine profile's fitted step model (or the floor "
              "where the profile says nothing), with the 90 % band of its fit's errors; a run can land outside the "
              "band, and never below the floor.")


def _table(data: ReportData, expectations: tuple[Expected | str, ...], columns: tuple[tuple[str, str, float | None], ...],
           table: str) -> str:
    ids = [d.id or d.name for d in data.accelerators]
    values = [expected_values(e) for e in expectations]
    head = "<th></th>" + "".join(f"<th>{html.escape(i)}</th>" for i in ids)
    rows = "".join(f"<tr><td>{html.escape(label)}</td>" + "".join(
        cell(v[key], scale, table=table, device=i, key=key) for v, i in zip(values, ids)) + "</tr>"
                   for key, label, scale in columns)
    labels = "".join(f'<li class="{table}" data-device="{html.escape(i)}"><b>{html.escape(i)}</b>: {html.escape(v["label"])}</li>'
                     for v, i in zip(values, ids))
    return (f'<div class="scroll"><table class="{table}"><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>'
            f'</div><p class="muted">What each expectation rests on:</p><ul class="labels">{labels}</ul>')


def _devices_text(data: ReportData) -> str:
    n = data.layout[0].num_devices if data.layout else 1
    if n == 1 or data.parallel is None:
        return "one device"
    if data.parallel.ep == 1 and data.parallel.attention_dp == 1:
        return f"{n} devices of {html.escape(str(data.parallel))}, on that layout's floor"
    return (f"{n} devices of {html.escape(str(data.parallel))}, which the engine profiles see as one tensor-parallel "
            "group for a decode step (no term for expert or attention data parallelism there)")


def expectation(data: ReportData) -> str:
    """The expected step time and tokens/s of ``data.engine`` at the chosen point, with the 90 %
    band and the floor it rests on (empty without an engine)."""
    if not data.expected:
        return ""
    sparse = " The profiles are dense: the sparse peaks do not apply here." if data.sparse else ""
    moe = (" For a MoE model the profiles rest on the strict floor (routing='identical': each token's k experts), "
           "below the floor tables' under uniform routing." if data.model.is_moe else "")
    return (f"<h2>Expected performance with {html.escape(data.engine or '')} (not floors)</h2>"
            f'<p class="warning"><b>{html.escape(NOT_FLOORS)}</b></p>'
            f"<p>expected(..., engine={html.escape(repr(data.engine))}) at batch {data.batch:g}, context "
            f"{data.context:g}, on {_devices_text(data)}; tokens/s counts the batch. The floor row is the floor "
            f"the expectation sits on.{moe}{sparse}</p>" + _table(data, data.expected, EXPECTED_COLUMNS, "expected"))


def expectation_serving(data: ReportData) -> str:
    """The expected TTFT and TPOT of ``data.engine`` for the serving run (empty unless both an
    engine and the input and output lengths were given)."""
    if not data.expected_serving:
        return ""
    first = data.serving[0]
    return (f"<h3>Expected serving with {html.escape(data.engine or '')} (not floors)</h3>"
            f'<p class="warning"><b>{html.escape(NOT_FLOORS)}</b></p>'
            f"<p>expected(..., prompt={float(first.input_length):g}, output={float(first.output_length):g}) with "
            f"{data.batch:g} clients on {_devices_text(data)}: the TTFT and TPOT an engine run is expected to show, "
            "beside the floors they rest on.</p>"
            + _table(data, data.expected_serving, EXPECTED_SERVING_COLUMNS, "expected-serving"))


def _key(point: DeploymentPoint) -> tuple[str, str, int]:
    return point.mode, point.label, point.concurrency


def _frontier_rows(result: Deployments) -> str:
    rows, best = [], result.best
    for index, point in enumerate(result.frontier()):
        meets = ((result.ttft is None or point.ttft_s <= result.ttft)
                 and (result.tpot is None or point.tpot_s <= result.tpot))
        mark = "best" if best is not None and _key(point) == _key(best) else ("meets" if meets else "")
        record: dict[str, Any] = {**point.__dict__, "label": point.label}
        cells = "".join(
            cell(record[key] if scale is None else float("nan") if record[key] is None else float(record[key]),
                 scale, table="deployments", device=result.accelerator, key=key, row=str(index))
            for key, _, scale in DEPLOYMENT_COLUMNS
            if key != "usd_per_million_tokens" or result.price_per_hour is not None)
        rows.append(f'<tr class="{mark}"><td>{"*" if meets else ""}</td>{cells}</tr>')
    return "".join(rows)


def search(data: ReportData) -> str:
    """Each accelerator's deployment search on ``gpus`` devices: the one-line answer, the
    floor-optimal frontier and its plot (empty unless asked)."""
    if not data.deployments:
        return ""
    from .figures import deployment_svg

    first = data.deployments[0]
    slo = ", ".join(text for text in (None if first.ttft is None else f"TTFT <= {first.ttft * 1e3:g} ms",
                                       None if first.tpot is None else f"TPOT <= {first.tpot * 1e3:g} ms") if text)
    parts = [f"<h2>Deployment search: {first.gpus} GPUs, ISL {first.isl:,}, OSL {first.osl:,}"
             f"{', ' + html.escape(slo) if slo else ''}</h2>",
             "<p>planning.deployments: every aggregated (replicas of one layout) and disaggregated (prefill and "
             "decode workers) deployment on at most this many GPUs, over client counts. Each point is a floor of "
             "TTFT and TPOT and a ceiling of tokens/s: the frontier is an upper bound no real deployment exceeds, "
             "and the answer is the most tokens/s per GPU a floor allows under the SLOs (a real deployment can "
             "miss it, never beat it). * marks the frontier's points that meet the SLOs."
             + (" The link overrides of the layout do not apply: the search uses each device's own links."
                if data.links else "") + "</p>"]
    for index, result in enumerate(data.deployments):
        priced = result.price_per_hour is not None
        head = "<th></th>" + "".join(f"<th>{html.escape(h)}</th>" for key, h, _ in DEPLOYMENT_COLUMNS
                                     if key != "usd_per_million_tokens" or priced)
        rows = _frontier_rows(result)
        notes = "".join(f"<li>{html.escape(n)}</li>" for n in result.notes)
        parts.append(
            f"<h3>{html.escape(result.accelerator)}</h3>"
            f'<p class="answer" data-device="{html.escape(result.accelerator)}"><b>{html.escape(result.answer())}</b></p>'
            + (f'<div class="scroll"><table class="deployments" data-device="{html.escape(result.accelerator)}">'
               f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table></div>" if rows else
               "<p>No deployment fits: the frontier is empty.</p>")
            + f'<p class="muted">Searched {result.evaluated:,} points of {len(result.layouts)} layouts that fit '
            f"({result.candidates} the model takes)"
            + (f"; ${result.price_per_hour:g} per GPU-hour" if priced else "") + ".</p>"
            + (f'<ul class="notes">{notes}</ul>' if notes else "")
            + f'<div class="figure">{deployment_svg(data, index)}</div>')
    return "".join(parts)
