"""`roofline-decode calibrate FILE... --save` on engine output and `predict --calibration`."""

import json
from pathlib import Path

import pytest

from roofline_decode.cli import main

DATA = Path(__file__).parents[1] / "data"
ENGINES = DATA / "engines"
KNLP = str(DATA / "measured" / "knlp_full_model_decode.csv")


def run(capsys, *argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_calibrate_several_engine_files_and_save(capsys, tmp_path):
    fit = tmp_path / "fit.json"
    code, out, err = run(capsys, "calibrate", ENGINES / "llama_bench.json", ENGINES / "batched_bench.txt",
                         "--model", "qwen2.5-7b", "--gpu", "rtx-4090", "--weights", "q4_k", "--save", fit)
    assert code == 0 and "calibration written" in err and "llama_bench.json#1: prompt processing" in err
    assert "model " in out and out.count("batched-bench") == 4
    saved = json.loads(fit.read_text())
    assert saved["format"] == "roofline-decode calibration 2" and saved["accelerator"] == "rtx-4090"


def test_rows_below_the_strict_floor_are_marked_left_out(capsys):
    # batched-bench states no weight format: as bf16 weights its rows beat the floor
    code, out, _ = run(capsys, "calibrate", ENGINES / "llama_bench.json", ENGINES / "batched_bench.txt",
                       "--model", "qwen2.5-7b", "--gpu", "rtx-4090")
    assert code == 0 and out.count("left out") == 4 and "below its strict floor" in out


def test_predict_prints_bands_from_a_saved_fit(capsys, tmp_path):
    fit = tmp_path / "b200.json"
    code, _, _ = run(capsys, "calibrate", KNLP, "--gpu", "b200", "--model", "qwen2.5-7b", "--save", fit)
    assert code == 0
    code, out, _ = run(capsys, "predict", "--calibration", fit, "--model", "qwen2.5-7b", "--batch", "8,32",
                       "--context", "2K,8K", "--format", "json")
    records = json.loads(out)
    assert code == 0 and len(records) == 4
    assert all(r["floor_step_time_s"] < r["lower_s"] < r["step_time_s"] < r["upper_s"] for r in records)
    # knlp measured 10.345 ms at B=8, T=8192 and 16.199 ms at B=32, T=8192 (not all rows are below 8K)
    b8 = next(r for r in records if r["batch"] == 8 and r["context"] == 8192)
    assert b8["lower_s"] < 10.345e-3 < b8["upper_s"]
    code, out, _ = run(capsys, "predict", "--calibration", fit, "--model", "qwen2.5-7b", "--tp", "2")
    assert code == 0 and "2 x b200" in out and "band ms" in out


@pytest.mark.parametrize("argv, needle", [
    (["predict", "--calibration", "MISSING", "--model", "qwen2.5-7b"], "readable calibration"),
    (["predict", "--calibration", ENGINES / "vllm_serve.json", "--model", "qwen2.5-7b"], "calibrate --save"),
    (["predict", "--calibration", "FIT", "--model", "qwen2.5-7b", "--tp", "0"], "--tp"),
    (["predict", "--calibration", "FIT", "--model", "qwen2.5-7b", "--batch", "0"], "batch"),
    (["calibrate", ENGINES / "llama_bench.json", "--model", "qwen2.5-7b", "--gpu", "rtx-4090", "--save",
      "/nonexistent/dir/fit.json"], "--save"),
])
def test_errors_are_one_line_with_exit_2(capsys, tmp_path, argv, needle):
    fit = tmp_path / "fit.json"
    assert run(capsys, "calibrate", ENGINES / "llama_bench.json", "--model", "qwen2.5-7b", "--gpu", "rtx-4090",
               "--save", fit)[0] == 0
    argv = [fit if a == "FIT" else tmp_path / "missing.json" if a == "MISSING" else a for a in argv]
    code, _, err = run(capsys, *argv)
    lines = [line for line in err.strip().splitlines() if not line.startswith("skipped")]
    assert code == 2 and len(lines) == 1 and needle in lines[0] and "Traceback" not in err


def test_rows_without_a_model_take_model_beside_a_file_that_states_one(capsys):
    """llama-bench output (no model) beside vLLM output (llama-3.1-8b): --model fills the
    llama-bench rows instead of dropping them silently."""
    code, out, err = run(capsys, "compare", ENGINES / "llama_bench.json", ENGINES / "vllm_serve.json",
                         "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--format", "json")
    assert code == 0
    sources = {r["source"] for r in json.loads(out)}
    assert any(s.startswith("llama_bench.json") for s in sources) and "vllm_serve.json#1" in sources


def test_rows_of_another_model_are_reported_not_silently_dropped(capsys):
    code, out, err = run(capsys, "compare", KNLP, ENGINES / "vllm_serve.json", "--model", "llama-3.1-8b",
                         "--gpu", "h100-sxm", "--format", "json")
    # the file's own 6 unplaced rows and its 23 Qwen2.5-7B rows on the H100, each listed
    assert code == 0 and "skipped 29 row(s)" in err
    assert {r["model"] for r in json.loads(out)} == {"Llama-3.1-8B"}


def test_without_model_the_rows_that_state_none_are_named(capsys):
    code, out, err = run(capsys, "calibrate", ENGINES / "llama_bench.json", ENGINES / "vllm_serve.json",
                         "--gpu", "rtx-4090")
    assert code == 2 and "llama_bench.json#" in err and "--model" in err and "Traceback" not in err


def test_predict_flags_points_that_do_not_fit_the_device(capsys, tmp_path):
    """Llama-3.1-8B bf16 at B = 64, 4K context on a 24 GB card needs ~50 GB: flagged, not a run
    (predict once printed 981 tok/s for it without a word)."""
    fit = tmp_path / "4090.json"
    code, _, _ = run(capsys, "calibrate", ENGINES / "llama_bench.json", "--model", "qwen2.5-7b", "--gpu", "rtx-4090",
                     "--weights", "q4_k", "--save", fit)
    assert code == 0
    code, out, err = run(capsys, "predict", "--calibration", fit, "--model", "llama-3.1-8b", "--weights", "bf16",
                         "--batch", "1,64", "--context", "4096", "--format", "json")
    records = json.loads(out)
    assert code == 0 and [r["fits"] for r in records] == [True, False]
    assert "1 point(s) do not fit the usable memory of 1 x rtx-4090" in err
    code, out, _ = run(capsys, "predict", "--calibration", fit, "--model", "llama-3.1-8b", "--batch", "64",
                       "--context", "4096")
    assert code == 0 and "fits" in out and "NO" in out


def test_predict_from_an_engine_profile_updated_by_a_run(capsys, tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("batch,context,step_time_ms\n1,2048,8.2\n")
    base = ["predict", "--engine", "llama.cpp-cuda", "--gpu", "rtx-4090", "--model", "llama-3.1-8b", "--weights", "Q4_K_M",
            "--context", "2048", "--format", "json"]
    code, out, _ = run(capsys, *base)
    prior = json.loads(out)[0]
    code2, out2, _ = run(capsys, *base, "--runs", runs)
    post = json.loads(out2)[0]
    assert code == code2 == 0 and prior["basis"] == "engine profile" and post["basis"] == "calibration"
    assert post["expected_step_time_s"] < prior["expected_step_time_s"]  # the run is faster than the profile
    assert post["upper_s"] / post["lower_s"] < prior["upper_s"] / prior["lower_s"]


@pytest.mark.parametrize("extra, needle", [
    ([], "exactly one of them"),
    (["--engine", "vllm"], "--gpu"),
    (["--calibration", "x.json", "--engine", "vllm"], "exactly one of them"),
])
def test_predict_needs_one_source(capsys, extra, needle):
    code, _, err = run(capsys, "predict", "--model", "llama-3.1-8b", *extra)
    assert code == 2 and needle in err and "Traceback" not in err
