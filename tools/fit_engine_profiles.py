"""Refit the shipped engine profiles from the measured runs (reproducible: no randomness).

    python tools/fit_engine_profiles.py [MEASURED_DIR] [--out src/roofline_decode/engine_profiles]

MEASURED_DIR defaults to ../shared/reference/measured (the only data the profiles may be fitted
on).  Prints one line per engine: rows, devices, held-out median error and band coverage.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

from dataclasses import replace

from roofline_decode.measure.engine_band import DEVICE_PRIOR_ENGINE
from roofline_decode.measure.engine_profile import EngineProfile, fit_profile, fit_ttft, profile_dir
from roofline_decode.measure.engine_rows import ENGINE_DESCRIPTIONS, ENGINE_FILES, EngineRows, engine_rows
from roofline_decode.measure.engine_rows_production import (DATA_ERROR, DUPLICATE, PRODUCTION_FILE, PRODUCTION_LOSS,
                                                             PRODUCTION_PRIOR, TTFT_LOSS, TTFT_TERMS, dropped_counts,
                                                             production_rows)

NOTES = {
    "llama.cpp-cuda": "single-GPU rows and the May-2024 4-GPU layer-split rows (t_hop); the Dec-2023 multi-GPU rows "
                      "are left out (see measure/engine_rows.py); Dec-2023 ./main rows take a 300-token prompt (not "
                      "stated in the source)",
    "llama.cpp-metal": "Apple M1, M1 Max, M2 Ultra, M3, M3 Max; same conventions as llama.cpp-cuda",
    "gpt-fast": "tok/s includes the 5-token prefill; TP 2-8 rows fit the all-reduce cost c_ar",
    "exllama": "ExLlama v1 and ExLlamaV2 rows together; contexts as published (midpoints of ranges, else 0)",
    "hf-eager": "HF eager repeats GQA KV heads (repeat_kv), which shows as a low KV-stream efficiency; "
                "rows that do not fit the device are dropped",
}
PRODUCTION = {
    "tensorrt-llm": "NVIDIA TensorRT-LLM serving (aggregated and disaggregated; AIConfigurator silicon runs, H100/H200 SXM)",
    "vllm": "vLLM serving (aggregated; AIConfigurator silicon runs, H100/H200 SXM)",
    "sglang": "SGLang serving (aggregated and disaggregated; AIConfigurator silicon runs, H100/H200 SXM)",
}
PRODUCTION_NOTE = ("TPOT fitted on serving_floor's terms: the decode step of its decode batch at its mean context on "
                   "the (decode) layout's devices plus the prompts riding along (k_pf), the layout's collective "
                   "floor (k_comm), the experts each device runs (t_exp) and the peers of each all-reduce (c_peer); "
                   "TTFT on its prefill (+ KV transfer) and queue floors and the terms of measure/engine_ttft.py the "
                   "engine's held-out splits chose (TTFT_TERMS); TPOT fitted with the Huber loss of "
                   "log(measured / predicted) as a MAP fit toward the physical values of engine_fit.STEP_PRIOR, "
                   "TTFT with the engine's TTFT_LOSS (the ttft entry's loss); bands from leave-one-device-out and "
                   "leave-one-model-out errors pooled; see measure/engine_rows_production.py")



def sources(folder: Path, files: tuple[str, ...]) -> list[dict[str, str]]:
    out = []
    for name in files:
        with (folder / name).open(newline="", encoding="utf-8") as handle:
            urls = sorted({r.get("source_url", "") for r in csv.DictReader(handle)} - {""})
        for url in urls:
            commit = re.search(r"/blob/([0-9a-f]{7,40})/", url)
            out.append({"file": f"shared/reference/measured/{name}", "url": url, "commit": commit[1] if commit else ""})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("measured", nargs="?", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "reference" / "measured"))
    parser.add_argument("--out", default=str(profile_dir()))
    args = parser.parse_args(argv)
    folder, out = Path(args.measured), Path(args.out)
    if not folder.is_dir():
        print(f"measured folder {folder} not found", file=sys.stderr)
        return 2
    fitted: list[tuple[EngineProfile, EngineRows]] = []
    prior: float | None = None  # sigma_0 of the bands' offsets: the prior engine's device spread, fitted first
    single = engine_rows(folder)
    for engine in sorted(single, key=lambda name: name != DEVICE_PRIOR_ENGINE):
        rows = single[engine]
        assert rows.terms is not None
        fitted.append((fit_profile(engine, ENGINE_DESCRIPTIONS[engine], rows.terms, rows.measured_s, rows.device_ids,
                                   rows.bandwidths, sources(folder, ENGINE_FILES[engine]),
                                   notes=NOTES[engine] + f"; {len(rows.dropped)} rows dropped (below the strict floor "
                                                         "or not fitting the device)", offset_prior=prior), rows))
        if engine == DEVICE_PRIOR_ENGINE:
            prior = fitted[-1][0].prior["sigma_scale"]
    tpot, ttft = production_rows(folder)
    prod_sources = [{"file": f"shared/reference/measured/{PRODUCTION_FILE}",
                     "url": "https://github.com/ai-dynamo/aiconfigurator/blob/095f58a/aic-core/src/aiconfigurator_core/"
                            "systems/silicon_sample.csv", "commit": "095f58a"}]
    for engine, rows in tpot.items():
        assert rows.terms is not None
        n = dropped_counts(rows)
        note = (f"; {len(rows.dropped)} rows not fitted: {n[DUPLICATE]} duplicates (the same TTFT, TPOT, ISL and OSL as "
                f"an earlier row: one run in several dumps, counted once), {n[DATA_ERROR]} data errors (fields that "
                f"disagree with the run id or a twin row: data_problems of measure/production_runs.py), {n['other']} "
                "below the decode-step floor or without room for the KV cache")
        profile = fit_profile(engine, PRODUCTION[engine], rows.terms, rows.measured_s, rows.device_ids, rows.bandwidths,
                              prod_sources, notes=PRODUCTION_NOTE + note, loss=PRODUCTION_LOSS, models=rows.models,
                              prior=PRODUCTION_PRIOR, offset_prior=prior)
        t = ttft[engine]
        if len(t.measured_s) >= 3:
            profile = replace(profile, ttft=fit_ttft(t.measured_s, t.prefill_floor_s, t.queue_floor_s, t.clients,
                                                     t.device_ids, t.models, TTFT_LOSS[engine], step_s=t.step_floor_s,
                                                     prompt_tokens=t.prompt_tokens, output_tokens=t.output_tokens,
                                                     terms=TTFT_TERMS[engine], device_sigma=prior))
        fitted.append((profile, rows))
    for profile, rows in fitted:
        profile.save(out / f"{profile.engine}.json")
        s = profile.statistics
        line = (f"{profile.engine:16s} {profile.rows:4d} rows {len(profile.devices):2d} devices  held-out median "
                f"{s['held_out_median']:.1%} p90 {s['held_out_p90']:.1%}  90% band covers {s['held_out_coverage_90']:.0%}")
        if profile.ttft:
            st = profile.ttft["statistics"]
            line += f"  | TTFT {profile.ttft['rows']} rows held-out median {st['held_out_median']:.1%}"
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
