"""No answer without its ingredients (issue 27 item 5): on a device that publishes no compute
peak, a quantity that needs one is NaN with a note; a decode step's memory floor keeps its number.

The case by hand: Llama-3.1-8B in bf16, a 32,768-token prompt on an Apple M5 Max (614 GB/s, no
compute peak in its spec: Apple publishes no GPU clock for it).  One chunk reads every weight once except the embedding table, of
which it gathers one row per prompt token:
2 B x (8,030,261,248 - 525,336,576 + 32,768 x 4,096) = 15,278,284,800 B; it writes the KV of every
prompt token, 32,768 x (2 x 8 KV heads x 128 x 32 layers x 2 B) = 4,294,967,296 B, and reads none.
19,573,252,096 B at 614 GB/s = 31.87826074 ms: the "TTFT" a memory-only floor gives, which would
mean 738.9 TFLOP in 31.9 ms, 23 PFLOP/s on a laptop.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode.cli import main
from roofline_decode.floors import NO_COMPUTE_PEAK

MODEL, LAPTOP = "llama-3.1-8b", "m5-max"
WEIGHT_BYTES = 2 * (8_030_261_248 - 525_336_576 + 32_768 * 4_096)
KV_WRITE = 32_768 * 2 * 8 * 128 * 32 * 2


def test_the_prefill_time_needs_a_peak_and_its_bytes_do_not():
    r = rd.prefill_floor(MODEL, LAPTOP, 32_768)
    assert (float(r.weight_bytes), float(r.kv_write_bytes), float(r.kv_read_bytes)) == (WEIGHT_BYTES, KV_WRITE, 0)
    assert float(r.memory_time_s) == (WEIGHT_BYTES + KV_WRITE) / 614e9 == pytest.approx(31.87826074e-3, rel=1e-9)
    for name in ("ttft_s", "prompt_tokens_per_s", "compute_time_s", "peak_flops", "compute_bound_prompt",
                 "compute_bound_chunk"):
        assert np.isnan(getattr(r, name)).all(), name
    assert np.isnan(r.ridge_point) and str(r.bound) == "n/a" and r.compute_precision == NO_COMPUTE_PEAK
    assert float(r.flops) == pytest.approx(7.389e14, rel=1e-3)  # the FLOPs stand
    assert r.notes == (f"{NO_COMPUTE_PEAK} for m5-max (bf16 weights): a prefill's time needs one: TTFT, prompt "
                       "tokens/s, the compute time, the bound, P* and chunk* are not given (NaN, n/a); bytes, FLOPs "
                       "and the memory time are",)
    record = r.to_records()[0]
    assert np.isnan(record["ttft_s"]) and record["bound"] == "n/a"
    assert "note: no compute peak published for m5-max" in str(r) and "n/a" in r._repr_html_()


def test_with_a_peak_the_prefill_is_the_larger_of_its_two_times():
    r = rd.prefill_floor(MODEL, "h100-sxm", 32_768)
    assert float(r.weight_bytes) == WEIGHT_BYTES and float(r.kv_write_bytes) == KV_WRITE  # device independent
    peak = rd.load_accelerator("h100-sxm").peak_flops["bf16"]  # 989.5 TFLOP/s dense
    assert float(r.ttft_s) == max(float(r.memory_time_s), float(r.flops) / peak)
    assert str(r.bound) == "compute" and r.notes == ()


def test_the_energy_floor_per_prompt_token_stands_without_a_peak():
    """The data-movement floor needs bytes and tokens, not a time: it stays (HBM3 of the GH200);
    the estimate at board power needs the time and is NaN."""
    r = rd.prefill_floor(MODEL, "gh200", 4096, batch=2)
    assert np.isnan(r.ttft_s)
    assert float(r.joules_per_token_floor) == float(r.energy_floor_j_per_step) / (2 * 4096)
    assert np.isnan(r.joules_per_token_at_board_power)


def test_a_mixed_step_with_prefill_tokens_needs_a_peak_and_decode_tokens_alone_do_not():
    m = rd.mixed_step_floor(MODEL, LAPTOP, [1, 8], 2048, [[0], [512]])
    decode = rd.decode_floor(MODEL, LAPTOP, [1, 8], 2048)
    np.testing.assert_array_equal(m.step_time_s[0], decode.step_time_s)  # p = 0: decode_floor's memory floor
    assert (m.compute_time_s[0] == 0).all() and list(m.bound[0]) == ["memory", "memory"]
    assert np.isnan(m.step_time_s[1]).all() and np.isnan(m.compute_time_s[1]).all() and list(m.bound[1]) == ["n/a"] * 2
    assert np.isfinite(m.memory_time_s).all()
    assert "a step that carries prefill tokens needs one" in m.notes[0]
    plain = rd.mixed_step_floor(MODEL, LAPTOP, 8, 2048, 0)  # no prefill tokens: decode_floor's note
    assert plain.notes == decode.notes


def test_a_request_keeps_its_decode_steps_and_loses_its_prefill():
    r = rd.request_floor(MODEL, LAPTOP, 2048, [1, 64], batch=4)
    steps = rd.decode_floor(MODEL, LAPTOP, 4, np.arange(2048, 2048 + 63)).step_time_s
    assert float(r.decode_time_s[1]) == float(np.sum(steps)) and float(r.tpot_s[1]) == float(np.sum(steps)) / 63
    for name in ("ttft_s", "e2e_latency_s", "output_tokens_per_s", "total_tokens_per_s", "requests_per_s"):
        assert np.isnan(getattr(r, name)).all(), name
    assert list(r.prefill_bound) == ["n/a", "n/a"]
    # whether a decode step is compute-bound needs a peak; one output token has no decode step at all
    assert float(r.decode_compute_bound_steps[0]) == 0 and np.isnan(r.decode_compute_bound_steps[1])
    assert np.isnan(r.cost_per_request(2.0)).all()
    assert "the prefill needs one" in r.notes[0]


def test_speculation_compares_memory_floors_and_cannot_tell_where_it_stops_paying():
    s = rd.speculative_floor(MODEL, LAPTOP, draft="llama-3.2-1b", batch=[1, 64], context=2048)
    plain = rd.decode_floor(MODEL, LAPTOP, [1, 64], 2048)
    np.testing.assert_array_equal(s.plain_step_s, plain.step_time_s)
    assert np.isfinite(s.speedup).all() and (s.speedup > 1).all()
    assert np.isnan(s.max_useful_batch).all() and np.isnan(s.plain_critical_batch).all()
    assert list(s.verify_bound) == ["n/a", "n/a"] and "the speedups compare memory floors" in s.notes[0]
    with_peak = rd.speculative_floor(MODEL, "h100-sxm", draft="llama-3.2-1b", batch=[1, 64], context=2048)
    assert not np.isnan(with_peak.max_useful_batch).any() and with_peak.notes == ()  # inf: pays at any batch


def test_every_catalog_device_without_a_bf16_or_fp16_peak_and_only_those_give_no_ttft():
    """bf16 weights compute in bf16, else fp16 (the format's fallbacks): a device publishing
    neither has no peak for Llama-3.1-8B."""
    without = []
    for device in rd.list_accelerators():
        peaks = rd.load_accelerator(device).peak_flops
        r = rd.prefill_floor(MODEL, device, 4096)
        if "bf16" in peaks or "fp16" in peaks:
            assert np.isfinite(r.ttft_s), device
        else:
            assert np.isnan(r.ttft_s) and str(r.bound) == "n/a", device
            without.append(device)
    assert {"m5-max", "dgx-spark", "xeon-sapphire-rapids", "gh200"} <= set(without)
    # of 125 catalog devices (52 before the Apple and GeForce peaks were added, 32 before the tensor rates of
    # the RTX 50 series, RTX A6000, RTX PRO 6000 (Workstation, Max-Q), RTX 4060 / 3080 12GB, Jetson Orin,
    # Arc A-series XMX and the fp16 of RX 6950 XT / RX 7900 XT; 14 before the Arc 140V's share of Lunar Lake's
    # platform TOPS and the RTX PRO 6000 Server's "up to 125 TFLOPS" family figure; 12 before the RTX 3070 Ti's
    # FP32 rate and the RTX 5060 Laptop's 2497 MHz clock; of the devices2 round's new files the RTX 5070/5080
    # Laptop and RTX 3080 Ti came with peaks, the GH200 without: no page read printed NVIDIA's GH200 tensor table; 11 before the Xeon 6980P's AMX
    # upper bound, 128 cores x 1024 BF16 FLOP per cycle x 3.2 GHz all-core turbo)
    assert len(without) == 9
    assert set(without) == {
        "dgx-spark", "epyc-9004-genoa", "epyc-9005-turin", "gh200", "m5-max", "m5-pro",
        "snapdragon-x-elite", "tesla-p40", "xeon-sapphire-rapids",
    }


def test_a_device_with_peaks_for_some_groups_keeps_its_prefill_time():
    """gpt-oss-20b on a DGX Spark: the mxfp4 experts compute at its fp4 peak, the bf16 groups
    have none and add no compute time (a looser floor, noted), as in decode_floor."""
    r = rd.prefill_floor("gpt-oss-20b", "dgx-spark", 4096)
    assert np.isfinite(r.ttft_s) and str(r.bound) in ("compute", "memory")
    assert r.notes[0].startswith(f"{NO_COMPUTE_PEAK} for attention") and "add no compute time" in r.notes[0]


def test_the_cli_writes_null_and_n_a(capsys):
    assert main(["request", "--model", MODEL, "--gpu", LAPTOP, "--prompt", "2K", "--output", "64", "--format",
                 "json"]) == 0
    record = json.loads(capsys.readouterr().out)[0]
    assert record["ttft_s"] is None and record["e2e_latency_s"] is None and record["prefill_bound"] == "n/a"
    assert record["tpot_s"] > 0
    assert main(["request", "--model", MODEL, "--gpu", LAPTOP, "--prompt", "2K", "--output", "64", "--draft",
                 "llama-3.2-1b"]) == 0
    table = capsys.readouterr().out
    assert "note: no compute peak published for m5-max (bf16 weights): the prefill needs one" in table
    assert "nan" not in table and "the speedups compare memory floors" in table


def test_the_ttft_plot_draws_a_device_without_a_peak_as_missing_with_a_legend_note():
    from roofline_decode.plotting import headless, ttft_plot

    plt = headless()
    ax = ttft_plot(MODEL, ["h100-sxm", LAPTOP], prompt=[256, 4096, 32768])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels == ["h100-sxm", f"m5-max: {NO_COMPUTE_PEAK}, no TTFT floor"]
    drawn = [line for line in ax.get_lines() if np.size(line.get_ydata())]
    assert drawn and all(line.get_color() == ax.get_lines()[0].get_color() for line in drawn)  # h100's alone
    plt.close(ax.figure)
    ax = ttft_plot(MODEL, LAPTOP)  # no device with a peak: an empty frame that says why, no error
    assert NO_COMPUTE_PEAK in ax.texts[0].get_text()
    ax.figure.canvas.draw()
    plt.close(ax.figure)


def test_a_plan_says_n_a_for_the_request_times_it_cannot_give():
    rows = rd.planning.plan(MODEL, [LAPTOP, "h100-sxm"], batch=1, context=4096, prompt=2048, output=64)
    laptop, h100 = (" ".join(row.notes) for row in rows)
    assert "TTFT n/a (no compute peak published)" in laptop and "end to end n/a" in laptop and "nan" not in laptop
    assert "TTFT 30 ms" in h100


def test_the_speculative_plot_says_its_speedups_compare_memory_floors():
    from roofline_decode.plotting import headless, speculative_plot

    plt = headless()
    for device, says in ((LAPTOP, True), ("h100-sxm", False)):
        ax = speculative_plot(MODEL, device, draft="llama-3.2-1b", batch=[1, 8, 64], acceptance=[0.7])
        assert (f"{NO_COMPUTE_PEAK}: speedups of memory floors" in ax.get_title()) is says
        ax.figure.canvas.draw()
        plt.close(ax.figure)
