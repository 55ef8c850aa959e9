"""Accounting: with fp32 weights and cache the kernel's counts equal the library's formulas."""

import numpy as np
from hypothesis import given, settings, strategies as st
from .strategies import small_models

from roofline_decode import Model, load_model
from roofline_decode.formulas import expected_experts_touched
from roofline_decode.kernel import DecodeKernel, expected_counts


def _run(model, batch, context, tokens=None, seed=0):
    kernel = DecodeKernel(model, batch, max_context=context, seed=seed)
    kernel.fill_cache(context)
    if tokens is None:  # distinct tokens, as the formula assumes
        tokens = np.random.default_rng(seed).permutation(model.vocab_size)[:batch]
    _, counts = kernel.step(tokens)
    return counts


@settings(max_examples=60, deadline=None)
@given(model=small_models(), data=st.data(), context=st.integers(0, 40), seed=st.integers(0, 999))
def test_counts_equal_formulas(model, data, context, seed):
    batch = data.draw(st.integers(1, min(6, model.vocab_size)))
    counts = _run(model, batch, context, seed=seed)
    want = expected_counts(model, batch, context, counts.experts_touched if model.is_moe else None)
    assert counts.weight_bytes == round(want["weight_bytes"])
    assert abs(want["weight_bytes"] - round(want["weight_bytes"])) < 1e-6 * want["weight_bytes"]
    assert counts.kv_read_bytes == want["kv_read_bytes"]
    assert counts.kv_write_bytes == want["kv_write_bytes"]
    assert counts.flops == want["flops"]
    assert counts.embedding_rows == batch
    # the new token's attention to itself: counted apart, one position per layer
    assert counts.self_attention_flops == 2 * batch * model.num_heads * 2 * model.head_dim * model.num_layers


@settings(max_examples=30, deadline=None)
@given(model=small_models(moe=True), batch=st.integers(1, 8), seed=st.integers(0, 999))
def test_experts_touched_between_k_and_min_of_kB_and_E(model, batch, seed):
    counts = _run(model, batch, 3, tokens=np.arange(batch) % model.vocab_size, seed=seed)
    k, E = model.num_experts_per_token, model.num_experts
    assert len(counts.experts_touched) == model.num_moe_layers
    assert all(k <= u <= min(k * batch, E) for u in counts.experts_touched)
    assert counts.expert_bytes == sum(counts.experts_touched) * model.expert_parameters * 4


def test_expected_counts_keeps_the_expectation_without_actual_counts():
    model = Model(name="moe", num_layers=2, hidden_size=8, num_heads=2, num_kv_heads=1, head_dim=4,
                  intermediate_size=0, vocab_size=30, num_experts=4, num_experts_per_token=2,
                  moe_intermediate_size=4)
    mean, actual = expected_counts(model, 3, 5), expected_counts(model, 3, 5, [4, 3])
    expected_touched = 2 * float(expected_experts_touched(4, 2, 3))
    assert actual["weight_bytes"] - mean["weight_bytes"] == (7 - expected_touched) * model.expert_parameters * 4


def test_repeated_tokens_gather_each_row_once():
    model = Model(name="dense", num_layers=1, hidden_size=8, num_heads=2, num_kv_heads=2, head_dim=4,
                  intermediate_size=16, vocab_size=20)
    distinct = _run(model, 4, 2, tokens=[1, 2, 3, 4])
    repeated = _run(model, 4, 2, tokens=[5, 5, 5, 6])
    assert repeated.embedding_rows == 2
    assert distinct.weight_bytes - repeated.weight_bytes == 2 * 8 * 4


def test_sliding_layers_read_at_most_the_window():
    model = Model(name="sw", num_layers=2, hidden_size=8, num_heads=2, num_kv_heads=1, head_dim=4,
                  intermediate_size=16, vocab_size=20, sliding_window=3, layer_types=("sliding", "full"))
    per_position = 2 * 1 * 4 * 4  # K and V, one head of 4, float32
    assert _run(model, 1, 10).kv_read_bytes == (3 + 10) * per_position
    assert _run(model, 1, 2).kv_read_bytes == (2 + 2) * per_position


def test_real_architecture_at_reduced_width():
    """Qwen3-30B-A3B's layout (qk norms, 128 experts of which 8, head_dim != d/H) shrunk to run here."""
    model = load_model("qwen3-30b-a3b").replace(
        num_layers=2, hidden_size=16, intermediate_size=32, moe_intermediate_size=8, vocab_size=64,
        head_dim=4, num_experts=16, layer_types=None, sliding_window=None)
    counts = _run(model, 5, 6)
    want = expected_counts(model, 5, 6, counts.experts_touched)
    assert (counts.weight_bytes, counts.kv_read_bytes, counts.flops) == (
        round(want["weight_bytes"]), want["kv_read_bytes"], want["flops"])
