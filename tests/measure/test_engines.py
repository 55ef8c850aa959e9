"""Readers of engine benchmark output (llama-bench, llama-batched-bench, vLLM / SGLang serving,
SGLang bench_one_batch) on sample files in the tools' documented formats (tests/data/engines)."""

from pathlib import Path

import pytest

from roofline_decode.measure.engines import engine_layout, load_engine_results, mean_request_context
from roofline_decode.measure.rows import MeasurementFileError

DATA = Path(__file__).parents[1] / "data" / "engines"


@pytest.mark.parametrize("name", ["llama_bench.json", "llama_bench.jsonl", "llama_bench.csv", "llama_bench.md"])
def test_llama_bench_in_every_output_format(name):
    result = load_engine_results(DATA / name)
    assert engine_layout(DATA / name) == "llama-bench"
    assert [why for _, why in result.skipped] == ["prompt processing (pp) test: not a decode step"]
    tg, deep = result.rows
    # tg128: 128 single-token steps after 0 (then 4096) cached tokens; mean context D + 127/2
    assert (tg.batch, tg.context, deep.context) == (1, 63.5, 4159.5)
    # "Q4_K - Medium" is llama_model_ftype_name of the Q4_K_M preset: read as its tensor mixture
    assert tg.weight_format == "Q4_K_M" and "lower bound" not in tg.notes
    if name.endswith(".md"):  # the table has t/s only (rounded to 0.01)
        assert tg.step_time == pytest.approx(1 / 118.88)
    else:  # avg_ns / n_gen
        assert tg.step_time == pytest.approx(1076767880 / 128 / 1e9) and tg.kv_format == "fp16"
        assert tg.step_time_std_s == pytest.approx(9449585 / 128 / 1e9)


@pytest.mark.parametrize("name, batches", [("batched_bench.txt", [1, 2, 4, 8]), ("batched_bench.jsonl", [1, 8])])
def test_batched_bench_table_and_jsonl(name, batches):
    rows = load_engine_results(DATA / name).rows
    assert [r.batch for r in rows] == batches
    eight = rows[-1]
    # T_TG = 1.774 s for TG = 128 steps at B = 8, contexts 512 .. 639
    assert eight.step_time == pytest.approx(1.774 / 128) and eight.context == 512 + 127 / 2


def test_batched_bench_with_separate_sequences_is_batch_one(tmp_path):
    text = (DATA / "batched_bench.txt").read_text().replace("is_tg_separate = 0", "is_tg_separate = 1")
    path = tmp_path / "separate.txt"
    path.write_text(text)
    eight = load_engine_results(path).rows[-1]
    assert eight.batch == 1 and eight.step_time == pytest.approx(1.774 / (8 * 128))


def test_vllm_serve_result():
    row, = load_engine_results(DATA / "vllm_serve.json").rows
    # 256 requests of 1024 input and 128 output tokens: mean decode context 1024 + 126/2
    assert row.batch == 16 and row.context == mean_request_context(1024, 128) == 1087
    assert row.step_time == pytest.approx(0.0192) and row.model == "llama-3.1-8b"
    assert "max_concurrency" in row.notes and "upper estimate" in row.notes


def test_sglang_serving_uses_max_concurrency_or_the_measured_one():
    rows = load_engine_results(DATA / "sglang_serving.jsonl", model="qwen2.5-7b", num_devices=2).rows
    assert [r.batch for r in rows] == [32, 47.9]
    assert rows[1].notes.startswith("batch from measured mean concurrency")
    assert all(r.num_devices == 2 and r.model == "qwen2.5-7b" for r in rows)


def test_sglang_bench_one_batch():
    result = load_engine_results(DATA / "sglang_one_batch.jsonl")
    assert [r.batch for r in result.rows] == [1, 16]
    assert result.rows[1].step_time == pytest.approx(0.00931) and result.rows[1].context == 1024 + 14 / 2
    assert result.skipped == [("sglang_one_batch.jsonl#3", "no decode steps (output_len <= 1)")]


def test_llama_bench_devices_from_gpu_info(tmp_path):
    import json

    records = json.loads((DATA / "llama_bench.json").read_text())
    records[1]["gpu_info"] = "NVIDIA GeForce RTX 4090, NVIDIA GeForce RTX 4090"
    for split, field in (("layer", "pipeline_parallel"), ("row", "num_devices")):
        records[1]["split_mode"] = split
        path = tmp_path / f"{split}.json"
        path.write_text(json.dumps(records))
        row = load_engine_results(path).rows[0]
        assert getattr(row, field) == 2


@pytest.mark.parametrize("content, needle", [
    ("just some text\n", "not a known engine output"),
    ('[{"n_prompt": 0, "n_gen": "x", "avg_ns": 1, "avg_ts": 1}]', r"row 1, column 'n_gen': 'x' is invalid"),
    ('[{"n_gen": 8, "avg_ns": 1, "avg_ts": 1}]', "row 1, column 'n_prompt': missing from this llama-bench record"),
    ('{"completed": 4, "mean_tpot_ms": -3, "total_input_tokens": 8, "total_output_tokens": 8, "max_concurrency": 2}',
     "column 'mean_tpot_ms': -3 is invalid: expected the mean time per output token"),
])
def test_bad_files_name_the_file_and_row(tmp_path, content, needle):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(MeasurementFileError, match=needle) as info:
        load_engine_results(path)
    assert "bad.json" in str(info.value)
    assert engine_layout(tmp_path / "missing.json") is None


@pytest.mark.parametrize("ftype, weights", [
    ("Q4_K - Medium", "Q4_K_M"), ("Q4_K - Small", "Q4_K_S"), ("Q2_K - Medium", "Q2_K"), ("Q2_K - Small", "Q2_K_S"),
    ("Q3_K - Large", "Q3_K_L"), ("Q6_K", "Q6_K"), ("Q8_0", "Q8_0"), ("MXFP4 MoE", "MXFP4_MOE"),
    ("IQ2_XXS - 2.0625 bpw", "IQ2_XXS"), ("IQ3_S mix - 3.66 bpw", "IQ3_M"), ("IQ4_XS - 4.25 bpw", "IQ4_XS"),
    ("TQ1_0 - 1.69 bpw ternary", "TQ1_0"), ("mostly Q5_K - Medium", "Q5_K_M"), ("F16", "fp16"), ("BF16", "bf16"),
    ("all F32", "fp32"),
])
def test_llama_bench_file_types_are_presets(tmp_path, ftype, weights):
    text = (DATA / "llama_bench.jsonl").read_text().replace("Q4_K - Medium", ftype)
    path = tmp_path / "bench.jsonl"
    path.write_text(text)
    tg = load_engine_results(path).rows[0]
    assert tg.weight_format == weights and tg.notes == ""


def test_llama_bench_q4_k_m_floor_counts_the_mixture():
    from roofline_decode.measure.compare import compare

    rows = load_engine_results(DATA / "llama_bench.jsonl", model="qwen2.5-7b", accelerator="rtx-4090").rows
    tg = compare(rows)[0]
    # Qwen2.5-7B Q4_K_M reads 4.37 GB a step (q6_k attn_v/ffn_down in the "more bits" layers and a
    # q6_k lm_head), not the 3.95 ms of a plain q4_k: 4.34 ms at 1008 GB/s
    assert tg.floor_step_time_s == pytest.approx(4.3395e-3, rel=1e-3)
