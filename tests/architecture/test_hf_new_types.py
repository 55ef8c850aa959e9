"""Issue 28 item 2: the new model types and the FP8 checkpoints as published.

The bundled configs are the published ones cut to the architecture keys (``model_configs/SOURCES.md``);
the publisher's totals are checked in ``test_catalog_parameters.py``.  Here: the structure each
reader gives, the published quantization configs, and what is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import roofline_decode as rd
from roofline_decode import ConfigError, Model

CONFIGS = Path(rd.__file__).parent / "model_configs"
FP8_BLOCK_BYTES = 1 + 4 / 128**2  # e4m3 plus one fp32 scale per 128 x 128 block


def _published(model_id: str) -> dict:
    config = json.loads((CONFIGS / f"{model_id}.json").read_text())
    del config["_roofline"]
    return config


def test_minimax_m2_5_structure_and_count_by_hand():
    m = rd.load_model("minimax-m2.5")
    assert (m.num_layers, m.num_moe_layers, m.num_experts, m.num_experts_per_token) == (62, 62, 256, 8)
    assert (m.moe_intermediate_size, m.shared_expert_intermediate_size, m.first_dense_layers) == (1536, 0, 0)
    assert (m.num_heads, m.num_kv_heads, m.head_dim, m.qk_norm, m.qk_norm_scope) == (48, 8, 128, True, "projection")
    # per layer: q, k, v 3072 x (6144 + 1024 + 1024), o 6144 x 3072, q_norm 6144 + k_norm 1024, two RMSNorms,
    # 256 experts of 3 x 3072 x 1536, the gate 3072 x 256
    layer = 3072 * 8192 + 6144 * 3072 + 6144 + 1024 + 2 * 3072 + 256 * 3 * 3072 * 1536 + 3072 * 256
    assert m.parameter_count == 62 * layer + 2 * 200064 * 3072 + 3072 == 228_689_748_992
    # the safetensors of the same architecture (MiniMax-M2.7) hold 228,703,644,928: this count plus, per
    # layer, 223,872 fp32 block scales (experts 256 x 3 x 12 x 24, attention 2 x 48 x 24 + 2 x 8 x 24)
    # and the 256 e_score_correction_bias entries
    scales = 256 * 3 * 12 * 24 + 2 * 48 * 24 + 2 * 8 * 24
    assert scales == 223_872
    assert m.parameter_count + 62 * (scales + 256) == 228_703_644_928


def test_minimax_m2_5_fp8_as_published():
    # "fmt": "float8_e4m3fn" (a torch dtype name) was refused before issue 28
    m = rd.load_model("minimax-m2.5")
    assert _published("minimax-m2.5")["quantization_config"]["fmt"] == "float8_e4m3fn"
    assert m.weight_format.name == "fp8_e4m3-b128x128"
    formats = {g: f.name for g, f in m.group_formats.items()}
    assert formats == {"embedding": "bf16", "lm_head": "bf16", "router": "bf16", "norms": "bf16",
                       "attention": "fp8_e4m3-b128x128", "mlp": "fp8_e4m3-b128x128",
                       "experts": "fp8_e4m3-b128x128", "shared_experts": "fp8_e4m3-b128x128"}
    g = m.group_parameters
    wide = g["embedding"] + g["lm_head"] + g["router"] + g["norms"]
    assert m.weight_bytes == pytest.approx(2 * wide + (g["attention"] + g["experts"]) * FP8_BLOCK_BYTES, rel=1e-12)


@pytest.mark.parametrize(("change", "key"), [
    ({"attn_type_list": [0] + [1] * 61}, "attn_type_list"),   # MiniMax-01's lightning attention
    ({"attn_type_list": [1] * 61}, "attn_type_list"),
    ({"sliding_window": 4096}, "sliding_window"),
    ({"shared_intermediate_size": 1536}, "shared_intermediate_size"),
    ({"qk_norm_type": "per_token"}, "qk_norm_type"),
    ({"quantization_config": {"quant_method": "fp8", "fmt": "float8_e4m3fnuz"}}, "quantization_config.fmt"),
])
def test_minimax_m2_what_is_refused(change, key):
    with pytest.raises(ConfigError, match=rf"^.*{key}: "):
        Model.from_hf_config({**_published("minimax-m2.5"), **change})


def test_minimax_m2_per_head_q_k_norms():
    m = Model.from_hf_config({**_published("minimax-m2.5"), "qk_norm_type": "per_head"})
    assert m.qk_norm_scope == "head"
    assert rd.load_model("minimax-m2.5").parameter_count - m.parameter_count == 62 * (6144 + 1024 - 2 * 128)


def test_qwen3_5_397b_structure():
    m = rd.load_model("qwen3.5-397b-a17b")
    assert (m.num_layers, m.num_recurrent_layers, m.num_attention_layers) == (60, 45, 15)
    assert m.layer_types[:4] == ("recurrent", "recurrent", "recurrent", "full")
    assert (m.num_moe_layers, m.first_dense_layers, m.num_experts, m.num_experts_per_token) == (60, 0, 512, 10)
    assert (m.moe_intermediate_size, m.shared_expert_intermediate_size) == (1024, 1024)
    assert m.attention_output_gate and m.qk_norm and (m.num_heads, m.num_kv_heads, m.head_dim) == (32, 2, 256)
    assert m.recurrent_state_elements > 0 and not m.tie_word_embeddings


def test_qwen3_5_text_config_flat_nested_or_with_layer_types():
    nested = _published("qwen3.5-397b-a17b")
    reference = Model.from_hf_config(nested, name="q")
    text = nested["text_config"]
    # the text model on its own (Qwen3_5MoeForCausalLM saves model_type qwen3_5_moe_text)
    alone = {**text, "architectures": ["Qwen3_5MoeForCausalLM"]}
    assert Model.from_hf_config(alone, name="q") == reference
    # the published 60-entry layer_types instead of the interval
    listed = {k: v for k, v in text.items() if k != "full_attention_interval"}
    listed["layer_types"] = ["full_attention" if (i + 1) % 4 == 0 else "linear_attention" for i in range(60)]
    assert Model.from_hf_config({**nested, "text_config": listed}, name="q") == reference
    # the text fields at the top level of the wrapper
    flat = {**{k: v for k, v in text.items() if k != "model_type"}, "model_type": "qwen3_5_moe",
            "architectures": nested["architectures"]}
    assert Model.from_hf_config(flat, name="q") == reference


def test_qwen3_5_active_parameters():
    # "17B activated" (model card): 17.35B with both embedding matrices (Qwen's convention)
    m = rd.load_model("qwen3.5-397b-a17b")
    assert m.active_parameter_count == pytest.approx(17.35e9, rel=1e-3)
    assert m.parameter_count == 396_346_104_576


def test_glm_5_structure():
    m = rd.load_model("glm-5")
    assert m.is_mla and (m.q_lora_rank, m.kv_lora_rank, m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim) == (
        2048, 512, 192, 64, 256)
    assert (m.num_sparse_layers, m.sparse_top_k, m.indexer_heads, m.indexer_head_dim) == (78, 2048, 32, 128)
    assert (m.first_dense_layers, m.num_moe_layers, m.num_experts, m.num_experts_per_token) == (3, 75, 256, 8)
    assert (m.intermediate_size, m.moe_intermediate_size, m.shared_expert_intermediate_size) == (12288, 2048, 2048)
    assert m.parameter_count == 743_911_199_232
    # "40B active" (GLM counts without the embedding matrices): 39.88B
    assert m.active_parameter_count - 2 * 154880 * 6144 == pytest.approx(39.88e9, rel=1e-3)


@pytest.mark.parametrize(("change", "key"), [
    ({"indexer_types": ["full", "shared"] * 39}, "indexer_types"),
    ({"index_topk_freq": 2}, "index_topk_freq"),
    ({"index_topk_pattern": "FS" * 39}, "index_topk_pattern"),
])
def test_glm_5_layers_sharing_an_indexer_are_refused(change, key):
    with pytest.raises(ConfigError, match=rf"{key}: "):
        Model.from_hf_config({**_published("glm-5"), **change})


def test_glm_5_mlp_layer_types_decide_the_dense_layers():
    types = ["dense"] * 3 + ["sparse"] * 75
    assert Model.from_hf_config({**_published("glm-5"), "mlp_layer_types": types}, name="g") == \
        Model.from_hf_config(_published("glm-5"), name="g")
    # without either key, GlmMoeDsaConfig's default is three dense layers
    config = {k: v for k, v in _published("glm-5").items() if k != "first_k_dense_replace"}
    assert Model.from_hf_config(config).first_dense_layers == 3


def test_glm_4_7_flash_structure():
    m = rd.load_model("glm-4.7-flash")
    assert m.is_mla and not m.num_sparse_layers and (m.q_lora_rank, m.kv_lora_rank) == (768, 512)
    assert (m.first_dense_layers, m.num_moe_layers, m.num_experts, m.num_experts_per_token) == (1, 46, 64, 4)
    assert m.parameter_count == 29_943_390_976
    # Glm4MoeLiteConfig's default without first_k_dense_replace: one dense layer
    config = {k: v for k, v in _published("glm-4.7-flash").items() if k != "first_k_dense_replace"}
    assert Model.from_hf_config(config, name="g") == Model.from_hf_config(_published("glm-4.7-flash"), name="g")


def test_qwen3_32b_fp8_as_published_weight_bytes_by_hand():
    fp8, bf16 = rd.load_model("qwen3-32b-fp8"), rd.load_model("qwen3-32b")
    assert fp8.parameter_count == bf16.parameter_count == 32_762_123_264
    assert fp8.weight_format.name == "fp8_e4m3-b128x128"
    assert {g: fp8.group_format(g).name for g in ("embedding", "lm_head", "norms")} == dict.fromkeys(
        ("embedding", "lm_head", "norms"), "bf16")
    # 64 layers: q 5120 x 8192, k and v 5120 x 1024, o 8192 x 5120, MLP 3 x 5120 x 25600 in fp8 (every
    # dimension a multiple of 128: one scale per 128 x 128 block exactly); embedding and lm_head
    # 151936 x 5120, norms 64 x (2 x 5120 + 2 x 128) + 5120 in bf16
    linear = 64 * (2 * 5120 * 8192 + 2 * 5120 * 1024 + 3 * 5120 * 25600)
    wide = 2 * 151936 * 5120 + 64 * (2 * 5120 + 2 * 128) + 5120
    assert linear + wide == fp8.parameter_count
    assert fp8.weight_bytes == linear + linear // 128**2 * 4 + 2 * wide


def test_deepseek_r1_fp8_as_published():
    # the DeepSeek-R1 quantization_config as published: fp8 e4m3, dynamic activations, 128 x 128 blocks
    r1, v3 = rd.load_model("deepseek-r1"), rd.load_model("deepseek-v3")
    assert _published("deepseek-r1")["quantization_config"] == {
        "activation_scheme": "dynamic", "fmt": "e4m3", "quant_method": "fp8", "weight_block_size": [128, 128]}
    assert r1.group_formats == v3.group_formats and r1.weight_bytes == v3.weight_bytes
    assert {g for g, f in r1.group_formats.items() if f.name == "bf16"} == {"embedding", "lm_head", "router", "norms"}
