"""Accounting: with fp32 weights and cache the kernel's counts equal the library's formulas."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from .strategies import small_models

from roofline_decode import Model, formulas, load_model
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


def _sliding_model():
    return Model(name="ring", num_layers=3, hidden_size=32, num_heads=8, num_kv_heads=2, head_dim=8,
                 intermediate_size=48, vocab_size=64, sliding_window=3, layer_types=("sliding", "full", "sliding"))


def test_sliding_layers_allocate_a_ring_of_w_positions():
    # by hand: 2 sequences x K and V x 2 heads x 8 x 4 B = 256 B per position;
    # the global layer holds 0..10 (11 positions), each sliding layer W = 3: 2 x (11 + 3 + 3) x 128 = 4352 B
    model = _sliding_model()
    kernel = DecodeKernel(model, batch=2, max_context=10)
    assert [c.shape[2] for c in kernel.k_cache] == [3, 11, 3]
    assert kernel.kv_cache_bytes == 4352
    m_kv = 2 * 2 * 8 * 4
    assert kernel.kv_cache_bytes == formulas.kv_cache_bytes(2, 11, m_kv, 1, 2, 3)
    short = DecodeKernel(model, batch=2, max_context=1)  # the window is longer than the cache can ever hold
    assert [c.shape[2] for c in short.k_cache] == [2, 2, 2]


@pytest.mark.parametrize("context", [0, 2, 3, 7, 10])
def test_reads_and_writes_are_the_slots_the_step_touches(context):
    """Poison every cache slot a step at ``context`` must not read: the logits stay finite, and the
    tallied KV reads equal the bytes of the slots left unpoisoned."""
    model = _sliding_model()
    kernel = DecodeKernel(model, batch=2, max_context=10, seed=4)
    kernel.fill_cache(context)
    unread = 0
    for index, layer in enumerate(kernel.weights.layers):
        held = context if layer.kind == "full" else min(context, 3)
        read = kernel._slots(index, context - held, held)
        for cache in (kernel.k_cache[index], kernel.v_cache[index]):
            keep = np.zeros(cache.shape[2], dtype=bool)
            for s in read:
                keep[s] = True
            cache[:, :, ~keep] = np.nan
            unread += int(cache[:, :, ~keep].nbytes)
    logits, counts = kernel.step(np.array([5, 9]))
    assert np.isfinite(logits).all()
    assert counts.kv_read_bytes == kernel.kv_cache_bytes - unread
    assert counts.kv_write_bytes == 3 * 2 * 2 * 2 * 8 * 4  # one position per layer, K and V


def test_weight_tally_is_the_allocated_weights_less_the_rows_not_gathered():
    model = Model(name="dense", num_layers=2, hidden_size=16, num_heads=4, num_kv_heads=2, head_dim=4,
                  intermediate_size=32, vocab_size=50, qkv_bias=True)
    kernel = DecodeKernel(model, batch=3, max_context=4)
    kernel.fill_cache(4)
    _, counts = kernel.step(np.array([1, 2, 2]))
    assert counts.embedding_rows == 2
    assert counts.weight_bytes == kernel.weights.nbytes - (50 - 2) * 16 * 4
    tied = model.replace(tie_word_embeddings=True)
    kernel = DecodeKernel(tied, batch=3, max_context=4)
    _, counts = kernel.step(np.array([1, 2, 3]))
    # the tied lm_head is the embedding, allocated once, read in full by the last product
    assert counts.weight_bytes == kernel.weights.nbytes - (50 - 3) * 16 * 4 + 50 * 16 * 4
