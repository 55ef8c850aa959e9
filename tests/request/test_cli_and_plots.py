"""`roofline-decode request`, `plot ttft` and `plot speculative`: outputs, bad input, headless plots."""

import csv
import io
import json

import matplotlib
import numpy as np
import pytest

from roofline_decode.cli import main
from roofline_decode.floors.prefill import prefill_floor
from roofline_decode.floors.request import request_floor
from roofline_decode.floors.speculative import speculative_floor

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
    # speculative decoding at the requests' mean decode context, 2048 + (512 - 2) / 2 = 2303:
    # batch 1: a 4.571 ms plain step against (3.041 ms for 4 draft steps + 4.571 ms verify) / E,
    # E = (1 - 0.8^5) / 0.2 = 3.3616 tokens per round: speedup 2.018; batch 32: 1.874
    spec = speculative_floor("llama-3.1-8b", "h100-sxm", draft="llama-3.2-1b", k=4, acceptance=0.8, batch=[1, 32],
                             context=2303)
    assert [float(row["speculative_speedup"]) for row in rows] == pytest.approx(spec.speedup.tolist(), rel=1e-12)
    assert np.round(spec.speedup, 3).tolist() == [2.018, 1.874]
    # latency: TTFT, then 511 decode tokens at the speculative time per token
    for row, per_token in zip(rows, spec.time_per_token_s):
        assert float(row["speculative_e2e_latency_s"]) == pytest.approx(float(row["ttft_s"]) + 511 * per_token, rel=1e-12)
        assert row["speculative_best_k"] == "4"


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

    prompts = [64, 128, 256, 1024, 4096]
    ax = ttft_plot("llama-3.1-8b", ["a100-80gb-sxm", "h100-sxm"], prompt=prompts)
    assert ax.get_xlabel() == "prompt length [tokens]" and len(ax.get_legend().get_texts()) == 2
    lines = ax.get_lines()
    assert len(lines) == 8  # per device: solid (compute-bound), dashed (memory-bound), the join, the dot
    for i, device in enumerate(["a100-80gb-sxm", "h100-sxm"]):
        solid, dashed, join, dot = lines[4 * i: 4 * i + 4]
        r = prefill_floor("llama-3.1-8b", device, prompts)
        ms = np.asarray(r.ttft_s) * 1e3
        compute = np.asarray(r.bound) == "compute"
        assert solid.get_label() == device and solid.get_linestyle() == "-" and dashed.get_linestyle() == "--"
        np.testing.assert_array_equal(np.asarray(solid.get_xdata()), prompts)
        np.testing.assert_allclose(solid.get_ydata(), np.where(compute, ms, np.nan), rtol=1e-12)
        np.testing.assert_allclose(dashed.get_ydata(), np.where(compute, np.nan, ms), rtol=1e-12)
        star = float(r.compute_bound_prompt[0])  # the dot: the shortest compute-bound prompt
        assert dot.get_xdata()[0] == star
        assert dot.get_ydata()[0] == pytest.approx(float((prefill_floor("llama-3.1-8b", device, star)).ttft_s) * 1e3)
    # by hand on the H100 (989.5 TFLOP/s bf16, 3.35 TB/s): 64 tokens move 2 (7,504,924,672 +
    # 64 x 4096) + 64 x 131,072 = 15,018,762,240 B: 4.483 ms (memory-bound); 4,096 tokens do
    # 2 (4096 x 6,979,321,856 + 525,336,576) + 524,288 x 4096 x 4097 / 2 = 6.15748e13 FLOPs:
    # 62.228 ms (compute-bound); the crossing at 317 tokens (test_prefill), 4.500 ms
    h100_solid, h100_dashed, _, h100_dot = lines[4:]
    assert h100_dashed.get_ydata()[0] == pytest.approx(4.4832, abs=1e-4)
    assert h100_solid.get_ydata()[-1] == pytest.approx(62.2282, abs=1e-4)
    assert (h100_dot.get_xdata()[0], round(float(h100_dot.get_ydata()[0]), 3)) == (317, 4.500)



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
