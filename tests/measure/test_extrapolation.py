"""The extrapolation protocol on the shipped measurements: what it scores, and the figures.

Issue 16's goals: median error <= 8 % extrapolating batch or context, <= 2.5 % across weight
formats, a 90 % band covering >= 85 % of held-out rows.  Which data sets meet them (and which do
not, and why) is written up in docs/how_close_is_the_floor.md; these tests pin the figures so a
change to the fit shows up here.
"""

import numpy as np
import pytest

from roofline_decode.measure.extrapolation import data_sets, protocol_splits, run_protocol


@pytest.fixture(scope="module")
def results():
    return {(r.axis, r.data_set): r for r in run_protocol(protocol_splits())}


def test_the_splits_keep_fit_and_held_out_rows_apart():
    for split in protocol_splits():
        assert not set(map(id, split.fit)) & set(map(id, split.held_out))
        if split.axis == "batch":
            assert max(m.batch for m in split.fit) <= 8 and all(16 <= m.batch <= 64 for m in split.held_out)
        if split.axis == "context":
            longest = max(m.context for m in split.fit)
            assert all(4 * longest <= m.context <= 16 * longest for m in split.held_out)
        if split.axis == "format":
            held = {m.model.weight_format.name for m in split.held_out}
            assert len(held) == 1 and not held & {m.model.weight_format.name for m in split.fit}
        if split.axis == "size":
            assert max(m.model.num_layers for m in split.fit) < min(m.model.num_layers for m in split.held_out)


def test_which_shipped_data_sets_hold_sweeps():
    sets = data_sets()
    assert "knlp B200 Qwen2.5-7B (HF eager)" in sets
    axes = {(s.axis, s.data_set) for s in protocol_splits()}
    # only the knlp B200 campaign sweeps the context 4-16x; batch sweeps: knlp B200 and H100
    assert {d for a, d in axes if a == "context"} == {"knlp B200 Qwen2.5-7B (HF eager)"}
    assert {d for a, d in axes if a == "batch"} == {"knlp B200 Qwen2.5-7B (HF eager)",
                                                     "knlp H100 Qwen2.5-7B + Llama-3.1-8B (HF eager)"}
    assert len({d for a, d in axes if a == "format"}) == 4
    assert {d for a, d in axes if a == "size"} == {"knlp H100 Qwen2.5-7B + Llama-3.1-8B (HF eager)",
                                                    "gpt-fast A100 Llama 7B/8B/70B x1", "ExLlama RTX 4090 LLaMA 7B/13B GPTQ"}


@pytest.mark.parametrize("axis, name, median, coverage", [
    ("batch", "knlp B200 Qwen2.5-7B (HF eager)", 0.0275, 15 / 17),
    ("context", "knlp B200 Qwen2.5-7B (HF eager)", 0.0234, 7 / 9),
    # per-step fixed cost (issue 16's form): 0.3066, coverage 0; the rows mix 28 and 32 layers and
    # choose per layer, the host time of the eager loop growing with depth
    ("batch", "knlp H100 Qwen2.5-7B + Llama-3.1-8B (HF eager)", 0.2129, 6 / 15),
    # size (per step 0.1911, 0.2950, 0.0459)
    ("size", "knlp H100 Qwen2.5-7B + Llama-3.1-8B (HF eager)", 0.2126, 6 / 18),  # 0.2145 before _identifiable stopped counting rejected columns
    ("size", "gpt-fast A100 Llama 7B/8B/70B x1", 0.2133, 0.0),
    ("size", "ExLlama RTX 4090 LLaMA 7B/13B GPTQ", 0.0471, 0.0),
    ("format", "gpt-fast A100 Llama-2-7B x1", 0.0205, 1 / 3),
    ("format", "gpt-fast A100 Llama-2-70B x8", 0.0370, 1.0),
    ("format", "ExLlamaV2 RTX 3090 Ti Llama-2-7B EXL2", 0.0170, 1.0),
    ("format", "ExLlamaV2 RTX 4090 Llama-2-7B EXL2", 0.0002, 0.0),
])
def test_protocol_figures(results, axis, name, median, coverage):
    r = results[axis, name]
    assert r.median == pytest.approx(median, abs=0.0005)
    assert r.coverage == pytest.approx(coverage)
    assert r.median <= r.p90 <= r.max


def test_goals_met_on_the_b200_sweeps(results):
    for axis in ("batch", "context"):
        assert results[axis, "knlp B200 Qwen2.5-7B (HF eager)"].median <= 0.08
    pooled = np.concatenate([r.errors for (a, _), r in results.items() if a == "format"])
    assert np.median(np.abs(pooled)) <= 0.025


def test_one_prompt_length_predicts_a_31x_longer_context():
    # ExLlama v1 on an RTX 4090 (LLaMA 7B, 13B, Koala 13B): fit at T ~ 64, predict T ~ 1984, beyond
    # the protocol's 4-16x.  With the weight stream ordered before the KV stream the nearly
    # collinear KV column is not fitted from three rows (before that fix: 860 % median error)
    from roofline_decode.measure import calibrate

    ds = data_sets()["ExLlama RTX 4090 LLaMA 7B/13B GPTQ"]
    fit = [m for m in ds.measurements if m.context < 100]
    held = [m for m in ds.measurements if m.context > 1000]
    cal = calibrate(fit, ds.accelerator)
    errors = [float(cal.predict(m.model, batch=1, context=m.context).step_time_s) / m.step_time_s - 1 for m in held]
    assert cal.model_name == "bandwidth" and len(held) == 3
    # the fitted rows mix 32 and 40 layers; cross-validation chooses the per-layer fixed cost
    assert cal.fixed_cost == "layer" and "bandwidth/step" in cal.candidates
    assert np.median(np.abs(errors)) == pytest.approx(0.0355, abs=0.0005) and max(map(abs, errors)) < 0.07
    step = calibrate(fit, ds.accelerator, fixed_cost="step")
    errors = [float(step.predict(m.model, batch=1, context=m.context).step_time_s) / m.step_time_s - 1 for m in held]
    assert np.median(np.abs(errors)) == pytest.approx(0.0219, abs=0.0005)
