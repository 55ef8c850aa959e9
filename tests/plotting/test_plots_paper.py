"""Plots ready for a paper (issue 19 item 5): structural checks, headless."""

from __future__ import annotations

import numpy as np

from roofline_decode import plotting


def by_gid(ax, gid):
    return [artist for artist in ax.get_children() if artist.get_gid() == gid]


def test_ridge_device_without_peak_has_no_roof_and_stays_below_the_others():
    ax = plotting.ridge_plot("llama-3.1-8b", ["h100-sxm", "m5-max"], context=[0, 4096])
    slopes = by_gid(ax, "bandwidth-only")
    assert len(slopes) == 1
    h100_roof = 989.5  # the H100 SXM dense bf16 peak in TFLOP/s (its label)
    assert np.max(slopes[0].get_ydata()) <= h100_roof * 1.001
    labels = ax.get_legend_handles_labels()[1]
    assert any("no roof drawn" in label and "M5 Max" in label for label in labels)
    assert not any("no roof drawn" in label and "H100" in label for label in labels)
    # the slope still reaches the device's own last operating point
    fl_last = max(np.max(line.get_ydata()) for line in by_gid(ax, "operating-points")[2:])
    assert np.max(slopes[0].get_ydata()) >= fl_last * 0.999 or fl_last > h100_roof


def test_ridge_with_peaks_draws_no_bandwidth_only_line():
    ax = plotting.ridge_plot("llama-3.1-8b", ["h100-sxm", "mi300x"])
    assert by_gid(ax, "bandwidth-only") == []


def _legend_below_axes(ax):
    anchor = ax.get_legend().get_bbox_to_anchor().transformed(ax.transAxes.inverted())
    return anchor.y1 < 0


def test_batch_plot_legend_sits_below_the_axes_and_labels_above_the_frame():
    ax = plotting.batch_plot("llama-3.1-70b", "rtx-4090", context=4096)
    assert _legend_below_axes(ax)
    label = by_gid(ax, "capacity-label")[0]
    assert label.get_text().startswith("nothing fits") and label.xy[1] == 1.0  # above the curves' area


def test_batch_plot_several_devices_on_one_axes():
    ax = plotting.batch_plot("llama-3.1-70b", ["h100-sxm", "mi300x", "rtx-4090"], context=4096, slo_ms=30,
                             weights="fp8")
    assert not hasattr(ax, "twin")
    assert len(by_gid(ax, "tokens-per-s")) == 2  # the RTX 4090 holds no batch: dotted only
    assert len(by_gid(ax, "capacity-limit")) == 2 and len(by_gid(ax, "does-not-fit")) == 3
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sum("nothing fits" in t for t in labels) == 1 and any("within 30 ms/token" in t for t in labels)
    assert _legend_below_axes(ax)
    # the star marks the largest batch meeting the target on the fitting part of the curve
    star = by_gid(ax, "latency-target")[0]
    assert star.get_xdata()[0] <= by_gid(ax, "capacity-limit")[0].get_xdata()[0]


def test_batch_plot_several_devices_without_target_has_no_target_entry():
    ax = plotting.batch_plot("llama-3.1-8b", ["h100-sxm", "mi300x"], batch=[1, 8, 64])
    assert not by_gid(ax, "latency-target")
    assert not any("ms/token" in t.get_text() for t in ax.get_legend().get_texts())


def test_breakdown_marks_the_capacity_limit():
    ax = plotting.breakdown_plot("llama-3.1-8b", "rtx-4090")
    assert by_gid(ax, "capacity-label")[0].get_text() == "capacity limit: does not fit from B = 16"
    assert by_gid(ax, "does-not-fit")
    fits = plotting.breakdown_plot("llama-3.1-8b", "h200-sxm", batch=[1, 2, 4], context=1024)
    assert not by_gid(fits, "capacity-label")


def test_capacity_map_labels_the_top_context():
    ax = plotting.capacity_map("llama-3.1-8b", "h100-sxm")
    ax.figure.canvas.draw()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[-1] == "128k" and labels[0] == "256"  # Llama-3.1's longest context, 131,072 tokens


def test_validate_plot_batch_axis_reads_1_2_4_8(tmp_path, monkeypatch):
    import dataclasses

    from matplotlib.figure import Figure

    from roofline_decode.kernel.runner import Measurement, plot_measurements

    saved = []
    original = Figure.savefig
    monkeypatch.setattr(Figure, "savefig", lambda self, *a, **k: (saved.append(self), original(self, *a, **k)))
    names = [f.name for f in dataclasses.fields(Measurement)]
    rows = [Measurement(**{n: dict(batch=b, context=t, floor_s=1e-3, mean_s=2e-3, std_s=1e-4,
                                   tokens_per_s=b / 2e-3).get(n, 1) for n in names})
            for b in (1, 2, 4, 8) for t in (128, 512)]
    plot_measurements(rows, tmp_path / "validate.png")
    right = saved[0].axes[1]
    assert [t.get_text() for t in right.get_xticklabels()] == ["1", "2", "4", "8"]


def test_compare_plot_names_model_and_device_and_never_writes_a_question_mark(tmp_path):
    from roofline_decode.measure.compare import compare
    from roofline_decode.measure.plot import plot_measurements
    from roofline_decode.measure.rows import load_csv

    path = tmp_path / "study.csv"
    path.write_text("B,T,mean_ms,std_ms,tokens_per_sec\n1,1024,16.611,0.072,60.2\n4,2048,15.921,0.058,251.2\n")
    ax = plot_measurements(compare(load_csv(path), "qwen2.5-7b", "h100-sxm"))
    assert ax.get_title().splitlines()[1] == "Qwen2.5-7B on h100-sxm"
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[0] == "Qwen2.5-7B bf16 B=1 T=1024" and not any("?" in t for t in ticks)
    ax.figure.canvas.draw()
    assert not any("times" in t.get_text() or "^" in t.get_text() for t in ax.get_yticklabels())
    measured = next(c for c in ax.collections if c.get_label() == "measured")
    assert measured.get_zorder() > max(c.get_zorder() for c in ax.collections if c is not measured)
