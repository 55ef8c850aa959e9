"""Model.from_hf_config: each family's key variants and defaults, quantization_config, errors."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import roofline_decode as rd
from roofline_decode import ConfigError, Model
from roofline_decode.cli import main
from roofline_decode.specs.hf_config import SUPPORTED_MODEL_TYPES, ConfigNote

CONFIGS = Path(rd.__file__).parent / "model_configs"
SMALL = dict(hidden_size=64, num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=2,
             intermediate_size=128, vocab_size=100)


def bundled(model_id: str) -> dict:
    return json.loads((CONFIGS / f"{model_id}.json").read_text())


def test_the_supported_families():
    assert set(SUPPORTED_MODEL_TYPES) == {
        "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma", "gemma2",
        "gemma3_text", "phi3", "deepseek_v2", "deepseek_v3", "gpt_oss", "opt", "gpt2",
        # issue 14
        "olmo2", "granite", "cohere", "cohere2", "gptj", "falcon", "glm4_moe", "qwen3_next", "mamba2", "llama4_text",
        "deepseek_v32", "phi", "starcoder2", "smollm3", "olmo", "jamba",
        "granitemoehybrid", "nemotron_h", "falcon_h1",
        # issue 28: new model types, and the text models of multimodal wrappers under their own names
        "minimax_m2", "qwen3_5_moe_text", "glm_moe_dsa", "glm4_moe_lite",
        "qwen2_5_vl_text", "qwen3_vl_text", "qwen3_vl_moe_text"}


@pytest.mark.parametrize("model_id", rd.list_models())
def test_bundled_configs_load_from_their_file_and_dict_alike(model_id):
    config = bundled(model_id)
    from_file = rd.load_model(model_id)
    with warnings.catch_warnings():  # kimi-k2 (kimi_k2): read as deepseek_v3, a note the bundled loader keeps quiet
        warnings.filterwarnings("ignore", r".*unsupported model_type '[^']+'; read as ", ConfigNote)
        from_dict = Model.from_hf_config(config)
    assert from_dict.replace(source=from_file.source) == from_file
    assert from_file.name == config["_roofline"]["name"]


# -- per-family structure of the bundled models -------------------------------------------------

def test_tie_word_embeddings_family_defaults():
    # absent in the official Gemma, OPT and GPT-2 configs: their config classes default to True
    for model_id in ("gemma-7b", "gemma-2-9b", "gemma-3-1b", "opt-6.7b", "gpt2"):
        assert "tie_word_embeddings" not in bundled(model_id)
        assert rd.load_model(model_id).tie_word_embeddings, model_id
    for model_type in ("llama", "mistral", "qwen2", "phi3"):
        assert not Model.from_hf_config({**SMALL, "model_type": model_type}).tie_word_embeddings
    assert Model.from_hf_config({**SMALL, "model_type": "llama", "tie_word_embeddings": True}).tie_word_embeddings


def test_gemma_head_dim_norms_and_layer_patterns():
    g7 = rd.load_model("gemma-7b")
    assert (g7.head_dim, g7.num_heads * g7.head_dim, g7.hidden_size) == (256, 4096, 3072)
    assert g7.norms_per_layer == 2 and g7.mlp_gated and g7.num_sliding_layers == 0
    g2 = rd.load_model("gemma-2-9b")
    assert g2.norms_per_layer == 4 and not g2.qk_norm
    # even layers slide (transformers: (i + 1) % 2 != 0), odd layers are global
    assert g2.layer_types[:4] == ("sliding", "full", "sliding", "full") and g2.num_sliding_layers == 21
    assert g2.window == 4096
    g3 = rd.load_model("gemma-3-1b")
    assert g3.norms_per_layer == 4 and g3.qk_norm and g3.window == 512
    assert [i for i, t in enumerate(g3.layer_types) if t == "full"] == [5, 11, 17, 23]


def test_absent_keys_take_the_config_class_defaults():
    # save_pretrained drops the values equal to the class defaults; transformers fills them back.
    # GemmaConfig: head_dim 256 (transformers gemma/configuration_gemma.py)
    assert Model.from_hf_config({**SMALL, "model_type": "gemma"}).head_dim == 256
    # Gemma3TextConfig: 8 heads, 4 KV heads (gemma3/configuration_gemma3.py): a Gemma 3 text_config
    # saved by transformers leaves them out when they are 8 and 4 (Gemma-3-4B)
    config = bundled("gemma-3-4b")
    text = {k: v for k, v in config["text_config"].items() if k not in ("num_attention_heads", "num_key_value_heads")}
    assert Model.from_hf_config({**config, "text_config": text}) == rd.load_model("gemma-3-4b")
    # LlamaConfig() alone: Llama-2-7B's shapes (vocab 32000, 4096, 11008, 32 layers, 32 heads)
    llama = Model.from_hf_config({"model_type": "llama"})
    assert (llama.vocab_size, llama.hidden_size, llama.intermediate_size, llama.num_layers, llama.num_kv_heads) == (
        32000, 4096, 11008, 32, 32)
    assert llama.parameter_count == rd.load_model("llama-2-7b").parameter_count
    # a key the config states wins over the defaults, null included (no window); and a stated alias
    # (gpt2's hidden_size for n_embd) wins over the default of the other name
    assert Model.from_hf_config({**SMALL, "model_type": "mistral", "sliding_window": None}).num_sliding_layers == 0
    assert Model.from_hf_config({"model_type": "gpt2", "hidden_size": 64, "n_head": 4}).hidden_size == 64


def test_a_key_without_a_class_default_is_still_required():
    # DeepseekV2Config: num_experts_per_tok None ("None means dense model"): no number to assume
    config = {k: v for k, v in bundled("deepseek-v2-lite").items() if k != "num_experts_per_tok"}
    with pytest.raises(ConfigError, match="num_experts_per_tok: required key is missing"):
        Model.from_hf_config(config)


def test_layer_types_key_wins_over_the_family_pattern():
    types = ["full_attention"] * 5 + ["sliding_attention"]
    m = Model.from_hf_config({**SMALL, "model_type": "gemma3_text", "head_dim": 16, "sliding_window": 8,
                              "sliding_window_pattern": 2, "layer_types": types})
    assert m.layer_types == ("full",) * 5 + ("sliding",)
    with pytest.raises(ConfigError, match=r"layer_types\[2\].*chunked_attention.*supported"):
        Model.from_hf_config({**SMALL, "model_type": "gpt_oss", "num_local_experts": 4, "num_experts_per_tok": 2,
                              "layer_types": ["full_attention"] * 2 + ["chunked_attention"] + ["full_attention"] * 3})
    with pytest.raises(ConfigError, match="expected a list of 6"):
        Model.from_hf_config({**SMALL, "model_type": "gemma2", "head_dim": 16, "layer_types": ["full_attention"]})


def test_gpt_oss_experts_biases_windows_and_mxfp4():
    m = rd.load_model("gpt-oss-20b")
    assert (m.num_experts, m.num_experts_per_token, m.moe_intermediate_size, m.num_moe_layers) == (32, 4, 2880, 24)
    assert m.intermediate_size == 0 and m.qkv_bias and m.o_bias and m.mlp_bias
    assert (m.head_dim, m.num_heads * m.head_dim, m.num_sliding_layers, m.window) == (64, 4096, 12, 128)
    # quantization_config mxfp4: the experts only; attention, router, embedding, lm_head stay bf16
    assert m.routed_expert_format.name == "mxfp4" and m.weight_format.name == "bf16"
    # experts_per_token alone (the key the original release used) is read too
    config = {k: v for k, v in bundled("gpt-oss-20b").items() if k != "num_experts_per_tok"}
    assert Model.from_hf_config({**config, "experts_per_token": 2}).num_experts_per_token == 2


def test_mixtral_and_qwen_moe_layouts():
    mix = rd.load_model("mixtral-8x7b")
    assert (mix.num_experts, mix.num_experts_per_token, mix.moe_intermediate_size) == (8, 2, 14336)
    assert mix.num_moe_layers == 32 and mix.shared_expert_intermediate_size == 0 and mix.intermediate_size == 0
    q15 = rd.load_model("qwen1.5-moe-a2.7b")
    assert (q15.num_experts, q15.num_experts_per_token, q15.moe_intermediate_size) == (60, 4, 1408)
    assert q15.shared_expert_intermediate_size == 5632 and q15.num_moe_layers == 24 and q15.qkv_bias
    q3 = rd.load_model("qwen3-30b-a3b")
    assert q3.qk_norm and q3.head_dim == 128 and q3.num_moe_layers == 48 and q3.num_sliding_layers == 0


def test_qwen_moe_dense_layers_from_mlp_only_layers_and_sparse_step():
    config = {**bundled("qwen3-30b-a3b"), "mlp_only_layers": [0, 1], "decoder_sparse_step": 2}
    m = Model.from_hf_config(config)
    # sparse: (i + 1) % 2 == 0 and i not in {0, 1} -> i = 3, 5, ..., 47: 23 layers
    assert (m.num_moe_layers, m.num_dense_mlp_layers, m.intermediate_size) == (23, 25, 6144)
    dense = Model.from_hf_config({**bundled("qwen3-30b-a3b"), "num_experts": 0})
    assert not dense.is_moe and dense.intermediate_size == 6144


def test_deepseek_mla_and_dense_first_layers():
    v3 = rd.load_model("deepseek-v3")
    assert v3.is_mla and (v3.kv_lora_rank, v3.q_lora_rank, v3.qk_rope_head_dim) == (512, 1536, 64)
    assert (v3.num_moe_layers, v3.first_dense_layers, v3.num_experts, v3.num_experts_per_token) == (58, 3, 256, 8)
    assert v3.shared_expert_intermediate_size == 2048 and v3.intermediate_size == 18432
    lite = rd.load_model("deepseek-v2-lite")
    assert lite.q_lora_rank == 0 and lite.shared_expert_intermediate_size == 2 * 1408
    assert lite.num_moe_layers == 26
    # q_lora_rank null means "no query compression"; an absent key is DeepseekV2Config's 1536
    config = {k: v for k, v in bundled("deepseek-v2-lite").items() if k != "q_lora_rank"}
    assert Model.from_hf_config(config).q_lora_rank == 1536
    # moe_layer_freq 2: MoE on even layers from first_k_dense_replace on
    alternating = Model.from_hf_config({**bundled("deepseek-v2-lite"), "moe_layer_freq": 2})
    assert alternating.num_moe_layers == 13


def test_deepseek_v3_class_defaults_and_mlp_layer_types():
    # DeepseekV3Config: n_shared_experts 1, first_k_dense_replace 3 (deepseek_v3/configuration_deepseek_v3.py)
    config = {k: v for k, v in bundled("deepseek-v3").items() if k not in ("n_shared_experts", "first_k_dense_replace")}
    assert Model.from_hf_config(config) == rd.load_model("deepseek-v3")
    # mlp_layer_types (DeepseekV32Config, GlmMoeDsaConfig) wins over first_k_dense_replace
    types = ["dense"] * 5 + ["sparse"] * 56
    assert Model.from_hf_config({**config, "mlp_layer_types": types}).first_dense_layers == 5
    with pytest.raises(ConfigError, match="mlp_layer_types: expected 61 of dense / sparse"):
        Model.from_hf_config({**config, "mlp_layer_types": ["dense", "moe"]})


def test_sliding_window_rules_per_family():
    mistral = rd.load_model("mistral-7b-v0.1")
    assert mistral.num_sliding_layers == 32 and mistral.window == 4096
    # MistralConfig's default window is 4096; null means none
    assert Model.from_hf_config({**SMALL, "model_type": "mistral"}).window == 4096
    assert Model.from_hf_config({**SMALL, "model_type": "mistral", "sliding_window": None}).num_sliding_layers == 0
    assert rd.load_model("phi-3-mini-4k").window == 2047
    assert rd.load_model("mixtral-8x7b").num_sliding_layers == 0
    # Qwen: inactive unless use_sliding_window; then layers >= max_window_layers slide
    assert rd.load_model("qwen2.5-7b").num_sliding_layers == 0
    on = Model.from_hf_config({**SMALL, "model_type": "qwen2", "use_sliding_window": True,
                               "sliding_window": 16, "max_window_layers": 4})
    assert on.layer_types == ("full",) * 4 + ("sliding",) * 2 and on.window == 16


def test_opt_and_gpt2_layer_norms_biases_and_learned_positions():
    opt = rd.load_model("opt-6.7b")
    assert opt.norm_type == "layer" and not opt.mlp_gated and opt.qkv_bias and opt.o_bias and opt.mlp_bias
    assert opt.position_embedding_rows == 2048 + 2 and opt.intermediate_size == 16384 and opt.num_kv_heads == 32
    gpt2 = rd.load_model("gpt2")
    assert (gpt2.hidden_size, gpt2.num_layers, gpt2.num_heads, gpt2.intermediate_size) == (768, 12, 12, 3072)
    assert gpt2.position_embedding_rows == 1024 and gpt2.norm_type == "layer" and not gpt2.mlp_gated
    # a learned position row is gathered per token next to the token row
    assert gpt2.embedding_row_parameters == 2 * 768
    assert Model.from_hf_config({**bundled("gpt2"), "n_inner": 1000}).intermediate_size == 1000


def test_opt_projected_embeddings_are_refused():
    with pytest.raises(ConfigError, match="word_embed_proj_dim: 512 != hidden_size 4096"):
        Model.from_hf_config({**bundled("opt-6.7b"), "word_embed_proj_dim": 512})


# -- quantization_config ---------------------------------------------------------------------------

@pytest.mark.parametrize("quant, field, name, bits", [
    ({"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}, "weight_format", "fp8_e4m3-b128x128",
     8 + 32 / 128**2),
    ({"quant_method": "fp8"}, "weight_format", "fp8_e4m3", 8),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128}, "weight_format", "gptq-int4-g128", 4 + 20 / 128),
    ({"quant_method": "awq", "bits": 4, "group_size": 64}, "weight_format", "awq-int4-g64", 4 + 20 / 64),
    ({"quant_method": "gptq", "bits": 8, "group_size": -1}, "weight_format", "gptq-int8", 8),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4"}, "weight_format",
     "bnb-nf4", 4.5),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True}, "weight_format", "int8", 8),
    ({"quant_method": "mxfp4"}, "weight_format", "mxfp4", 4.25),
])
def test_quantization_config_sets_the_weight_format(quant, field, name, bits):
    m = Model.from_hf_config({**SMALL, "model_type": "llama", "quantization_config": quant})
    fmt = getattr(m, field)
    assert fmt.name == name and fmt.bits_per_element == pytest.approx(bits)


def test_quantization_errors_and_override():
    config = {**SMALL, "model_type": "llama", "quantization_config": {"quant_method": "hqq"}}
    with pytest.raises(ConfigError, match="quant_method: unsupported quantization 'hqq'; supported: awq"):
        Model.from_hf_config(config)
    assert Model.from_hf_config(config, weight_format="q4_0").weight_format.name == "q4_0"
    with pytest.raises(ConfigError, match="quantization_config.quant_method: required key is missing; supported: awq"):
        Model.from_hf_config({**config, "quantization_config": {"bits": 4}})
    with pytest.raises(ConfigError, match="bits: expected 2, 3, 4 or 8"):
        Model.from_hf_config({**config, "quantization_config": {"quant_method": "gptq", "bits": 5}})
    assert rd.load_model("deepseek-v3").weight_format.compute_precision == "fp8"



@pytest.mark.parametrize("quant, key", [
    ({"quant_method": "gptq", "bits": 4, "group_size": True}, "quantization_config.group_size"),
    ({"quant_method": "gptq", "bits": 4.0, "group_size": 128}, "quantization_config.bits"),
    ({"quant_method": "fp8", "weight_block_size": [128, True]}, "quantization_config.weight_block_size"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "int4"},
     "quantization_config.bnb_4bit_quant_type"),
])
def test_malformed_quantization_values_name_their_key(quant, key):
    # booleans are ints in Python and once slipped through as a group of 1 ("gptq-int4-gTrue")
    with pytest.raises(ConfigError, match=f"<config dict>: {key}: expected"):
        Model.from_hf_config({**SMALL, "model_type": "llama", "quantization_config": quant})

# -- errors: malformed files, unknown types, missing keys, the CLI ---------------------------------

def test_truncated_bundled_config_gives_a_config_error(tmp_path):
    text = (CONFIGS / "llama-3.1-8b.json").read_text()
    path = tmp_path / "config.json"
    for cut in (0, 1, len(text) // 2, len(text) - 2):
        path.write_text(text[:cut])
        with pytest.raises(ConfigError, match="not valid JSON") as info:
            Model.from_hf_config(path)
        assert str(path) in str(info.value)


@pytest.mark.parametrize("content, match", [
    (b"[1, 2, 3]", "expected a JSON object, got list"),
    (b"\xff\xfe\x00garbage", "not UTF-8 text"),
    (b'{"model_type": "llama", "hidden_size": "4096"}', "hidden_size: expected an integer >= 1, got '4096'"),
    (b'{"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2, '
     b'"intermediate_size": 8, "vocab_size": 10, "tie_word_embeddings": "yes"}', "tie_word_embeddings: expected true or false"),
    (b'{"hidden_size": 64}', "model_type: required key is missing; supported: cohere, cohere2, deepseek_v2"),
])
def test_malformed_configs(tmp_path, content, match):
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match=match):
        Model.from_hf_config(path)



@pytest.mark.parametrize("extra, key", [
    ({"model_type": ["llama"]}, "model_type"),
    ({"model_type": "llama", "hidden_act": ["silu"]}, "hidden_act"),
    ({"model_type": "gemma2", "head_dim": 16, "layer_types": [["sliding_attention"]] * 6}, r"layer_types\[0\]"),
])
def test_unhashable_values_are_config_errors_not_type_errors(extra, key):
    with pytest.raises(ConfigError, match=f"{key}: unsupported"):
        Model.from_hf_config({**SMALL, **extra})

def test_unknown_model_type_lists_every_supported_type():
    with pytest.raises(ConfigError) as info:
        Model.from_hf_config({**SMALL, "model_type": "mamba"})
    message = str(info.value)
    assert "unsupported model_type 'mamba'" in message
    assert all(model_type in message for model_type in SUPPORTED_MODEL_TYPES)


@pytest.mark.parametrize("config, key", [
    ({k: v for k, v in bundled("deepseek-v2-lite").items() if k != "num_experts_per_tok"}, "num_experts_per_tok"),
    ({"model_type": "qwen2", "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": None,
      "num_hidden_layers": None}, "num_hidden_layers"),
])
def test_missing_required_key_names_key_and_file(tmp_path, config, key):
    # a key is required when neither the config nor its class holds a number for it (null counts as absent)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError) as info:
        Model.from_hf_config(path)
    message = str(info.value)
    assert str(path) in message and key in message and "required key is missing" in message


def test_inconsistent_values_are_config_errors_naming_the_file(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**SMALL, "model_type": "llama", "num_key_value_heads": 3}))
    with pytest.raises(ConfigError, match="num_heads=4 must be a multiple of num_kv_heads=3") as info:
        Model.from_hf_config(path)
    assert str(path) in str(info.value)


@pytest.mark.parametrize("content", ['{"model_type": "llama", ', '{"model_type": "mamba"}',
                                     '{"model_type": "gpt2", "n_embd": "768"}'])
def test_cli_bad_config_exits_2_with_one_line(tmp_path, capsys, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    assert main(["floor", "--model", str(path), "--gpu", "h100-sxm"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("roofline-decode: error: ") and str(path) in lines[0]


def test_cli_entry_point_bad_config_no_traceback(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"model_type": "qwen3", "hidden_size": 64')
    run = subprocess.run([sys.executable, "-m", "roofline_decode", "floor", "--model", str(path), "--gpu", "h100-sxm"],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Traceback" not in run.stderr and "not valid JSON" in run.stderr


def test_a_config_in_the_current_folder_is_named_after_the_folder(tmp_path, monkeypatch):
    import json

    import roofline_decode as rd

    config = json.loads((rd.catalog._MODEL_DIR / "llama-2-7b.json").read_text())
    config.pop("_roofline")
    folder = tmp_path / "my-llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    monkeypatch.chdir(folder)
    assert rd.load_model("config.json").name == "my-llama"
