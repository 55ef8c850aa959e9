"""safetensors headers beside config.json (issue 14 item 2): bytes per weight group."""

from __future__ import annotations

import json
import struct

import pytest

import roofline_decode as rd
from roofline_decode.errors import ConfigError
from roofline_decode.files.safetensors import hf_tensor_group, read_safetensors_header

CONFIG = dict(model_type="llama", hidden_size=256, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              intermediate_size=512, vocab_size=1000, tie_word_embeddings=False)


def write_safetensors(path, tensors: dict[str, tuple[str, list[int]]]) -> None:
    """A header-only .safetensors file (data offsets as if the data followed)."""
    header, offset = {}, 0
    sizes = {"BF16": 2, "F32": 4, "F8_E4M3": 1, "I32": 4, "F16": 2}
    for name, (dtype, shape) in tensors.items():
        n = sizes[dtype]
        for dim in shape:
            n *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + n]}
        offset += n
    text = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(text)) + text)


def llama_tensors(linear: str, scales: bool = False) -> dict[str, tuple[str, list[int]]]:
    d, ff, kv = 256, 512, 2 * 64
    t = {"model.embed_tokens.weight": ("BF16", [1000, d]), "lm_head.weight": ("BF16", [1000, d]),
         "model.norm.weight": ("BF16", [d])}
    for i in range(2):
        p = f"model.layers.{i}."
        mats = {"self_attn.q_proj": [d, d], "self_attn.k_proj": [kv, d], "self_attn.v_proj": [kv, d],
                "self_attn.o_proj": [d, d], "mlp.gate_proj": [ff, d], "mlp.up_proj": [ff, d], "mlp.down_proj": [d, ff]}
        for name, shape in mats.items():
            t[f"{p}{name}.weight"] = (linear, shape)
            if scales:  # one fp32 per 128x128 block
                t[f"{p}{name}.weight_scale_inv"] = ("F32", [-(-shape[0] // 128), -(-shape[1] // 128)])
        t[f"{p}input_layernorm.weight"] = ("BF16", [d])
        t[f"{p}post_attention_layernorm.weight"] = ("BF16", [d])
    # a layer past num_hidden_layers (DeepSeek's MTP module) is not read at decode
    t["model.layers.2.self_attn.q_proj.weight"] = ("BF16", [d, d])
    return t


def test_bf16_checkpoint_is_the_plain_format(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    write_safetensors(tmp_path / "model.safetensors", llama_tensors("BF16"))
    m = rd.load_model(tmp_path)
    assert m.has_uniform_weights and m.weight_format.name == "bf16"
    assert m.weight_bytes == 2 * m.parameter_count


def test_fp8_block_scales_sharded_with_index(tmp_path):
    tensors = llama_tensors("F8_E4M3", scales=True)
    names = list(tensors)
    half = len(names) // 2
    write_safetensors(tmp_path / "model-00001-of-00002.safetensors", {n: tensors[n] for n in names[:half]})
    write_safetensors(tmp_path / "model-00002-of-00002.safetensors", {n: tensors[n] for n in names[half:]})
    index = {"metadata": {}, "weight_map": {n: f"model-0000{1 + (i >= half)}-of-00002.safetensors"
                                            for i, n in enumerate(names)}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    (tmp_path / "config.json").write_text(json.dumps({**CONFIG, "quantization_config": {
        "quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]}}))
    m = rd.load_model(tmp_path)
    # by hand: attention per layer q 256x256, k, v 128x256, o 256x256 in 1 B + scales 4 + 2 + 2 + 4 fp32
    attention = 2 * ((256 * 256 * 2 + 128 * 256 * 2) + 4 * (4 + 2 + 2 + 4))
    assert m.group_parameters["attention"] * m.group_format("attention").bytes_per_element == pytest.approx(attention)
    mlp = 2 * (3 * 512 * 256 + 4 * 3 * 8)
    assert m.group_parameters["mlp"] * m.group_format("mlp").bytes_per_element == pytest.approx(mlp)
    assert m.group_format("lm_head").name == "bf16" and m.group_format("embedding").name == "bf16"
    assert m.group_format("attention").compute_precision == "fp8"
    total = attention + mlp + 2 * 2 * 1000 * 256 + 2 * (2 * 2 * 256 + 256)
    assert m.weight_bytes == pytest.approx(total)
    # a shard named by the index but absent
    (tmp_path / "model-00002-of-00002.safetensors").unlink()
    with pytest.raises(ConfigError, match="shard model-00002-of-00002.safetensors is not in the folder"):
        rd.load_model(tmp_path)


def test_gptq_packed_tensors_by_bytes(tmp_path):
    d, ff = 256, 512
    tensors = llama_tensors("BF16")
    for i in range(2):
        for name, (rows, cols) in {"self_attn.q_proj": (d, d), "self_attn.k_proj": (128, d),
                                   "self_attn.v_proj": (128, d), "self_attn.o_proj": (d, d),
                                   "mlp.gate_proj": (ff, d), "mlp.up_proj": (ff, d), "mlp.down_proj": (d, ff)}.items():
            p = f"model.layers.{i}.{name}"
            del tensors[f"{p}.weight"]
            tensors[f"{p}.qweight"] = ("I32", [cols // 8, rows])  # 4-bit, 8 per int32
            tensors[f"{p}.qzeros"] = ("I32", [cols // 128, rows // 8])
            tensors[f"{p}.scales"] = ("F16", [cols // 128, rows])
            tensors[f"{p}.g_idx"] = ("I32", [cols])
    write_safetensors(tmp_path / "model.safetensors", tensors)
    (tmp_path / "config.json").write_text(json.dumps({**CONFIG, "quantization_config": {
        "quant_method": "gptq", "bits": 4, "group_size": 128}}))
    m = rd.load_model(tmp_path)
    # 4 bits + (16-bit scale + 4-bit zero) / 128 per weight, plus g_idx: 32 bits per input column
    bits = m.group_format("mlp").bits_per_element
    assert bits == pytest.approx(4 + 20 / 128 + 32 * (d + d + ff) / (3 * ff * d))


def test_tensor_groups_and_bad_headers(tmp_path):
    assert hf_tensor_group("model.layers.3.mlp.gate.weight") == "router"
    assert hf_tensor_group("model.layers.3.mlp.gate_proj.weight") == "mlp"
    assert hf_tensor_group("model.layers.3.mlp.experts.7.down_proj.weight_scale_inv") == "experts"
    assert hf_tensor_group("model.layers.3.mlp.shared_experts.up_proj.weight") == "shared_experts"
    assert hf_tensor_group("model.layers.3.block_sparse_moe.gate.weight") == "router"
    assert hf_tensor_group("model.layers.3.self_attn.kv_a_layernorm.weight") == "norms"
    assert hf_tensor_group("model.layers.3.self_attn.q_proj.bias") == "norms"
    bad = tmp_path / "x.safetensors"
    bad.write_bytes(struct.pack("<Q", 10) + b"not json!!")
    with pytest.raises(ConfigError, match="x.safetensors: \\(header\\): not a safetensors JSON header"):
        read_safetensors_header(bad)
    write_safetensors(bad, {})
    bad.write_bytes(struct.pack("<Q", 40) + json.dumps({"w": {"dtype": "Q4", "shape": [2]}}).encode().ljust(40))
    with pytest.raises(ConfigError, match="w: unknown dtype 'Q4'"):
        read_safetensors_header(bad)
