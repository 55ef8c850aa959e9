"""New architecture features (issue 14 item 3, DESIGN.md §4b): recurrent state, chunked and
sparse attention, text_config wrappers; hand-derived numbers."""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import Model, decode_floor
from roofline_decode.errors import ConfigError


def test_qwen3_next_state_and_kv_by_hand():
    m = rd.load_model("qwen3-next-80b-a3b")
    assert (m.num_recurrent_layers, m.num_global_layers) == (36, 12)
    # Gated DeltaNet state: 32 value heads x 128 x 128 + conv (2 x 16 x 128 + 32 x 128) x 3 = 548,864 elements
    assert m.recurrent_state_elements == 32 * 128 * 128 + (2 * 16 * 128 + 32 * 128) * 3 == 548_864
    r = decode_floor(m, "h100-sxm", batch=2, context=[0, 10_000])
    state = 2 * 36 * 548_864 * 2  # B x layers x elements x bf16
    kv = 2 * 12 * 10_000 * (2 * 2 * 256 * 2)  # B x 12 attention layers x T x 2 H_kv d_h b
    np.testing.assert_array_equal(r.kv_read_bytes, [state, state + kv])
    np.testing.assert_array_equal(r.kv_write_bytes, [state + 2 * 12 * 2048] * 2)
    assert float(r.breakdown()["bytes"]["recurrent_state"][0]) == 2 * state
    # the state does not grow with the context
    assert m.kv_bytes_per_token == 12 * 2 * 2 * 256 * 2


def test_mamba2_has_no_kv_cache_only_a_state():
    m = rd.load_model("mamba-codestral-7b")
    assert m.num_attention_layers == 0 and m.kv_bytes_per_token == 0
    r = decode_floor(m, "h100-sxm", batch=1, context=[0, 1000, 100_000])
    per_step = 64 * (8192 * 128 + (8192 + 2 * 8 * 128) * 3) * 2  # 64 layers of 1,079,296 bf16 elements
    np.testing.assert_array_equal(r.kv_read_bytes, [per_step] * 3)
    np.testing.assert_array_equal(r.kv_write_bytes, [per_step] * 3)
    # update FLOPs: 6 d_in N + 2 conv_dim K per layer on top of 2 x matmul parameters
    update = 64 * (6 * 8192 * 128 + 2 * 10240 * 4)
    assert float(r.flops[0]) == 2 * m.matmul_parameters_per_token + update


def test_llama4_chunked_layers_read_their_chunk_only():
    m = rd.load_model("llama-4-maverick")
    assert (m.num_chunked_layers, m.num_global_layers, m.attention_chunk_size) == (36, 12, 8192)
    per_token = 2 * 8 * 128 * 2
    r = decode_floor(m, "h100-sxm", batch=1, context=[5000, 8192, 10_000])
    positions = np.array([12 * 5000 + 36 * 5000, 12 * 8192 + 36 * 0, 12 * 10_000 + 36 * 1808])
    np.testing.assert_array_equal(r.kv_read_bytes, positions * per_token)
    assert m.num_moe_layers == 24 and m.num_dense_mlp_layers == 24


#: Indexer key bytes per token and layer of DeepSeek-V3.2 (index_head_dim = 128): fp8 keys (128 x 1 B)
#: plus one fp32 scale per 128 elements (4 B), DeepSeek-V3.2-Exp inference/model.py (k_cache
#: float8_e4m3fn, k_scale_cache float32 of head_dim // block_size) and vLLM's DeepseekV32IndexerCache
#: (index_head_dim + index_head_dim // 128 * 4 bytes).
INDEXER_BYTES = 128 * 1 + 128 // 128 * 4


def test_deepseek_v32_sparse_attention_reads_top_k_plus_indexer():
    m = rd.load_model("deepseek-v3.2-exp", kv="bf16")
    assert m.num_sparse_layers == 61 and m.sparse_top_k == 2048
    assert INDEXER_BYTES == 132 and m.indexer_bytes_per_token_per_layer == 132
    assert rd.formulas.indexer_bytes_per_token(128) == 132 and rd.formulas.indexer_bytes_per_token(256) == 264
    r = decode_floor(m, "h100-sxm", batch=1, context=[1000, 100_000])
    latent = 576 * 2
    expected = 61 * (np.minimum([1000, 100_000], 2048) * latent + np.array([1000, 100_000]) * INDEXER_BYTES)
    np.testing.assert_array_equal(r.kv_read_bytes, expected)
    # the dense DeepSeek-V3 reads all 100,000 latents: 7.4x more at that context
    # (100,000 x 1152 / (2048 x 1152 + 100,000 x 132) = 115.2e6 / 15,559,296)
    dense = decode_floor("deepseek-v3", "h100-sxm", batch=1, context=100_000)
    assert float(dense.kv_read_bytes) / float(r.kv_read_bytes[1]) == pytest.approx(
        100_000 * 1152 / (2048 * 1152 + 100_000 * INDEXER_BYTES), rel=1e-12)


