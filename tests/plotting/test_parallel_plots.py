"""Plots under a parallel layout: a 671B model on 8 devices is drawn per device."""

import numpy as np
import pytest

from roofline_decode import decode_floor, plotting


def by_gid(ax, gid):
    return [artist for artist in ax.get_children() if artist.get_gid() == gid]


def test_ridge_plot_draws_the_busiest_device_of_a_layout():
    batches = [1, 8, 64, 512, 1024]
    alone = plotting.ridge_plot("deepseek-v3", "h200-sxm", batch=batches, context=8192)
    assert len(by_gid(alone, "does-not-fit")[0].get_xdata()) == len(batches)  # 671B never fits one H200
    ax = plotting.ridge_plot("deepseek-v3", "h200-sxm", batch=batches, context=8192, parallel="tp8")
    share = decode_floor("deepseek-v3", "h200-sxm", batch=np.array(batches)[:, None], context=[[8192]],
                         parallel="tp8")
    points = by_gid(ax, "operating-points")[0]
    np.testing.assert_allclose(points.get_xdata(), (share.flops_per_device / share.bytes_read_per_device)[:, 0],
                               rtol=1e-12)
    np.testing.assert_allclose(points.get_ydata(), (share.flops_per_device / share.step_time_s)[:, 0] / 1e12,
                               rtol=1e-12)
    misses = by_gid(ax, "does-not-fit")[0].get_xdata()
    assert len(misses) == 1 and misses[0] == pytest.approx(points.get_xdata()[-1])  # only B = 1024 is too big
    assert "tp8 (8 devices each; per device)" in ax.get_title()
    assert ax.get_xlabel() == "arithmetic intensity per device [FLOP/B]"
    assert "first swept batch compute-bound per device (tp8):" in by_gid(ax, "critical-batch")[0].get_text()


def test_a_one_device_layout_is_the_plain_plot():
    plain = plotting.ridge_plot("llama-3.1-8b", "h100-sxm", batch=[1, 64], context=1024)
    one = plotting.ridge_plot("llama-3.1-8b", "h100-sxm", batch=[1, 64], context=1024, parallel="tp1")
    for a, b in zip(by_gid(plain, "operating-points"), by_gid(one, "operating-points")):
        assert list(a.get_xydata().ravel()) == list(b.get_xydata().ravel())
    assert plain.get_title() == one.get_title()


def test_context_plot_draws_the_layout_step_and_fit_per_device():
    contexts = [0, 16384, 65536, 131072]
    ax = plotting.context_plot("deepseek-v3", "h200-sxm", context=contexts, batch=[1, 128], parallel="tp8")
    share = decode_floor("deepseek-v3", "h200-sxm", batch=[[1], [128]], context=[contexts], parallel="tp8")
    fitting = [line for line in ax.get_lines() if line.get_gid() == "fits"]
    np.testing.assert_allclose(fitting[0].get_ydata(), share.step_time_s[0] * 1e3, rtol=1e-12)  # B = 1 fits throughout
    assert np.isnan(fitting[1].get_ydata()[-1])  # B = 128 at 128K is more than one device's share of memory
    assert [line for line in ax.get_lines() if line.get_gid() == "capacity-limit"]
    assert ax.get_title().endswith("tp8 (8 devices)")
    alone = plotting.context_plot("deepseek-v3", "h200-sxm", context=contexts, batch=[1])
    assert all(np.isnan([line for line in alone.get_lines() if line.get_gid() == "fits"][0].get_ydata()))


