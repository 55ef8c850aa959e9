"""The plot functions draw the numbers of decode_floor/sweep, with the expected artists and labels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from matplotlib.axes import Axes
from matplotlib.collections import QuadMesh

import roofline_decode as rd
from roofline_decode import plotting
from roofline_decode.errors import InvalidValueError
from roofline_decode.units import GB, TFLOP

GPUS = ["a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x"]
BATCHES = [1, 4, 16, 64, 256, 1024]


def by_gid(ax, gid):
    return [artist for artist in ax.get_children() if artist.get_gid() == gid]


def texts(ax):
    return [t.get_text() for t in ax.texts]


# --- ridge_plot -----------------------------------------------------------------------------

def test_ridge_plot_draws_the_sweep_on_each_roofline():
    contexts = [256, 4096]
    ax = plotting.ridge_plot("llama-3.1-8b", GPUS, batch=BATCHES, context=contexts)
    floors = rd.sweep(["llama-3.1-8b"], GPUS, batch=BATCHES, context=contexts)
    assert isinstance(ax, Axes)
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert ax.get_xlabel() == "arithmetic intensity [FLOP/B]"
    assert "TFLOP/s" in ax.get_ylabel()

    # one roof per accelerator, labelled with its name and ridge point
    labels = [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]
    for gpu, floor in zip(GPUS, floors):
        name = rd.load_accelerator(gpu).name
        roof = [label for label in labels if label.startswith(name)]
        assert roof and f"ridge {floor.ridge_point:.0f} FLOP/B" in roof[0]

    # ridge points at (peak / bandwidth, peak)
    ridges = sorted((float(l.get_xdata()[0]), float(l.get_ydata()[0])) for l in by_gid(ax, "ridge-point"))
    expected = sorted((f.ridge_point, f.peak_flops / TFLOP) for f in floors)
    np.testing.assert_allclose(ridges, expected)

    # operating points: x = intensity, y = FLOPs / step time, one line per accelerator and context
    points = by_gid(ax, "operating-points")
    assert len(points) == len(GPUS) * len(contexts)
    for i, floor in enumerate(floors):
        for j in range(len(contexts)):
            line = points[i * len(contexts) + j]
            np.testing.assert_allclose(line.get_xdata(), floor.arithmetic_intensity[:, j])
            np.testing.assert_allclose(line.get_ydata(), floor.flops[:, j] / floor.step_time_s[:, j] / TFLOP)


def test_ridge_plot_annotates_critical_batches_and_batches():
    ax = plotting.ridge_plot("llama-3.1-8b", ["h100-sxm", "mi300x"], batch=BATCHES, context=[256, 4096])
    box = by_gid(ax, "critical-batch")[0].get_text()
    for gpu in ("h100-sxm", "mi300x"):
        floor = rd.decode_floor("llama-3.1-8b", gpu, batch=1, context=[256, 4096])
        short, long = floor.critical_batch
        assert math.isfinite(short) and not math.isfinite(long)
        assert f"{rd.load_accelerator(gpu).name}: {math.ceil(short)} @ 256, ∞ @ 4k" in box
    assert "∞: memory-bound at any batch" in box
    labels = [t.get_text() for t in by_gid(ax, "batch-label")]
    assert "B=1" in labels and len(labels) >= 3


def test_ridge_plot_title_names_model_precision_accelerator_and_legend():
    gpu = rd.Accelerator(name="my-gpu", memory_bandwidth=1e12, memory_capacity=48e9, peak_flops={"bf16": 2e14})
    ax = plotting.ridge_plot(rd.load_model("llama-3.1-8b", weights="int8"), gpu, context=1024)
    title = ax.get_title()
    assert "Llama-3.1-8B" in title and "my-gpu" in title and "int8 weights" in title and "bf16 compute" in title
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("ridge 200 FLOP/B" in t for t in legend)
    assert any("context 1k" in t for t in legend)


def test_ridge_plot_draws_on_a_given_axes_and_handles_no_published_peak():
    import matplotlib.pyplot as plt

    _, given = plt.subplots()
    ax = plotting.ridge_plot("llama-3.1-8b", ["m5-max", "h100-sxm"], context=0, ax=given)
    assert ax is given
    labels = [line.get_label() for line in ax.get_lines()]
    assert any("no compute peak published" in label for label in labels)
    assert len(by_gid(ax, "ridge-point")) == 1  # only the H100 has a ridge
    box = by_gid(ax, "critical-batch")[0].get_text()
    assert f"{rd.load_accelerator('m5-max').name}: n/a (no compute peak published)" in box
    assert "∞" not in box  # at context 0 the H100 reaches its ridge; no KV-cache note
    assert ax.get_title().endswith("bf16 weights, bf16 KV, bf16 compute")  # the H100's; the M5 Max has none


def test_ridge_plot_title_names_the_compute_precision_only_when_all_share_it():
    fp8 = rd.load_model("llama-3.1-8b", weights="fp8")
    mixed = plotting.ridge_plot(fp8, ["a100-80gb-sxm", "h100-sxm"], context=1024)  # A100: no fp8, computes in bf16
    assert mixed.get_title().endswith("fp8_e4m3 weights, bf16 KV, compute precision per accelerator in the legend")
    same = plotting.ridge_plot(fp8, ["h100-sxm", "h200-sxm"], context=1024)  # attention over a bf16 cache: bf16
    assert same.get_title().endswith("fp8_e4m3 weights, bf16 KV, fp8 (attention projections, mlp, lm_head), bf16 (attention scores) compute")
    all_fp8 = plotting.ridge_plot(fp8.with_precision(kv="fp8"), ["h100-sxm", "h200-sxm"], context=1024)
    assert all_fp8.get_title().endswith("fp8_e4m3 weights, fp8_e4m3 KV, fp8 compute")
    none = plotting.ridge_plot("llama-3.1-8b", "m5-max", context=1024)
    assert none.get_title().endswith("bf16 weights, bf16 KV")


def test_plots_reject_bad_input():
    with pytest.raises(rd.UnknownIdError):
        plotting.ridge_plot("llama-3.1-8b", ["h100-sxn"])
    with pytest.raises(InvalidValueError, match="accelerators"):
        plotting.ridge_plot("llama-3.1-8b", [])
    with pytest.raises(InvalidValueError, match="batch"):
        plotting.ridge_plot("llama-3.1-8b", "h100-sxm", batch=[-1, 2])
    with pytest.raises(InvalidValueError, match="exactly one accelerator"):
        plotting.context_plot("llama-3.1-8b", ["h100-sxm", "mi300x"])
    with pytest.raises(InvalidValueError, match="context"):
        plotting.batch_plot("llama-3.1-8b", "h100-sxm", context=[1024, 2048])
    with pytest.raises(InvalidValueError, match="slo_ms"):
        plotting.capacity_map("llama-3.1-8b", "h100-sxm", slo_ms=-5)
    with pytest.raises(InvalidValueError, match="slo_ms"):
        plotting.context_plot("llama-3.1-8b", "h100-sxm", slo_ms="fast")
    with pytest.raises(InvalidValueError, match="at least two"):
        plotting.capacity_map("llama-3.1-8b", "h100-sxm", batch=[8])
    with pytest.raises(InvalidValueError, match="batch='many' is invalid: expected real numbers >= 1"):
        plotting.ridge_plot("llama-3.1-8b", "h100-sxm", batch="many")
    with pytest.raises(InvalidValueError, match="context=None is invalid: expected real numbers >= 0"):
        plotting.batch_plot("llama-3.1-8b", "h100-sxm", context=None)
    with pytest.raises(InvalidValueError, match="context=-5 is invalid"):
        plotting.max_batch("llama-3.1-8b", "h100-sxm", -5)
    # a line needs two points along the swept axis (one would leave the plot empty)
    with pytest.raises(InvalidValueError, match=r"batch=\[8, 8\] is invalid: expected at least two distinct"):
        plotting.batch_plot("llama-3.1-8b", "h100-sxm", batch=[8, 8])
    with pytest.raises(InvalidValueError, match="context=1024 is invalid: expected at least two"):
        plotting.context_plot("llama-3.1-8b", "h100-sxm", context=1024)
    with pytest.raises(InvalidValueError, match="batch=8 is invalid: expected at least two"):
        plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", batch=8, context=4096)


# --- batch_plot -----------------------------------------------------------------------------

def test_batch_plot_draws_rate_latency_transition_and_capacity():
    ax = plotting.batch_plot("llama-3.1-8b", "h100-sxm", context=128, slo_ms=10)
    floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=128)
    rate, = ax.get_lines()[:1]
    batches = rate.get_xdata()
    reference = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=batches, context=128)
    np.testing.assert_allclose(rate.get_ydata(), reference.tokens_per_s)
    latency = ax.twin.get_lines()[0]
    np.testing.assert_allclose(latency.get_ydata(), reference.step_time_s * 1e3)
    assert ax.get_ylabel() == "aggregate decode rate [tokens/s]"
    assert ax.twin.get_ylabel() == "per-sequence latency [ms/token]"
    assert ax.get_xscale() == "log"

    critical = math.ceil(float(floor.critical_batch))
    assert by_gid(ax, "compute-bound")
    assert f"B* = {critical}" in by_gid(ax, "critical-batch")[0].get_text()
    limit = plotting.max_batch("llama-3.1-8b", "h100-sxm", 128)
    assert by_gid(ax, "capacity-limit")
    assert f"B = {limit:.0f}" in by_gid(ax, "capacity-label")[0].get_text()
    assert by_gid(ax.twin, "latency-target")[0].get_ydata()[0] == 10
    assert ax.twin.get_xscale() == "log"  # shares the batch axis
    assert ax.get_zorder() > ax.twin.get_zorder() and not ax.patch.get_visible()  # labels above the twin's lines
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("compute-bound" in t for t in legend) and any("does not fit" in t for t in legend)
    assert "Llama-3.1-8B" in ax.get_title() and "H100" in ax.get_title() and "bf16" in ax.get_title()


def test_latency_target_may_be_given_as_text():
    ax = plotting.batch_plot("llama-3.1-8b", "h100-sxm", context=1024, slo_ms="12.5")
    assert by_gid(ax.twin, "latency-target")[0].get_ydata()[0] == 12.5
    assert any("12.5 ms/token" in t.get_text() for t in ax.get_legend().get_texts())


def test_batch_plot_says_when_the_whole_range_is_memory_bound():
    ax = plotting.batch_plot("llama-3.1-8b", "h200-sxm", batch=[1, 2, 4, 8], context=4096)
    # said in the legend's title: nothing is shaded, so no legend entry stands for it
    assert ax.get_legend().get_title().get_text() == "memory-bound over the whole range (B* = ∞ at 4k context)"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert not any("memory-bound" in t for t in legend)
    assert not by_gid(ax, "compute-bound") and not by_gid(ax, "capacity-limit")


# --- context_plot ---------------------------------------------------------------------------

def test_context_plot_lines_per_batch_and_capacity_markers():
    ax = plotting.context_plot("llama-3.1-8b", "h100-sxm", batch=[1, 64], slo_ms=30)
    fits = by_gid(ax, "fits")
    assert [line.get_label() for line in fits] == ["B = 1", "B = 64"]
    contexts = fits[0].get_xdata()
    floor = rd.sweep(["llama-3.1-8b"], ["h100-sxm"], batch=[1, 64], context=contexts)[0]
    np.testing.assert_allclose(fits[0].get_ydata(), floor.step_time_s[0] * 1e3)
    # batch 64 runs out of memory within 128k tokens: a dotted tail and an X at the last fit
    assert by_gid(ax, "does-not-fit") and len(by_gid(ax, "capacity-limit")) == 1
    marker_x = by_gid(ax, "capacity-limit")[0].get_xdata()[0]
    assert plotting.max_batch("llama-3.1-8b", "h100-sxm", marker_x) >= 64
    assert by_gid(ax, "latency-target")
    assert ax.get_xlabel().startswith("context T") and "[ms/token]" in ax.get_ylabel()


# --- breakdown_plot -------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, xlabel", [
    (dict(batch=[1, 8, 64, 512], context=2048), "batch B"),
    (dict(batch=16, over="context"), "context T"),
])
def test_breakdown_plot_stacks_bytes_and_aligns_time(kwargs, xlabel):
    ax = plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", **kwargs)
    assert ax.get_xlabel().startswith(xlabel)
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # the one new token's KV write is under 1% of the axis: drawn, not in the legend
    assert legend[:2] == ["weights read", "KV cache read"] and not any("written" in t for t in legend)
    assert len(ax.collections) >= 3
    assert any("compute time" in t for t in legend) and any("memory time" in t for t in legend)
    memory = ax.twin.get_lines()[0]
    xs = memory.get_xdata()
    if xlabel == "batch B":
        floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=xs, context=2048)
    else:
        floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=16, context=xs)
    np.testing.assert_allclose(memory.get_ydata(), floor.memory_time_s * 1e3)
    # the twin axis is aligned: the top of the byte stack maps onto the memory time
    scale = (ax.twin.get_ylim()[1] / 1e3) / (ax.get_ylim()[1] * GB)
    np.testing.assert_allclose(scale, 1 / floor.memory_bandwidth)
    assert len(ax.collections) == 3


def test_breakdown_plot_needs_one_swept_axis():
    with pytest.raises(InvalidValueError, match="over"):
        plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", batch=[1, 2], context=[0, 10])
    with pytest.raises(InvalidValueError, match="over"):
        plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", over="layers")


# --- capacity_map ---------------------------------------------------------------------------

def test_capacity_map_shades_verdicts_and_draws_the_latency_contour():
    batches = [1, 16, 256, 1024, 4096]
    contexts = [256, 1024, 8192, 65536]
    model = rd.load_model("llama-3.1-70b", weights="fp8", kv="fp8")
    ax = plotting.capacity_map(model, "h200-sxm", batch=batches, context=contexts, slo_ms=25)
    mesh = [c for c in ax.collections if isinstance(c, QuadMesh)][0]
    verdict = np.asarray(mesh.get_array()).reshape(len(contexts), len(batches))
    floor = rd.sweep([model], ["h200-sxm"], batch=batches, context=contexts)[0]
    fits = plotting.resident_bytes(model, floor) <= plotting.usable_memory("h200-sxm")
    expected = np.where(~fits, 2, np.where(floor.bound == "compute", 1, 0)).T
    np.testing.assert_array_equal(verdict, expected)
    assert set(np.unique(verdict)) == {0, 1, 2}
    assert by_gid(ax, "latency-contour")
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[:3] == ["fits, memory-bound", "fits, compute-bound", "does not fit in memory"]
    assert any("25 ms/token" in t for t in legend)
    assert "fp8" in ax.get_title() and "H200" in ax.get_title()


def test_capacity_map_says_when_nothing_fits():
    ax = plotting.capacity_map("llama-3.1-70b", "h100-sxm", batch=[1, 2], context=[1024, 2048], slo_ms=1)
    assert "nothing fits" in by_gid(ax, "nothing-fits")[0].get_text()
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("no cell meets it" in t for t in legend)


def test_batch_plot_says_when_nothing_fits():
    ax = plotting.batch_plot("llama-3.1-70b", "h100-sxm", batch=[1, 2, 4], context=1024)
    assert by_gid(ax, "capacity-limit")
    weights = rd.load_model("llama-3.1-70b").weight_bytes / GB
    assert by_gid(ax, "capacity-label")[0].get_text() == f"nothing fits: weights alone are {weights:.4g} GB"
