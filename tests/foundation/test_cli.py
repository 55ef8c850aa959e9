"""The command line: floor/list/show, JSON keys, errors as one line with exit code 2."""

import json
import subprocess
import sys

import pytest

from roofline_decode import RECORD_KEYS
from roofline_decode.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_floor_json_has_exactly_the_listed_keys(capsys):
    code, out, _ = run(capsys, "floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpu", "a100-80gb-sxm",
                       "--batch", "1,8,64", "--context", "4096", "--format", "json")
    assert code == 0
    records = json.loads(out)
    assert len(records) == 6
    assert all(list(r) == list(RECORD_KEYS) for r in records)
    assert {r["accelerator"] for r in records} == {"h100-sxm", "a100-80gb-sxm"}
    assert records[0]["critical_batch"] is None or records[0]["critical_batch"] > 0


def test_floor_table_uses_human_units(capsys):
    code, out, _ = run(capsys, "floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "4k",
                       "--weights", "q4_0", "--kv", "fp8")
    assert code == 0
    assert "step ms" in out and "tok/s" in out and "q4_0 weights" in out and "fp8_e4m3 KV" in out


def test_floor_csv(capsys):
    code, out, _ = run(capsys, "floor", "--model", "qwen2.5-7b", "--gpu", "l4", "--batch", "1,2", "--format", "csv")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0] == ",".join(RECORD_KEYS) and len(lines) == 3


@pytest.mark.parametrize("what, expected", [("models", "llama-3.1-8b"), ("gpus", "h100-sxm"),
                                            ("tiers", "pcie5-x16"), ("formats", "q4_0")])
def test_list(capsys, what, expected):
    code, out, _ = run(capsys, "list", what)
    assert code == 0 and expected in out


def test_show_prints_figures_with_sources(capsys):
    code, out, _ = run(capsys, "show", "h100-sxm")
    assert code == 0
    assert "memory_bandwidth" in out and "TB/s" in out and "datasheet" in out and "https://" in out


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-smx"], "h100-sxm"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "-4"], "batch"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "nan"], "finite"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--weights", "int3"], "int3"),
        (["floor", "--model", "no-such-model", "--gpu", "h100-sxm"], "no-such-model"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--format", "xml"], "xml"),
        (["show", "nothing-like-this"], "nothing-like-this"),
        (["list", "potatoes"], "potatoes"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys, argv, needle):
    code = None
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own errors exit through SystemExit(2)
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_python_dash_m_runs():
    proc = subprocess.run([sys.executable, "-m", "roofline_decode", "floor", "--model", "llama-2-7b",
                           "--gpu", "a100-80gb-sxm", "--format", "json"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)[0]["model"] == "Llama-2-7B"


def test_import_does_not_pull_in_sympy_or_matplotlib():
    code = "import sys, roofline_decode; print(any(m in sys.modules for m in ('sympy', 'matplotlib')))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == "False", proc.stderr
