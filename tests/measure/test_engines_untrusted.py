"""Issue 27 ("Untrusted files"): engine benchmark outputs whose fields lie.

Each reproducer gives one MeasurementFileError naming the file, the row, the field, the value
and what is allowed; a bad field is refused, never turned into a row.  The CLI answers with
exit code 2 and one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofline_decode.cli import main
from roofline_decode.measure import engines
from roofline_decode.measure.engines import engine_layout, load_engine_results
from roofline_decode.measure.rows import MeasurementFileError

DATA = Path(__file__).parents[1] / "data" / "engines"


def _llama_bench(**changes: object) -> str:
    """llama_bench.json with the tg128 record (row 2) changed."""
    records = json.loads((DATA / "llama_bench.json").read_text())
    records[1].update(changes)
    return json.dumps(records)


def _vllm(**changes: object) -> str:
    return json.dumps(json.loads((DATA / "vllm_serve.json").read_text()) | changes)


def _text(name: str, old: str, new: str) -> str:
    text = (DATA / name).read_text()
    assert old in text
    return text.replace(old, new, 1)


def refused(tmp_path: Path, name: str, text: str, key: str, value: str) -> MeasurementFileError:
    """The one error reading ``text`` as ``name`` gives; it names the path, the key and the value."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(MeasurementFileError) as info:
        load_engine_results(path)
    message = str(info.value)
    assert message.startswith(f"{path}: row ") and f"column {key!r}: {value} is invalid: expected" in message, message
    assert info.value.column == key
    return info.value


def test_n_gen_1e400_reads_as_infinity_and_is_refused(tmp_path):
    error = refused(tmp_path, "bench.json", _llama_bench().replace('"n_gen": 128', '"n_gen": 1e400', 1), "n_gen", "inf")
    assert error.row == 2 and "a whole number from 0 to" in str(error)


def test_batched_bench_jsonl_infinite_time_is_refused(tmp_path):
    text = _text("batched_bench.jsonl", '"t_tg": 1.083000', '"t_tg": Infinity')
    assert "a finite number > 0" in str(refused(tmp_path, "batched.jsonl", text, "t_tg", "inf"))


def test_batched_bench_table_infinite_time_is_refused_under_its_column_name(tmp_path):
    text = _text("batched_bench.txt", "|    1.083 |", "|      inf |")
    refused(tmp_path, "batched.txt", text, "T_TG s", "'inf'")


def test_batched_bench_jsonl_infinite_batch_is_refused(tmp_path):
    refused(tmp_path, "batched.jsonl", _text("batched_bench.jsonl", '"pl": 1,', '"pl": 1e400,'), "pl", "inf")


def test_tensor_parallel_size_1e400_is_refused(tmp_path):
    text = _vllm().replace('"backend"', '"tensor_parallel_size": 1e400, "backend"')
    refused(tmp_path, "vllm.json", text, "tensor_parallel_size", "inf")


def test_separate_sequences_with_batch_zero_are_refused_not_divided_by(tmp_path):
    text = _text("batched_bench.txt", "is_tg_separate = 0", "is_tg_separate = 1").replace(
        "|     1 |    640 |", "|     0 |    640 |").replace("|    1 |    640 |", "|    0 |    640 |")
    error = refused(tmp_path, "separate.txt", text, "B", "'0'")
    assert "a whole number from 1 to" in str(error)


def test_type_k_that_is_a_number_is_refused(tmp_path):
    error = refused(tmp_path, "bench.json", _llama_bench(type_k=5, type_v=5), "type_k", "5")
    assert "a llama.cpp type name" in str(error)


def test_negative_n_prompt_is_refused_not_read_as_a_tg_test(tmp_path):
    refused(tmp_path, "bench.json", _llama_bench(n_prompt=-3), "n_prompt", "-3")


def test_negative_max_concurrency_is_refused_not_clamped_to_one(tmp_path):
    refused(tmp_path, "vllm.json", _vllm(max_concurrency=-16), "max_concurrency", "-16")


def test_infinitely_many_completed_requests_are_refused(tmp_path):
    text = _vllm().replace('"completed": 256', '"completed": Infinity')
    refused(tmp_path, "vllm.json", text, "completed", "inf")


