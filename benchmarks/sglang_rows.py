"""Why the SGLang TPOT rows are not predicted across models (issue 29): the evidence, printed.

The production TPOT model (``measure/engine_profile.py``) has one set of step parameters per
engine; for SGLang its held-out errors stay near 40 % where TensorRT-LLM and vLLM reach 10-19 %
(``benchmarks/expected_accuracy.py``).  This script prints, from the fitted rows of
``tests/data/measured/production/aic_silicon_hopper.csv`` (duplicates and data errors left out,
as the profiles are fitted):

1. per engine, the share of a request's closed-loop cycle spent decoding,
   (N_out - 1) TPOT / ((N_out - 1) TPOT + TTFT) (Little's law: the decode batch is the clients
   times that share, where the step model takes it as serving_floor's, about the clients);
2. per SGLang model: the engine versions its rows come from, the in-sample median error of the
   engine-wide MAP fit, of a MAP fit on that model alone and of a bare (no prior) fit on it,
   with the bare fit's fixed cost per step (t_step + t_layer L) and cost per sequence q;
3. DeepSeek-R1 / V3 on 8 H200 at TP 8: the TPOT of the disaggregated decode workers next to the
   aggregated runs at the same concurrency and ISL;
4. per engine, the TPOT splits of ``benchmarks/expected_accuracy.py`` (median |predicted / measured
   - 1| of the MAP point fit: fit H100 predict H200, the reverse, each model from the others) on
   the rows as fitted and on the rows whose clients are scaled by their measured decoding share
   (``production_rows(..., decoding_clients=True)``: an oracle, it uses the measured TTFT; it
   bounds what a decode batch consistent with the TTFT could gain).

Prints figures; asserts nothing.  Run: ``python benchmarks/sglang_rows.py [MEASURED_DIR]``.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from roofline_decode.measure.engine_profile import fit_step_model, predict_step
from roofline_decode.measure.engine_rows import EngineRows
from roofline_decode.measure.engine_rows_production import (PRODUCTION_FILE, PRODUCTION_LOSS, PRODUCTION_PRIOR,
                                                              production_rows, production_runs)
from roofline_decode.measure.rows import read_csv_records


def versions(folder: Path) -> dict[str, str]:
    """source (``file:line``) -> backend_version of the production CSV."""
    path = folder / PRODUCTION_FILE
    return {f"{path.name}:{line}": rec["backend_version"].strip()
            for line, rec in enumerate(read_csv_records(path), start=2)}


def decoding_share(folder: Path, fitted: dict[str, set[str]]) -> None:
    print("1. share of the closed-loop cycle spent decoding, (N_out - 1) TPOT / ((N_out - 1) TPOT + TTFT), "
          "aggregated rows fitted")
    runs, _ = production_runs(folder)
    for engine in sorted(fitted):
        share = np.array([(r.osl - 1) * r.tpot_s / ((r.osl - 1) * r.tpot_s + r.ttft_s) for r in runs
                          if r.engine == engine and r.aggregated and r.source in fitted[engine] and r.osl >= 2])
        print(f"   {engine:13s} {share.size:4d} rows  median {np.median(share):.2f}  "
              f"p10 {np.quantile(share, 0.1):.2f}  rows below 0.8: {np.mean(share < 0.8):4.0%}")


def per_model(folder: Path) -> None:
    tpot, _ = production_rows(folder)
    rows = tpot["sglang"]
    assert rows.terms is not None
    y, terms = rows.measured_s, rows.terms
    models = np.asarray(rows.models)
    groups = np.array([f"{d}|{m}" for d, m in zip(rows.device_ids, rows.models)])
    version = versions(folder)
    every, _ = fit_step_model(terms, y, None, PRODUCTION_LOSS, PRODUCTION_PRIOR, groups)
    engine_wide = np.abs(y / predict_step(terms, every)[0] - 1)
    print("\n2. SGLang per model: in-sample median |predicted / measured - 1| of the engine-wide MAP fit, a MAP fit "
          "on the model alone, a bare fit on it (fixed cost per step t_step + t_layer L and q of the bare fit)")
    for m in sorted(set(rows.models)):
        k = models == m
        found = sorted({version[s] for s, keep in zip(rows.sources, k) if keep})
        alone, _ = fit_step_model(terms.take(k), y[k], None, PRODUCTION_LOSS, PRODUCTION_PRIOR, groups[k])
        bare, _ = fit_step_model(terms.take(k), y[k], None, PRODUCTION_LOSS)
        err = [np.median(np.abs(y[k] / predict_step(terms.take(k), p)[0] - 1)) for p in (alone, bare)]
        fixed = bare[1] + bare[0] * float(np.median(terms.layers[k]))
        print(f"   {m:18s} {int(k.sum()):3d} rows  versions {', '.join(found):28s} "
              f"engine-wide {np.median(engine_wide[k]):5.1%}  alone {err[0]:5.1%}  bare {err[1]:5.1%}  "
              f"fixed/step {fixed * 1e3:6.2f} ms  q {bare[2] * 1e6:5.1f} us")


def disaggregated(folder: Path, fitted: set[str]) -> None:
    print("\n3. DeepSeek-R1 / V3 on 8 H200, TP 8, no EP: TPOT [ms] of the disaggregated decode workers and the "
          "aggregated runs, by concurrency and ISL (OSL 1024 and 8192 pooled)")
    table: dict[tuple[int, int], dict[str, list[float]]] = defaultdict(lambda: {"disagg": [], "agg": []})
    for r in production_runs(folder)[0]:
        if (r.engine == "sglang" and r.source in fitted and r.model.name in ("DeepSeek-R1", "DeepSeek-V3")
                and r.parallel.tp == 8 and r.parallel.ep == 1):
            table[(int(r.batch), r.isl)]["agg" if r.aggregated else "disagg"].append(r.tpot_s * 1e3)
    for (clients, isl), got in sorted(table.items()):
        if got["agg"] and got["disagg"]:
            a, d = np.median(got["agg"]), np.median(got["disagg"])
            print(f"   C {clients:4d} ISL {isl:5d}: disaggregated {d:6.2f} ({len(got['disagg'])} rows)  aggregated "
                  f"{a:6.2f} ({len(got['agg'])} rows)  ratio {a / d:4.2f}")


def split_medians(rows: EngineRows) -> tuple[float, float, float]:
    """Median errors (fit H100 predict H200, the reverse, each model from the others) of the MAP fit."""
    assert rows.terms is not None
    y, terms = rows.measured_s, rows.terms
    ids, models = np.asarray(rows.device_ids), np.asarray(rows.models)
    groups = np.array([f"{d}|{m}" for d, m in zip(ids, models)])

    def errors(train: np.ndarray) -> np.ndarray:
        p, _ = fit_step_model(terms.take(train), y[train], None, PRODUCTION_LOSS, PRODUCTION_PRIOR, groups[train])
        return np.abs(predict_step(terms.take(~train), p)[0] / y[~train] - 1)

    by_model = np.concatenate([errors(models != m) for m in sorted(set(rows.models))])
    return (float(np.median(errors(ids == "h100-sxm"))), float(np.median(errors(ids == "h200-sxm"))),
            float(np.median(by_model)))


def oracle(folder: Path) -> None:
    print("\n4. TPOT split medians (fit H100 -> H200 / H200 -> H100 / by model): rows as fitted, and with the clients "
          "scaled by the measured decoding share (an oracle)")
    plain, scaled = production_rows(folder)[0], production_rows(folder, decoding_clients=True)[0]
    for engine in sorted(plain):
        a, b = split_medians(plain[engine]), split_medians(scaled[engine])
        print(f"   {engine:13s} {' / '.join(f'{x:5.1%}' for x in a)}   ->   {' / '.join(f'{x:5.1%}' for x in b)}")


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else Path(__file__).resolve().parents[1] / "tests" / "data" / "measured"
    tpot, _ = production_rows(folder)
    fitted = {engine: set(rows.sources) for engine, rows in tpot.items()}
    decoding_share(folder, fitted)
    per_model(folder)
    disaggregated(folder, fitted["sglang"])
    oracle(folder)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
