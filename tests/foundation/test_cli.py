"""The command line: floor/list/show, JSON keys, errors as one line with exit code 2."""

import json
import subprocess
import sys

import pytest

from roofline_decode import RECORD_KEYS
from roofline_decode.floors.results import EXTRA_RECORD_KEYS
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
    assert all(list(r) == list(RECORD_KEYS + EXTRA_RECORD_KEYS) for r in records)
    assert {r["accelerator"] for r in records} == {"h100-sxm", "a100-80gb-sxm"}
    assert records[0]["critical_batch"] == "inf"  # memory-bound at any batch at 4096 tokens


def test_floor_table_uses_human_units(capsys):
    code, out, _ = run(capsys, "floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "4k",
                       "--weights", "q4_0", "--kv", "fp8")
    assert code == 0
    assert "step ms" in out and "tok/s" in out and "q4_0 weights" in out and "fp8_e4m3 KV" in out


def test_floor_csv(capsys):
    code, out, _ = run(capsys, "floor", "--model", "qwen2.5-7b", "--gpu", "l4", "--batch", "1,2", "--format", "csv")
    lines = out.strip().splitlines()
    assert code == 0 and lines[0] == ",".join(RECORD_KEYS + EXTRA_RECORD_KEYS) and len(lines) == 3


# "No compute peak published" (M5 Max) and "memory-bound at any batch" (H100 at 32K) are two
# different things, each with one spelling per output format.
NO_PEAK_VS_MEMORY_BOUND = ["floor", "--model", "llama-3.1-8b", "--gpu", "m5-max", "--gpu", "h100-sxm", "--context", "32K"]


def test_no_peak_and_memory_bound_in_json(capsys):
    code, out, _ = run(capsys, *NO_PEAK_VS_MEMORY_BOUND, "--format", "json")
    apple, h100 = json.loads(out)
    assert code == 0
    assert apple["ridge_point"] is None and apple["critical_batch"] is None and apple["compute_time_s"] == 0
    assert any("no compute peak published for m5-max" in note for note in apple["notes"])
    assert h100["critical_batch"] == "inf" and float(h100["critical_batch"]) == float("inf")
    assert h100["ridge_point"] > 0 and h100["notes"] == []


def test_no_peak_and_memory_bound_in_csv(capsys):
    import csv
    import io

    code, out, _ = run(capsys, *NO_PEAK_VS_MEMORY_BOUND, "--format", "csv")
    apple, h100 = csv.DictReader(io.StringIO(out))
    assert apple["ridge_point"] == "" and apple["critical_batch"] == "" and "no compute peak published" in apple["notes"]
    assert h100["critical_batch"] == "inf" and h100["notes"] == ""


def test_no_peak_and_memory_bound_in_table(capsys):
    code, out, _ = run(capsys, *NO_PEAK_VS_MEMORY_BOUND)
    apple, h100 = out.split("\n\n")
    assert "no compute peak published: ridge point and B* n/a, memory floor only" in apple.splitlines()[0]
    assert apple.splitlines()[2].split()[-2] == "n/a" and "B* (critical batch)" not in apple
    assert h100.splitlines()[2].split()[-2] == "inf"
    assert "B* (critical batch): the smallest batch at which a step is compute-bound" in h100
    assert "inf: never compute-bound at that context, memory-bound at any batch" in h100 and "n/a" not in h100


def test_sparse_without_sparse_peak_says_so(capsys):
    code, out, _ = run(capsys, "floor", "--model", "llama-3.1-8b", "--gpu", "mi300x", "--batch", "4096",
                       "--context", "0", "--sparse")
    assert code == 0 and "note: no sparse bf16 peak published for mi300x: the dense bf16 peak is used" in out
    assert " compute " in out.splitlines()[2] + " "


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
        # counts: K and M are suffixes, anything else is refused by name
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "10X"], "32K (= 32768) or 10M"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "10MK"], "'10MK'"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "M"], "'M'"),
        (["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "nanM"], "finite"),
        (["plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "2G"],
         "--context must be a whole number"),
        (["plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "0.3K"], "'0.3K'"),
        # a count beyond 2**53 is named by its flag (it printed the library's 300-digit value)
        (["deploy", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "2", "--isl", "1e300", "--osl", "128"],
         "--isl must be a whole number from 1 to 2**53, got '1e300'"),
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


def test_floor_imports_only_what_a_floor_needs():
    """``roofline-decode floor`` (and a decode_floor call) import neither the planners, the
    prefill and request floors, the latency profiles, nor sympy, matplotlib or pandas (issue 18:
    start-up time)."""
    code = ("import contextlib, io, sys\n"
            "from roofline_decode.cli import main\n"
            "sys.argv = ['roofline-decode', 'floor', '--model', 'llama-3.1-8b', '--gpu', 'h100-sxm']\n"
            "with contextlib.redirect_stdout(io.StringIO()): main()\n"
            "import roofline_decode as rd; rd.decode_floor('mixtral-8x7b', 'h100-sxm', 8, 4096)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sympy', 'matplotlib', 'pandas') or m in ("
            "'roofline_decode.planning.plan', 'roofline_decode.planning.serving', 'roofline_decode.planning.tiers', "
            "'roofline_decode.planning.frontier', 'roofline_decode.floors.prefill', 'roofline_decode.floors.request', "
            "'roofline_decode.specs.latency')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]", proc.stdout


def test_planning_names_resolve_after_their_submodules_are_imported():
    code = ("import roofline_decode.planning.plan, roofline_decode.planning.frontier\n"
            "from roofline_decode import planning\n"
            "from roofline_decode.planning import plan, frontier, max_batch\n"
            "print(callable(plan), callable(frontier), callable(planning.plan), planning.tiers.__name__, "
            "sorted(set(planning.__all__) - set(dir(planning))))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["True", "True", "True", "roofline_decode.planning.tiers", "[]"], proc.stderr


def test_the_command_table_names_what_each_module_registers():
    """build_parser(argv) registers only the module of the command it is given (start-up time,
    issue 18): cli.COMMANDS must name every subcommand with the module that registers it."""
    import argparse
    import importlib

    from roofline_decode import cli

    registered = {}
    for name in cli.COMMAND_MODULES:
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(subparsers)
        registered.update(dict.fromkeys(subparsers.choices, name))
    assert cli.COMMANDS == registered
    full = cli.build_parser()
    for command, module in cli.COMMANDS.items():  # one command's parser is the same as in the full parser
        choices = cli.build_parser([command, "--help"])._subparsers._group_actions[0].choices
        assert set(choices) == {c for c, m in cli.COMMANDS.items() if m == module}
        assert choices[command].format_help() == full._subparsers._group_actions[0].choices[command].format_help()
    assert set(cli.build_parser(["--help"])._subparsers._group_actions[0].choices) == set(cli.COMMANDS)


@pytest.mark.parametrize("text, tokens", [
    ("4096", 4096), ("1e3", 1000), ("4k", 4096), ("32K", 32768), ("128K", 131072), ("1.5K", 1536),
    # M is 2**20 as K is 2**10: Llama 4 Scout's "10M" context is 10,485,760 tokens (its config's
    # max_position_embeddings)
    ("10M", 10_485_760), ("1m", 1_048_576), ("0.5M", 524_288),
])
def test_counts_take_k_and_m(text, tokens):
    from roofline_decode.cli.common import number_list, whole_number

    assert number_list(text) == [tokens]
    assert whole_number("--context", 0)(text) == tokens


def test_context_10m_reaches_the_floor(capsys):
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--context", "10M,128K", "--format",
                 "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["context"] for r in records] == [10_485_760, 131_072]
