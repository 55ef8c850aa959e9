"""Fits of the decode-bandwidth studies: step time vs context, saturation onset, sustained bandwidth."""

from pathlib import Path

import pytest

from roofline_decode import load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import MeasurementRow, compare, fit_context, load_published, saturation_onset, sustained_bandwidth

DATA = Path(__file__).parents[1] / "data" / "measured"


@pytest.fixture(scope="module")
def knlp():
    return load_published(DATA / "knlp_full_model_decode.csv").rows


def test_context_fits_per_batch_on_the_b200_sweep(knlp):
    sweep = [r for r in knlp if r.label.startswith("b200_exp4_context")]
    fits = {f.batch: f for f in fit_context(sweep)}
    assert sorted(fits) == [1, 8, 16, 32]
    for fit in fits.values():
        assert fit.slope_s_per_token > 0 and 0.9 < fit.r_squared <= 1
    # the slope grows with the batch: every sequence reads its own KV cache
    assert fits[1].slope_s_per_token < fits[8].slope_s_per_token < fits[32].slope_s_per_token
    qwen = load_model("qwen2.5-7b")
    # KV bytes per token of Qwen2.5-7B: 28 layers x 2 x 4 heads x 128 x 2 B = 57344 B
    assert qwen.kv_bytes_per_token == 57344
    bandwidth = fits[32].kv_bandwidth(qwen)
    assert 0.3e12 < bandwidth < 8e12  # below the B200's peak: the fit is physical


def test_context_fit_is_exact_on_a_line():
    rows = [MeasurementRow(batch=2, context=t, step_time_s=1e-3 + 2e-8 * t) for t in (0, 1000, 5000)]
    (fit,) = fit_context(rows)
    assert fit.intercept_s == pytest.approx(1e-3) and fit.slope_s_per_token == pytest.approx(2e-8)
    assert fit.r_squared == pytest.approx(1.0) and fit.n == 3


def test_context_fit_needs_two_contexts():
    with pytest.raises(InvalidValueError, match="two or more distinct contexts"):
        fit_context([MeasurementRow(batch=1, context=8, step_time_s=1e-3)])


def test_saturation_onset_on_the_b200_sweep(knlp):
    sweep = sorted((r for r in knlp if r.label.startswith("b200_exp3_saturation")), key=lambda r: r.batch)
    batch = [r.batch for r in sweep]
    tokens = [r.aggregate_tokens_per_s for r in sweep]
    assert saturation_onset(batch, tokens, fraction=0.1).onset_batch == 48
    strict = saturation_onset(batch, tokens, fraction=0.6)
    assert strict.onset_batch is not None and strict.onset_batch < 48
    assert len(strict.gains_per_doubling) == len(batch) - 1


def test_saturation_onset_uneven_grid_and_no_saturation():
    # perfectly linear scaling never saturates, whatever the spacing of the grid
    assert saturation_onset([1, 3, 4, 10], [10, 30, 40, 100]).onset_batch is None
    flat = saturation_onset([1, 2, 4], [100, 100, 100])
    assert flat.onset_batch == 1 and flat.saturated
    late = saturation_onset([1, 2, 4, 8], [100, 190, 200, 205], fraction=0.1)
    assert late.onset_batch == 2 and late.gains_per_doubling[0] == pytest.approx(0.9)


@pytest.mark.parametrize("args", [([1], [1.0]), ([1, 2], [1.0, -1.0]), ([2, 2], [1.0, 2.0])])
def test_saturation_onset_rejects_bad_input(args):
    with pytest.raises(InvalidValueError):
        saturation_onset(*args)


def test_sustained_bandwidth_of_the_microbenchmark():
    rows = load_published(DATA / "knlp_attention_microbench.csv").rows
    a100 = [c for c in compare(rows) if c.accelerator == "a100-80gb-sxm" and c.row.batch >= 16]
    bandwidth, overhead = sustained_bandwidth([c.bytes_moved for c in a100], [c.measured_step_time_s for c in a100])
    # large-batch KV reads on the A100 settle near 350 GB/s in the published bw_GBs column
    assert 300e9 < bandwidth < 400e9 and abs(overhead) < 1e-4


def test_sustained_bandwidth_rejects_flat_data():
    with pytest.raises(InvalidValueError):
        sustained_bandwidth([1e9, 1e9], [1e-3, 2e-3])
    with pytest.raises(InvalidValueError):
        sustained_bandwidth([1e9, 2e9], [2e-3, 1e-3])


def _line_rows(model_id, contexts, bytes_per_token, bandwidth=1e12, batch=1):
    """Step times whose slope is exactly the given KV bytes per context token at ``bandwidth``."""
    return [MeasurementRow(batch=batch, context=t, step_time_s=0.01 + batch * t * bytes_per_token / bandwidth)
            for t in contexts]


@pytest.mark.parametrize("model_id, per_layer, growing_layers, all_layers", [
    ("gemma-2-9b", 2 * 8 * 256 * 2, 21, 42),  # 21 global + 21 sliding (W = 4096): 2x
    ("gemma-3-1b", 2 * 1 * 256 * 2, 4, 26),  # 4 global + 22 sliding (W = 512): 6.5x
])
def test_kv_bandwidth_past_the_window_counts_only_global_layers(model_id, per_layer, growing_layers, all_layers):
    model = load_model(model_id)
    assert model.kv_bytes_per_token == per_layer * all_layers
    growing = per_layer * growing_layers  # d(KV bytes)/dT past the window
    (fit,) = fit_context(_line_rows(model_id, [8192, 16384, 32768, 65536], growing, batch=4))
    assert fit.kv_bytes_per_context_token(model) == pytest.approx(growing, rel=1e-9)
    assert fit.kv_bandwidth(model) == pytest.approx(1e12, rel=1e-9)  # was all_layers / growing_layers x too high


def test_kv_bandwidth_below_the_window_counts_every_layer():
    model = load_model("gemma-2-9b")
    (fit,) = fit_context(_line_rows("gemma-2-9b", [0, 1024, 2048, 4096], model.kv_bytes_per_token))
    assert fit.kv_bandwidth(model) == pytest.approx(1e12, rel=1e-9)


def test_kv_bandwidth_of_an_all_sliding_model_past_its_window_is_zero():
    # Mistral-7B: 32 layers, all sliding at W = 4096; past it no read grows (was: finite, 131072 B/token)
    model = load_model("mistral-7b-v0.1")
    (fit,) = fit_context([MeasurementRow(batch=1, context=t, step_time_s=0.01 + 1e-9 * t) for t in (8192, 16384)])
    assert fit.kv_bytes_per_context_token(model) == 0 and fit.kv_bandwidth(model) == 0


def test_kv_bandwidth_needs_the_fitted_contexts():
    from roofline_decode.measure import ContextFit

    with pytest.raises(InvalidValueError, match="contexts"):
        ContextFit(batch=1, intercept_s=0.01, slope_s_per_token=1e-9, r_squared=1, n=2).kv_bandwidth(load_model("gpt2"))