@pytest.mark.parametrize("kv, latent_bytes", [("bf16", 2), ("fp8", 1)])
def test_deepseek_v32_indexer_keys_are_fp8_with_a_scale_at_any_kv_format(kv, latent_bytes):
    # issue 27 item 6: the indexer keys were counted at the KV width (128 x 2 B = 256 B in bf16); a real
    # system caches 132 B.  B = 64 at T = 131,072 (128K) on 61 sparse layers, top-k 2048 latents of 576:
    #   KV read = 64 x 61 x (2048 x 576 x b_kv + 131,072 x 132)
    #   bf16: 64 x 61 x (2,359,296 + 17,301,504) = 76,755,763,200 B  (before: 64 x 61 x (2,359,296
    #         + 33,554,432) = 140,207,194,112 B, 1.83x what a real system reads)
    #   written: one token's latent and indexer key per layer, 64 x 61 x (576 x b_kv + 132)
    m = rd.load_model("deepseek-v3.2-exp", kv=kv)
    r = decode_floor(m, "h200-sxm", batch=64, context=131_072)
    expected = 64 * 61 * (2048 * 576 * latent_bytes + 131_072 * INDEXER_BYTES)
    assert float(r.kv_read_bytes) == expected
    assert float(r.kv_write_bytes) == 64 * 61 * (576 * latent_bytes + INDEXER_BYTES)
    if kv == "bf16":
        assert expected == 76_755_763_200
    # resident: every latent and every indexer key of the 131,072 tokens
    from roofline_decode.floors.capacity import kv_bytes_per_sequence

    assert float(kv_bytes_per_sequence(m, 131_072)) == 61 * 131_072 * (576 * latent_bytes + INDEXER_BYTES)


