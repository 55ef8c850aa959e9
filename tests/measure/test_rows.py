"""Measurement rows and their loaders: layouts, unit columns, and errors naming row and column."""

import json

import pytest

from roofline_decode.errors import RooflineError
from roofline_decode.measure import (
    COLUMNS,
    MeasurementFileError,
    MeasurementRow,
    load_csv,
    load_json,
    load_measurements,
    rows_from_records,
)

# knlp a100_matched_scaling rows (decode-bandwidth-study layout), see tests/data/measured/README.md
STUDY_CSV = """B,T,mean_ms,std_ms,tokens_per_sec,kv_bytes,bw_GBs
1,1024,0.0561,0.0021,17829.5593,4194304,74.7826
8,32768,3.5093,0.0361,2279.6271,1073741824,305.9664
"""


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_study_layout_converts_units(tmp_path):
    rows = load_csv(write(tmp_path, "study.csv", STUDY_CSV), model="llama-3.1-8b", accelerator="a100-80gb-sxm")
    assert len(rows) == 2
    first, second = rows
    assert first.batch == 1 and first.context == 1024
    assert first.step_time_s == pytest.approx(0.0561e-3)
    assert first.step_time_std_s == pytest.approx(0.0021e-3)
    assert second.kv_bytes == 1073741824 and second.bandwidth == pytest.approx(305.9664e9)
    assert first.model == "llama-3.1-8b" and first.source.endswith("study.csv#1")


def test_our_own_columns_and_json(tmp_path):
    records = [{"model": "llama-2-7b", "accelerator": "a100-80gb-sxm", "weight_format": "int8", "batch": 1,
                "context": 105, "tokens_per_s": 155.58, "notes": "gpt-fast"}]
    path = write(tmp_path, "rows.json", json.dumps({"rows": records}))
    (row,) = load_json(path)
    assert row.weight_format == "int8" and row.notes == "gpt-fast"
    assert row.step_time == pytest.approx(1 / 155.58)
    assert load_measurements(path)[0] == row


def test_tokens_per_s_only_and_step_time_only():
    (a,) = rows_from_records([{"batch": 4, "context": 0, "tokens_per_s": 400}])
    (b,) = rows_from_records([{"batch": 4, "context": 0, "step_time_ms": 10}])
    assert a.step_time == pytest.approx(b.step_time) and b.aggregate_tokens_per_s == pytest.approx(400)


def test_thousands_separators_are_numbers():
    (row,) = rows_from_records([{"batch": 1, "context": "1,024", "tokens_per_s": "13,918"}])
    assert row.context == 1024 and row.tokens_per_s == 13918


@pytest.mark.parametrize(
    "record, row, column, needle",
    [
        ({"B": 1, "T": 8, "mean_ms": 0}, 1, "mean_ms", "> 0"),
        ({"B": 1, "T": 8, "mean_ms": -2.0}, 1, "mean_ms", "> 0"),
        ({"B": 1, "T": 8, "tokens_per_sec": 0}, 1, "tokens_per_sec", "> 0"),
        ({"B": 1, "T": -1, "mean_ms": 1}, 1, "T", ">= 0"),
        ({"B": "two", "T": 8, "mean_ms": 1}, 1, "B", "not a number"),
        ({"B": 1, "T": 8, "mean_ms": ""}, 1, "mean_ms", "no step time"),
        ({"B": 8, "T": 8, "mean_ms": 10.0, "tokens_per_sec": 100.0}, 1, "tokens_per_sec", "disagrees"),
        ({"B": 1, "T": 8, "mean_ms": 1, "num_gpus": 1.5}, 1, "num_gpus", "whole number"),
        ({"B": 1, "T": 8, "mean_ms": 1, "scope": "prefill"}, 1, "scope", "'prefill'"),
    ],
)
def test_bad_values_name_row_and_column(record, row, column, needle):
    with pytest.raises(MeasurementFileError) as info:
        rows_from_records([record], source="t.csv")
    assert info.value.row == row and info.value.column == column
    assert needle in str(info.value) and "t.csv" in str(info.value)


