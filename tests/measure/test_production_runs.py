"""The production-table reader: mapping onto models, formats, devices, layouts; bad files and rows.

The table is aiconfigurator's silicon sample (ai-dynamo/aiconfigurator commit 095f58a, Apache-2.0;
``tests/data/measured/production/README.md``).
"""

from __future__ import annotations

import csv
from collections import Counter
from pathlib import Path

import pytest

from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import MeasurementFileError, load_production_runs
from roofline_decode.measure import production_runs as pr

TABLE = Path(__file__).resolve().parents[1] / "data" / "measured" / "production" / "aic_silicon_hopper.csv"


@pytest.fixture(scope="module")
def runs() -> list[pr.ProductionRun]:
    return load_production_runs(TABLE)


@pytest.fixture(scope="module")
def by_id(runs: list[pr.ProductionRun]) -> dict[str, pr.ProductionRun]:
    return {r.run_id: r for r in runs}


def test_every_row_is_read_with_its_engine_and_mode(runs):
    assert len(runs) == 1884
    assert Counter(r.engine for r in runs) == {"trtllm": 917, "vllm": 576, "sglang": 391}
    assert Counter(r.mode for r in runs) == {"aggregated": 1593, "disaggregated": 291}
    assert Counter(r.accelerator for r in runs) == {"h200-sxm": 967, "h100-sxm": 917}


def test_only_kimi_is_not_expressible_until_it_is_bundled(runs):
    from roofline_decode.catalog import list_models

    skipped = [r for r in runs if not r.expressible]
    if "kimi-k2.5" in list_models():
        assert not skipped
    else:
        assert len(skipped) == 45 and {r.model_repo for r in skipped} == {"moonshotai/Kimi-K2.5"}
        assert "kimi-k2.5" in skipped[0].unexpressible


def test_models_map_onto_bundled_ids(runs):
    pairs = {(r.model_repo, r.model_id) for r in runs}
    assert pairs == {
        ("deepseek-ai/DeepSeek-V3", "deepseek-v3"), ("deepseek-ai/DeepSeek-R1", "deepseek-r1"),
        ("Qwen/Qwen3-32B", "qwen3-32b"), ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
        ("nvidia/Llama-3.1-8B-Instruct-FP8", "llama-3.1-8b"), ("meta-llama/Llama-3.1-70B", "llama-3.1-70b"),
        ("openai/gpt-oss-120b", "gpt-oss-120b"), ("Qwen/Qwen3-235B-A22B-FP8", "qwen3-235b-a22b"),
        ("MiniMaxAI/MiniMax-M2.5", "minimax-m2.5"), ("moonshotai/Kimi-K2.5", "kimi-k2.5"),
        ("Qwen/Qwen3.5-397B-A17B", "qwen3.5-397b-a17b"), ("zhipuai/GLM-5", "glm-5"),
    }


def test_first_row_deepseek_on_h200_sglang(runs):
    run = runs[0]
    assert (run.run_id, run.source) == ("dsr1_h200_sglang_fp8_agg_1024x1024_c4_cfg81", "aic_silicon_hopper.csv:2")
    assert (run.engine, run.engine_version, run.mode) == ("sglang", "0.5.9", "aggregated")
    assert (run.input_length, run.output_length, run.concurrency) == (1024, 1024, 4)
    assert run.layout == pr.WorkerLayout(tp=8, pp=1, attention_dp=1, moe_tp=8, moe_ep=1, batch=4)
    assert run.ttft_s == pytest.approx(0.2599114292766899) and run.tpot_s == pytest.approx(0.01029225441516629)
    formats = {g: f.name for g, f in run.weight_formats.items()}
    assert formats["attention"] == "fp8_e4m3" and formats["experts"] == "fp8_e4m3-b128x128"
    assert formats["lm_head"] == formats["embedding"] == formats["router"] == "bf16"
    assert run.kv_format.name == "fp8_e4m3" and run.duplicate_of is None and not run.data_problems


