"""`roofline-decode request`, `plot ttft` and `plot speculative`: outputs, bad input, headless plots."""

import csv
import io
import json

import matplotlib
import numpy as np
import pytest

from roofline_decode.cli import main
from roofline_decode.floors.request import request_floor

matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    import matplotlib.pyplot as plt

    yield
    plt.close("all")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_request_table_json_csv(capsys):
    base = ["request", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "2K", "--output", "512",
            "--batch", "1,32"]
    code, out, _ = run(capsys, *base)
    assert code == 0 and "TTFT ms" in out and "960.1" in out
    code, out, _ = run(capsys, *base, "--format", "json")
    records = json.loads(out)
    expected = request_floor("llama-3.1-8b", "h100-sxm", 2048, 512, batch=[1, 32]).to_records()
    assert [r["e2e_latency_s"] for r in records] == pytest.approx([r["e2e_latency_s"] for r in expected], rel=1e-12)
    code, out, _ = run(capsys, *base, "--format", "csv", "--draft", "llama-3.2-1b", "--k", "4", "--acceptance", "0.8")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 2 and float(rows[0]["speculative_speedup"]) > 1
    assert float(rows[0]["speculative_e2e_latency_s"]) < float(rows[0]["e2e_latency_s"])


def test_request_grid_is_an_outer_product(capsys):
    code, out, _ = run(capsys, "request", "--model", "llama-3.2-1b", "--gpu", "l4", "--gpu", "h100-sxm", "--prompt",
                       "512,1K", "--output", "16,64", "--batch", "1,4", "--format", "json")
    records = json.loads(out)
    assert code == 0 and len(records) == 2 * 2 * 2 * 2
    assert {(r["batch"], r["prompt"], r["output"]) for r in records} == {
        (b, p, o) for b in (1, 4) for p in (512, 1024) for o in (16, 64)}


@pytest.mark.parametrize("argv", [
    ["--output", "0"], ["--output", "5", "--k", "3"], ["--output", "5", "--draft", "nope"],
    ["--output", "5", "--chunk", "1,2"], ["--output", "5", "--shared-prefix", "2K"],
    ["--output", "5", "--draft", "llama-3.2-1b", "--acceptance", "1.5"],
    ["--output", "5", "--draft", "llama-3.2-1b", "--mtp-layers", "1"], ["--output", "x"],
])
def test_request_bad_input_is_one_line_and_exit_2(capsys, argv):
    code, out, err = run_safely(capsys, ["request", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "2K",
                                         *argv])
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def run_safely(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_ttft_plot_marks_the_regimes():
    from roofline_decode.plotting import ttft_plot

    ax = ttft_plot("llama-3.1-8b", ["a100-80gb-sxm", "h100-sxm"], prompt=[64, 128, 256, 1024, 4096])
    assert ax.get_xlabel() == "prompt length [tokens]" and len(ax.get_legend().get_texts()) == 2
    ys = np.concatenate([line.get_ydata() for line in ax.get_lines()])
    assert np.nanmin(ys) > 0


def test_speculative_plot_draws_one_line_per_acceptance():
    from roofline_decode.plotting import speculative_plot

    ax = speculative_plot("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", batch=[1, 8, 64, 512],
                          acceptance=[0.6, 0.8], context=2048)  # the plot's default context before 0.2
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["a = 0.6", "a = 0.8"]
    first = ax.get_lines()[0].get_ydata()
    assert first[0] == pytest.approx(2.149, abs=1e-3)


@pytest.mark.parametrize("argv", [
    ["ttft", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpu", "l4"],
    ["speculative", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--mtp-layers", "1", "--k", "2", "--context", "4K"],
])
def test_plot_cli_writes_files(capsys, tmp_path, argv):
    path = tmp_path / "plot.png"
    code, out, _ = run(capsys, "plot", *argv, "-o", str(path))
    assert code == 0 and path.stat().st_size > 10_000


@pytest.mark.parametrize("argv", [
    ["ttft", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--draft", "llama-3.2-1b"],
    ["speculative", "--model", "llama-3.1-8b", "--gpu", "h100-sxm"],
    ["ttft", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1,2"],
    ["batch", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "1K"],
])
def test_plot_cli_bad_input(capsys, tmp_path, argv):
    code, out, err = run_safely(capsys, ["plot", *argv, "-o", str(tmp_path / "x.png")])
    assert code == 2 and len(err.strip().splitlines()) == 1 and not (tmp_path / "x.png").exists()
