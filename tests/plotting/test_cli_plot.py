"""``roofline-decode plot ...`` and the ridge plot of ``roofline-decode demo``."""

from __future__ import annotations

import pytest

from roofline_decode.cli import main

MAGIC = {".png": b"\x89PNG", ".svg": b"<?xml", ".pdf": b"%PDF"}


@pytest.mark.parametrize("kind, extra, suffix", [
    ("ridge", ["--gpu", "mi300x", "--context", "256,4k"], ".png"),
    ("batch", ["--context", "2048", "--slo-ms", "15"], ".svg"),
    ("context", ["--batch", "1,8", "--context", "0,8k,16k"], ".pdf"),
    ("breakdown", ["--over", "context", "--batch", "4", "--weights", "fp8"], ".png"),
    ("map", ["--batch", "1,8,64", "--context", "1k,8k", "--slo-ms", "10", "--kv", "fp8"], ".png"),
])
def test_plot_kinds_write_files(tmp_path, capsys, kind, extra, suffix):
    out = tmp_path / f"{kind}{suffix}"
    rc = main(["plot", kind, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", *extra, "--dpi", "50", "-o", str(out)])
    assert rc == 0
    assert out.read_bytes().startswith(MAGIC[suffix])
    assert capsys.readouterr().out.strip() == f"{kind} plot written to {out}"


@pytest.mark.parametrize("args, message", [
    (["plot", "ridge", "-o", "ridge.jpg"], "output='ridge.jpg' is invalid: expected a file name ending in .png, .svg, .pdf"),
    (["plot", "batch", "--gpu", "mi300x", "-o", "b.png"], "one accelerator for 'plot batch'"),
    (["plot", "ridge", "--slo-ms", "20", "-o", "r.png"], "--slo-ms"),
    (["plot", "batch", "--over", "context", "-o", "b.png"], "--over='context' is invalid: expected an axis only with plot breakdown"),
    (["plot", "batch", "--context", "1k,2k", "-o", "b.png"], "one context for this plot"),
    (["plot", "map", "--gpu", "h100-sxn", "-o", "m.png"], "unknown accelerator id 'h100-sxn'"),
    (["plot", "batch", "--dpi", "0.5", "-o", "b.png"], "dpi=0.5 is invalid: expected a resolution from 20 to 1200"),
    (["plot", "context", "--dpi", "1", "-o", "c.png"], "dpi=1.0 is invalid: expected a resolution from 20 to 1200"),
    (["plot", "context", "--context", "4k", "-o", "c.png"], "context=[4096] is invalid: expected at least two"),
])
def test_plot_errors_are_one_line_and_exit_2(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    kind, rest = args[:2], args[2:]
    gpu = [] if "--gpu" in rest and "h100-sxn" in rest else ["--gpu", "h100-sxm"]
    rc = main([*kind, "--model", "llama-3.1-8b", *gpu, *rest])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []


def test_plot_to_a_folder_that_cannot_be_made_is_one_line_and_exit_2(tmp_path, capsys):
    blocker = tmp_path / "results"
    blocker.write_text("a file where the folder should be")
    rc = main(["plot", "ridge", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "-o", str(blocker / "r.png")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"output='{blocker / 'r.png'}' is invalid: expected a file path that can be written" in err


@pytest.mark.parametrize("value", ["-1", "0", "nan", "soon"])
def test_plot_rejects_a_bad_latency_target(capsys, value):
    with pytest.raises(SystemExit) as exit_info:
        main(["plot", "batch", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", f"--slo-ms={value}", "-o", "x.png"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--slo-ms must be a" in err


def test_plot_rejects_unknown_kind(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["plot", "pie", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "-o", "x.png"])
    assert exit_info.value.code == 2
    assert "invalid choice: 'pie'" in capsys.readouterr().err


def test_demo_writes_the_ridge_plot(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "ridge.png").read_bytes().startswith(MAGIC[".png"])
    assert f"ridge-point plot written to {tmp_path / 'ridge.png'}" in capsys.readouterr().out


@pytest.mark.parametrize("kind, layouts", [
    ("ridge", ["dp8 ep8"]),
    ("breakdown", ["tp8"]),
    ("frontier", ["tp8", "dp8 ep8"]),
])
def test_plots_take_a_layout(tmp_path, capsys, kind, layouts):
    # a 671B model on 8 H200s: drawn per device (without a layout every point is "does not fit")
    out = tmp_path / f"{kind}.png"
    flags = [flag for text in layouts for flag in ("--parallel", text)]
    rc = main(["plot", kind, "--model", "deepseek-v3", "--gpu", "h200-sxm", *flags, "--dpi", "50", "-o", str(out)])
    assert rc == 0 and out.read_bytes().startswith(MAGIC[".png"])


@pytest.mark.parametrize("flags, message", [
    (["--parallel", "tp3"], "--parallel=3 is invalid: expected a divisor of the 128 attention heads"),
    (["--parallel", "tpx"], "--parallel='tpx' is invalid: expected degrees such as"),
    (["--parallel", "tp8", "--parallel", "tp4"], "--parallel='tp8,tp4' is invalid: expected one layout for plot batch"),
])
def test_bad_layouts_name_the_flag(tmp_path, capsys, flags, message):
    rc = main(["plot", "batch", "--model", "deepseek-v3", "--gpu", "h200-sxm", *flags, "-o", str(tmp_path / "b.png")])
    err = capsys.readouterr().err
    assert rc == 2
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