def test_formats_of_the_quant_modes():
    assert pr.production_format("").name == "bf16"
    assert pr.production_format("fp8").name == "fp8_e4m3"
    assert pr.production_format("fp8_block").bits_per_element == 8 + 32 / 128**2
    assert pr.production_format("nvfp4").bits_per_element == 4.5
    assert pr.production_format("w4a16_mxfp4").bits_per_element == 4.25
    assert pr.production_format("int4_wo").bits_per_element == 4.5  # int4 in groups of 32 + a 16-bit scale
    assert pr.production_format("fp6_magic") is None


def test_unquantized_runs_keep_bf16_weights_and_kv(runs):
    run = next(r for r in runs if r.model_repo == "meta-llama/Llama-3.1-8B-Instruct" and not r.gemm_quant)
    model = run.served_model()
    assert model.weight_format.name == "bf16" and model.kv_format.name == "bf16" and model.has_uniform_weights


def test_quantized_checkpoint_is_its_base_model_in_fp8(runs):
    run = next(r for r in runs if r.model_repo == "Qwen/Qwen3-235B-A22B-FP8" and r.gemm_quant == "fp8_block")
    model = run.served_model()
    assert model.group_format("experts").name == "fp8_e4m3-b128x128" and model.kv_format.name == "fp8_e4m3"
    assert model.group_format("lm_head").name == "bf16"
    # 235B parameters at about one byte each (embedding and lm_head in bf16: 2 x 0.62B x 2 B)
    assert 236e9 < model.weight_bytes < 238e9


def test_gpt_oss_nvfp4_rows_serve_the_native_mxfp4_checkpoint(runs):
    run = next(r for r in runs if r.model_id == "gpt-oss-120b" and r.gemm_quant == "nvfp4")
    assert any("mxfp4 routed experts" in n and "Blackwell" in n for n in run.notes)
    model = run.served_model()
    assert model.group_format("experts").name == "mxfp4" and model.group_format("attention").name == "bf16"
    fp8 = next(r for r in runs if r.model_id == "gpt-oss-120b" and r.gemm_quant == "fp8").served_model()
    assert fp8.group_format("experts").name == "mxfp4" and fp8.group_format("attention").name == "fp8_e4m3"


def test_kimi_int4_rows_serve_the_checkpoint_experts(runs):
    from roofline_decode.catalog import list_models

    if "kimi-k2.5" not in list_models():
        pytest.skip("kimi-k2.5 is not bundled in this catalog yet")
    run = next(r for r in runs if r.model_id == "kimi-k2.5")
    assert run.expressible and run.gemm_quant == "int4_wo"
    model = run.served_model()
    assert model.group_format("experts").bits_per_element == 4.5  # int4 in groups of 32 + a bf16 scale
    assert model.group_format("attention").name == "bf16" and model.kv_format.name == "fp8_e4m3"


def test_disaggregated_layouts_and_workers(by_id):
    run = by_id["dsr1_h200_trtllm_fp8_disagg_1024x1024_c576_cfg303"]
    assert run.mode == "disaggregated" and run.layout is None
    assert run.prefill is not None and run.decode is not None and run.decode_layout is run.decode
    assert (run.prefill.gpus, run.decode.gpus, run.decode.workers) == (8, 8, 9)
    assert run.decode.running_batch_limit == run.decode.batch * run.decode.attention_dp


def test_id_that_names_fewer_gpus_is_a_data_problem(by_id):
    run = by_id["2026_04_06_deepseek_r1_h200_sxm_trtllm_fp8_agg_1024x1024_c32_tp8_ep8_922"]
    assert run.layout.gpus == 64 and run.likely_gpus == 8
    assert any("the id names tp8" in p for p in run.data_problems)
    assert pr.id_gpus(run.run_id) == 8 and pr.id_gpus("qwen_qwen3_32b_agg_c8_tp2_epnone_1") is None


