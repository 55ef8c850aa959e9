"""The serial chain drawn as a third ceiling on the ridge and batch plots (headless)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from roofline_decode.cli import main  # noqa: E402
from roofline_decode.plotting import batch_plot, ridge_plot  # noqa: E402


def _gids(ax):
    return {artist.get_gid() for artist in ax.get_children() if artist.get_gid()}


def test_ridge_plot_draws_the_chain_ceiling_only_with_a_profile():
    ax = ridge_plot("llama-3.2-1b", ["h100-sxm", "h200-sxm"], context=1024, latency="eager-launch")
    chains = [line for line in ax.get_lines() if line.get_gid() == "chain-ceiling"]
    assert len(chains) == 2
    x, y = chains[0].get_data()
    # at batch 1 the ceiling is the step's FLOPs over 0.64 ms (in TFLOP/s)
    from roofline_decode import decode_floor

    one = decode_floor("llama-3.2-1b", "h100-sxm", batch=1, context=1024)
    assert y[0] == pytest.approx(float(one.flops) / 0.64e-3 / 1e12)
    assert any("serial-chain ceiling" in t.get_text() for t in ax.get_legend().get_texts())
    plt.close(ax.figure)
    plain = ridge_plot("llama-3.2-1b", ["h100-sxm"], context=1024)
    assert "chain-ceiling" not in {line.get_gid() for line in plain.get_lines()}
    plt.close(plain.figure)


def test_batch_plot_draws_the_chain_floor():
    ax = batch_plot("llama-3.2-1b", "h200-sxm", context=1024, latency="eager-launch")
    floors = [line for line in ax.twin.get_lines() if line.get_gid() == "chain-floor"]
    assert len(floors) == 1 and floors[0].get_ydata()[0] == pytest.approx(0.64)
    # batch 1 is latency-bound on an H200: the step is the chain
    assert ax.twin.get_lines()[0].get_ydata()[0] == pytest.approx(0.64)
    plt.close(ax.figure)


def test_plot_cli_latency(tmp_path, capsys):
    out = tmp_path / "batch.png"
    assert main(["plot", "batch", "--model", "llama-3.2-1b", "--gpu", "h200-sxm", "--latency", "eager-launch",
                 "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    capsys.readouterr()
    assert main(["plot", "context", "--model", "llama-3.2-1b", "--gpu", "h200-sxm", "--latency", "eager-launch",
                 "-o", str(tmp_path / "c.png")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--latency" in err
