"""The per-layer table: DecodeFloor.layers(), its text/HTML view and `floor --per-layer`."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, list_models, load_model
from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError
from roofline_decode.testing import accelerators, models

BUNDLED = list_models()
TOTALS = ("weight_bytes", "kv_read_bytes", "kv_write_bytes", "flops", "bytes_total")


def assert_rows_add_up(floor):
    table = floor.layers()
    for name in TOTALS:
        parts = [float(np.asarray(getattr(row, name))) for row in table]
        assert all(p >= 0 for p in parts), name
        # the float sum of the rows, correctly rounded, is the step's own number
        assert math.fsum(parts) == pytest.approx(float(getattr(floor, name)), rel=1e-15, abs=0), name
    for name in ("memory_time_s", "compute_time_s"):
        parts = [float(np.asarray(getattr(row, name))) for row in table]
        assert math.fsum(parts) == pytest.approx(float(getattr(floor, name)), rel=1e-12), name


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(BUNDLED), st.integers(1, 2048), st.integers(0, 262_144),
       st.sampled_from(["uniform", "identical"]))
def test_rows_add_up_to_the_step_for_every_bundled_model(model_id, batch, context, routing):
    assert_rows_add_up(decode_floor(model_id, "h200-sxm", batch=batch, context=context, routing=routing))


@pytest.mark.parametrize("model_id", BUNDLED)
def test_every_bundled_model_at_three_points(model_id):
    for batch, context in ((1, 0), (8, 4096), (256, 131_072)):
        assert_rows_add_up(decode_floor(model_id, "h100-sxm", batch=batch, context=context))


@settings(max_examples=25, deadline=None)
@given(models(("dense", "moe", "sliding", "mla", "hybrid")), accelerators(), st.integers(1, 512), st.integers(0, 65_536))
def test_rows_add_up_for_generated_models_and_devices(model, device, batch, context):
    assert_rows_add_up(decode_floor(model, device, batch=batch, context=context))


def test_bf16_rows_add_up_bit_for_bit():
    """Whole numbers below 2**53 (bf16 weights and KV): the plain sum is the step's number."""
    floor = decode_floor("llama-3.1-8b", "h100-sxm", batch=4, context=1000)
    table = floor.layers()
    for name in TOTALS:
        assert sum(float(getattr(r, name)) for r in table) == float(getattr(floor, name)), name


def test_layer_kinds_follow_the_architecture():
    kinds = {m: [r.kind for r in decode_floor(m, "h100-sxm").layers()] for m in
             ("llama-3.1-8b", "gemma-3-27b", "deepseek-v3", "deepseek-v3.2-exp", "qwen3-next-80b-a3b",
              "llama-4-maverick", "mamba-codestral-7b")}
    assert kinds["llama-3.1-8b"] == ["attention (full)", "norms and biases", "MLP (dense)", "embedding", "lm_head"]
    assert kinds["gemma-3-27b"][:2] == ["attention (full)", "attention (sliding)"]
    assert kinds["deepseek-v3"][:1] == ["attention (MLA)"]
    assert "MoE shared experts" in kinds["deepseek-v3"] and "MLP (dense)" in kinds["deepseek-v3"]
    assert kinds["deepseek-v3.2-exp"][0] == "attention (sparse MLA)"
    assert kinds["qwen3-next-80b-a3b"][:2] == ["attention (full)", "recurrent mixer"]
    assert "attention (chunked)" in kinds["llama-4-maverick"]
    assert "attention (full)" not in kinds["mamba-codestral-7b"] and "recurrent mixer" in kinds["mamba-codestral-7b"]


def test_rows_by_hand_on_llama_3_1_8b():
    """Llama-3.1-8B bf16: 32 layers, d 4096, 32 q / 8 kv heads of 128, d_ff 14336, V 128256."""
    floor = decode_floor("llama-3.1-8b", "h100-sxm", batch=2, context=1000)
    table = floor.layers()
    d, L, kv = 4096, 32, 8 * 128
    attn = d * d + 2 * d * kv + d * d
    assert float(table["attention (full)"].weight_bytes) == 2 * L * attn
    assert float(table["attention (full)"].kv_read_bytes) == 2 * 1000 * L * 2 * kv * 2
    assert float(table["MLP (dense)"].flops) == 2 * 2 * L * 3 * d * 14336
    assert float(table["embedding"].weight_bytes) == 2 * 2 * d
    assert float(table["lm_head"].weight_bytes) == 2 * 128256 * d
    assert str(table["MLP (dense)"].bound) == "memory"
    with pytest.raises(InvalidValueError, match="layer"):
        table["MoE router"]


def test_uniform_routing_reads_more_experts_than_identical():
    uniform = decode_floor("mixtral-8x7b", "h100-sxm", batch=16).layers()["MoE routed experts"]
    strict = decode_floor("mixtral-8x7b", "h100-sxm", batch=16, routing="identical").layers()["MoE routed experts"]
    assert float(strict.weight_bytes) < float(uniform.weight_bytes)
    assert float(strict.flops) == float(uniform.flops)


def test_grid_floor_gives_rows_over_the_grid_and_records():
    floor = decode_floor("gpt-oss-20b", "h100-sxm", batch=[[1], [64]], context=[0, 8192])
    table = floor.layers()
    assert table["attention (sliding)"].weight_bytes.shape == (2, 2)
    records = table.to_records()
    assert len(records) == 4 * len(table)
    assert {r["layer"] for r in records} == {r.kind for r in table}
    frame = table.to_dataframe()
    step = frame.groupby(["batch", "context"])["bytes_total"].sum()
    np.testing.assert_allclose(step.to_numpy(), np.asarray(floor.bytes_total).ravel(), rtol=1e-15)


def test_views_render_a_table_per_point():
    table = decode_floor("qwen3-30b-a3b", "h100-sxm", batch=[1, 32], context=2048).layers()
    text = str(table)
    assert text.count("per layer kind") == 2 and "MoE routed experts" in text and "step" in text
    html = table._repr_html_()
    assert html.count('<table class="layers">') == 2 and 'data-layer="MoE router"' in html


def test_a_model_with_an_indexer_in_some_layers_only_keeps_its_attention_weights():
    """Sparse layers beside full ones: the indexer weights go to the sparse rows alone."""
    base = load_model("deepseek-v3.2-exp")
    kinds = ("full",) * 3 + ("sparse",) * (base.num_layers - 3)
    mixed = type(base).model_validate({**base.model_dump(), "layer_types": kinds})
    table = decode_floor(mixed, "h200-sxm", batch=4, context=10_000).layers()
    full, sparse = table["attention (MLA)"], table["attention (sparse MLA)"]
    per_layer_full = float(full.weight_bytes) / 3
    assert float(sparse.weight_bytes) / (base.num_layers - 3) > per_layer_full
    assert_rows_add_up(decode_floor(mixed, "h200-sxm", batch=4, context=10_000))


def test_cli_per_layer(capsys):
    assert main(["floor", "--model", "gemma-3-27b", "--gpu", "h100-sxm", "--batch", "1,8", "--per-layer"]) == 0
    out = capsys.readouterr().out
    assert out.count("attention (sliding)") == 2
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--per-layer", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    floor = decode_floor("llama-3.1-8b", "h100-sxm")
    assert math.fsum(r["bytes_total"] for r in records) == float(floor.bytes_total)
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--per-layer", "--energy"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--per-layer" in err
