"""Check the serving floors on 1,884 production runs (issue 26, item 7).

Reads aiconfigurator's measured TensorRT-LLM / vLLM / SGLang runs on H100 and H200 SXM
(``tests/data/measured/production/aic_silicon_hopper.csv``, or the path given) with
:func:`roofline_decode.measure.load_production_runs` and prints, per engine and mode:

* rows read, expressible, and beating a strict floor (TTFT or TPOT);
* the median and p10 / p90 of floor / measured for TTFT and for TPOT (the strict floors of
  :func:`roofline_decode.measure.run_floors`), next to the first check's "before" TPOT floor
  (the plain decode step at batch = concurrency on ``tp_size`` GPUs, uniform routing);

then every row that beats a strict floor with its diagnosis, the rows whose fields are data
errors (with the floors on the GPUs their id names), and the rows the library cannot express.
Prints figures; asserts nothing (``tests/measure/test_production_floors.py`` asserts).

Run: ``python benchmarks/production_check.py [path.csv]``
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np

from roofline_decode.measure.production_floors import RunFloors, all_run_floors, diagnosis, run_floors
import re

from roofline_decode.measure.production_runs import ProductionRun, load_production_runs

DEFAULT = Path(__file__).resolve().parents[1] / "tests" / "data" / "measured" / "production" / "aic_silicon_hopper.csv"
ENGINES = ("trtllm", "vllm", "sglang")
MODES = ("aggregated", "disaggregated")


def spread(values: list[float]) -> str:
    """median [p10, p90] of the ratios."""
    if not values:
        return "-"
    p10, p50, p90 = np.percentile(values, [10, 50, 90])
    return f"{p50:.3f} [{p10:.3f}, {p90:.3f}]"


#: Columns of the ratio table: label, floor / measured of a row (nan: no such floor).
RATIOS: list[tuple[str, Callable[[RunFloors], float]]] = [
    ("TTFT", lambda f: f.ttft_ratio),
    ("TTFT layout", lambda f: f.layout_ttft_ratio),
    ("TPOT", lambda f: f.tpot_ratio),
    ("TPOT layout", lambda f: f.layout_tpot_ratio),
    ("TTFT serving", lambda f: f.serving_ttft_ratio),
    ("TPOT serving", lambda f: f.serving_tpot_ratio),
    ("before: TPOT", lambda f: f.naive_tpot_ratio),
]


def groups(floors: list[RunFloors], runs: list[ProductionRun]) -> list[tuple[str, str, list[ProductionRun], list[RunFloors]]]:
    out = [(engine, mode, [r for r in runs if r.engine == engine and r.mode == mode],
            [f for f in floors if f.run.engine == engine and f.run.mode == mode]) for engine in ENGINES for mode in MODES]
    return [g for g in out if g[2]] + [("all", "", runs, floors)]


def table(floors: list[RunFloors], runs: list[ProductionRun]) -> None:
    head = (f"{'engine':<7} {'mode':<14} {'read':>5} {'expr':>5} {'beat':>5} {'beat layout':>12} {'beat serving':>13} "
            f"{'before: beat':>13}")
    print(head + "\n" + "-" * len(head))
    for engine, mode, read, mine in groups(floors, runs):
        print(f"{engine:<7} {mode:<14} {len(read):>5} {len(mine):>5} {sum(f.beats for f in mine):>5} "
              f"{sum(f.beats_layout for f in mine):>12} {sum(f.beats_serving for f in mine):>13} "
              f"{sum(f.naive_tpot_ratio > 1 for f in mine):>13}")
    print("\nfloor / measured, median [p10, p90] (rows with that floor)")
    head = f"{'engine':<7} {'mode':<14} " + " ".join(f"{label:<26}" for label, _ in RATIOS)
    print(head + "\n" + "-" * len(head))
    for engine, mode, _, mine in groups(floors, runs):
        cells = []
        for _, ratio in RATIOS:
            values = [v for v in map(ratio, mine) if np.isfinite(v)]
            cells.append(f"{spread(values):<21}{len(values):>5}")
        print(f"{engine:<7} {mode:<14} " + " ".join(cells))


def on_likely_gpus(run: ProductionRun) -> ProductionRun | None:
    """The run on the GPUs its id, a twin row or its MoE grid state (tensor parallel over them,
    the same sequences), where they are fewer than the fields give; else None."""
    layout, gpus = run.decode_layout, run.likely_gpus
    if gpus is None or layout is None or run.mode != "aggregated":
        return None
    return replace(run, layout=replace(layout, tp=gpus, pp=1, attention_dp=1, moe_tp=1, moe_ep=gpus,
                                       batch=layout.running_batch_limit))


def main(path: Path = DEFAULT) -> None:
    runs = load_production_runs(path)
    floors = all_run_floors(runs)
    unique = len({(r.ttft_s, r.tpot_s) for r in runs})
    print(f"{path.name}: {len(runs):,} rows, {unique:,} distinct (TTFT, TPOT) measurements "
          "(a run exported by several database dumps appears more than once)\n")
    print("Strict floors (measure.run_floors): TTFT = one prompt's prefill at batch 1 on the prefill GPUs; TPOT = "
          "the decode step of the running batch (Little's law: concurrency x decode share, capped by batch_size and "
          "memory) at the mean decode context on the decode GPUs; identical MoE routing; on the aggregate of the "
          "GPUs, and on the row's layout (Parallel: TP, EP, attention DP, communication at link speed).  Serving: "
          "roofline_decode.serving_floor with the layout, worker counts and max_batch of the row.  Before: the "
          "plain decode step at batch = concurrency on tp_size GPUs, uniform routing.\n")
    table(floors, runs)
    beating = [(f, diagnosis(f)) for f in floors if f.beats or f.beats_layout or f.beats_serving]
    print(f"\nRows beating a strict floor (aggregate, on the layout or serving): {len(beating)}")
    for f, why in beating:
        r = f.run
        print(f"  {r.source} {r.engine} {r.model_id} {r.accelerator} ISL {r.input_length} OSL {r.output_length} "
              f"conc {r.concurrency} {r.decode_layout.describe() if r.decode_layout else ''}: TTFT {r.ttft_s * 1e3:.4g} "
              f"ms (floor {f.ttft_s * 1e3:.4g}, layout {f.layout_ttft_s * 1e3:.4g}, serving {f.serving_ttft_s * 1e3:.4g}), TPOT {r.tpot_s * 1e3:.4g} ms "
              f"(floor {f.tpot_s * 1e3:.4g}, layout {f.layout_tpot_s * 1e3:.4g}, serving {f.serving_tpot_s * 1e3:.4g})\n"
              f"      -> {why}")
    errors = [f for f in floors if f.run.data_problems or not f.weights_fit]
    print(f"\nRows whose fields are data errors: {len(errors)} (their floors are computed on the fields as given, "
          "which only lowers them where they give more GPUs)")
    kinds: Counter[tuple[str, str | None, str]] = Counter()
    for f in errors:
        problems = list(f.run.data_problems)
        if not f.weights_fit:
            problems.append(f"weights of {f.weight_bytes / 1e9:.0f} GB do not fit in the {f.decode_gpus} GPUs stated")
        for p in problems:  # one line per kind: a twin's row number and id left out
            kinds[(f.run.engine, f.run.model_id, re.sub(r"as \S+:\d+ \([^)]*\)", "as a twin row", p))] += 1
    for (engine, model, problem), count in sorted(kinds.items()):
        print(f"  {count:>3} x {engine} {model}: {problem}")
    likely = [(f, run_floors(n)) for f in errors if (n := on_likely_gpus(f.run)) is not None]
    if likely:
        print(f"  TPOT floor/measured of the {len(likely)} rows whose id, twin or MoE grid states fewer GPUs: "
              f"{spread([f.tpot_ratio for f, _ in likely])} on the fields' GPUs, "
              f"{spread([g.tpot_ratio for _, g in likely])} on the stated ones; beating on those: "
              f"{sum(g.beats for _, g in likely)}")
    skipped = Counter(r.unexpressible for r in runs if not r.expressible)
    print(f"\nRows not expressible: {sum(skipped.values())}")
    for reason, count in skipped.items():
        print(f"  {count:>3} x {reason}")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT)
