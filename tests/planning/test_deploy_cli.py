"""``roofline-decode deploy`` and ``plot frontier --gpus``: the answer line, the table, JSON, one-line errors."""

from __future__ import annotations

import json

import pytest

from roofline_decode.cli import main
from roofline_decode.planning import deployments

ARGS = ["deploy", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--gpus", "4", "--isl", "1K", "--osl", "256",
        "--ttft-ms", "1000", "--tpot-ms", "20"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exit_:  # argparse's own errors
        code = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def test_answer_first_then_the_frontier_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *ARGS, "--price-per-hour", "2.5")
    assert code == 0 and err == ""
    lines = out.splitlines()
    expected = deployments("qwen3-30b-a3b", "h100-sxm", 4, 1024, 256, ttft=1.0, tpot=0.02, price_per_hour=2.5)
    assert lines[0] == expected.answer()
    assert lines[0].startswith("Qwen3-30B-A3B on 4 x H100") and lines[0].endswith("; floors")
    header = next(i for i, line in enumerate(lines) if "tok/s/GPU" in line and "mode" in line)
    assert "$/M tok" in lines[header] and "deployment" in lines[header]
    rows = lines[header + 1:header + 1 + len(expected.frontier())]
    assert len(rows) == len(expected.frontier()) and all(row.strip() for row in rows)
    assert any(row.startswith("*") for row in rows)  # points meeting the SLOs are marked
    assert lines[-1].startswith("searched ")


def test_json_and_modes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *ARGS, "--json", "--mode", "agg")
    assert code == 0
    data = json.loads(out)
    assert data["answer"].startswith("Qwen3-30B-A3B") and data["gpus"] == 4 and data["isl"] == 1024
    assert data["best"]["ttft_s"] <= 1.0 and data["best"]["tpot_s"] <= 0.02
    assert {p["mode"] for p in data["frontier"]} == {"aggregated"}
    assert data["points"] > len(data["frontier"]) > 0
    code, out, _ = run(capsys, *ARGS, "--json", "--mode", "disagg")
    assert {p["mode"] for p in json.loads(out)["frontier"]} == {"disaggregated"}


@pytest.mark.parametrize(("extra", "needle"), [
    (["--gpus", "0"], "--gpus"), (["--osl", "1"], "--osl"), (["--tpot-ms", "-3"], "--tpot-ms"),
    (["--mode", "some"], "--mode"), (["--model", "no-such-model"], "unknown model"),
    (["--price-per-hour", "1e9"], "price_per_hour"),
])
def test_bad_input_exits_2_with_one_line(capsys: pytest.CaptureFixture[str], extra: list[str], needle: str) -> None:
    code, out, err = run(capsys, *ARGS, *extra)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and needle in err and "Traceback" not in err


def test_plot_frontier_with_gpus(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    path = f"{tmp_path}/deploy.png"
    code, out, _ = run(capsys, "plot", "frontier", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--gpus", "4",
                       "--isl", "1024", "--osl", "256", "--tpot-ms", "20", "-o", path)
    assert code == 0 and "written" in out
    with open(path, "rb") as handle:
        assert handle.read(8) == b"\x89PNG\r\n\x1a\n"
    code, _, err = run(capsys, "plot", "frontier", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--isl", "1024",
                       "-o", path)
    assert code == 2 and "--gpus" in err
    code, _, err = run(capsys, "plot", "frontier", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--gpus", "4",
                       "--tp", "2", "-o", path)
    assert code == 2 and "--tp" in err


def test_deployment_frontier_plot_draws_the_frontier_and_the_best() -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from roofline_decode.plotting import deployment_frontier_plot

    result = deployments("qwen3-30b-a3b", "h100-sxm", 4, 1024, 256, ttft=1.0, tpot=0.02)
    ax = deployment_frontier_plot(result=result)
    try:
        labels = [line.get_label() for line in ax.get_lines()]
        assert "floor-optimal frontier (upper bound)" in labels and "best under the SLOs" in labels
        front = next(line for line in ax.get_lines() if line.get_label().startswith("floor-optimal"))
        assert list(front.get_xdata()) == [p.tokens_per_s_per_user for p in result.frontier()]
        assert result.best is not None and result.best.label in " ".join(t.get_text() for t in ax.texts)
        assert "Qwen3-30B-A3B on 4 x" in ax.get_title()
    finally:
        plt.close(ax.figure)
