"""Laws tying the floor to the architecture: layers, windows, heads, experts, formats."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, formulas, sweep, symbolic

from .strategies import accelerators, batches, contexts, models, moe_models

law = settings(max_examples=40, deadline=None)


def _repeated(model, n):
    """The model with its layer stack repeated n times (pattern and dense prefix included)."""
    return model.replace(
        num_layers=n * model.num_layers,
        layer_types=None if model.layer_types is None else model.layer_types * n,
        first_dense_layers=n * model.first_dense_layers,
    )


@law
@given(models(), accelerators(), batches, contexts)
def test_time_is_affine_in_the_number_of_layers(model, device, b, t):
    """Repeating the layer stack n times: bytes, FLOPs, memory and compute time are a + n·c.

    The intercept a is what does not belong to a layer: the embedding rows gathered, the
    lm_head (read and multiplied in full every step) and the final norm; the test checks it
    equals those terms.  The step time, a max of two affine functions, is not affine and is
    not asserted here.
    """
    r1, r2, r3 = (decode_floor(_repeated(model, n), device, b, t) for n in (1, 2, 3))
    for field in ("bytes_total", "flops", "memory_time_s", "compute_time_s"):
        x1, x2, x3 = (float(getattr(r, field)) for r in (r1, r2, r3))
        assert x3 - x2 == pytest.approx(x2 - x1, rel=1e-9), field
    b_w = model.weight_format.bytes_per_element
    norm = model.hidden_size * (2 if model.norm_type == "layer" else 1)
    non_layer_bytes = b_w * (model.vocab_size * model.hidden_size + norm
                             + min(b, model.vocab_size) * model.embedding_row_parameters)
    intercept = 2 * float(r1.bytes_total) - float(r2.bytes_total)
    assert intercept == pytest.approx(non_layer_bytes, rel=1e-9)
    non_layer_flops = 2 * b * model.vocab_size * model.hidden_size
    assert 2 * float(r1.flops) - float(r2.flops) == pytest.approx(non_layer_flops, rel=1e-9)


@law
@given(models(kinds=("sliding",)), accelerators(), batches, contexts)
def test_sliding_window_never_slower_than_global_attention(model, device, b, t):
    everything_global = model.replace(sliding_window=None, layer_types=None)
    windowed, full = decode_floor(model, device, b, t), decode_floor(everything_global, device, b, t)
    assert windowed.kv_read_bytes <= full.kv_read_bytes and windowed.flops <= full.flops
    assert windowed.step_time_s <= full.step_time_s
    if t <= model.sliding_window:  # the window holds the whole context: nothing differs
        assert windowed.step_time_s == full.step_time_s


@law
@given(models(), batches, contexts)
def test_attention_flops_track_kv_reads(model, b, t):
    """Every cached position read (m_kv bytes per layer) brings 2·H_q·w FLOPs, whichever
    layers slide and however long the context: the context-dependent FLOPs over the KV bytes
    read is the constant 2·H_q·w / m_kv, and an all-sliding model stops growing at W."""
    r = decode_floor(model, "h100-sxm", batch=b, context=[0.0, t])
    attention_flops = float(r.flops[1] - r.flops[0])
    per_byte = 2 * model.num_heads * model.score_value_width / model.kv_bytes_per_token_per_layer
    # the difference of two totals carries their rounding: tolerate 1e-12 of the total
    assert attention_flops == pytest.approx(per_byte * float(r.kv_read_bytes[1]), rel=1e-9, abs=1e-12 * float(r.flops[1]))
    if model.num_global_layers == 0:
        window = decode_floor(model, "h100-sxm", batch=b, context=[model.window, model.window + t])
        assert window.flops[0] == window.flops[1] and window.kv_read_bytes[0] == window.kv_read_bytes[1]


@law
@given(models(kinds=("dense", "sliding", "moe")), batches, contexts)
def test_gqa_with_as_many_kv_heads_as_query_heads_is_mha(model, b, t):
    """H_kv = H_q is multi-head attention: 4·d·H·d_h projection parameters, 2·H·d_h·b_kv KV
    bytes per token per layer (Vaswani et al. 2017); H_kv = 1 (MQA) caches 1/H of that."""
    h, d, d_h = model.num_heads, model.hidden_size, model.head_dim
    mha = model.replace(num_kv_heads=h)
    mqa = model.replace(num_kv_heads=1)
    assert formulas.attention_matrix_parameters(d, h, h, d_h) == 4 * d * h * d_h
    b_kv = model.kv_format.bytes_per_element
    assert mha.kv_bytes_per_token_per_layer == 2 * h * d_h * b_kv
    r_mha, r_mqa = decode_floor(mha, "h100-sxm", b, t), decode_floor(mqa, "h100-sxm", b, t)
    assert float(r_mqa.kv_read_bytes) * h == pytest.approx(float(r_mha.kv_read_bytes), rel=1e-12)
    assert r_mqa.flops <= r_mha.flops  # fewer k/v projections; attention FLOPs use H_q only


@law
@given(models(), batches, contexts, st.integers(2, 8))
def test_kv_bytes_and_flops_scale_with_the_batch(model, b, t, n):
    r1, rn = decode_floor(model, "h100-sxm", b, t), decode_floor(model, "h100-sxm", n * b, t)
    for field in ("kv_read_bytes", "kv_write_bytes", "flops"):
        assert float(getattr(rn, field)) == pytest.approx(n * float(getattr(r1, field)), rel=1e-12), field
    assert float(r1.kv_write_bytes) == b * model.kv_bytes_per_token


@law
@given(models(kinds=("hybrid",)), batches, contexts, contexts)
def test_hybrid_reads_are_affine_in_context(model, b, t1, t2):
    """A hybrid's recurrent layers read and write a fixed state whatever the context; only its
    attention layers' KV reads grow, linearly: read(t1) + read(t2) = read(t1 + t2) + read(0)."""
    r = decode_floor(model, "h100-sxm", batch=b, context=[0, t1, t2, t1 + t2])
    read = [float(x) for x in r.kv_read_bytes]
    assert read[1] + read[2] == pytest.approx(read[3] + read[0], rel=1e-12)
    assert read[0] > 0  # the state is read at any context
    assert len(set(float(x) for x in r.kv_write_bytes)) == 1