def test_sglang_output_len_minus_inf_text_is_refused(tmp_path):
    text = _text("sglang_one_batch.jsonl", '"output_len": 16', '"output_len": "-inf"')
    refused(tmp_path, "one_batch.jsonl", text, "output_len", "'-inf'")


@pytest.mark.parametrize("name, text, key", [
    ("bench.json", _llama_bench(n_gen=True), "n_gen"),
    ("vllm.json", _vllm(total_output_tokens=True), "total_output_tokens"),
    ("vllm.json", _vllm(completed=True), "completed"),
    ("batched.jsonl", _text("batched_bench.jsonl", '"pl": 8,', '"pl": true,'), "pl"),
])
def test_true_as_a_count_is_refused(tmp_path, name, text, key):
    refused(tmp_path, name, text, key, "True")


def test_fractional_counts_and_text_for_numbers_are_refused(tmp_path):
    refused(tmp_path, "bench.json", _llama_bench(n_depth=0.5), "n_depth", "0.5")
    refused(tmp_path, "vllm.json", _vllm(mean_tpot_ms="fast"), "mean_tpot_ms", "'fast'")
    refused(tmp_path, "vllm.json", _vllm(model_id=7), "model_id", "7")


def test_times_and_rates_whose_step_underflows_are_refused(tmp_path):
    # 5e-324 ns / 128 steps is 0 s; 5e-324 tok/s would be a step of infinitely many seconds
    error = refused(tmp_path, "bench.json", _llama_bench(avg_ns=5e-324), "avg_ns", "5e-324")
    assert "giving a step time of at least 1e-12 s" in str(error)
    refused(tmp_path, "vllm.json", _vllm(mean_tpot_ms=5e-324), "mean_tpot_ms", "5e-324")
    refused(tmp_path, "bench.md", _text("llama_bench.md", "118.88 ± 1.04", "5e-324 ± 1"), "t/s", "'5e-324 ± 1'")


def test_little_law_beyond_any_batch_is_refused(tmp_path):
    text = _vllm(max_concurrency=None, request_throughput=1e300)
    refused(tmp_path, "vllm.json", text, "request_throughput", "1e+300")


def test_json_nested_too_deeply_or_too_large_is_refused(tmp_path, monkeypatch):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"mean_tpot_ms": ' + "[" * 5000 + "]" * 5000 + "}\n")
    with pytest.raises(MeasurementFileError, match=r"deep\.jsonl: column '\(json\)': not valid JSON: nested too deeply"):
        load_engine_results(path)
    with pytest.raises(MeasurementFileError, match="nested too deeply"):  # whatever the file is, no reader goes on
        engine_layout(path)
    monkeypatch.setattr(engines, "MAX_FILE_BYTES", 100)
    with pytest.raises(MeasurementFileError, match=r"vllm_serve\.json: column '\(file\)': larger than 100 bytes"):
        load_engine_results(DATA / "vllm_serve.json")
    assert engine_layout(DATA / "vllm_serve.json") is None  # a large CSV of rows is the generic reader's


def test_cli_names_the_deep_json_of_an_engine_file(tmp_path, capsys):
    path = tmp_path / "deep.jsonl"
    path.write_text('{"mean_tpot_ms": ' + "[" * 5000 + "]" * 5000 + "}\n")
    assert main(["compare", str(path), "--model", "llama-3.1-8b", "--gpu", "h100-sxm"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: column '(json)': not valid JSON: nested too deeply" in err


def test_markdown_prompt_and_generation_test_is_skipped(tmp_path):
    path = tmp_path / "bench.md"
    path.write_text((DATA / "llama_bench.md").read_text().replace("pp512 |", "pp512+tg128 |").replace(
        "tg128 @ d4096 |", "pp512+tg9 @ d99 |"))
    result = load_engine_results(path)
    assert [why for _, why in result.skipped] == ["prompt + generation (pg) test: prefill and decode mixed"] * 2


def test_cli_answers_a_lying_engine_file_with_one_line(tmp_path, capsys):
    path = tmp_path / "vllm.json"
    path.write_text(_vllm(max_concurrency=-16))
    code = main(["compare", str(path), "--model", "llama-3.1-8b", "--gpu", "h100-sxm"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert str(path) in err and "'max_concurrency': -16 is invalid" in err
