"""`roofline-decode compare` and `calibrate`: tables, JSON, plots, and one-line errors."""

import json
from pathlib import Path

import pytest

from roofline_decode.cli import main

DATA = Path(__file__).parents[1] / "data" / "measured"
GPT_FAST = str(DATA / "gpt_fast.csv")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def study_csv(tmp_path):
    path = tmp_path / "study.csv"
    path.write_text("B,T,mean_ms,std_ms,tokens_per_sec\n1,1024,16.611,0.072,60.2\n4,2048,15.921,0.058,251.2\n"
                    "16,2048,30.469,0.238,525.1\n")
    return path


def test_compare_table_on_our_own_layout(capsys, study_csv):
    code, out, _ = run(capsys, "compare", study_csv, "--model", "qwen2.5-7b", "--gpu", "h100-sxm")
    assert code == 0
    assert "floor ms" in out and "MBU" in out and len(out.strip().splitlines()) == 4


def test_compare_json_flags_impossible_rows(capsys, tmp_path):
    path = tmp_path / "fast.csv"
    path.write_text("batch,context,step_time_ms\n1,0,1.0\n1,0,50\n")
    code, out, _ = run(capsys, "compare", path, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--format", "json")
    records = json.loads(out)
    assert code == 0 and len(records) == 2
    assert records[0]["flags"] == ["impossible: check units, early stop, or caching"] and records[1]["flags"] == []
    assert records[1]["efficiency"] == pytest.approx(records[1]["floor_step_time_s"] / 0.05)


def test_compare_published_file_selects_the_device(capsys):
    code, out, err = run(capsys, "compare", GPT_FAST, "--gpu", "mi250x-gcd", "--format", "csv")
    lines = out.strip().splitlines()
    assert code == 0 and len(lines) == 3 and "mi250x-gcd" in lines[1]
    assert err.count("\n") == 1 and "row(s) of gpt_fast.csv" in err and "OOM" in err  # one summary line


def test_calibrate_table_and_json(capsys):
    code, out, _ = run(capsys, "calibrate", GPT_FAST, "--gpu", "a100-80gb-sxm", "--model", "llama-2-7b", "--fit-rows", "1,2")
    assert code == 0 and "weight-stream eff." in out and "+1.7%" in out
    code, out, _ = run(capsys, "calibrate", GPT_FAST, "--gpu", "a100-80gb-sxm", "--fit-rows", "1,2,6,7",
                       "--format", "json")
    payload = json.loads(out)
    # gpt-fast's marginal time per byte is below 1 / BW here: eta sits at its bound 1, t0 alone is free
    assert code == 0 and payload["calibration"]["dof"] == 3 and payload["calibration"]["fit"]["free"] == ["t0"]
    assert [r["fitted"] for r in payload["rows"]][:3] == [True, True, False]
    assert all(r["lower_s"] < r["calibrated_step_time_s"] < r["upper_s"] for r in payload["rows"])


def test_plots_are_written(capsys, tmp_path, study_csv):
    pytest.importorskip("matplotlib")
    first, second = tmp_path / "compare.png", tmp_path / "calibrate.png"
    assert run(capsys, "compare", study_csv, "--model", "qwen2.5-7b", "--gpu", "h100-sxm", "--plot", first)[0] == 0
    code, _, err = run(capsys, "calibrate", study_csv, "--model", "qwen2.5-7b", "--gpu", "h100-sxm", "--plot", second)
    assert code == 0 and "plot written" in err
    assert first.stat().st_size > 1000 and second.stat().st_size > 1000


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["compare", "missing.csv", "--model", "llama-2-7b", "--gpu", "h100-sxm"], "cannot read"),
        (["compare", "STUDY"], "model"),
        (["calibrate", GPT_FAST, "--gpu", "a100-80gb-sxm", "--fit-rows", "1"], "at least 2 rows"),
        (["calibrate", GPT_FAST, "--gpu", "a100-80gb-sxm", "--fit-rows", "99"], "--fit-rows"),
        (["calibrate", GPT_FAST], "one device"),
    ],
)
def test_errors_are_one_line_with_exit_2(capsys, study_csv, argv, needle):
    argv = [str(study_csv) if a == "STUDY" else a for a in argv]
    code, _, err = run(capsys, *argv)
    lines = [line for line in err.strip().splitlines() if not line.startswith("skipped")]
    assert code == 2 and len(lines) == 1 and needle in lines[0]


@pytest.mark.parametrize("content", [b"\xff\xfeB,T,mean_ms\n1,8,1\n", b"B,T,mean_ms\n1,8,1,2\n"])
def test_unreadable_files_are_one_line_with_exit_2(capsys, tmp_path, content):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    code, _, err = run(capsys, "compare", str(path), "--model", "llama-2-7b", "--gpu", "h100-sxm")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "bad.csv" in err and "Traceback" not in err