def test_attention_dp_layout_matching_its_id_is_no_problem(by_id):
    run = by_id["2026_03_25_deepseek_r1_h200_sxm_trtllm_fp8_agg_1024x8192_c256_tp8_0_ep8_0_1238"]
    assert (run.layout.tp, run.layout.attention_dp, run.layout.gpus) == (1, 8, 8)
    assert not run.data_problems and run.likely_gpus is None


def test_twin_rows_of_one_measurement(runs, by_id):
    twins = [r for r in runs if r.duplicate_of is not None]
    assert len(twins) == 1884 - 1658  # 1,658 distinct measurements
    grid = by_id["dsr1_h200_trtllm_fp8_agg_1024x1024_c64_cfg181"]  # no twin, no id: the 8 x 8 grid read as GPUs
    assert grid.likely_gpus == 8 and any("8 x 8 MoE grid" in p for p in grid.data_problems)
    flagged = [r for r in runs if any(p.startswith("the same measurement as") for p in r.data_problems)]
    assert flagged and all(r.layout.gpus == 64 and r.likely_gpus == 8 for r in flagged)


def test_batch_size_per_gpu_is_a_data_problem(by_id):
    from roofline_decode.measure.production_layouts import batch_per_rank

    run = by_id["openai_gpt_oss_120b_openai_gpt_oss_120b_h100_sxm_trtllm_agg_4000x1000_c192_tp4_epnone_1"]
    assert (run.layout.batch, run.layout.tp, run.concurrency) == (48, 4, 192)
    assert batch_per_rank(run.layout, run.concurrency) and any("batch_size is per GPU" in p for p in run.data_problems)
    assert not batch_per_rank(pr.WorkerLayout(tp=1, attention_dp=8, batch=16), 128)


def test_moe_degrees_that_disagree_with_the_gpus(runs):
    bad = [r for r in runs if any("aiconfigurator requires them equal" in p for p in r.data_problems)]
    assert len(bad) == 19 and {r.model_id for r in bad} == {"qwen3-235b-a22b"}


def test_unexpressible_row_refuses_a_model(runs):
    from dataclasses import replace

    run = next((r for r in runs if not r.expressible), replace(runs[0], unexpressible="a reason"))
    with pytest.raises(InvalidValueError, match="expressible"):
        run.served_model()


# -- bad files and rows ---------------------------------------------------------------------
HEADER = list(csv.DictReader(TABLE.open(encoding="utf-8")).fieldnames or [])


def _write(tmp_path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> Path:
    path = tmp_path / "runs.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header or HEADER, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return path


@pytest.fixture(scope="module")
def good_row() -> dict[str, str]:
    return next(csv.DictReader(TABLE.open(encoding="utf-8")))


@pytest.mark.parametrize(("column", "value", "problem"), [
    ("isl", "abc", "whole number"), ("osl", "0", ">= 1"), ("tp_size", "-2", "whole number"),
    ("silicon_tpot_ms", "nan", "> 0"), ("silicon_ttft_ms", "", "empty"), ("silicon_tpot_ms", "-1", "> 0"),
    ("mode", "hybrid", "'agg' or 'disagg'"), ("model_path", "", "empty"),
    ("silicon_data_source", "silicon_concurrency=0", "whole number of clients"),
    ("silicon_data_source", "x=1; silicon_concurrency=12345678901; y", "whole number of clients"),
])
def test_bad_cell_names_file_row_and_column(tmp_path, good_row, column, value, problem):
    rows = [good_row, {**good_row, column: value}]
    with pytest.raises(MeasurementFileError, match=problem) as info:
        load_production_runs(_write(tmp_path, rows))
    assert (info.value.row, info.value.column) == (2, column) and "runs.csv" in info.value.source


def test_missing_column_and_unreadable_files(tmp_path, good_row):
    with pytest.raises(MeasurementFileError, match="column missing") as info:
        load_production_runs(_write(tmp_path, [good_row], [c for c in HEADER if c != "silicon_tpot_ms"]))
    assert info.value.column == "silicon_tpot_ms"
    with pytest.raises(MeasurementFileError, match="cannot read"):
        load_production_runs(tmp_path / "absent.csv")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"id,backend\n\xff\xfe\n")
    with pytest.raises(MeasurementFileError, match="not UTF-8"):
        load_production_runs(binary)


