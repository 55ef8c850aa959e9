"""GGUF headers written byte by byte (struct), for the files the ``gguf`` package's writer will
not write: wrong value types, huge counts, nested arrays, contradictory shapes.

The layout is GGUF v3's (ggml ``docs/gguf.md``): magic, version, tensor and key-value counts,
the pairs (key, uint32 type, value; arrays: item type, uint64 count, items), then per tensor its
name, dimension count, dimensions (ne0 first), GGML type id and data offset.
"""

from __future__ import annotations

import struct
from typing import Any

import roofline_decode as rd
from roofline_decode.formats.ggml_types import GGML_TYPES
from roofline_decode.formats.llama_quant import gguf_tensor_layout

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALARS = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<?", U64: "<Q",
           I64: "<q", F64: "<d"}


def string(text: str | bytes) -> bytes:
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def value(kind: int, v: Any) -> bytes:
    """A value of GGUF type ``kind``; an array is ``(item_kind, [items])``."""
    if kind in SCALARS:
        return struct.pack(SCALARS[kind], v)
    if kind == STRING:
        return string(v)
    item, items = v
    return struct.pack("<IQ", item, len(items)) + b"".join(value(item, x) for x in items)


def tensor_info(name: str, shape: tuple[int, ...], type_id: int, offset: int) -> bytes:
    return (string(name) + struct.pack("<I", len(shape)) + b"".join(struct.pack("<Q", n) for n in shape)
            + struct.pack("<IQ", type_id, offset))


def gguf(metadata: dict[str, tuple[int, Any]], tensors: list[tuple[str, tuple[int, ...], str]],
         extra_kv: bytes = b"", extra_count: int = 0) -> bytes:
    """A GGUF v3 header: ``metadata`` key -> (type, value), ``tensors`` (name, shape ne0 first,
    GGML type name; dimensions below 2**64) with aligned offsets; ``extra_kv`` raw pairs appended (``extra_count`` of them)."""
    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), len(metadata) + extra_count)
    out += b"".join(string(key) + struct.pack("<I", kind) + value(kind, v) for key, (kind, v) in metadata.items())
    out += extra_kv
    offset = 0
    for name, shape, kind in tensors:
        t = GGML_TYPES[kind]
        out += tensor_info(name, shape, t.type_id, offset % 2**64)  # huge shapes wrap around
        n = 1
        for dim in shape:
            n *= dim
        offset += -(-(n // t.block_size * t.type_size) // 32) * 32
    return out


SMALL = rd.Model.from_hf_config({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2,
                                 "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
                                 "vocab_size": 1000, "tie_word_embeddings": False})


def llama_metadata(arch: str = "llama", model: rd.Model = SMALL) -> dict[str, tuple[int, Any]]:
    """The metadata llama.cpp's converter writes for ``model`` (the keys the reader needs)."""
    return {"general.architecture": (STRING, arch), "general.name": (STRING, "small"),
            f"{arch}.block_count": (U32, model.num_layers), f"{arch}.embedding_length": (U32, model.hidden_size),
            f"{arch}.feed_forward_length": (U32, model.intermediate_size),
            f"{arch}.attention.head_count": (U32, model.num_heads),
            f"{arch}.attention.head_count_kv": (U32, model.num_kv_heads),
            f"{arch}.context_length": (U32, 4096), f"{arch}.vocab_size": (U32, model.vocab_size),
            "tokenizer.ggml.tokens": (ARRAY, (STRING, [f"t{i}" for i in range(model.vocab_size)]))}


def llama_tensors(model: rd.Model = SMALL) -> list[tuple[str, tuple[int, ...], str]]:
    """Every tensor of ``model`` in llama.cpp's layout: matrices q8_0, vectors f32."""
    return [(t.name, t.shape, "f32" if len(t.shape) < 2 else "q8_0") for t in gguf_tensor_layout(model)]


#: A small DeepSeek-V3 (MLA attention, one dense layer, then MoE with a shared expert).
MLA_CONFIG = {
    "model_type": "deepseek_v3", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4,
    "num_key_value_heads": 4, "kv_lora_rank": 32, "q_lora_rank": 64, "qk_rope_head_dim": 8, "qk_nope_head_dim": 16,
    "v_head_dim": 16, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "first_k_dense_replace": 1, "intermediate_size": 128, "n_shared_experts": 1, "vocab_size": 96,
    "tie_word_embeddings": False}
MLA = rd.Model.from_hf_config(MLA_CONFIG)


def mla_metadata(absorbed: bool = False) -> dict[str, tuple[int, Any]]:
    """llama.cpp's deepseek2 keys for :data:`MLA`; ``absorbed``: as converted since its absorbed
    MLA (key_length = kv_lora_rank + rope, the per-head widths in ``*_mla``)."""
    a = "deepseek2"
    metadata = llama_metadata(a, MLA)
    metadata.update({f"{a}.rope.dimension_count": (U32, 8), f"{a}.attention.kv_lora_rank": (U32, 32),
                     f"{a}.attention.q_lora_rank": (U32, 64), f"{a}.leading_dense_block_count": (U32, 1),
                     f"{a}.expert_count": (U32, 4), f"{a}.expert_used_count": (U32, 2),
                     f"{a}.expert_feed_forward_length": (U32, 32), f"{a}.expert_shared_count": (U32, 1),
                     f"{a}.expert_shared_feed_forward_length": (U32, 32)})
    if absorbed:
        metadata.update({f"{a}.attention.key_length": (U32, 40), f"{a}.attention.value_length": (U32, 32),
                         f"{a}.attention.key_length_mla": (U32, 24), f"{a}.attention.value_length_mla": (U32, 16)})
    else:
        metadata.update({f"{a}.attention.key_length": (U32, 24), f"{a}.attention.value_length": (U32, 16)})
    return metadata