def test_second_row_is_named():
    records = [{"B": 1, "T": 8, "mean_ms": 1.0}, {"B": 1, "T": 8, "mean_ms": -1.0}]
    with pytest.raises(MeasurementFileError, match="row 2, column 'mean_ms'"):
        rows_from_records(records, source="t.csv")


def test_per_sequence_rate_is_caught():
    # batch 16 at 30.469 ms: 525 tok/s aggregate; 32.8 tok/s would be the per-sequence rate
    with pytest.raises(MeasurementFileError, match="per-sequence vs aggregate"):
        rows_from_records([{"B": 16, "T": 2048, "latency_ms_per_step": 30.469, "tokens_per_s": 32.8}])
    (ok,) = rows_from_records([{"B": 16, "T": 2048, "latency_ms_per_step": 30.469, "tokens_per_s": 525.1}])
    assert ok.tokens_per_s == 525.1


@pytest.mark.parametrize(
    "header, column",
    [("T,mean_ms", "batch"), ("B,mean_ms", "context"), ("B,T,kv_bytes", "step_time_s")],
)
def test_missing_columns(tmp_path, header, column):
    path = write(tmp_path, "m.csv", header + "\n1,2\n")
    with pytest.raises(MeasurementFileError) as info:
        load_csv(path)
    assert info.value.column == column and "m.csv" in str(info.value)


def test_duplicate_columns_for_one_field():
    with pytest.raises(MeasurementFileError, match="duplicates"):
        rows_from_records([{"B": 1, "batch": 1, "T": 0, "mean_ms": 1}])


def test_empty_and_malformed_files(tmp_path):
    with pytest.raises(MeasurementFileError, match="no measurement rows"):
        load_csv(write(tmp_path, "e.csv", "B,T,mean_ms\n"))
    with pytest.raises(MeasurementFileError, match="not valid JSON"):
        load_json(write(tmp_path, "bad.json", "{"))
    with pytest.raises(MeasurementFileError, match="list of objects"):
        load_json(write(tmp_path, "obj.json", '{"x": 1}'))
    with pytest.raises(MeasurementFileError, match="cannot read"):
        load_csv(tmp_path / "missing.csv")


def test_row_type_validates_directly():
    with pytest.raises(RooflineError, match="step_time_s or tokens_per_s"):
        MeasurementRow(batch=1, context=0)
    with pytest.raises(RooflineError, match="batch"):
        MeasurementRow(batch=0, context=0, step_time_s=1.0)
    with pytest.raises(RooflineError, match="scope"):
        MeasurementRow(batch=1, context=0, step_time_s=1.0, scope="prefill")
    # a rate (or time) so small that the other one is beyond any float (issue 27)
    with pytest.raises(RooflineError, match=r"tokens_per_s=4\.94066e-324 is too small: batch / tokens_per_s"):
        MeasurementRow(batch=1, context=0, tokens_per_s=5e-324)
    with pytest.raises(RooflineError, match=r"step_time_s=1e-310 is too small"):
        MeasurementRow(batch=2**53, context=0, step_time_s=1e-310)


def test_every_documented_column_is_accepted():
    text = {"model": "llama-2-7b", "accelerator": "h100-sxm", "weight_format": "int8", "kv_format": "fp8",
            "scope": "kv_read", "label": "x", "notes": "y"}
    for field, names in COLUMNS.items():
        for name in names:
            if field in ("batch", "context"):
                other = "context" if field == "batch" else "batch"
                record = {name: 3, other: 3, "tokens_per_s": 1.0}
            elif field in ("step_time_s", "tokens_per_s"):
                record = {"batch": 1, "context": 0, name: 2.0}
            else:
                record = {"batch": 1, "context": 0, "tokens_per_s": 1.0, name: text.get(field, 2)}
            (row,) = rows_from_records([record])
            assert getattr(row, field) not in (None, ""), (field, name)


@pytest.mark.parametrize("name, content, column", [
    ("extra.csv", b"B,T,mean_ms\n1,8,1,99\n", "(row)"),
    ("binary.csv", b"\xff\xfeB,T\n", "(file)"),
    ("binary.json", b"\xff\xfe[]", "(file)"),
])
def test_malformed_files_are_measurement_file_errors(tmp_path, name, content, column):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(MeasurementFileError) as info:
        load_measurements(path)
    assert info.value.column == column and name in str(info.value)