def test_breakdown_plot_stacks_the_busiest_devices_bytes():
    batches = [1, 16, 256, 1024]
    ax = plotting.breakdown_plot("deepseek-v3", "h200-sxm", batch=batches, context=8192, parallel="tp8")
    share = decode_floor("deepseek-v3", "h200-sxm", batch=batches, context=8192, parallel="tp8")
    top = ax.collections[2].get_paths()[0].vertices[:, 1].max()  # the stack's top: all bytes per device
    assert top == pytest.approx(float(np.max(share.bytes_read_per_device)) / 1e9, rel=1e-12)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "communication time (links)" in labels and "step floor of the layout" in labels
    step = [line for line in ax.twin.get_lines() if line.get_label() == "step floor of the layout"][0]
    np.testing.assert_allclose(step.get_ydata(), share.step_time_s * 1e3, rtol=1e-12)
    assert by_gid(ax, "capacity-label")[0].get_text() == "capacity limit: does not fit from B = 1,024"
    assert "tp8: the busiest of 8 devices" in ax.get_title()


def test_batch_plot_draws_the_layout_rate_and_its_limits():
    batches = [1, 8, 64, 512, 1024]
    ax = plotting.batch_plot("deepseek-v3", "h200-sxm", batch=batches, context=8192, parallel="tp8")
    share = decode_floor("deepseek-v3", "h200-sxm", batch=batches, context=8192, parallel="tp8")
    rate = [line for line in ax.get_lines() if line.get_label() == "aggregate tokens/s (left)"][0]
    np.testing.assert_allclose(rate.get_ydata(), share.tokens_per_s, rtol=1e-12)
    assert by_gid(ax, "capacity-label")[0].get_text() == "capacity limit B = 512 (swept, per device)"
    assert ax.get_legend().get_title().get_text() == "memory-bound over the whole range (no swept batch is " \
                                                     "compute-bound per device)"
    assert "tp8 (8 devices)" in ax.get_title()
    several = plotting.batch_plot("deepseek-v3", ["h200-sxm", "mi300x"], batch=batches, context=8192,
                                  parallel="tp8")
    solid = [line for line in several.get_lines() if line.get_gid() == "tokens-per-s"]
    assert len(solid) == 2 and len(solid[0].get_xdata()) == 4 and len(solid[1].get_xdata()) == 5  # MI300X: all fit
    assert "tp8 (8 devices each)" in several.get_title()


def test_capacity_map_shades_the_layout_verdicts():
    batches, contexts = [1, 64, 4096], [256, 8192, 131072]
    alone = plotting.capacity_map("deepseek-v3", "h200-sxm", batch=batches, context=contexts)
    assert by_gid(alone, "nothing-fits")
    ax = plotting.capacity_map("deepseek-v3", "h200-sxm", batch=batches, context=contexts, parallel="tp8")
    assert not by_gid(ax, "nothing-fits")
    share = decode_floor("deepseek-v3", "h200-sxm", batch=np.array(batches)[:, None], context=[contexts],
                         parallel="tp8")
    verdict = by_gid(ax, "verdict")[0].get_array().reshape(len(contexts), len(batches)).T
    fits = np.asarray(share.resident_bytes_per_device) <= plotting.usable_memory("h200-sxm")
    assert (verdict == 2).tolist() == (~fits).tolist()
    assert verdict[0, 0] == 0  # batch 1 at 256 tokens: memory-bound, and it fits
    assert ax.get_title().endswith("per device\ntp8 (8 devices)")


def test_ttft_plot_draws_the_layout_prefill_with_readable_axes():
    from roofline_decode import prefill_floor

    prompts = [256, 4096, 65536]
    ax = plotting.ttft_plot("deepseek-v3", "h200-sxm", prompt=prompts, parallel="tp8")
    share = prefill_floor("deepseek-v3", "h200-sxm", prompts, 1, parallel="tp8")
    drawn = np.fmin(*[np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()[:2]])
    np.testing.assert_allclose(drawn, share.ttft_s * 1e3, rtol=1e-12)
    assert "tp8 (8 devices each)" in ax.get_title()
    ax.figure.canvas.draw()
    assert [t.get_text() for t in ax.get_xticklabels() if t.get_text()][-3:] == ["32k", "64k", "128k"]
    assert not any("$" in t.get_text() for t in ax.get_yticklabels(which="both"))