def test_short_and_long_rows(tmp_path, good_row):
    path = _write(tmp_path, [good_row])
    text = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([text[0], text[1] + ",extra,cells"]) + "\n", encoding="utf-8")
    with pytest.raises(MeasurementFileError, match="cells for") as info:
        load_production_runs(path)
    assert info.value.row == 1
    path.write_text("\n".join([text[0], ",".join(text[1].split(",")[:5])]) + "\n", encoding="utf-8")
    with pytest.raises(MeasurementFileError, match="cell missing"):
        load_production_runs(path)


def test_size_and_row_limits(tmp_path, good_row, monkeypatch):
    path = _write(tmp_path, [good_row] * 3)
    monkeypatch.setattr(pr, "MAX_ROWS", 2)
    with pytest.raises(MeasurementFileError, match="more than 2 rows"):
        load_production_runs(path)
    monkeypatch.setattr(pr, "MAX_FILE_BYTES", 100)
    with pytest.raises(MeasurementFileError, match="over the limit"):
        load_production_runs(path)


def test_unknown_names_make_a_row_unexpressible_not_an_error(tmp_path, good_row):
    rows = [{**good_row, "system": "b200_sxm"}, {**good_row, "model_path": "someone/Unknown-7B"},
            {**good_row, "gemm_quant_mode": "fp6_magic"}, {**good_row, "tp_size": ""}]
    runs = load_production_runs(_write(tmp_path, rows))
    reasons = [r.unexpressible or "" for r in runs]
    assert "b200_sxm" in reasons[0] and "no bundled config" in reasons[1]
    assert "not a known quant mode" in reasons[2] and "without tp_size" in reasons[3]


# -- fuzz: a mutated table loads or raises MeasurementFileError; its floors are finite --------
SAMPLE = [line for i, line in enumerate(TABLE.read_text(encoding="utf-8").splitlines())
          if i in (0, 1, 101, 400, 700, 786, 860, 1300, 1607, 1850)]
ODD = ["", "0", "-1", "x", "1e400", "nan", "999999999", "5e-324", "1.5", "agg", "disagg", "fp8", "nvfp4",
       "silicon_concurrency=7", "_tp0_ep0_1", "\"a,b\""]


def _mutated(data) -> bytes:
    from hypothesis import strategies as st

    lines = list(SAMPLE)
    for _ in range(data.draw(st.integers(1, 6))):
        row = data.draw(st.integers(1, len(lines) - 1))
        cells = lines[row].split(",")
        cells[data.draw(st.integers(0, len(cells) - 1))] = data.draw(st.sampled_from(ODD))
        lines[row] = ",".join(cells)
    raw = bytearray("\n".join(lines).encode())
    if data.draw(st.booleans()):
        at = data.draw(st.integers(0, len(raw) - 1))
        raw[at:at + data.draw(st.integers(0, 3))] = data.draw(st.binary(max_size=3))
    return bytes(raw)


def test_fuzz_mutated_tables(tmp_path):
    from hypothesis import given
    from hypothesis import strategies as st

    from roofline_decode.measure import run_floors
    from tests.fuzz.strategies import outcome
    from tests.fuzz.test_fuzz_estimate import fuzz

    @fuzz(150)
    @given(data=st.data())
    def check(data):
        path = tmp_path / "mutated.csv"
        path.write_bytes(_mutated(data))
        loaded = outcome("production tables", lambda: load_production_runs(path))
        for run in loaded or []:
            if not run.expressible:
                continue
            floors = outcome("production floors", lambda run=run: run_floors(run))
            if floors is not None:
                for value in (floors.ttft_s, floors.tpot_s, floors.tpot_any_batch_s, floors.naive_tpot_s):
                    assert 0 < value < float("inf")

    check()
