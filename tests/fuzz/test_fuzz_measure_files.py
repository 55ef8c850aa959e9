"""Fuzz the readers of engine benchmark outputs and saved calibrations (issue 27).

Inputs are the sample engine outputs of ``tests/data/engines`` and calibrations saved by
``calibrate``, mutated structurally (a field the readers use set to a value of any JSON kind,
infinities and NaN included, or removed; a table or CSV cell replaced) and byte by byte.  Only
a result or a RooflineError is acceptable; a result holds finite, positive numbers where the
API promises them.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import math
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from roofline_decode.measure import Measurement, calibrate, compare, load_calibration, load_engine_results
from tests.fuzz.strategies import INPUTS, edit_json, finite_positive, outcome, run_cli
from tests.fuzz.test_fuzz_estimate import fuzz
from tests.fuzz.test_fuzz_files import byte_mutations, json_lies as lies

WORK = Path(tempfile.mkdtemp(prefix="roofline-fuzz-measure-"))
ENGINES = Path(__file__).resolve().parents[1] / "data" / "engines"
ENGINE_FILES = sorted(p for p in ENGINES.iterdir() if p.name != "README.md")
JSON_ENGINE_FILES = [p for p in ENGINE_FILES if p.suffix in (".json", ".jsonl")]
TABLE_FILES = [p for p in ENGINE_FILES if p.suffix in (".md", ".txt", ".csv")]

#: Every field an engine reader uses.
ENGINE_FIELDS = [
    "n_prompt", "n_gen", "n_depth", "avg_ns", "stddev_ns", "avg_ts", "model_type", "type_k", "type_v", "gpu_info",
    "n_gpu_layers", "split_mode", "test", "pp", "tg", "pl", "t_tg", "is_pp_shared", "completed", "mean_tpot_ms",
    "std_tpot_ms", "total_input_tokens", "total_output_tokens", "max_concurrency", "concurrency", "request_throughput",
    "mean_e2el_ms", "mean_e2e_latency_ms", "backend", "model_id", "model", "tensor_parallel_size", "tp",
    "pipeline_parallel_size", "median_decode_latency", "input_len", "output_len", "batch_size", "run_name",
]
#: What a table or CSV cell of a lying file holds.
cell_lies = st.one_of(st.sampled_from(["inf", "-inf", "nan", "-3", "0", "1e400", "", "x", "9" * 40, "true", "0.5",
                                       "5e-324", "1e300", "tg0", "tg9 @ d-1", "pp1+tg1", "q4_0", "±", "1 ± 2"]),
                      st.text(max_size=6).filter(lambda t: "|" not in t and "\n" not in t and "\r" not in t))


def _records(path: Path) -> tuple[list[dict], bool]:
    """(records, written as JSON lines)."""
    text = path.read_text()
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()], True
    data = json.loads(text)
    return (data if isinstance(data, list) else [data]), False


def check_rows(result) -> None:
    for row in result.rows:
        finite_positive("step_time", row.step_time)
        assert math.isfinite(row.batch) and row.batch >= 1 and math.isfinite(row.context) and row.context >= 0
        assert row.num_devices >= 1 and row.pipeline_parallel >= 1


def read_engine(path: Path, entry: str) -> None:
    result = outcome(entry, lambda: load_engine_results(path, model="qwen2.5-7b", accelerator="rtx-4090"))
    if result is not None:
        check_rows(result)
        if result.rows:
            compared = outcome("compare (engine rows)", lambda: compare(result.rows[:1]))
            for row in compared or []:
                finite_positive("floor_step_time_s", row.floor_step_time_s)


@fuzz(500)
@given(path=st.sampled_from(JSON_ENGINE_FILES), edits=st.lists(
    st.tuples(st.integers(0, 9), st.sampled_from(["set", "set", "delete"]), st.sampled_from(ENGINE_FIELDS), lies),
    min_size=1, max_size=3))
def test_engine_fields(path, edits):
    records, lines = _records(path)
    for index, kind, key, value in edits:
        record = records[index % len(records)]
        if kind == "set":
            record[key] = copy.deepcopy(value)
        else:
            record.pop(key, None)
    text = "\n".join(json.dumps(r) for r in records) if lines else json.dumps(records if len(records) > 1 else records[0])
    target = WORK / path.name
    target.write_text(text)
    read_engine(target, "engine outputs (mutated fields)")


@fuzz(300)
@given(path=st.sampled_from(TABLE_FILES), edits=st.lists(st.tuples(st.integers(0, 99), st.integers(0, 40), cell_lies),
                                                        min_size=1, max_size=3),
       separate=st.sampled_from(["0", "1", "9"]))
def test_engine_table_cells(path, edits, separate):
    text = path.read_text().replace("is_tg_separate = 0", f"is_tg_separate = {separate}")
    if path.suffix == ".csv":
        rows = list(csv.reader(io.StringIO(text)))
        for line, cell, value in edits:
            row = rows[line % len(rows)]
            row[cell % len(row)] = value
        out = io.StringIO()
        csv.writer(out).writerows(rows)
        text = out.getvalue()
    else:
        lines = text.splitlines()
        table = [i for i, line in enumerate(lines) if line.startswith("|")]
        for line, cell, value in edits:
            i = table[line % len(table)]
            cells = lines[i].split("|")
            cells[1 + cell % max(len(cells) - 2, 1)] = f" {value} "
            lines[i] = "|".join(cells)
        text = "\n".join(lines) + "\n"
    target = WORK / path.name
    target.write_text(text)
    read_engine(target, "engine outputs (mutated cells)")


@fuzz(300)
@given(data=byte_mutations(ENGINE_FILES), suffix=st.sampled_from([".json", ".jsonl", ".md", ".txt", ".csv"]))
def test_engine_bytes(data, suffix):
    target = WORK / f"mutated{suffix}"
    target.write_bytes(data)
    read_engine(target, "engine outputs (mutated bytes)")


# -- saved calibrations -------------------------------------------------------------------------
def _base_calibrations() -> list[dict]:
    rows = [Measurement(model=model, batch=b, context=t, step_time_s=(0.004 + 2e-4 * b + 2e-8 * b * t) * scale)
            for model, scale in (("llama-2-7b", 3.0), ("llama-2-13b", 5.0)) for b in (1, 8, 64) for t in (0, 4096)]
    fits = [calibrate(rows[:6], "a100-80gb-sxm", models=("bandwidth",)),
            calibrate(rows, "a100-80gb-sxm", models=("streams+batch",)),
            calibrate(rows[:2], "a100-80gb-sxm", models=("bandwidth",), fixed_cost="step")]  # dof 0: no band
    saved = [fit.to_dict() for fit in fits]
    old = json.loads(json.dumps(saved[0]))  # format 1: before the per-layer fixed cost
    for key in ("fixed_cost", "layers", "layer_overhead_s"):
        del old[key]
    old["format"] = "roofline-decode calibration 1"
    return saved + [old]


CALIBRATIONS = _base_calibrations()
CALIBRATION_TEXTS = []
for _i, _data in enumerate(CALIBRATIONS):
    CALIBRATION_TEXTS.append(WORK / f"calibration{_i}.json")
    CALIBRATION_TEXTS[-1].write_text(json.dumps(_data))


def _paths(value, prefix=()) -> list[tuple]:
    """Every key path into a JSON value (the accelerator's spec only to its top-level fields)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict) and prefix[-1:] != ("figures",):
        for key, item in value.items():
            out += _paths(item, prefix + (key,)) if prefix != ("accelerator_spec",) else [prefix + (key,)]
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            out += _paths(item, prefix + (i,))
    return out


PATHS = [_paths(data) for data in CALIBRATIONS]


def check_calibration(cal) -> None:
    p = cal.predict("llama-2-7b", batch=[1, 64], context=[[0], [8192]])
    finite_positive("step_time_s", p.step_time_s)
    for band in (p.lower_s, p.upper_s):
        assert np.all(np.isnan(band)) or np.all(np.isfinite(band)), band
    assert str(cal)
    json.dumps(cal.to_dict(), allow_nan=False)  # what was read can be saved again


@fuzz(500)
@given(which=st.integers(0, len(CALIBRATIONS) - 1), edits=st.lists(
    st.tuples(st.integers(0, 10**6), st.sampled_from(["set", "set", "delete", "empty", "longer"]), lies),
    min_size=1, max_size=3))
def test_calibration_fields(which, edits):
    data = json.loads(json.dumps(CALIBRATIONS[which]))
    for index, kind, value in edits:
        try:
            edit_json(data, PATHS[which][index % len(PATHS[which])], kind, value)
        except (KeyError, IndexError, TypeError, AttributeError):  # an earlier edit removed or replaced the path
            continue
    path = WORK / "calibration.json"
    path.write_text(json.dumps(data))
    cal = outcome("saved calibrations (mutated fields)", lambda: load_calibration(path))
    if cal is not None:
        outcome("saved calibrations (predict)", lambda: check_calibration(cal))


@fuzz(200)
@given(data=byte_mutations(CALIBRATION_TEXTS))
def test_calibration_bytes(data):
    path = WORK / "mutated-calibration.json"
    path.write_bytes(data)
    cal = outcome("saved calibrations (mutated bytes)", lambda: load_calibration(path))
    if cal is not None:
        outcome("saved calibrations (predict)", lambda: check_calibration(cal))


@fuzz(60)
@given(which=st.integers(0, len(CALIBRATIONS) - 1), key=st.sampled_from(["dof", "level", "beta", "covariance"]),
       value=lies)
def test_cli_predict_with_a_lying_calibration(which, key, value):
    data = json.loads(json.dumps(CALIBRATIONS[which]))
    (data["fit"] if key in ("beta", "covariance") else data)[key] = copy.deepcopy(value)
    path = WORK / "cli-calibration.json"
    path.write_text(json.dumps(data))
    INPUTS["CLI predict (lying calibration)"] += 1
    code, out, err = run_cli(["predict", "--calibration", str(path), "--model", "llama-2-7b", "--format", "json"])
    assert code in (0, 2), (code, err)
    if code == 2:
        assert err.count("\n") == 1 and "Traceback" not in err and str(path) in err, err
    else:
        for record in json.loads(out):
            finite_positive("step_time_s", record["step_time_s"])
