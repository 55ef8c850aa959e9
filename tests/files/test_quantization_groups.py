"""quantization_config keeps some weight groups wide (issue 21 item 2)."""

from __future__ import annotations

import pytest

import roofline_decode as rd
from roofline_decode import Model, decode_floor
from roofline_decode.errors import ConfigError

SMALL = dict(hidden_size=64, num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=128, vocab_size=100)
MOE = {**SMALL, "model_type": "qwen3_moe", "head_dim": 16, "num_experts": 8, "num_experts_per_tok": 2,
       "moe_intermediate_size": 32}


def test_deepseek_v3_fp8_checkpoint_reads_37_67_gb_at_batch_1():
    # Issue 21 item 2: fp8 e4m3 linears with one fp32 scale per 128x128 block; embedding, lm_head,
    # norms and the MoE gate in bf16: 37.67 GB per step at B = 1 (36.63 GB with everything fp8).
    m = rd.load_model("deepseek-v3")
    assert m.weight_format.name == "fp8_e4m3-b128x128"
    assert {g: m.group_format(g).name for g in ("embedding", "lm_head", "router", "norms")} == dict.fromkeys(
        ("embedding", "lm_head", "router", "norms"), "bf16")
    r = decode_floor(m, "h100-sxm", batch=1, context=0)
    assert float(r.weight_bytes) / 1e9 == pytest.approx(37.67, abs=0.005)
    # by hand: lm_head 129280 x 7168 and 58 gates of 7168 x 256 in 2 B, the rest at 8 + 32/128^2 bits
    g = m.parameter_groups
    wide = g["lm_head"] + g["router_matrix"] + g["layer_vector"] + 7168
    fp8 = m.streamed_parameters - g["lm_head"] - g["router_matrix"] - g["layer_vector"]
    fp8 += 58 * 8 * m.expert_parameters
    assert float(r.weight_bytes) == pytest.approx(2 * wide + fp8 * (8 + 32 / 128**2) / 8, rel=1e-13)


def test_gpt_oss_keeps_attention_router_embedding_lm_head_wide():
    m = rd.load_model("gpt-oss-120b")
    assert m.routed_expert_format.name == "mxfp4"
    assert {fmt.name for g, fmt in m.group_formats.items() if g != "experts"} == {"bf16"}


def test_modules_to_not_convert_naming_some_layers_blends_the_group():
    # Qwen3-MoE FP8 checkpoints list each layer's gate; listing 3 of 6 layers' attention keeps half of it wide
    quant = {"quant_method": "fp8", "modules_to_not_convert": ["model.layers.0.self_attn", "model.layers.1.self_attn",
                                                                "model.layers.2.self_attn"]}
    m = Model.from_hf_config({**MOE, "quantization_config": quant})
    assert m.group_format("attention").bits_per_element == pytest.approx(0.5 * 8 + 0.5 * 16)
    assert m.group_format("experts").name == "fp8_e4m3" and m.group_format("router").name == "bf16"
    regex = Model.from_hf_config({**MOE, "quantization_config": {**quant, "modules_to_not_convert": ["re:.*experts.*"]}})
    assert regex.group_format("experts").name == "bf16" and regex.group_format("attention").name == "fp8_e4m3"


def test_gptq_lm_head_flag_and_awq_defaults():
    gptq = {"quant_method": "gptq", "bits": 4, "group_size": 128}
    m = Model.from_hf_config({**SMALL, "model_type": "llama", "quantization_config": gptq})
    assert m.group_format("lm_head").name == "bf16" and m.group_format("mlp").name == "gptq-int4-g128"
    m = Model.from_hf_config({**SMALL, "model_type": "llama", "quantization_config": {**gptq, "lm_head": True}})
    assert m.group_format("lm_head").name == "gptq-int4-g128"
    fp16 = Model.from_hf_config({**SMALL, "model_type": "llama", "torch_dtype": "float16",
                                 "quantization_config": {"quant_method": "awq", "bits": 4, "group_size": 128}})
    assert fp16.group_format("embedding").name == "fp16"


@pytest.mark.parametrize("weights, inputs, name, bits, compute", [
    # llm-compressor W4A16: int4, groups of 128, symmetric (one bf16 scale per group)
    ({"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": True}, None,
     "ct-int4-g128-sym", 4 + 16 / 128, "bf16"),
    # FP8_DYNAMIC: per-channel fp8 weights, dynamic fp8 activations
    ({"num_bits": 8, "type": "float", "strategy": "channel"}, {"num_bits": 8, "type": "float", "dynamic": True},
     "fp8_e4m3", 8, "fp8"),
    # W8A8 int8
    ({"num_bits": 8, "type": "int", "strategy": "channel"}, {"num_bits": 8, "type": "int", "dynamic": True},
     "int8_w8a8", 8, "int8"),
    # NVFP4: float 4-bit in groups of 16
    ({"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16}, None, "nvfp4", 4.5, "fp4"),
])
def test_compressed_tensors_schemes(weights, inputs, name, bits, compute):
    quant = {"quant_method": "compressed-tensors", "format": "pack-quantized", "ignore": ["lm_head"],
             "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights, "input_activations": inputs}}}
    m = Model.from_hf_config({**MOE, "quantization_config": quant})
    fmt = m.weight_format
    assert (fmt.name, fmt.bits_per_element, fmt.compute_precision) == (name, pytest.approx(bits), compute)
    # `ignore` is the whole list: the gate is converted unless named, the lm_head named stays wide
    assert m.group_format("router") == fmt and m.group_format("lm_head").name == "bf16"


def test_malformed_lists_and_schemes_name_their_key():
    with pytest.raises(ConfigError, match="modules_to_not_convert: expected a list"):
        Model.from_hf_config({**SMALL, "model_type": "llama",
                              "quantization_config": {"quant_method": "fp8", "modules_to_not_convert": "lm_head"}})
    with pytest.raises(ConfigError, match="config_groups: expected an object"):
        Model.from_hf_config({**SMALL, "model_type": "llama", "quantization_config": {"quant_method": "compressed-tensors"}})