def test_text_config_wrapper_and_names():
    m = rd.load_model("gemma-3-4b")
    assert (m.num_layers, m.hidden_size, m.num_sliding_layers, m.window) == (34, 2560, 29, 1024.0)
    wrapped = {"model_type": "mistral3", "architectures": ["Mistral3ForConditionalGeneration"],
               "text_config": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
                               "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100}}
    m = Model.from_hf_config(wrapped)
    assert m.name == "Mistral3ForConditionalGeneration" and m.num_layers == 2
    with pytest.raises(ConfigError, match="unsupported multimodal wrapper 'idefics3'"):
        Model.from_hf_config({**wrapped, "model_type": "idefics3"})


def test_gpt_j_within_a_thousandth_of_the_model_card():
    # GPT-J-6B model card: n_parameters 6,053,381,344; our count (lm_head bias of 50400 left out) is
    # 2.5M (0.04%) lower; the card's figure is not reproduced exactly from the published shapes
    m = rd.load_model("gpt-j-6b")
    assert m.parameter_count == 6_050_832_384
    assert m.parameter_count == pytest.approx(6_053_381_344, rel=1e-3)


@pytest.mark.parametrize("model_type, extra, count", [
    # Falcon-7B: 6,921,720,704 parameters (transformers' num_parameters of tiiuae/falcon-7b)
    ("falcon", dict(hidden_size=4544, num_hidden_layers=32, num_attention_heads=71, vocab_size=65024,
                    multi_query=True, parallel_attn=True, bias=False), 6_921_720_704),
])
def test_families_by_exact_count(model_type, extra, count):
    assert Model.from_hf_config({"model_type": model_type, **extra}).parameter_count == count


def test_resident_cache_of_sparse_chunked_and_recurrent_layers():
    from roofline_decode.floors.capacity import kv_bytes_per_sequence

    # DeepSeek-V3.2 keeps every latent and every indexer key: 61 x T x (576 x 2 B + 132 B)
    assert float(kv_bytes_per_sequence("deepseek-v3.2-exp", 8192)) == 61 * 8192 * (576 * 2 + 132)
    # Llama 4: 12 global layers keep T tokens, 36 chunked layers at most one chunk of 8192
    per_token = 2 * 8 * 128 * 2
    assert float(kv_bytes_per_sequence("llama-4-maverick", 20_000)) == per_token * (12 * 20_000 + 36 * 8192)
    # Qwen3-Next: 12 attention layers grow, the 36 recurrent layers hold a fixed state
    m = rd.load_model("qwen3-next-80b-a3b")
    assert float(kv_bytes_per_sequence(m, 1000)) == 12 * 1000 * 2 * 2 * 256 * 2 + 36 * 548_864 * 2


@pytest.mark.parametrize("model_type, extra, count", [
    # Phi-2: 4 d^2 attention + 2 d d_ff MLP, every projection with a bias, one LayerNorm per layer,
    # untied embeddings (lm_head bias left out): 2,779,683,840
    ("phi", dict(hidden_size=2560, num_hidden_layers=32, num_attention_heads=32, intermediate_size=10240,
                 vocab_size=51200), 32 * (4 * 2560**2 + 4 * 2560 + 2 * 2560 * 10240 + 10240 + 2560 + 2 * 2560)
     + 2 * 51200 * 2560 + 2 * 2560),
    # StarCoder2-15B: GQA 48/4 heads of 128, plain MLP of 24576, biases, two LayerNorms, tied
    ("starcoder2", dict(hidden_size=6144, num_hidden_layers=40, num_attention_heads=48, num_key_value_heads=4,
                        intermediate_size=24576, vocab_size=49152),
     40 * (6144 * (6144 + 2 * 512) + 6144 * 6144 + (6144 + 2 * 512) + 6144 + 2 * 6144 * 24576 + 24576 + 6144
           + 2 * 2 * 6144) + 49152 * 6144 + 2 * 6144),
])
def test_more_families_by_hand(model_type, extra, count):
    assert Model.from_hf_config({"model_type": model_type, **extra}).parameter_count == count


def test_starcoder2_slides_and_olmo_has_no_norm_weights():
    sc = Model.from_hf_config({"model_type": "starcoder2", "hidden_size": 64, "num_hidden_layers": 2,
                               "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128,
                               "vocab_size": 100})
    # Starcoder2Config: sliding_window None (starcoder2/configuration_starcoder2.py); the released
    # StarCoder2 configs state 4096
    assert sc.num_sliding_layers == 0
    assert Model.from_hf_config({"model_type": "starcoder2", "sliding_window": 4096}).window == 4096
    olmo = Model.from_hf_config({"model_type": "olmo", "hidden_size": 64, "num_hidden_layers": 2,
                                 "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100})
    assert olmo.norms_per_layer == 0


def test_jamba_hybrid_by_hand():
    m = rd.load_model("jamba-v0.1")
    assert (m.num_global_layers, m.num_recurrent_layers, m.num_moe_layers) == (4, 28, 16)
    r = decode_floor(m, "h100-sxm", batch=1, context=8192)
    state = 28 * (8192 * 16 + 8192 * 3) * 2  # Mamba v1: d_in N + d_in (K - 1) per layer, bf16
    kv = 4 * 8192 * 2 * 8 * 128 * 2
    assert float(r.kv_read_bytes) == state + kv


def test_nemotron_h_blocks_by_hand():
    # Nemotron 3 Nano: 23 Mamba-2, 6 attention and 23 MoE blocks, one RMSNorm each
    m = rd.load_model("nemotron-3-nano-30b-a3b")
    assert (m.num_layers, m.num_recurrent_layers, m.num_global_layers, m.num_moe_layers, m.mlp_free_layers) == (
        29, 23, 6, 23, 6)
    d, d_in, conv = 2688, 64 * 64, 64 * 64 + 2 * 8 * 128
    mamba = d * (2 * d_in + 2 * 8 * 128 + 64) + d_in * d + conv * 4 + conv + 3 * 64 + d_in
    attention = d * 32 * 128 + 2 * d * 2 * 128 + 32 * 128 * d
    moe = 128 * 2 * d * 1856 + 2 * d * 3712 + d * 128  # squared-ReLU experts: up and down only
    assert m.parameter_count == 23 * mamba + 6 * attention + 23 * moe + 52 * d + d + 2 * 131072 * d
    # a decode step reads 6 layers of KV and 23 Mamba-2 states of d_in N + conv_dim (K - 1) elements
    state = 23 * (d_in * 128 + conv * 3) * 2
    r = decode_floor(m, "h100-sxm", batch=1, context=[0, 8192])
    np.testing.assert_array_equal(r.kv_read_bytes, [state, state + 6 * 8192 * 2 * 2 * 128 * 2])


def test_granite_hybrid_by_hand():
    m = rd.load_model("granite-4.0-h-small")
    assert (m.num_recurrent_layers, m.num_global_layers, m.num_moe_layers) == (36, 4, 40)
    assert m.shared_expert_intermediate_size == 1536 and m.tie_word_embeddings
    state = 36 * (8192 * 128 + (8192 + 2 * 128) * 3) * 2
    r = decode_floor(m, "h100-sxm", batch=2, context=1000)
    assert float(r.kv_read_bytes) == 2 * (state + 4 * 1000 * 2 * 8 * 128 * 2)
    dense = Model.from_hf_config({"model_type": "granitemoehybrid", "hidden_size": 64, "num_hidden_layers": 2,
                                  "num_attention_heads": 4, "intermediate_size": 96, "shared_intermediate_size": 128,
                                  "num_local_experts": 0, "vocab_size": 100, "layer_types": ["attention"] * 2})
    assert not dense.is_moe and dense.intermediate_size == 128 and dense.num_recurrent_layers == 0


def test_falcon_h1_parallel_mixers_by_hand():
    # Falcon-H1-1.5B's shape (transformers' FalconH1 docs table: 24 layers, 2048 wide, 8/2 heads of
    # 128, Mamba-2 48 heads of 64, state 256; 4608 MLP and 65,537 vocab from a published config
    # quoted in a test suite): attention and Mamba-2 side by side, then a SwiGLU MLP; untied.
    # 1.555B: 3.7% over the "1.5B" of the name, the only figure found, so no Falcon-H1 is bundled
    config = {"model_type": "falcon_h1", "num_hidden_layers": 24, "hidden_size": 2048, "intermediate_size": 4608,
              "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 65537,
              "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_n_groups": 1, "mamba_n_heads": 48,
              "mamba_d_head": 64, "mamba_d_ssm": 3072}
    m = Model.from_hf_config(config)
    assert (m.num_global_layers, m.num_recurrent_layers, m.num_dense_mlp_layers) == (24, 24, 24)
    d, conv = 2048, 3072 + 2 * 256
    attention = d * 1024 + 2 * d * 256 + 1024 * d
    mamba = d * (2 * 3072 + 2 * 256 + 48) + 3072 * d + conv * 4 + conv + 3 * 48
    # two norms per layer plus one counted for the Mamba-2 half (it shares the input norm)
    assert m.parameter_count == 24 * (attention + mamba + 3 * d * 4608 + 3 * d) + d + 2 * 65537 * d


@pytest.mark.parametrize("config, message", [
    ({"hybrid_override_pattern": "M*-"}, "expected 4 characters of M, \\*, - and E"),
    ({"hybrid_override_pattern": "M---"}, "3 feed-forward blocks for 1 mixer blocks"),
])
def test_nemotron_h_pattern_errors(config, message):
    base = {"model_type": "nemotron_h", "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
            "num_key_value_heads": 2, "intermediate_size": 128, "vocab_size": 100, "mamba_num_heads": 8,
            "mamba_head_dim": 16}
    with pytest.raises(ConfigError, match=message):
        Model.from_hf_config({**base, **config})


def test_granite_hybrid_without_layer_types_is_all_mamba():
    # GraniteMoeHybridConfig.layers_block_type: no layer_types -> every layer Mamba-2
    m = Model.from_hf_config({"model_type": "granitemoehybrid", "hidden_size": 64, "num_hidden_layers": 2,
                              "num_attention_heads": 4, "intermediate_size": 96, "shared_intermediate_size": 128,
                              "vocab_size": 100, "mamba_n_heads": 8})
    assert m.num_recurrent_layers == 2
    with pytest.raises(ConfigError, match="layer_types"):
        Model.from_hf_config({"model_type": "granitemoehybrid", "num_hidden_layers": 2, "layer_types": ["lstm"] * 2})
