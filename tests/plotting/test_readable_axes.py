"""Axes that read: the calibration plot's step-time axis at any range (it once showed one tick), the
frontier's plain numbers."""

import pytest

from roofline_decode.measure.compare import compare
from roofline_decode.measure.plot import plot_measurements
from roofline_decode.measure.rows import load_csv


def visible_labels(ax):
    ax.figure.canvas.draw()
    low, high = ax.get_ylim()
    return [t.get_text() for t in ax.get_yticklabels() if t.get_text() and low <= t.get_position()[1] <= high]


@pytest.mark.parametrize(("rows", "expected"), [
    # 4 to 18 ms: under one decade
    ("1,1024,16.611\n4,2048,15.921\n", ["4", "5", "6", "7", "8", "9", "10", "15"]),
    # 3 ms to 1.2 s: two and a half decades
    ("1,1024,16.611\n64,2048,35\n256,32768,900\n", ["5", "10", "20", "50", "100", "200", "500", "1000"]),
])
def test_step_time_axis_has_readable_labels(tmp_path, rows, expected):
    path = tmp_path / "study.csv"
    path.write_text("B,T,mean_ms\n" + rows)
    ax = plot_measurements(compare(load_csv(path), "qwen2.5-7b", "h100-sxm"))
    assert visible_labels(ax) == expected
    assert not [t.get_text() for t in ax.get_yminorticklabels() if t.get_text()]  # no crowding from minor ticks


def test_frontier_axes_read_as_plain_numbers():
    from roofline_decode import plotting

    ax = plotting.frontier_plot("deepseek-v3", ["h200-sxm", "mi300x"], context=8192)
    ax.figure.canvas.draw()
    for labels in (ax.get_xticklabels(which="both"), ax.get_yticklabels(which="both")):
        texts = [t.get_text() for t in labels if t.get_text()]
        assert texts and not any("$" in t or "times" in t for t in texts), texts  # no 2x10^2 mathtext
    assert {"200", "500", "1000"} <= {t.get_text() for t in ax.get_yticklabels(which="both")}


def test_breakdown_legend_of_a_mixed_precision_model_fits_beside_the_axes():
    """DeepSeek-V3's compute precision lists six groups: the title says it, the legend does not
    repeat it (the legend once ran past the figure)."""
    from roofline_decode import plotting

    ax = plotting.breakdown_plot("deepseek-v3", "h200-sxm", batch=[1, 16, 256], context=8192)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert max(len(label) for label in labels) < 80, labels
    assert "attention scores" in ax.get_title()
    single = plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", batch=[1, 16], context=1024)
    assert "compute time = FLOPs / peak (bf16)" in [t.get_text() for t in single.get_legend().get_texts()]



def test_frontier_plot_takes_the_routing():
    from roofline_decode import plotting

    uniform = plotting.frontier_plot("mixtral-8x7b", ["h100-sxm"], context=4096, tp=(1,))
    strict = plotting.frontier_plot("mixtral-8x7b", ["h100-sxm"], context=4096, tp=(1,), routing="identical")
    y_uniform, y_strict = (max(max(line.get_ydata()) for line in ax.get_lines() if len(line.get_ydata()))
                           for ax in (uniform, strict))
    assert y_strict > y_uniform  # identical routing reads fewer experts: more tokens/s per device