@law
@given(models(kinds=("dense", "moe", "mla")), batches, contexts, contexts)
def test_kv_read_is_additive_in_context_without_windows(model, b, t1, t2):
    r = decode_floor(model, "h100-sxm", batch=b, context=[t1, t2, t1 + t2])
    assert float(r.kv_read_bytes[2]) == pytest.approx(float(r.kv_read_bytes[0] + r.kv_read_bytes[1]), rel=1e-12)
    assert r.weight_bytes[0] == r.weight_bytes[1] == r.weight_bytes[2]  # weights do not see the context


@law
@given(models(), batches, contexts, st.sampled_from(["bf16", "fp8_e4m3", "fp32"]), st.sampled_from(["q4_0", "bf16"]))
def test_formats_move_only_their_own_bytes(model, b, t, kv, weights):
    base = decode_floor(model, "h100-sxm", b, t)
    other_kv = decode_floor(model.with_precision(kv=kv), "h100-sxm", b, t)
    assert other_kv.weight_bytes == base.weight_bytes and other_kv.flops == base.flops
    other_weights = decode_floor(model.with_precision(weights=weights), "h100-sxm", b, t)
    assert other_weights.kv_read_bytes == base.kv_read_bytes and other_weights.flops == base.flops


@law
@given(st.integers(1, 256), st.data(), st.integers(1, 10_000), st.integers(1, 10_000))
def test_experts_touched_lie_between_k_and_e_and_grow_with_the_batch(experts, data, b1, b2):
    k = data.draw(st.integers(1, experts))
    lo, hi = sorted((b1, b2))
    u_lo, u_hi = (float(formulas.expected_experts_touched(experts, k, b)) for b in (lo, hi))
    assert float(formulas.expected_experts_touched(experts, k, 1)) == pytest.approx(k, rel=1e-12)
    assert k * (1 - 1e-12) <= u_lo <= u_hi * (1 + 1e-12) and u_hi <= experts * (1 + 1e-12)
    if k == experts:
        assert u_lo == pytest.approx(experts, rel=1e-12)


@law
@given(moe_models, batches, batches, contexts)
def test_moe_weight_bytes_lie_between_k_and_all_experts(model, b1, b2, t):
    """Between the k experts one token uses and every expert, growing with the batch."""
    r = decode_floor(model, "h100-sxm", batch=[1.0, max(b1, b2)], context=t)
    b_e = model.routed_expert_format.bytes_per_element
    expert_bytes = model.num_moe_layers * model.expert_parameters * b_e
    rest = r.weight_bytes - expert_bytes * formulas.expected_experts_touched(
        model.num_experts, model.num_experts_per_token, r.batch)
    assert rest[0] <= rest[1]  # only the embedding rows grow outside the experts
    assert float(r.weight_bytes[0] - rest[0]) == pytest.approx(expert_bytes * model.num_experts_per_token, rel=1e-9)
    assert r.weight_bytes[1] - rest[1] <= expert_bytes * model.num_experts * (1 + 1e-12)


@law
@given(models(), batches, contexts)
def test_breakdown_adds_up_to_the_totals(model, b, t):
    r = decode_floor(model, "h100-sxm", b, t)
    parts = r.breakdown()
    assert sum(parts["bytes"].values()) == pytest.approx(float(r.bytes_total), rel=1e-12)
    assert sum(parts["flops"].values()) == pytest.approx(float(r.flops), rel=1e-12)
    assert all(float(v) >= 0 for group in parts.values() for v in group.values())


@settings(max_examples=15, deadline=None)
@given(models(), accelerators(), st.lists(batches, min_size=1, max_size=3), st.lists(contexts, min_size=1, max_size=3))
def test_grids_equal_pointwise_floors(model, device, bs, ts):
    """sweep and array arguments give, point for point, the scalar decode_floor."""
    grid = sweep([model], [device], batch=bs, context=ts)[0]
    for i, b in enumerate(bs):
        for j, t in enumerate(ts):
            point = decode_floor(model, device, b, t)
            for field in ("step_time_s", "bytes_total", "flops", "critical_batch"):
                assert getattr(grid, field)[i, j] == pytest.approx(float(getattr(point, field)), rel=1e-12), field


@law
@given(models(), st.sampled_from([1.0, 4.0, 32.0, 256.0]))
def test_kv_bytes_equal_weight_bytes_at_the_crossover_context(model, b):
    t_x = float(symbolic.closed_form("crossover_context").evaluate(model, batch=b))
    if np.isinf(t_x):  # every layer slides and the full windows hold fewer bytes than the weights
        r = decode_floor(model, "h100-sxm", b, 1e9)
        assert model.num_global_layers == 0 and r.kv_read_bytes < r.weight_bytes
        return
    r = decode_floor(model, "h100-sxm", b, t_x)
    assert float(r.kv_read_bytes) == pytest.approx(float(r.weight_bytes), rel=1e-9)
