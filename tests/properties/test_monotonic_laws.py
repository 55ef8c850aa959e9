"""Monotonic laws of the decode floor on random models and devices (hypothesis)."""

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor

from .strategies import accelerators, batches, contexts, factors, models, storage_format

law = settings(max_examples=40, deadline=None)
SLACK = 1 + 1e-12  # rounding of (1 - k/E)**B in the expert term; everything else is exact-monotone


@law
@given(models(), accelerators(), batches, batches, contexts)
def test_step_time_non_decreasing_in_batch(model, device, b1, b2, t):
    lo, hi = sorted((b1, b2))
    r = decode_floor(model, device, batch=[lo, hi], context=t)
    assert r.step_time_s[0] <= r.step_time_s[1] * SLACK


@law
@given(models(), accelerators(), batches, contexts, contexts)
def test_step_time_non_decreasing_in_context(model, device, b, t1, t2):
    lo, hi = sorted((t1, t2))
    r = decode_floor(model, device, batch=b, context=[lo, hi])
    assert r.step_time_s[0] <= r.step_time_s[1]


@law
@given(models(), accelerators(uniform_peaks=True), batches, contexts, st.floats(0.25, 2.0), st.floats(1.0, 4.0))
def test_step_time_non_decreasing_in_bytes_per_weight(model, device, b, t, bytes_per_weight, factor):
    """Formats that compute on the same precision, so only the bytes change (a real fp8 format
    also switches to the fp8 peak, which can make the step faster)."""
    narrow = model.replace(weight_format=storage_format(bytes_per_weight), expert_weight_format=None)
    wide = model.replace(weight_format=storage_format(bytes_per_weight * factor), expert_weight_format=None)
    assert decode_floor(narrow, device, b, t).step_time_s <= decode_floor(wide, device, b, t).step_time_s


@law
@given(models(), accelerators(), batches, contexts, st.floats(0.25, 2.0), st.floats(1.0, 4.0))
def test_step_time_non_decreasing_in_bytes_per_kv(model, device, b, t, bytes_per_kv, factor):
    narrow = model.replace(kv_format=storage_format(bytes_per_kv))
    wide = model.replace(kv_format=storage_format(bytes_per_kv * factor))
    assert decode_floor(narrow, device, b, t).step_time_s <= decode_floor(wide, device, b, t).step_time_s


@law
@given(models(), accelerators(), batches, contexts, factors)
def test_more_bandwidth_is_never_slower(model, device, b, t, factor):
    fast = device.replace(memory_bandwidth=device.memory_bandwidth * factor)
    slow_r, fast_r = decode_floor(model, device, b, t), decode_floor(model, fast, b, t)
    assert fast_r.step_time_s <= slow_r.step_time_s
    assert fast_r.memory_time_s <= slow_r.memory_time_s and fast_r.compute_time_s == slow_r.compute_time_s


@law
@given(models(), accelerators(), batches, contexts, factors)
def test_more_peak_is_never_slower(model, device, b, t, factor):
    fast = device.replace(peak_flops={p: v * factor for p, v in device.peak_flops.items()})
    slow_r, fast_r = decode_floor(model, device, b, t), decode_floor(model, fast, b, t)
    assert fast_r.step_time_s <= slow_r.step_time_s
    assert fast_r.memory_time_s == slow_r.memory_time_s


@law
@given(models(), accelerators(), batches, batches, contexts)
def test_aggregate_tokens_per_second_non_decreasing_in_batch(model, device, b1, b2, t):
    """Aggregate tokens/s never falls as the batch grows, at a fixed context, for every model.

    The issue asks for "tokens/s non-decreasing in batch while memory-bound (dense models)";
    the law holds more widely, and we assert the wider one.  Memory-bound,
    tokens/s = B·BW / (W(B) + B·q) where q (KV read and write per sequence) is fixed at a
    fixed context T: the KV cache grows with B, but only in proportion, so the ratio still
    rises.  Its derivative has the sign of W(B) − B·W'(B), which is >= 0 because the weight
    bytes W(B) are constant (dense) or concave with W(0) >= 0 (MoE: U(B) is concave, and
    min(B, V) embedding rows too).  Compute-bound, tokens/s = F / f_seq is constant in B, so
    the minimum of the two never decreases either.
    What does *not* hold: per-sequence tokens/s (1 / T_step) falls with the batch, and
    aggregate tokens/s is capped by BW / q and F / f_seq, both asserted below.  (If the
    context grows with the batch, e.g. at a fixed KV budget, aggregate tokens/s can fall;
    that is a different experiment, not a law of this function.)
    """
    lo, hi = sorted((b1, b2))
    r = decode_floor(model, device, batch=[lo, hi], context=t)
    assert r.tokens_per_s[0] <= r.tokens_per_s[1] * SLACK
    assert r.per_sequence_tokens_per_s[0] * SLACK >= r.per_sequence_tokens_per_s[1]
    kv_per_sequence = (r.kv_read_bytes + r.kv_write_bytes) / r.batch
    assert np.all(r.tokens_per_s <= device.memory_bandwidth / kv_per_sequence * SLACK)
    assert np.all(r.tokens_per_s <= r.peak_flops * r.batch / r.flops * SLACK)


@law
@given(models(), batches, batches, contexts)
def test_weight_bytes_non_decreasing_in_batch_and_never_above_the_stored_weights(model, b1, b2, t):
    """At most every stored weight is read, plus the lm_head again when it is tied to the
    embedding (stored once, read as the lm_head and gathered as rows).

    Restricted to batches within a learned position table: ``weight_bytes_read`` gathers
    min(B, V) rows of *both* embedding tables (``embedding_row_parameters`` = 2d), so past
    ``position_embedding_rows`` sequences it counts more position rows than the table has
    (hypothesis found it: V = 1025, 1024 position rows, B = 1025).  Sequences at one context
    share one position row; the foundation's worst-case convention overcounts there.
    """
    lo, hi = sorted((b1, b2))
    assume(model.position_embedding_rows == 0 or hi <= model.position_embedding_rows)
    r = decode_floor(model, "h100-sxm", batch=[lo, hi], context=t)
    assert r.weight_bytes[0] <= r.weight_bytes[1] * SLACK
    tied = model.tie_word_embeddings * model.vocab_size * model.hidden_size * model.weight_format.bytes_per_element
    assert r.weight_bytes[1] <= (model.weight_bytes + tied) * SLACK


@law
@given(models(), batches, batches, contexts)
def test_intensity_non_decreasing_in_batch(model, b1, b2, t):
    """I(B) = B f / (W(B) + B q): derivative sign f·(W − B W') >= 0, as for tokens/s above."""
    lo, hi = sorted((b1, b2))
    r = decode_floor(model, "h100-sxm", batch=[lo, hi], context=t)
    assert r.arithmetic_intensity[0] <= r.arithmetic_intensity[1] * SLACK


@law
@given(models(), batches, contexts)
def test_intensity_lies_between_zero_context_and_attention_intensity(model, b, t):
    """Each cached position adds m_kv bytes and 2·H_q·w FLOPs per layer, so the intensity at
    context T is a mediant of the zero-context intensity and 2·H_q·w / m_kv: it moves
    monotonically from the first toward the second (the KV term caps it at long context)."""
    r = decode_floor(model, "h100-sxm", batch=b, context=[0.0, t])
    attention = 2 * model.num_heads * model.score_value_width / model.kv_bytes_per_token_per_layer
    lo, hi = sorted((float(r.arithmetic_intensity[0]), attention))
    assert lo / SLACK <= r.arithmetic_intensity[1] <= hi * SLACK
