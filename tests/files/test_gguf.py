"""GGUF headers (issue 14 item 1): architecture from the metadata, bytes per tensor from its type."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode.errors import ConfigError
from roofline_decode.formats.ggml_types import GGML_TYPES
from roofline_decode.files.gguf import read_gguf_header, tensor_group

GiB = 2**30


def test_llama_3_8b_q4_k_m_from_a_generated_gguf(gguf_file, tmp_path):
    source = rd.load_model("llama-3.1-8b")
    path = gguf_file(tmp_path / "Meta-Llama-3-8B-Q4_K_M.gguf", source, "Q4_K_M")
    header = read_gguf_header(path)
    assert header.version == 3 and len(header.tensors) == 291
    # hand count: 4.58 GiB as published (4.92 GB for Meta-Llama-3-8B-Instruct-Q4_K_M.gguf)
    assert header.tensor_bytes / GiB == pytest.approx(4.58, abs=0.005)
    m = rd.load_model(path)
    assert m.name == "Llama-3.1-8B" and m.parameter_count == source.parameter_count
    assert m.weight_bytes == header.tensor_bytes
    r = rd.decode_floor(m, "h100-sxm", batch=1, context=0)
    # all tensors but the q4_k token embedding, plus one gathered row (16 q4_k blocks of 144 B)
    embed = GGML_TYPES["q4_k"].tensor_bytes(128256 * 4096)
    assert float(r.weight_bytes) == header.tensor_bytes - embed + 16 * 144
    assert float(r.weight_bytes) == 4_617_398_528  # issue 14: bytes read per step, B = 1
    # same bytes as the preset without a file
    preset = rd.decode_floor(source.with_precision(weights="Q4_K_M"), "h100-sxm", batch=1, context=0)
    assert float(preset.weight_bytes) == pytest.approx(float(r.weight_bytes), rel=1e-12)


@pytest.mark.parametrize("preset, gib", [("Q4_0", 3.56), ("Q8_0", 6.67)])
def test_llama_2_7b_published_sizes_from_gguf(gguf_file, tmp_path, preset, gib):
    # TheBloke/Llama-2-7B-GGUF: Q4_0 3.83 GB = 3.56 GiB, Q8_0 7.16 GB = 6.67 GiB
    path = gguf_file(tmp_path / f"llama-2-7b.{preset}.gguf", rd.load_model("llama-2-7b"), preset)
    assert rd.load_model(path).weight_bytes / GiB == pytest.approx(gib, abs=0.005)


def test_gpt_oss_style_mxfp4_experts_and_q8_0_rest(gguf_file, tmp_path):
    # ggml-org/gpt-oss-20b-GGUF keeps the experts in MXFP4 and the other matrices in q8_0
    source = rd.load_model("gpt-oss-20b")
    from roofline_decode.formats.llama_quant import gguf_tensor_layout

    layout = gguf_tensor_layout(source)
    types = {t.name: ("mxfp4" if t.group == "experts" and t.name.endswith(".weight") else
                      "f32" if len(t.shape) < 2 or t.group in ("router", "experts") else "q8_0") for t in layout}
    path = gguf_file(tmp_path / "gpt-oss-20b-mxfp4.gguf", source, types, arch="gpt-oss",
                      extra={"gpt-oss.attention.sliding_window": 128})
    m = rd.load_model(path)
    assert (m.num_experts, m.num_experts_per_token, m.num_moe_layers) == (32, 4, 24)
    assert m.group_format("attention").name == "q8_0" and m.group_format("lm_head").name == "q8_0"
    expert_bytes = sum(GGML_TYPES[types[t.name]].tensor_bytes(t.elements) for t in layout if t.group == "experts")
    assert m.group_parameters["experts"] * m.group_format("experts").bytes_per_element == pytest.approx(expert_bytes)


def test_tensor_groups():
    assert tensor_group("blk.3.ffn_down_exps.weight", (2880, 2880, 32)) == "experts"
    assert tensor_group("blk.3.ffn_gate_inp.weight", (2880, 32)) == "router"
    assert tensor_group("blk.3.ffn_up_shexp.weight", (2048, 2048)) == "shared_experts"
    assert tensor_group("blk.3.attn_q.bias", (4096,)) == "norms"
    assert tensor_group("blk.3.attn_kv_b.weight", (512, 32768)) == "attention"
    assert tensor_group("output.weight", (4096, 128256)) == "lm_head"


def test_not_gguf_truncated_and_unknown_architecture(gguf_file, tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGML" + bytes(20))
    with pytest.raises(ConfigError, match="bad.gguf: magic: expected b'GGUF'"):
        rd.load_model(bad)
    bad.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 1, 1) + struct.pack("<Q", 5) + b"gen")
    with pytest.raises(ConfigError, match="file ends early"):
        rd.load_model(bad)
    path = gguf_file(tmp_path / "x.gguf", rd.load_model("llama-3.2-1b"), "Q8_0", arch="rwkv6")
    with pytest.raises(ConfigError, match="unsupported architecture 'rwkv6'"):
        rd.load_model(path)
    with pytest.raises(ConfigError, match="cannot read"):
        rd.load_model(tmp_path / "missing.gguf")


def _small(model_type: str, **extra: object) -> rd.Model:
    return rd.Model.from_hf_config({"model_type": model_type, "hidden_size": 256, "num_hidden_layers": 2,
                                    "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
                                    "vocab_size": 1000, **extra})


@pytest.mark.parametrize("source, arch", [
    (lambda: rd.load_model("olmo-2-7b"), "olmo2"),
    (lambda: rd.load_model("granite-3.1-8b"), "granite"),
    (lambda: rd.load_model("command-r"), "command-r"),
    (lambda: rd.load_model("command-a"), "cohere2"),
    (lambda: rd.load_model("falcon-180b"), "falcon"),
    (lambda: _small("falcon", num_attention_heads=4, multi_query=True), "falcon"),
    (lambda: _small("olmo"), "olmo"),
    (lambda: _small("starcoder2"), "starcoder2"),
    (lambda: _small("smollm3"), "smollm3"),
    (lambda: _small("phi", num_key_value_heads=4), "phi2"),
    (lambda: rd.load_model("gpt-j-6b"), "gptj"),
], ids=["olmo2", "granite", "command-r", "cohere2", "falcon-180b", "falcon-7b-like", "olmo", "starcoder2", "smollm3",
        "phi2", "gptj"])
def test_more_gguf_architectures(gguf_file, tmp_path, source, arch):
    # the architecture and sizes come back from the metadata, the bytes of every tensor from its type
    model = source()
    extra = {f"{arch}.attention.sliding_window": model.sliding_window} if model.sliding_window else None
    path = gguf_file(tmp_path / f"{arch}.gguf", model, "Q8_0", arch=arch, extra=extra)
    header = read_gguf_header(path)
    m = rd.load_model(path)
    assert (m.parameter_count, m.num_layers, m.num_kv_heads, m.tie_word_embeddings) == (
        model.parameter_count, model.num_layers, model.num_kv_heads, model.tie_word_embeddings)
    assert (m.num_sliding_layers, m.norms_per_layer, m.mlp_gated) == (
        model.num_sliding_layers, model.norms_per_layer, model.mlp_gated)
    assert m.weight_bytes == header.tensor_bytes


@pytest.mark.parametrize("model_id, arch, ssm", [
    # llama.cpp's ssm.* keys: Mamba-2 time_step_rank = heads, group_count = groups
    ("mamba-codestral-7b", "mamba2", {"ssm.inner_size": 8192, "ssm.state_size": 128, "ssm.time_step_rank": 128,
                                      "ssm.group_count": 8, "ssm.conv_kernel": 4}),
    # Gated DeltaNet: group_count = key heads, time_step_rank = value heads, state_size = head width
    ("qwen3-next-80b-a3b", "qwen3next", {"ssm.inner_size": 4096, "ssm.state_size": 128, "ssm.time_step_rank": 32,
                                         "ssm.group_count": 16, "ssm.conv_kernel": 4, "full_attention_interval": 4,
                                         "expert_shared_feed_forward_length": 512}),
    # Granite 4.0-H: a per-layer head_count_kv marks the Mamba-2 layers (0 KV heads)
    ("granite-4.0-h-small", "granitehybrid", {"ssm.inner_size": 8192, "ssm.state_size": 128,
                                              "ssm.time_step_rank": 128, "ssm.group_count": 1, "ssm.conv_kernel": 4,
                                              "expert_shared_feed_forward_length": 1536}),
])
def test_recurrent_gguf_architectures(gguf_file, tmp_path, model_id, arch, ssm):
    model = rd.load_model(model_id)
    path = gguf_file(tmp_path / f"{arch}.gguf", model, "Q4_K_M", arch=arch,
                     extra={f"{arch}.{key}": value for key, value in ssm.items()}, per_layer_kv=arch == "granitehybrid")
    m = rd.load_model(path)
    assert (m.parameter_count, m.active_parameter_count) == (model.parameter_count, model.active_parameter_count)
    assert (m.num_recurrent_layers, m.recurrent_state_elements) == (model.num_recurrent_layers,
                                                                    model.recurrent_state_elements)
    assert m.weight_bytes == read_gguf_header(path).tensor_bytes
    with pytest.raises(ConfigError, match=f"{arch}.ssm.conv_kernel.*required metadata key is missing"):
        rd.load_model(gguf_file(tmp_path / "no-conv.gguf", model, "Q4_K_M", arch=arch, extra={
            f"{arch}.{key}": value for key, value in ssm.items() if key != "ssm.conv_kernel"}))


def test_glm4moe_gguf_leaves_the_mtp_layer_out(gguf_file, tmp_path):
    # llama.cpp's glm4moe block_count counts the NextN (MTP) layer: GLM-4.5-Air files say 47
    import json
    from pathlib import Path

    config = json.loads((Path(rd.__file__).parent / "model_configs" / "glm-4.5-air.json").read_text())
    with_mtp = rd.Model.from_hf_config({**config, "num_hidden_layers": 47})
    path = gguf_file(tmp_path / "GLM-4.5-Air-Q4_K_M.gguf", with_mtp, "Q4_K_M", arch="glm4moe",
                     extra={"glm4moe.nextn_predict_layers": 1, "glm4moe.leading_dense_block_count": 1,
                            "glm4moe.expert_shared_count": 1})
    m, air = rd.load_model(path), rd.load_model("glm-4.5-air")
    assert (m.num_layers, m.parameter_count, m.active_parameter_count) == (
        46, air.parameter_count, air.active_parameter_count)
    # the MTP layer's tensors are in the file but not in the model's weight bytes
    header = read_gguf_header(path)
    mtp = sum(GGML_TYPES[kind].tensor_bytes(int(np.prod(shape))) for name, shape, kind in header.tensors
              if name.startswith("blk.46."))
    assert mtp > 0 and m.weight_bytes == pytest.approx(header.tensor_bytes - mtp, rel=1e-12)


def test_falcon_h1_gguf_blocks_hold_both_mixers(gguf_file, tmp_path):
    # llama.cpp's falcon-h1: each of block_count blocks holds attention and a Mamba-2 mixer; the
    # Model counts them as 24 attention layers (with the MLPs) and 24 Mamba-2 layers
    from roofline_decode.formats.llama_quant import TensorInfo, gguf_tensor_layout

    model = rd.Model.from_hf_config({
        "model_type": "falcon_h1", "num_hidden_layers": 24, "hidden_size": 2048, "intermediate_size": 4608,
        "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 128, "vocab_size": 65537,
        "mamba_d_state": 256, "mamba_d_conv": 4, "mamba_n_groups": 1, "mamba_n_heads": 48, "mamba_d_head": 64,
        "mamba_d_ssm": 3072})
    layout = []
    for t in gguf_tensor_layout(model):  # the Mamba-2 half of block j is written into blk.j
        if t.layer >= 24:
            name = t.name.replace(f"blk.{t.layer}.", f"blk.{t.layer - 24}.").replace("attn_norm", "ssm_in_norm")
            t = TensorInfo(name, t.shape, t.group, t.layer - 24)
        layout.append(t)
    ssm = {"ssm.inner_size": 3072, "ssm.state_size": 256, "ssm.time_step_rank": 48, "ssm.group_count": 1,
           "ssm.conv_kernel": 4}
    path = gguf_file(tmp_path / "falcon-h1.gguf", model, "Q8_0", arch="falcon-h1", layout=layout, block_count=24,
                     extra={f"falcon-h1.{key}": value for key, value in ssm.items()})
    m = rd.load_model(path)
    assert (m.num_layers, m.num_recurrent_layers, m.parameter_count) == (48, 24, model.parameter_count)
    assert m.weight_bytes == read_gguf_header(path).tensor_bytes


def test_nemotron_h_gguf_blocks_from_the_per_block_arrays(gguf_file, tmp_path):
    # llama.cpp writes Nemotron-H's 52 blocks with per-block KV heads (attention) and feed-forward
    # widths; the expert tensors mark the MoE blocks, the remaining blocks are Mamba-2
    from roofline_decode.formats.llama_quant import TensorInfo, gguf_tensor_layout

    model = rd.load_model("nemotron-3-nano-30b-a3b")
    pattern = "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
    merged: dict[int, list[TensorInfo]] = {}
    for t in gguf_tensor_layout(model):
        merged.setdefault(t.layer, []).append(t)
    mamba, moe, attention = iter(range(23)), iter(range(23)), iter(range(23, 29))
    layout = [t for t in merged[-1] if t.name.startswith("token_embd")]
    for block, kind in enumerate(pattern):  # each block: one norm and one mixer or feed-forward block
        layer = next({"M": mamba, "E": moe, "*": attention}[kind])
        keep = {"M": ("attn_norm", "ssm_"), "E": ("ffn_",), "*": ("attn_",)}[kind]
        layout += [TensorInfo(t.name.replace(f"blk.{layer}.", f"blk.{block}."), t.shape, t.group, block)
                   for t in merged[layer] if t.name.split(".")[2].startswith(keep)]
    layout += [t for t in merged[-1] if not t.name.startswith("token_embd")]
    ssm = {"ssm.inner_size": 4096, "ssm.state_size": 128, "ssm.time_step_rank": 64, "ssm.group_count": 8,
           "ssm.conv_kernel": 4, "expert_shared_feed_forward_length": 3712}
    path = gguf_file(tmp_path / "nemotron-3-nano.gguf", model, "Q8_0", arch="nemotron_h_moe", layout=layout,
                     block_count=52, per_layer_kv=[2 if c == "*" else 0 for c in pattern], feed_forward=[0] * 52,
                     extra={f"nemotron_h_moe.{key}": value for key, value in ssm.items()})
    m = rd.load_model(path)
    assert (m.num_layers, m.num_recurrent_layers, m.num_moe_layers, m.mlp_free_layers) == (29, 23, 23, 6)
    assert (m.parameter_count, m.active_parameter_count) == (model.parameter_count, model.active_parameter_count)
    assert m.weight_bytes == pytest.approx(read_gguf_header(path).tensor_bytes, rel=1e-12)


def test_jamba_gguf_periods_from_the_layers(gguf_file, tmp_path):
    # llama.cpp's jamba: per-layer KV heads (0 on the Mamba layers) and router tensors on the MoE
    # layers give back attn_layer_period/offset (8, 4) and expert_layer_period/offset (2, 1)
    from roofline_decode.formats.llama_quant import TensorInfo, gguf_tensor_layout

    model = rd.load_model("jamba-v0.1")
    merged: dict[int, list[TensorInfo]] = {}
    for t in gguf_tensor_layout(model):
        merged.setdefault(t.layer, []).append(t)
    dense, moe = iter(range(16)), iter(range(16, 32))  # the layout puts the dense MLPs first
    layout = [t for t in merged[-1] if t.name.startswith("token_embd")]
    for i in range(32):
        source = next(moe) if i % 2 == 1 else next(dense)
        layout += [t for t in merged[i] if not t.name.split(".")[2].startswith("ffn_") or "norm" in t.name]
        layout += [TensorInfo(t.name.replace(f"blk.{source}.", f"blk.{i}."), t.shape, t.group, i)
                   for t in merged[source] if t.name.split(".")[2].startswith("ffn_") and "norm" not in t.name]
    layout += [t for t in merged[-1] if not t.name.startswith("token_embd")]
    ssm = {"ssm.inner_size": 8192, "ssm.state_size": 16, "ssm.time_step_rank": 256, "ssm.conv_kernel": 4}
    path = gguf_file(tmp_path / "jamba.gguf", model, "Q8_0", arch="jamba", layout=layout,
                     per_layer_kv=[8 if i % 8 == 4 else 0 for i in range(32)],
                     extra={f"jamba.{key}": value for key, value in ssm.items()})
    m = rd.load_model(path)
    assert (m.num_global_layers, m.num_recurrent_layers, m.num_moe_layers) == (4, 28, 16)
    assert (m.parameter_count, m.active_parameter_count, m.recurrent_state_elements) == (
        model.parameter_count, model.active_parameter_count, model.recurrent_state_elements)
    assert m.weight_bytes == pytest.approx(read_gguf_header(path).tensor_bytes, rel=1e-12)


def test_llama4_gguf(gguf_file, tmp_path):
    # llama4.feed_forward_length is the dense layers' width, expert_feed_forward_length the experts'
    # (and the shared expert's); interleave_moe_layer_step and attention.chunk_size as in the config
    model = rd.load_model("llama-4-maverick")
    path = gguf_file(tmp_path / "llama4.gguf", model, "Q4_K_M", arch="llama4",
                     extra={"llama4.interleave_moe_layer_step": 2, "llama4.attention.chunk_size": 8192})
    m = rd.load_model(path)
    assert (m.num_moe_layers, m.num_chunked_layers, m.attention_chunk_size) == (24, 36, 8192)
    assert (m.parameter_count, m.active_parameter_count) == (model.parameter_count, model.active_parameter_count)
    assert m.weight_bytes == pytest.approx(read_gguf_header(path).tensor_bytes, rel=1e-12)
