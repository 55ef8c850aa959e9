"""Strict floors on 1,884 production runs: no correctly described run beats them.

The runs are aiconfigurator's silicon sample (TensorRT-LLM, vLLM, SGLang on H100 / H200 SXM;
ai-dynamo/aiconfigurator commit 095f58a, Apache-2.0).  Every row the library can express is
checked once (about 2,000 floor evaluations, a few seconds); the rows that beat a floor are
listed below with their diagnosis, and rows whose fields are data errors are checked again on
the GPUs their id, a twin row or their MoE grid states.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from roofline_decode import decode_floor, prefill_floor, serving_floor
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import load_production_runs, run_floors
from roofline_decode.measure.production_floors import RunFloors, all_run_floors, decode_share, diagnosis
from roofline_decode.measure.production_runs import ProductionRun

TABLE = Path(__file__).resolve().parents[1] / "data" / "measured" / "production" / "aic_silicon_hopper.csv"

#: Rows that beat a strict floor (aggregate or on their layout), and why (docs/production_check.md).
BEATING = {
    # vLLM Qwen3-32B disaggregated, 2 decode workers of TP4: the row states no concurrency, and the
    # running batch inferred from its batch_size (224) is the engine's limit, not what ran.
    "aic_silicon_hopper.csv:786": "data incomplete: the row states no concurrency",
    # TensorRT-LLM DeepSeek-R1 disaggregated on 2 x 8 H100, 4,916 clients, twice (two dumps): no decode
    # worker count, so one worker of TP16 / EP16 takes 4,097 sequences; its layout floor (EP all-to-all
    # and TP all-reduces across the two nodes) is 197 ms against 118 ms measured.  This configuration's
    # twin rows with worker counts state 2 or 3 decode workers.
    "aic_silicon_hopper.csv:1165": "data incomplete: the row states no decode worker count",
    "aic_silicon_hopper.csv:1798": "data incomplete: the row states no decode worker count",
    # the same at 1,845 clients: below the serving floor's step of 1,182 sequences (89 ms), not the layout's
    "aic_silicon_hopper.csv:1145": "data incomplete: the row states no decode worker count",
    "aic_silicon_hopper.csv:1790": "data incomplete: the row states no decode worker count",
    # vLLM gpt-oss-120b on 4 and 8 H100s, 512 clients, 8,192 in: TTFT is 81 % of E2E, so about 96 requests
    # decoded at a time; the serving floor admits every client that fits (its A3): a server cap broke it.
    "aic_silicon_hopper.csv:1659": "TPOT 5.456 ms < the serving floor's",
    "aic_silicon_hopper.csv:1665": "TPOT 4.449 ms < the serving floor's",
    # vLLM Llama-3.1-8B FP8 on one H200, 64 clients, 2,000 in / 100 out: 0.3 % below the serving floor's
    # compute-bound steady step (64 decode tokens + about 1,260 prompt tokens riding along at the fp8 peak,
    # lm_head in bf16 as nvidia's FP8 checkpoint keeps it).
    "aic_silicon_hopper.csv:911": "TPOT 9.74 ms < the serving floor's 9.771 ms",
}


@pytest.fixture(scope="module")
def runs() -> list[ProductionRun]:
    return load_production_runs(TABLE)


@pytest.fixture(scope="module")
def floors(runs: list[ProductionRun]) -> list[RunFloors]:
    return all_run_floors(runs)


def test_no_correctly_described_row_beats_its_strict_floor(floors):
    beating = {f.run.source: diagnosis(f) or "" for f in floors if f.beats or f.beats_layout or f.beats_serving}
    assert set(beating) == set(BEATING)
    for source, why in BEATING.items():
        assert beating[source].startswith(why)
    assert "breaks A3" in beating["aic_silicon_hopper.csv:1659"] and "breaks A2" in beating["aic_silicon_hopper.csv:911"]


def test_no_row_beats_the_batch_one_step_or_the_prefill_of_its_prompt(floors):
    # the floors that hold whatever the running batch: a run faster would be a data error
    assert not [f.run.source for f in floors if f.beats_tpot_any_batch or f.beats_ttft]
    assert all(f.tpot_any_batch_s <= f.tpot_s for f in floors)


def test_data_error_rows_do_not_beat_their_floors_on_the_gpus_stated_elsewhere(floors):
    checked = 0
    for f in floors:
        run, layout = f.run, f.run.decode_layout
        if run.likely_gpus is None or layout is None:
            continue
        named = replace(layout, tp=run.likely_gpus, pp=1, attention_dp=1, moe_tp=1, moe_ep=run.likely_gpus,
                        batch=layout.running_batch_limit)
        again = run_floors(replace(run, layout=named))
        assert again.tpot_s > f.tpot_s and not again.beats, run.source
        checked += 1
    assert checked == 101


def test_every_data_error_row_is_named(floors):
    errors = [f for f in floors if f.run.data_problems or not f.weights_fit]
    assert len(errors) == 127
    no_fit = [f for f in floors if not f.weights_fit]  # vLLM Qwen3-235B-FP8 "tp1": 236 GB on one 141 GB H200
    assert len(no_fit) == 13 and {f.run.model_id for f in no_fit} == {"qwen3-235b-a22b"}


def test_first_row_by_hand(runs):
    run = runs[0]  # SGLang DeepSeek-V3 fp8 on 8 H200, 1024 / 1024 tokens, 4 clients
    f = run_floors(run)
    model = run.served_model()
    prefill = prefill_floor(model, "h200-sxm", prompt=1024, routing="identical")
    assert f.ttft_s == pytest.approx(float(prefill.ttft_s) / 8)
    assert f.running_batch == pytest.approx(4 * decode_share(run))
    step = decode_floor(model, "h200-sxm", batch=f.running_batch, context=1024 + 1022 / 2, routing="identical")
    assert f.tpot_s == pytest.approx(float(step.step_time_s) / 8)
    naive = decode_floor(model, "h200-sxm", batch=4, context=1024 + 1022 / 2, routing="uniform")
    assert f.naive_tpot_s == pytest.approx(float(naive.step_time_s) / 8)
    assert diagnosis(f) is None and f.weights_fit
    on_layout = decode_floor(model, "h200-sxm", batch=f.running_batch, context=1024 + 1022 / 2, routing="identical",
                             parallel="tp8 ep1")
    assert f.layout_tpot_s == pytest.approx(float(on_layout.step_time_s)) and f.layout_tpot_s >= f.tpot_s
    assert f.layout_note == "layouts tp8 / tp8"
    served = serving_floor(model, "h200-sxm", 4, 1024, 1024, parallel="tp8", routing="identical", max_batch=4)
    assert (f.serving_ttft_s, f.serving_tpot_s) == (float(served.ttft_s), float(served.tpot_s))
    assert f.serving_tpot_s >= f.layout_tpot_s * 0.999 and f.serving_batch == 4


def test_one_at_a_time_gives_the_same_floors(runs, floors):
    # all_run_floors computes the serving floors of alike runs in one broadcast call
    expressible = [r for r in runs if r.expressible]
    for index in range(0, len(expressible), 97):
        assert repr(run_floors(expressible[index])) == repr(floors[index])  # nan == nan here


def test_more_gpus_never_raise_a_floor(runs):
    run = next(r for r in runs if r.model_id == "llama-3.1-70b" and r.layout is not None and r.layout.tp == 2)
    one, four = (run_floors(replace(run, layout=replace(run.layout, tp=n))) for n in (2, 8))
    assert four.ttft_s < one.ttft_s and four.tpot_any_batch_s < one.tpot_any_batch_s and four.tpot_s <= one.tpot_s


def test_running_batch_never_exceeds_the_concurrency_or_what_fits(floors):
    for f in floors:
        assert 1 <= f.running_batch <= max(1.0, f.clients)
        assert f.running_batch <= max(1.0, f.batch_that_fits)


def test_a_faster_run_is_diagnosed(runs):
    run = runs[0]
    fast = run_floors(replace(run, tpot_s=run.tpot_s / 1000, ttft_s=run.ttft_s / 1000))
    why = diagnosis(fast) or ""
    assert fast.beats and "speculative" in why and "prefix-cache" in why


def test_serving_floor_where_the_row_has_one(floors):
    no_clients = [f for f in floors if f.run.concurrency is None]
    assert no_clients and all(math.isnan(f.serving_tpot_s) and "no concurrency" in f.serving_note for f in no_clients)
    no_layout = [f for f in floors if f.serving_note.startswith("no serving floor: no layout")]
    assert len(no_layout) == 34 and all(f.run.data_problems for f in no_layout)
    served = [f for f in floors if math.isfinite(f.serving_tpot_s)]
    assert len(served) == 1884 - len(no_clients) - len(no_layout) == 1835
    assert all(f.serving_ttft_s >= f.layout_ttft_s * 0.999 for f in served)


def test_layout_of_the_fields():
    from roofline_decode import load_model
    from roofline_decode.measure.production_floors import worker_parallel
    from roofline_decode.measure.production_runs import WorkerLayout

    v3 = load_model("deepseek-v3")
    assert str(worker_parallel(WorkerLayout(tp=1, attention_dp=8, moe_tp=1, moe_ep=8), v3)) == "dp8 ep8"
    assert "moe_tp x ep" in str(worker_parallel(WorkerLayout(tp=1, moe_tp=2, moe_ep=1), v3))
    assert "divisor of the 32 attention heads" in str(worker_parallel(WorkerLayout(tp=64, moe_tp=8, moe_ep=8),
                                                                       load_model("qwen3.5-397b-a17b")))
    assert str(worker_parallel(WorkerLayout(tp=4, moe_tp=0, moe_ep=0), load_model("qwen3-32b"))) == "tp4"


def test_unexpressible_row_raises(runs):
    run = next((r for r in runs if not r.expressible), replace(runs[0], unexpressible="a reason"))
    with pytest.raises(InvalidValueError, match="expressible"):
        run_floors(run)


def test_docs_page_examples():
    from tests.markdown_examples import DOCS, run_page

    run_page(DOCS / "production_check.md", min_examples=5)
