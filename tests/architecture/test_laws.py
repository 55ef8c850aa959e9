"""Hypothesis laws of the architecture features (issue 3, DESIGN.md §7)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import Accelerator, Model, decode_floor
from roofline_decode import formulas as f

LAWS = settings(max_examples=50, deadline=None)
DEVICE = Accelerator(name="law device", memory_bandwidth=2e12, memory_capacity=1e12, peak_flops={"bf16": 5e14})
batches = st.integers(1, 4096)
contexts = st.integers(0, 200_000)


@st.composite
def dense_models(draw, **fixed):
    kv_heads = draw(st.sampled_from([1, 2, 4, 8]))
    fields = dict(
        name="law model",
        num_layers=draw(st.integers(1, 64)),
        hidden_size=draw(st.integers(8, 8192)),
        num_kv_heads=kv_heads,
        num_heads=kv_heads * draw(st.integers(1, 8)),
        head_dim=draw(st.sampled_from([32, 64, 80, 128, 256])),
        intermediate_size=draw(st.integers(8, 30_000)),
        vocab_size=draw(st.integers(100, 300_000)),
        mlp_gated=draw(st.booleans()),
        qkv_bias=draw(st.booleans()),
        tie_word_embeddings=draw(st.booleans()),
        kv_format=draw(st.sampled_from(["bf16", "fp8", "fp32"])),
        weight_format=draw(st.sampled_from(["bf16", "q4_0", "int8"])),
    )
    fields.update(fixed)
    return Model(**fields)


@LAWS
@given(e=st.integers(1, 512), data=st.data())
def test_experts_touched_between_k_and_e_and_non_decreasing(e, data):
    k = data.draw(st.integers(1, e))
    b = np.arange(1, 2049, dtype=float)
    u = f.expected_experts_touched(e, k, b)
    tol = 1e-9 * e
    assert np.all(u >= k - tol) and np.all(u <= e + tol)
    assert np.all(np.diff(u) >= -tol)
    assert u[0] == pytest.approx(k)


@LAWS
@given(model=dense_models(), window=st.integers(1, 100_000), batch=batches, context=contexts, data=st.data())
def test_sliding_layers_never_read_more_than_global(model, window, batch, context, data):
    types = tuple(data.draw(st.lists(st.sampled_from(["full", "sliding"]), min_size=model.num_layers,
                                     max_size=model.num_layers)))
    hybrid = model.replace(sliding_window=window, layer_types=types)
    all_sliding = model.replace(sliding_window=window)
    full, mixed, sliding = (decode_floor(m, DEVICE, batch=batch, context=context)
                            for m in (model, hybrid, all_sliding))
    assert sliding.kv_read_bytes <= mixed.kv_read_bytes <= full.kv_read_bytes
    assert sliding.flops <= mixed.flops <= full.flops
    # equal when the context fits in the window; weights and writes never depend on the window
    if context <= window:
        assert sliding.kv_read_bytes == full.kv_read_bytes
    assert mixed.weight_bytes == full.weight_bytes and mixed.kv_write_bytes == full.kv_write_bytes


@LAWS
@given(model=dense_models(), batch=batches, context=contexts)
def test_gqa_with_as_many_kv_heads_as_query_heads_is_mha(model, batch, context):
    mha = model.replace(num_kv_heads=model.num_heads)
    L, d, H, dh = mha.num_layers, mha.hidden_size, mha.num_heads, mha.head_dim
    b_kv = mha.kv_format.bytes_per_element
    # multi-head attention written out: K and V of every head, four square-ish projections
    assert mha.kv_bytes_per_token == 2 * L * H * dh * b_kv
    assert mha.parameter_groups["attention_matrix"] == L * 4 * d * H * dh
    r = decode_floor(mha, DEVICE, batch=batch, context=context)
    assert float(r.kv_read_bytes) == pytest.approx(batch * context * 2 * L * H * dh * b_kv)
    assert float(r.breakdown()["flops"]["attention_scores"]) == pytest.approx(4 * batch * H * dh * context * L)
    # the HF import agrees: num_key_value_heads = H and an absent key (Llama default) are the same model
    config = dict(model_type="llama", hidden_size=d, num_hidden_layers=L, num_attention_heads=H, head_dim=dh,
                  intermediate_size=mha.intermediate_size, vocab_size=mha.vocab_size)
    assert Model.from_hf_config(config) == Model.from_hf_config({**config, "num_key_value_heads": H})
    assert Model.from_hf_config(config).num_kv_heads == H


@LAWS
@given(heads=st.integers(1, 128), nope=st.sampled_from([32, 64, 128]), rope=st.sampled_from([16, 32, 64]),
       v=st.sampled_from([64, 128]), data=st.data(), batch=batches, context=st.integers(1, 100_000))
def test_mla_kv_below_its_mha_equivalent(heads, nope, rope, v, data, batch, context):
    # the latent is a compression: its rank is at most the width it is expanded to (H (d_nope + d_v))
    rank = data.draw(st.integers(1, heads * (nope + v)))
    mla = Model(name="mla", num_layers=4, hidden_size=1024, num_heads=heads, num_kv_heads=heads,
                head_dim=nope + rope, intermediate_size=2048, vocab_size=1000, kv_lora_rank=rank,
                q_lora_rank=data.draw(st.sampled_from([0, 256])), qk_nope_head_dim=nope, qk_rope_head_dim=rope,
                v_head_dim=v)
    # the MHA equivalent caches per head a (d_nope + d_rope) key and a d_v value
    mha_bytes = heads * (nope + rope + v) * mla.kv_format.bytes_per_element
    assert mla.kv_bytes_per_token_per_layer <= mha_bytes
    if heads > 1:
        assert mla.kv_bytes_per_token_per_layer < mha_bytes
    r = decode_floor(mla, DEVICE, batch=batch, context=context)
    assert float(r.kv_read_bytes) <= batch * context * 4 * mha_bytes


@LAWS
@given(model=dense_models(mlp_bias=False), batch=st.floats(1, 4096), context=contexts)
def test_dense_model_as_one_expert_moe_gives_the_same_bytes_and_flops(model, batch, context):
    moe = model.replace(num_experts=1, num_experts_per_token=1, moe_intermediate_size=model.intermediate_size,
                        intermediate_size=0)
    dense_r, moe_r = (decode_floor(m, DEVICE, batch=batch, context=context) for m in (model, moe))
    # the one real difference: a one-expert MoE layer still has its router, a d x 1 matrix
    L, d, b_w = model.num_layers, model.hidden_size, model.weight_format.bytes_per_element
    assert float(moe_r.weight_bytes) == pytest.approx(float(dense_r.weight_bytes) + b_w * L * d, rel=1e-12)
    assert float(moe_r.flops) == pytest.approx(float(dense_r.flops) + 2 * batch * L * d, rel=1e-12)
    assert moe_r.kv_read_bytes == dense_r.kv_read_bytes and moe_r.kv_write_bytes == dense_r.kv_write_bytes
    assert moe.parameter_count == model.parameter_count + L * d
    assert moe.active_parameter_count == moe.parameter_count
    # with the router removed from the comparison, every component agrees
    moe_parts, dense_parts = moe_r.breakdown(), dense_r.breakdown()
    for kind, router in (("bytes", b_w * L * d), ("flops", 2 * batch * L * d)):
        for part, value in dense_parts[kind].items():
            extra = router if part in ("mlp_weights", "mlp") else 0
            assert float(moe_parts[kind][part]) == pytest.approx(float(value) + extra, rel=1e-12), part


@settings(max_examples=30, deadline=None)
@given(model_id=st.sampled_from(rd.list_models()), batch=st.floats(1.0, 5000), context=contexts)
def test_breakdown_parts_sum_to_the_totals(model_id, batch, context):
    r = decode_floor(model_id, DEVICE, batch=batch, context=context)
    parts = r.breakdown()
    assert sum(parts["bytes"].values()) == pytest.approx(r.bytes_total, rel=1e-12)
    assert sum(parts["flops"].values()) == pytest.approx(r.flops, rel=1e-12)
    assert all(np.all(np.asarray(v) >= 0) for kind in parts.values() for v in kind.values())


@settings(max_examples=20, deadline=None)
@given(model_id=st.sampled_from([m for m in rd.list_models() if rd.load_model(m).is_moe]),
       small=st.integers(1, 512), factor=st.integers(2, 16))
def test_moe_expert_bytes_grow_with_batch_but_never_past_all_experts(model_id, small, factor):
    model = rd.load_model(model_id)
    r = decode_floor(model, DEVICE, batch=[small, small * factor], context=0)
    assert r.weight_bytes[0] <= r.weight_bytes[1]
    embedding = model.weight_format.bytes_per_element * model.embedding_row_parameters * small * factor
    # stored bytes hold every expert (and the embedding table, of which only rows are gathered)
    assert r.weight_bytes[1] <= model.weight_bytes + embedding
