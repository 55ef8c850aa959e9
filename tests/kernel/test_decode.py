"""Correctness: a cached float32 decode step equals a float64 recompute without a cache."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from .strategies import small_models

from roofline_decode import InvalidValueError, Model, load_model
from roofline_decode.kernel import DecodeKernel, init_weights, reference_logits
from roofline_decode.kernel.decode import MATMUL_STRATEGIES
from roofline_decode.kernel.reference import attention_mask


def _relative_error(got, want):
    return float(np.abs(got - want).max() / np.abs(want).max())


@settings(max_examples=40, deadline=None)
@given(model=small_models(), batch=st.integers(1, 4), context=st.integers(0, 7), seed=st.integers(0, 2**16),
       matmul=st.sampled_from(MATMUL_STRATEGIES), tile_bytes=st.sampled_from([4, 100, 4096]))
def test_cached_step_matches_full_recompute(model, batch, context, seed, matmul, tile_bytes):
    rng = np.random.default_rng(seed)
    tokens = rng.integers(0, model.vocab_size, size=(batch, context + 1))
    kernel = DecodeKernel(model, batch, max_context=context, seed=seed, matmul=matmul, tile_bytes=tile_bytes)
    for position in range(context + 1):  # prefill through the cache, one token at a time
        logits, _ = kernel.step(tokens[:, position])
    assert logits.dtype == np.float32
    assert _relative_error(logits, reference_logits(kernel.weights, tokens)) <= 1e-4


def _gqa_sliding_gated():
    return Model(name="gqa", num_layers=3, hidden_size=32, num_heads=8, num_kv_heads=2, head_dim=8,
                 intermediate_size=48, vocab_size=64, sliding_window=3, layer_types=("sliding", "full", "sliding"))


def test_sliding_window_changes_the_answer_and_the_reference_follows():
    """A long sequence: the window matters (results differ from full attention), both paths agree."""
    windowed = _gqa_sliding_gated()
    full = windowed.replace(sliding_window=None, layer_types=None)
    tokens = np.random.default_rng(3).integers(0, 64, size=(2, 12))
    results = {}
    for name, model in (("windowed", windowed), ("full", full)):
        kernel = DecodeKernel(model, 2, max_context=11, seed=5)
        for position in range(12):
            logits, _ = kernel.step(tokens[:, position])
        assert _relative_error(logits, reference_logits(kernel.weights, tokens)) <= 1e-4
        results[name] = logits
    assert _relative_error(results["windowed"], results["full"]) > 1e-3


def test_greedy_is_the_argmax_and_batch_rows_are_independent():
    model = _gqa_sliding_gated()
    tokens = np.array([[4, 9, 1, 30], [7, 7, 2, 63]])
    kernel = DecodeKernel(model, 2, max_context=3, seed=1)
    for position in range(3):
        kernel.step(tokens[:, position])
    chosen = kernel.greedy(tokens[:, 3], position=3)
    alone = DecodeKernel(model, 1, max_context=3, weights=kernel.weights)
    for position in range(4):
        logits, _ = alone.step(tokens[1:, position])
    assert chosen[1] == logits.argmax()
    np.testing.assert_array_equal(chosen, reference_logits(kernel.weights, tokens).argmax(axis=-1))


def test_attention_mask_window():
    mask = attention_mask(6, 2)
    assert mask.sum(axis=1).tolist() == [1, 2, 3, 3, 3, 3]  # W earlier positions + itself
    assert not attention_mask(3, None)[0, 1]


@pytest.mark.parametrize("model_id, field", [
    ("deepseek-v2-lite", "kv_lora_rank"), ("gpt2", "position_embedding_rows"),
    ("llama-4-maverick", r"layer_types=\['chunked'\]"), ("qwen3-next-80b-a3b", r"layer_types=\['recurrent'\]"),
])
def test_unsupported_architectures_are_refused_by_name(model_id, field):
    with pytest.raises(InvalidValueError, match=field):
        init_weights(load_model(model_id))


@pytest.mark.parametrize("kwargs, field", [
    (dict(tokens=[1, 2, 3]), "tokens"), (dict(tokens=[1, 99]), "tokens"), (dict(tokens=[1, 2], position=9), "position"),
])
def test_bad_step_arguments(kwargs, field):
    kernel = DecodeKernel(_gqa_sliding_gated(), 2, max_context=4)
    with pytest.raises(InvalidValueError, match=field):
        kernel.step(**kwargs)


def test_tiled_gemv_equals_gemm_and_counts_the_same():
    model = _gqa_sliding_gated()
    results = []
    for matmul in ("gemm", "tiled-gemv"):
        kernel = DecodeKernel(model, 3, max_context=4, seed=2, matmul=matmul, tile_bytes=3 * 4 * 48)
        kernel.fill_cache(4)
        results.append(kernel.step([1, 2, 3]))
    (gemm, gemm_counts), (tiled, tiled_counts) = results
    np.testing.assert_allclose(tiled, gemm, rtol=1e-5, atol=1e-5 * np.abs(gemm).max())
    assert tiled_counts == gemm_counts


def test_bad_kernel_arguments():
    with pytest.raises(InvalidValueError, match="matmul"):
        DecodeKernel(_gqa_sliding_gated(), 1, max_context=4, matmul="fast")
    with pytest.raises(InvalidValueError, match="tile_bytes"):
        DecodeKernel(_gqa_sliding_gated(), 1, max_context=4, tile_bytes=0)
    with pytest.raises(InvalidValueError, match="batch"):
        DecodeKernel(_gqa_sliding_gated(), 0, max_context=4)
    with pytest.raises(InvalidValueError, match="seed"):
        DecodeKernel(_gqa_sliding_gated(), 1, max_context=4, seed=-1)
    with pytest.raises(InvalidValueError, match="context"):
        DecodeKernel(_gqa_sliding_gated(), 1, max_context=4).fill_cache(5)


def test_a_chunked_layer_is_refused_not_run_as_a_sliding_one():
    # before: with sliding_window set the chunked layer ran as a ring of W slots (wrong counts),
    # without it the kernel failed with a TypeError
    tiny = dict(name="tiny", num_layers=2, hidden_size=16, num_heads=4, num_kv_heads=2, head_dim=4,
                intermediate_size=32, vocab_size=50, layer_types=("full", "chunked"), attention_chunk_size=4)
    for extra in ({}, {"sliding_window": 3}):
        with pytest.raises(InvalidValueError, match="layer_types"):
            DecodeKernel(Model(**tiny, **extra), batch=1, max_context=8)
