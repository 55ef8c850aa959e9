"""The docs page "How close is the floor?", generated from the shipped measured rows.

``python -m roofline_decode.measure.floor_report --write-docs docs`` rewrites
``docs/how_close_is_the_floor.md`` and its plot ``docs/img/how_close_is_the_floor.png``;
``--check docs`` exits 1 when the page is stale.  ``tests/measure/test_floor_report.py`` checks
that the checked-in page is current.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np

from .expected_accuracy import AccuracyResult, accuracy_protocol, render_section
from .compare import EXCEEDS_MEMORY, IMPOSSIBLE, RowComparison, compare
from .extrapolation import SplitResult, measured_dir, protocol_splits, run_protocol
from .published import load_published

__all__ = ["render_page", "plot_page", "write_docs", "efficiency_rows", "PAGE", "PLOT"]

PAGE = "how_close_is_the_floor.md"
PLOT = "img/how_close_is_the_floor.png"
_FILES = ("gpt_fast.csv", "exllama.csv", "knlp_full_model_decode.csv")


def _engine(comparison: RowComparison) -> str:
    source, label = comparison.row.source, comparison.row.label
    if source.startswith("gpt_fast"):
        return "gpt-fast (torch.compile)"
    if source.startswith("exllama"):
        return "ExLlamaV2" if label.startswith("exllamav2") else "ExLlama v1"
    return "HF transformers eager (knlp)"


def efficiency_rows(folder: str | Path | None = None) -> tuple[list[RowComparison], list[RowComparison]]:
    """(comparisons of every resident full decode step at or above its floor, the rows left out:
    faster than the strict floor, weights beyond the device, or offloaded by the source's note)."""
    folder = Path(folder) if folder is not None else measured_dir()
    kept: list[RowComparison] = []
    left: list[RowComparison] = []
    for name in _FILES:
        for c in compare(load_published(folder / name).rows):
            out = IMPOSSIBLE in c.flags or EXCEEDS_MEMORY in c.flags or "offload" in c.row.notes.lower()
            (left if out else kept).append(c)
    return kept, left


def _bucket(value: float, edges: list[tuple[float, float, str]]) -> str:
    return next(name for low, high, name in edges if low <= value <= high)


_BATCH: list[tuple[float, float, str]] = [(1, 1, "1"), (2, 8, "2-8"), (9, 64, "16-64"), (65, 1e9, "96-128")]
_CONTEXT: list[tuple[float, float, str]] = [(0, 999, "< 1K"), (1000, 4096, "1K-4K"), (4097, 32768, "8K-32K"), (32769, 1e9, "64K-384K")]


def _group_table(rows: list[RowComparison], key: Callable[[RowComparison], str], title: str,
                 order: list[str] | None = None) -> list[str]:
    groups: dict[str, list[float]] = {}
    for c in rows:
        groups.setdefault(key(c), []).append(c.efficiency)
    names = order if order is not None else sorted(groups)
    lines = [f"| {title} | rows | median | min | max |", "|---|---|---|---|---|"]
    for name in names:
        if name in groups:
            e = np.array(groups[name])
            lines.append(f"| {name} | {e.size} | {np.median(e):.0%} | {e.min():.0%} | {e.max():.0%} |")
    return lines


def _protocol_table(results: list[SplitResult]) -> list[str]:
    lines = ["| split | data set | fit rows | held-out rows | median | p90 | max | 90 % band covers | models chosen |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        chosen = ", ".join(sorted(set(r.chosen)))
        lines.append(f"| {r.axis}: {r.description} | {r.data_set} | {r.n_fit} | {r.errors.size} | {r.median:.2%} | "
                     f"{r.p90:.2%} | {r.max:.2%} | {r.coverage:.0%} | {chosen} |")
    return lines


def _one_prompt_length(folder: str | Path | None = None) -> str:
    """ExLlama v1: fit at the one short context, predict the 31x longer one (beyond the protocol)."""
    from .calibrate import calibrate
    from .extrapolation import data_sets

    ds = data_sets(folder)["ExLlama RTX 4090 LLaMA 7B/13B GPTQ"]
    fit = [m for m in ds.measurements if m.context < 1000]
    held = [m for m in ds.measurements if m.context >= 1000]
    cal, step = calibrate(fit, ds.accelerator), calibrate(fit, ds.accelerator, fixed_cost="step")
    e, s = (np.abs([float(c.predict(m.model, batch=m.batch, context=m.context).step_time_s) / m.step_time_s - 1
                    for m in held]) for c in (cal, step))
    return (f"Beyond the protocol, ExLlama v1 fitted on {len(fit)} rows at T = 64 ({cal.model_name}; the rows mix "
            f"depths and chose a fixed cost per {cal.fixed_cost}) predicts its {len(held)} rows at T = 1984 (31x) "
            f"with median {np.median(e):.2%} and max {e.max():.2%} (per step: {np.median(s):.2%} and {s.max():.2%}).")


def _unit_table(results: list[SplitResult], folder: str | Path | None) -> list[str]:
    """Per-layer (the default) against per-step fixed cost on the splits where the unit matters:
    the size splits and those whose fitted rows mix depths."""
    from functools import partial

    from .calibrate import calibrate

    splits = [s for s in protocol_splits(folder)
              if s.axis == "size" or len({m.model.num_layers for m in s.fit}) > 1]
    per_step = {(r.axis, r.data_set): r for r in run_protocol(splits, fit=partial(calibrate, fixed_cost="step"))}
    lines = ["| split | data set | per step: median | max | per layer (default): median | max | unit chosen |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        old = per_step.get((r.axis, r.data_set))
        if old is not None:
            lines.append(f"| {r.axis}: {r.description} | {r.data_set} | {old.median:.2%} | {old.max:.2%} | "
                         f"{r.median:.2%} | {r.max:.2%} | {', '.join(sorted(set(r.units)))} |")
    return lines


def render_page(folder: str | Path | None = None, results: list[SplitResult] | None = None) -> str:
    """The markdown of ``docs/how_close_is_the_floor.md``."""
    kept, left = efficiency_rows(folder)
    results = results if results is not None else run_protocol(protocol_splits(folder))
    pooled = {axis: np.concatenate([r.errors for r in results if r.axis == axis])
              for axis in ("batch", "context", "format", "size")}
    inside = np.concatenate([r.inside for r in results if r.axis in ("batch", "context")])
    lines = [
        "<!-- generated by `python -m roofline_decode.measure.floor_report --write-docs docs`; do not edit -->",
        "# How close is the floor?",
        "",
        "Efficiency = floor step time / measured step time (1 = the run reaches the floor; the floor of",
        "DESIGN.md §4 with uniform MoE routing), over every published full-model decode row shipped in",
        f"`tests/data/measured/` ({len(kept)} rows; sources in its README). Left out: {len(left)} rows that are",
        "faster than their strict floor (early stop: Gemma-2-27B on an H200), whose weights exceed the",
        "device, or that the source marks as partly offloaded to the host (Llama-3.1-70B on an H200). The",
        "attention-only KV-read kernel timings are not decode steps and are not here.",
        "",
        f"![Efficiency of the published rows and the protocol's held-out predictions]({PLOT})",
        "",
        "## Efficiency by device",
        "",
        *_group_table(kept, lambda c: c.accelerator, "device"),
        "",
        "## Efficiency by engine",
        "",
        *_group_table(kept, _engine, "engine"),
        "",
        "## Efficiency by batch and by context",
        "",
        *_group_table(kept, lambda c: _bucket(c.row.batch, _BATCH), "batch", [b[2] for b in _BATCH]),
        "",
        *_group_table(kept, lambda c: _bucket(c.row.context, _CONTEXT), "context", [b[2] for b in _CONTEXT]),
        "",
        "The engine decides: a Hugging Face eager loop reaches about a fifth of the floor (its small-batch",
        "steps are bound by the host launching kernels, not by memory), compiled or hand-written kernels",
        "(gpt-fast, ExLlama) reach 50-80 % at batch 1. The batch and context tables mix engines: every",
        "gpt-fast and ExLlama row is at batch 1 and a context of 2K or less; every row beyond batch 8 or",
        "context 4K is an eager loop, whose efficiency stays near 20 % as the KV reads grow (on the B200",
        "one efficiency, about 0.22, fits the weight and the KV stream alike).",
        "",
        "## Calibrated predictions: the extrapolation protocol",
        "",
        "`roofline_decode.measure.extrapolation` fits `calibrate()` on part of a data set and predicts the",
        "rest: batch (fit B <= 8, predict 16 <= B <= 64), context (fit the two shortest contexts, predict",
        "4-16x the longest fitted one), weight format (fit two formats, predict the third, each in",
        "turn) and model size (fit the shallowest model's rows, predict the deepest model's). Errors are",
        "predicted / measured - 1 over the held-out rows; the band is the 90 % prediction band of the fit.",
        "",
        *_protocol_table(results),
        "",
        f"Pooled medians: batch {np.median(np.abs(pooled['batch'])):.2%}, context "
        f"{np.median(np.abs(pooled['context'])):.2%}, format {np.median(np.abs(pooled['format'])):.2%}, size "
        f"{np.median(np.abs(pooled['size'])):.2%}; the 90 % band",
        f"covers {np.mean(inside):.0%} of the held-out batch and context rows.",
        "",
        "What the shipped data holds: only the knlp B200 campaign sweeps batch *and* context (and it has",
        "4-16x longer contexts); the knlp H100 rows sweep batch 1-64 at two contexts; gpt-fast and ExLlamaV2",
        "have three weight formats of one model at batch 1; ExLlama v1 has two contexts (64 and 1984, 31x",
        "apart, outside the protocol's 4-16x). The format splits fit two rows, so their bands rest on one",
        "residual degree of freedom (or none) and say little. " + _one_prompt_length(folder),
        "",
        "The fixed cost of a step (t0, and the host time t_h an eager loop cannot beat) is counted per",
        "layer: a calibration fitted on one model predicts a deeper one of the same engine and device",
        "with a fixed cost L'/L times larger. Rows of one depth cannot tell a per-layer from a per-step",
        "cost (the fits are identical; with both costs >= 0 the truth for a deeper model lies between",
        "the two predictions), so there the unit is a choice, made on the size rows; where the fitted",
        "rows mix depths, both units enter the cross-validated choice. The splits where the unit",
        "matters, with issue 16's per-step form (`calibrate(..., fixed_cost=\"step\")`) beside:",
        "",
        *_unit_table(results, folder),
        "",
        "Per layer lowers the worst same-family size error (gpt-fast, 32 -> 80 layers: dequantisation",
        "and launches that grow with depth) and costs a little where the depths are close (ExLlama,",
        "32 -> 40); the knlp H100 size split also changes family (Qwen2.5 -> Llama-3.1), where only the",
        "host-bound batch-1 rows gain.",
        "",
        "Where the goals of issue 16 (median <= 8 % extrapolating batch or context, <= 2.5 % across",
        "formats, 90 % band covering >= 85 %) are missed, and why:",
        "",
        "* knlp H100 (HF eager), batch: from B = 4 to 16 the step grows faster than any byte count does",
        "  (7.6 ms per GB of KV against 4 ms per GB from B = 1 to 4 for Llama-3.1-8B at T = 4096), so every",
        "  candidate fitted on B <= 4 under-predicts B = 16-64 by a tenth to a third (a quarter to a half",
        "  with a per-step fixed cost, which misses the two models' different host times). No linear cost",
        "  in bytes, FLOPs or sequences extrapolates that; the band covers only part of it.",
        "* gpt-fast Llama-2-70B x8, format: the marginal time per byte between formats is below 1 / BW",
        "  (an unbounded fit gets eta = 1.16), which a physical fit (eta <= 1) cannot follow; the fit",
        "  before issue 16 reached 0.7 % there by allowing eta > 1, at the price of extrapolating badly",
        "  to other model sizes.",
        "* The band's coverage on the B200 context split (7 of 9) misses at batch 1, where the steps",
        "  are host-bound at short context and the fit's single regime under-predicts the longer ones.",
        "",
    ]
    measured = str(Path(folder) if folder else measured_dir())
    return "\n".join(lines) + "\n" + render_section(*_accuracy(measured))


@lru_cache(maxsize=2)
def _accuracy(folder: str) -> tuple[list[AccuracyResult], dict[str, dict[str, set[str]]]]:
    """The engine-profile splits and the production models by device (cached: the page is
    rendered twice by its tests and --check)."""
    from .engine_rows_production import models_by_device

    return accuracy_protocol(folder), models_by_device(folder)


def plot_page(path: str | Path, folder: str | Path | None = None, results: list[SplitResult] | None = None) -> Path:
    """Draw the page's figure: efficiency by batch per engine, and held-out predictions vs measured."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    kept, _ = efficiency_rows(folder)
    splits = protocol_splits(folder)
    results = results if results is not None else run_protocol(splits)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.8))
    markers = dict(zip(sorted({_engine(c) for c in kept}), "osD^v"))
    for engine, marker in markers.items():
        rows = [c for c in kept if _engine(c) == engine]
        left.scatter([c.row.batch for c in rows], [c.efficiency for c in rows], marker=marker, alpha=0.75, label=engine)
    left.set_xscale("log", base=2)
    left.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    left.set_ylim(0, 1)
    left.set_xlabel("batch B")
    left.set_ylabel("efficiency = floor / measured")
    left.set_title("Published decode rows against their floor")
    left.legend(fontsize=8, loc="upper right")
    left.grid(alpha=0.3)

    from .calibrate import calibrate

    colours = {"batch": "tab:blue", "context": "tab:orange", "format": "tab:green", "size": "tab:red"}
    done: set[str] = set()
    for split in splits:
        cal = calibrate(list(split.fit), split.accelerator)
        for m in split.held_out:
            p = cal.predict(m.model, batch=m.batch, context=m.context, tensor_parallel=m.tensor_parallel)
            y, lo, hi = float(p.step_time_s) * 1e3, float(p.lower_s) * 1e3, float(p.upper_s) * 1e3
            label = split.axis if split.axis not in done else None
            done.add(split.axis)
            err = None if np.isnan(lo) else [[y - lo], [hi - y]]
            right.errorbar(m.step_time_s * 1e3, y, yerr=err, fmt="o", ms=4, color=colours[split.axis],
                           alpha=0.7, capsize=2, label=label)
    lims = np.array(right.get_xlim() + right.get_ylim())
    span = [lims.min(), lims.max()]
    right.plot(span, span, color="grey", lw=1)
    right.plot(span, [v * 1.08 for v in span], color="grey", lw=0.6, ls="--")
    right.plot(span, [v / 1.08 for v in span], color="grey", lw=0.6, ls="--")
    right.set_xscale("log")
    right.set_yscale("log")
    right.set_xlabel("measured step time [ms] (held out)")
    right.set_ylabel("calibrated prediction [ms], 90 % band")
    right.set_title("Extrapolation protocol (dashed: ±8 %)")
    right.legend(fontsize=8, loc="upper left")
    right.grid(alpha=0.3, which="both")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_docs(docs: str | Path, plot: bool = True) -> list[Path]:
    """Write the page (and its plot) under ``docs``; returns the paths written."""
    docs = Path(docs)
    results = run_protocol(protocol_splits())
    page = docs / PAGE
    page.write_text(render_page(results=results), encoding="utf-8")
    written = [page]
    if plot:
        written.append(plot_page(docs / PLOT, results=results))
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m roofline_decode.measure.floor_report", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write-docs", metavar="DOCS", help="rewrite the page and its plot under DOCS")
    group.add_argument("--check", metavar="DOCS", help="exit 1 when DOCS/" + PAGE + " is stale")
    args = parser.parse_args(argv)
    if args.write_docs:
        for path in write_docs(args.write_docs):
            print(f"wrote {path}")
        return 0
    page = Path(args.check) / PAGE
    current = page.is_file() and page.read_text(encoding="utf-8") == render_page()
    print(f"{page}: {'current' if current else 'stale'}")
    return 0 if current else 1


if __name__ == "__main__":
    sys.exit(main())
