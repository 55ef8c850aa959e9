"""`roofline-decode validate` on a tiny model, with the host figures given (no probe)."""

import csv
import json
import sys

import pytest

from roofline_decode import load_model
from roofline_decode.cli import main
from roofline_decode.kernel import expected_counts
from roofline_decode.kernel.runner import CSV_COLUMNS

TINY = {"model_type": "llama", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "intermediate_size": 64, "vocab_size": 100}


@pytest.fixture
def tiny_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(TINY))
    return path


def _validate(tiny_config, out, *extra):
    return main(["validate", "--model", str(tiny_config), "--batch", "1,3", "--context", "0,5", "--repeats", "2",
                 "--warmup", "1", "--bandwidth", "10", "--fp32-peak", "100", "--out", str(out), *extra])


def test_writes_rows_table_and_plot(tiny_config, tmp_path, capsys):
    assert _validate(tiny_config, tmp_path / "out") == 0
    captured = capsys.readouterr()
    assert "measured/floor" in captured.out and "10.0 GB/s" in captured.out
    # captured stderr is not a terminal: no progress bar (it is drawn only on a terminal)
    assert "steps" not in captured.err and "steps" not in captured.out
    with open(tmp_path / "out" / "measurements.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [(int(r["batch"]), int(r["context"])) for r in rows] == [(1, 0), (1, 5), (3, 0), (3, 5)]
    model = load_model(str(tiny_config))
    for row in rows:
        want = expected_counts(model, int(row["batch"]), int(row["context"]))
        assert int(row["weight_bytes"]) == want["weight_bytes"]
        assert int(row["kv_read_bytes"]) == want["kv_read_bytes"]
        assert float(row["tokens_per_s"]) == pytest.approx(int(row["batch"]) / float(row["mean_s"]), rel=1e-4)
        assert float(row["measured_over_floor"]) == pytest.approx(float(row["mean_s"]) / float(row["floor_s"]), rel=1e-4)
    assert (tmp_path / "out" / "measured_vs_floor.png").stat().st_size > 10_000


def test_without_matplotlib_the_plot_is_skipped(tiny_config, tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert _validate(tiny_config, tmp_path) == 0
    assert "skipping the plot" in capsys.readouterr().err
    assert (tmp_path / "measurements.csv").exists() and not (tmp_path / "measured_vs_floor.png").exists()


@pytest.mark.parametrize("args, message", [
    (["--bandwidth", "10"], "--bandwidth/--fp32-peak"),
    (["--batch", "100000", "--context", "1000000", "--bandwidth", "1", "--fp32-peak", "1"], "available memory"),
    (["--model", "deepseek-v2-lite", "--bandwidth", "1", "--fp32-peak", "1"], "kv_lora_rank"),
    (["--batch", "0", "--bandwidth", "1", "--fp32-peak", "1"], "batch=0"),
    (["--batch", "1.5", "--bandwidth", "1", "--fp32-peak", "1"], "batch=1.5"),
    (["--context", "-1", "--bandwidth", "1", "--fp32-peak", "1"], "context=-1"),
    (["--seed", "-1", "--bandwidth", "1", "--fp32-peak", "1"], "seed=-1"),
    (["--repeats", "0", "--bandwidth", "1", "--fp32-peak", "1"], "repeats=0"),
    (["--batch", "0"], "batch=0"),  # refused before the probe runs
])
def test_bad_input_is_one_line_and_exit_2(tiny_config, tmp_path, capsys, args, message):
    base = ["validate", "--out", str(tmp_path)] + ([] if "--model" in args else ["--model", str(tiny_config)])
    assert main(base + args) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert captured.out == ""  # nothing probed or timed before the refusal


@pytest.mark.parametrize("out", ["a-file", "a-file/below"])
def test_out_that_is_a_file_is_refused_before_the_run(tiny_config, tmp_path, capsys, out):
    (tmp_path / "a-file").write_text("not a folder")
    assert main(["validate", "--model", str(tiny_config), "--batch", "1", "--context", "0", "--bandwidth", "1",
                 "--fp32-peak", "1", "--out", str(tmp_path / out)]) == 2
    captured = capsys.readouterr()
    assert "--out=" in captured.err and "folder" in captured.err and len(captured.err.strip().splitlines()) == 1
    assert captured.out == "" and (tmp_path / "a-file").read_text() == "not a folder"


def test_progress_bar_is_drawn_only_on_a_terminal(tiny_config, tmp_path, capsys, monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert _validate(tiny_config, tmp_path / "out") == 0
    assert "12/12 steps" in terminal.getvalue() and "steps" not in capsys.readouterr().out
