"""The defaults of transformers' configuration classes, for the keys the readers read.

``save_pretrained`` writes only the values that differ from the class defaults (a Gemma 3
``text_config`` has no ``num_attention_heads``: 8 is Gemma3TextConfig's default), so a
published config.json is complete only together with its class's defaults.  Each entry below
names the class and the transformers source file (and commit) its values were read from,
retrieved 2026-12-01; a key a reader reads that is not listed has no fixed default in the class
(``num_key_value_heads`` = ``num_attention_heads``, ``head_dim`` = d / H_q, ...) and the reader
derives it, or it is not a field of the class and the reader says what it assumes.

A key present in the config always wins, ``null`` included (``"sliding_window": null`` means
no window), exactly as transformers reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["ClassDefaults", "CLASS_DEFAULTS", "defaults_for"]

_REPO = "https://github.com/huggingface/transformers/blob/"
#: The commits the files were read at (the search tool's stored versions).
_A = "008e574391258935f3ecc3035c882e73bbcac419"
_B = "001f85b38fb432858ace93f18622f07cec46d874"
_C = "008f5c8c29be84d4721dc6d1e0fcd72300580be4"


@dataclass(frozen=True)
class ClassDefaults:
    """One configuration class: its name, the file its defaults were read from, the values."""

    config_class: str
    source: str
    values: Mapping[str, Any]


def _cls(name: str, commit: str, path: str, **values: Any) -> ClassDefaults:
    return ClassDefaults(name, f"{_REPO}{commit}/src/transformers/models/{path}", values)


def _sizes(vocab: int, hidden: int, inter: int | None, layers: int, heads: int, **more: Any) -> dict[str, Any]:
    sizes = {"vocab_size": vocab, "hidden_size": hidden, "num_hidden_layers": layers, "num_attention_heads": heads}
    if inter is not None:
        sizes["intermediate_size"] = inter
    return {**sizes, **more}


_SILU = {"hidden_act": "silu"}
_GELU_TANH = "gelu_pytorch_tanh"
#: Qwen2-style sliding-window keys (inactive unless ``use_sliding_window``).
_QWEN_WINDOW = {"use_sliding_window": False, "sliding_window": 4096}

#: model_type (the reader's key) -> the class defaults.
CLASS_DEFAULTS: dict[str, ClassDefaults] = {
    "llama": _cls("LlamaConfig", _A, "llama/configuration_llama.py", **_sizes(
        32000, 4096, 11008, 32, 32, max_position_embeddings=2048, tie_word_embeddings=False, attention_bias=False,
        mlp_bias=False, **_SILU)),
    "mistral": _cls("MistralConfig", _B, "mistral/configuration_mistral.py", **_sizes(
        32000, 4096, 14336, 32, 32, num_key_value_heads=8, max_position_embeddings=131072, tie_word_embeddings=False,
        sliding_window=4096, **_SILU)),
    "mixtral": _cls("MixtralConfig", _A, "mixtral/configuration_mixtral.py", **_sizes(
        32000, 4096, 14336, 32, 32, num_key_value_heads=8, max_position_embeddings=131072, tie_word_embeddings=False,
        sliding_window=None, num_experts_per_tok=2, num_local_experts=8, **_SILU)),
    "qwen2": _cls("Qwen2Config", _A, "qwen2/configuration_qwen2.py", **_sizes(
        151936, 4096, 22016, 32, 32, num_key_value_heads=32, max_position_embeddings=32768, tie_word_embeddings=False,
        max_window_layers=28, **_QWEN_WINDOW, **_SILU)),
    "qwen2_moe": _cls("Qwen2MoeConfig", _A, "qwen2_moe/configuration_qwen2_moe.py", **_sizes(
        151936, 2048, 5632, 24, 16, num_key_value_heads=16, max_position_embeddings=32768, tie_word_embeddings=False,
        max_window_layers=28, decoder_sparse_step=1, moe_intermediate_size=1408, shared_expert_intermediate_size=5632,
        num_experts_per_tok=4, num_experts=60, mlp_only_layers=[], qkv_bias=True, **_QWEN_WINDOW, **_SILU)),
    "qwen3": _cls("Qwen3Config", _A, "qwen3/configuration_qwen3.py", **_sizes(
        151936, 4096, 22016, 32, 32, num_key_value_heads=32, head_dim=128, max_position_embeddings=32768,
        tie_word_embeddings=False, attention_bias=False, max_window_layers=28, **_QWEN_WINDOW, **_SILU)),
    # no head_dim field: the attention takes d / H_q
    "qwen3_moe": _cls("Qwen3MoeConfig", _A, "qwen3_moe/configuration_qwen3_moe.py", **_sizes(
        151936, 2048, 6144, 24, 32, num_key_value_heads=4, max_position_embeddings=32768, tie_word_embeddings=False,
        attention_bias=False, decoder_sparse_step=1, moe_intermediate_size=768, num_experts_per_tok=8,
        num_experts=128, mlp_only_layers=[], **_QWEN_WINDOW, **_SILU)),
    "gemma": _cls("GemmaConfig", _A, "gemma/configuration_gemma.py", **_sizes(
        256000, 3072, 24576, 28, 16, num_key_value_heads=16, head_dim=256, hidden_act=_GELU_TANH,
        max_position_embeddings=8192, tie_word_embeddings=True, attention_bias=False)),
    "gemma2": _cls("Gemma2Config", _A, "gemma2/configuration_gemma2.py", **_sizes(
        256000, 2304, 9216, 26, 8, num_key_value_heads=4, head_dim=256, hidden_activation=_GELU_TANH,
        max_position_embeddings=8192, tie_word_embeddings=True, attention_bias=False, sliding_window=4096)),
    "gemma3_text": _cls("Gemma3TextConfig", _C, "gemma3/configuration_gemma3.py", **_sizes(
        262208, 2304, 9216, 26, 8, num_key_value_heads=4, head_dim=256, hidden_activation=_GELU_TANH,
        max_position_embeddings=131072, tie_word_embeddings=True, attention_bias=False, sliding_window=4096,
        sliding_window_pattern=6)),
    "phi3": _cls("Phi3Config", _A, "phi3/configuration_phi3.py", **_sizes(
        32064, 3072, 8192, 32, 32, max_position_embeddings=4096, tie_word_embeddings=False, sliding_window=None,
        **_SILU)),
    "deepseek_v2": _cls("DeepseekV2Config", _A, "deepseek_v2/configuration_deepseek_v2.py", **_sizes(
        32000, 4096, 11008, 32, 32, max_position_embeddings=2048, tie_word_embeddings=False, attention_bias=False,
        first_k_dense_replace=0, kv_lora_rank=512, q_lora_rank=1536, n_routed_experts=64, n_shared_experts=2,
        qk_nope_head_dim=128, qk_rope_head_dim=64, v_head_dim=128, moe_intermediate_size=1407, **_SILU)),
    "deepseek_v3": _cls("DeepseekV3Config", _B, "deepseek_v3/configuration_deepseek_v3.py", **_sizes(
        129280, 7168, 18432, 61, 128, num_key_value_heads=128, moe_intermediate_size=2048, n_shared_experts=1,
        n_routed_experts=256, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, v_head_dim=128,
        qk_nope_head_dim=128, num_experts_per_tok=8, first_k_dense_replace=3, max_position_embeddings=4096,
        tie_word_embeddings=False, attention_bias=False, **_SILU)),
    "deepseek_v32": _cls("DeepseekV32Config", _A, "deepseek_v32/configuration_deepseek_v32.py", **_sizes(
        129280, 7168, 18432, 61, 128, num_key_value_heads=128, moe_intermediate_size=2048, n_shared_experts=1,
        n_routed_experts=256, kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, v_head_dim=128,
        qk_nope_head_dim=128, num_experts_per_tok=8, first_k_dense_replace=3, max_position_embeddings=163840,
        tie_word_embeddings=False, attention_bias=False, index_topk=2048, index_head_dim=128, index_n_heads=64,
        **_SILU)),
    "gpt_oss": _cls("GptOssConfig", "02b8f42b4240dddea1b27c45d2dc95fb2682f841", "gpt_oss/configuration_gpt_oss.py",
                    **_sizes(201088, 2880, 2880, 36, 64, num_local_experts=128, head_dim=64, num_key_value_heads=8,
                             sliding_window=128, tie_word_embeddings=False, max_position_embeddings=131072,
                             num_experts_per_tok=4, attention_bias=True, **_SILU)),
    # an older OPTConfig (d_model, read as hidden_size); enable_bias and layer_norm_elementwise_affine
    # are not fields of that version: the reader takes them as true
    "opt": _cls("OPTConfig", "014674d38b61e5c7109e89d496bd699121a8aa4e", "opt/configuration_opt.py", **_sizes(
        50272, 768, None, 12, 12, ffn_dim=3072, max_position_embeddings=2048, activation_function="relu")),
    "gpt2": _cls("GPT2Config", "01ae98ae2414210efd0d9ac1ffe78ff21588f1f7", "gpt2/configuration_gpt2.py",
                 vocab_size=50257, n_positions=1024, n_embd=768, n_layer=12, n_head=12, activation_function="gelu_new"),
    "olmo2": _cls("Olmo2Config", _A, "olmo2/configuration_olmo2.py", **_sizes(
        50304, 4096, 11008, 32, 32, max_position_embeddings=2048, tie_word_embeddings=False, attention_bias=False,
        **_SILU)),
    "granite": _cls("GraniteConfig", _A, "granite/configuration_granite.py", **_sizes(
        32000, 4096, 11008, 32, 32, max_position_embeddings=2048, tie_word_embeddings=False, attention_bias=False,
        mlp_bias=False, **_SILU)),
    "cohere": _cls("CohereConfig", _A, "cohere/configuration_cohere.py", **_sizes(
        256000, 8192, 22528, 40, 64, max_position_embeddings=8192, tie_word_embeddings=True, attention_bias=False,
        use_qk_norm=False, **_SILU)),
    "cohere2": _cls("Cohere2Config", _A, "cohere2/configuration_cohere2.py", **_sizes(
        256000, 8192, 22528, 40, 64, max_position_embeddings=8192, tie_word_embeddings=True, attention_bias=False,
        sliding_window=4096, **_SILU)),
    "gptj": _cls("GPTJConfig", "0bedd3309fc97281835ab2f1a8e967a9d1a27c9e", "gptj/configuration_gptj.py",
                 vocab_size=50400, n_positions=2048, n_embd=4096, n_layer=28, n_head=16, activation_function="gelu_new"),
    "falcon": _cls("FalconConfig", "055855363e97555535aa9d133f53d99ef75bfd9c", "falcon/configuration_falcon.py",
                   **_sizes(65024, 4544, None, 32, 71, alibi=False, new_decoder_architecture=False, multi_query=True,
                            parallel_attn=True, bias=False)),
    # the v5 class in modular_glm4_moe.py (the generated configuration file carries the same fields)
    "glm4_moe": _cls("Glm4MoeConfig", "0e97420c9957149b80ff57632148e8ce80203b48", "glm4_moe/modular_glm4_moe.py",
                     **_sizes(151552, 4096, 10944, 46, 96, num_key_value_heads=8, max_position_embeddings=131072,
                              tie_word_embeddings=False, attention_bias=False, moe_intermediate_size=1408,
                              num_experts_per_tok=8, n_shared_experts=1, n_routed_experts=128, first_k_dense_replace=1,
                              use_qk_norm=False, **_SILU)),
    "qwen3_next": _cls("Qwen3NextConfig", _A, "qwen3_next/configuration_qwen3_next.py", **_sizes(
        151936, 2048, 5632, 48, 16, num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=False,
        attention_bias=False, head_dim=256, linear_conv_kernel_dim=4, linear_key_head_dim=128,
        linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32, decoder_sparse_step=1,
        moe_intermediate_size=512, shared_expert_intermediate_size=512, num_experts_per_tok=10, num_experts=512,
        mlp_only_layers=[], **_SILU)),
    # the v5 Mamba2Config (num_heads x head_dim = expand x hidden_size)
    "mamba2": _cls("Mamba2Config", "f2a39d495c8c365996a33c6ae9506ad9c9339f4b", "mamba2/configuration_mamba2.py",
                   num_heads=128, head_dim=64, vocab_size=32768, hidden_size=4096, state_size=128, num_hidden_layers=64,
                   expand=2, conv_kernel=4, n_groups=8, use_bias=False, use_conv_bias=True, tie_word_embeddings=False),
    "llama4_text": _cls("Llama4TextConfig", _A, "llama4/configuration_llama4.py", **_sizes(
        202048, 5120, 8192, 48, 40, intermediate_size_mlp=16384, num_key_value_heads=8, head_dim=128,
        max_position_embeddings=131072, tie_word_embeddings=False, num_experts_per_tok=1, num_local_experts=16,
        interleave_moe_layer_step=1, no_rope_layer_interval=4, attention_chunk_size=8192, attention_bias=False,
        **_SILU)),
    "phi": _cls("PhiConfig", _A, "phi/configuration_phi.py", **_sizes(
        51200, 2048, 8192, 24, 32, hidden_act="gelu_new", max_position_embeddings=2048, tie_word_embeddings=False,
        qk_layernorm=False)),
    "starcoder2": _cls("Starcoder2Config", _A, "starcoder2/configuration_starcoder2.py", **_sizes(
        49152, 3072, 12288, 30, 24, num_key_value_heads=2, hidden_act=_GELU_TANH, max_position_embeddings=4096,
        sliding_window=None, use_bias=True, tie_word_embeddings=True)),
    "smollm3": _cls("SmolLM3Config", _A, "smollm3/configuration_smollm3.py", **_sizes(
        128256, 2048, 11008, 36, 16, num_key_value_heads=4, max_position_embeddings=32768, tie_word_embeddings=True,
        attention_bias=False, mlp_bias=False, **_SILU)),
    "olmo": _cls("OlmoConfig", _A, "olmo/configuration_olmo.py", **_sizes(
        50304, 4096, 11008, 32, 32, max_position_embeddings=2048, tie_word_embeddings=False, attention_bias=False,
        **_SILU)),
    "jamba": _cls("JambaConfig", _C, "jamba/configuration_jamba.py", **_sizes(
        65536, 4096, 14336, 32, 32, num_key_value_heads=8, max_position_embeddings=262144, tie_word_embeddings=False,
        num_experts_per_tok=2, num_experts=16, expert_layer_period=2, expert_layer_offset=1, attn_layer_period=8,
        attn_layer_offset=4, mamba_d_state=16, mamba_d_conv=4, mamba_expand=2, mamba_conv_bias=True,
        mamba_proj_bias=False, **_SILU)),
    "granitemoehybrid": _cls("GraniteMoeHybridConfig", _C, "granitemoehybrid/configuration_granitemoehybrid.py",
                             **_sizes(32000, 4096, 11008, 32, 32, max_position_embeddings=2048, tie_word_embeddings=False,
                                      attention_bias=False, num_local_experts=8, num_experts_per_tok=2,
                                      shared_intermediate_size=1024, mamba_n_heads=128, mamba_n_groups=1,
                                      mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_conv_bias=True,
                                      mamba_proj_bias=False, **_SILU)),
    "nemotron_h": _cls("NemotronHConfig", "13923c63d59f73faebae79b2ee3fafc7e3a35201", "nemotron_h/configuration_nemotron_h.py",
                       vocab_size=131072, hidden_size=4096, tie_word_embeddings=False, num_attention_heads=32,
                       num_key_value_heads=8, head_dim=128, max_position_embeddings=4096, attention_bias=False,
                       intermediate_size=21504, mlp_hidden_act="relu2", mlp_bias=False, ssm_state_size=128,
                       mamba_num_heads=128, mamba_head_dim=64, n_groups=8, conv_kernel=4, expand=2, use_conv_bias=True,
                       mamba_proj_bias=False, n_routed_experts=8, n_shared_experts=1, moe_intermediate_size=7688,
                       moe_shared_expert_intermediate_size=7688, moe_latent_size=None, num_experts_per_tok=2,
                       use_bias=False),
    "falcon_h1": _cls("FalconH1Config", "020a37d2264e60dc7beb9634c3e87ad870073e2c", "falcon_h1/configuration_falcon_h1.py",
                      **_sizes(128000, 4096, 14336, 32, 32, num_key_value_heads=8, max_position_embeddings=8192,
                               tie_word_embeddings=False, mamba_d_ssm=1024, mamba_n_heads=128, mamba_d_head="auto",
                               mamba_n_groups=1, mamba_d_state=256, mamba_d_conv=4, mamba_expand=2, mamba_conv_bias=True,
                               mamba_proj_bias=False, mamba_rms_norm=False, projectors_bias=False, attention_bias=False,
                               mlp_bias=False, **_SILU)),
    # issue 28: new model types and the text configs of multimodal wrappers
    "minimax_m2": _cls("MiniMaxM2Config", _A, "minimax_m2/configuration_minimax_m2.py", **_sizes(
        200064, 3072, 1536, 62, 48, num_key_value_heads=8, head_dim=128, max_position_embeddings=196608,
        tie_word_embeddings=False, num_experts_per_tok=8, num_local_experts=256, **_SILU)),
    "qwen3_5_moe_text": _cls("Qwen3_5MoeTextConfig", _A, "qwen3_5_moe/configuration_qwen3_5_moe.py", **_sizes(
        248320, 2048, None, 40, 16, num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=False,
        attention_bias=False, head_dim=256, linear_conv_kernel_dim=4, linear_key_head_dim=128,
        linear_value_head_dim=128, linear_num_key_heads=16, linear_num_value_heads=32, moe_intermediate_size=512,
        shared_expert_intermediate_size=512, num_experts_per_tok=8, num_experts=256, **_SILU)),
    "glm_moe_dsa": _cls("GlmMoeDsaConfig", _A, "glm_moe_dsa/configuration_glm_moe_dsa.py", **_sizes(
        154880, 6144, 12288, 78, 64, num_key_value_heads=64, moe_intermediate_size=2048, n_shared_experts=1,
        n_routed_experts=256, kv_lora_rank=512, q_lora_rank=2048, qk_rope_head_dim=64, v_head_dim=256,
        qk_nope_head_dim=192, num_experts_per_tok=8, max_position_embeddings=202752, tie_word_embeddings=False,
        attention_bias=False, index_topk=2048, index_head_dim=128, index_n_heads=32, first_k_dense_replace=3,
        **_SILU)),
    "glm4_moe_lite": _cls("Glm4MoeLiteConfig", _A, "glm4_moe_lite/configuration_glm4_moe_lite.py", **_sizes(
        154880, 2048, 10240, 47, 20, num_key_value_heads=20, moe_intermediate_size=1536, n_shared_experts=1,
        n_routed_experts=64, kv_lora_rank=512, q_lora_rank=768, qk_rope_head_dim=64, v_head_dim=256,
        qk_nope_head_dim=192, num_experts_per_tok=4, max_position_embeddings=202752, tie_word_embeddings=False,
        attention_bias=False, **_SILU)),
    "qwen2_5_vl_text": _cls("Qwen2_5_VLTextConfig", "018c8e0394c47749c55861e11f5f7e2a577973d7",
                            "qwen2_5_vl/configuration_qwen2_5_vl.py", **_sizes(
                                152064, 8192, 29568, 80, 64, num_key_value_heads=8, max_position_embeddings=32768,
                                tie_word_embeddings=False, max_window_layers=80, **_QWEN_WINDOW, **_SILU)),
    "qwen3_vl_text": _cls("Qwen3VLTextConfig", "000c33fdfde12e1ffafbfcdb3c926df5727a00b6",
                          "qwen3_vl/configuration_qwen3_vl.py", **_sizes(
                              151936, 4096, 22016, 32, 32, num_key_value_heads=32, head_dim=128,
                              max_position_embeddings=128000, tie_word_embeddings=False, attention_bias=False, **_SILU)),
    "qwen3_vl_moe_text": _cls("Qwen3VLMoeTextConfig", _A, "qwen3_vl_moe/configuration_qwen3_vl_moe.py", **_sizes(
        151936, 2048, 5632, 24, 16, num_key_value_heads=16, max_position_embeddings=128000, tie_word_embeddings=True,
        attention_bias=False, decoder_sparse_step=1, moe_intermediate_size=1408, num_experts_per_tok=4,
        num_experts=60, mlp_only_layers=[], **_SILU)),
}


def defaults_for(model_type: str) -> Mapping[str, Any]:
    """The class defaults of ``model_type`` (empty for a type without an entry)."""
    entry = CLASS_DEFAULTS.get(model_type)
    return entry.values if entry is not None else {}
