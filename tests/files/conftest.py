"""Fixtures of the model-file tests: header-only GGUF files written with the ``gguf`` package."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from roofline_decode.formats.ggml_types import GGML_TYPES
from roofline_decode.formats.llama_quant import gguf_tensor_layout, mixture_tensor_types


def write_gguf(path: Path, model, types: dict[str, str] | str, arch: str = "llama", extra: dict | None = None,
               layout=None, per_layer_kv: bool | list[int] = False, block_count: int | None = None,
               feed_forward: list[int] | None = None) -> Path:
    """A GGUF header for ``model`` (tensor data left out: the reader never reads it).

    ``types``: a llama.cpp preset name or a tensor name -> GGML type dict."""
    import gguf

    layout = layout if layout is not None else gguf_tensor_layout(model)
    if isinstance(types, str):
        types = mixture_tensor_types(types, model, layout)
    w = gguf.GGUFWriter(str(path), arch=arch)
    w.add_name(model.name)
    w.add_block_count(block_count or model.num_layers)
    w.add_embedding_length(model.hidden_size)
    w.add_feed_forward_length(feed_forward or model.intermediate_size or model.moe_intermediate_size)
    w.add_head_count(model.num_heads)
    if isinstance(per_layer_kv, list):
        w.add_head_count_kv(per_layer_kv)
    elif per_layer_kv:  # llama.cpp's hybrids: 0 KV heads on the recurrent layers
        w.add_head_count_kv([0 if kind == "recurrent" else model.num_kv_heads for kind in model.layer_types or ()])
    else:
        w.add_head_count_kv(model.num_kv_heads)
    w.add_key_length(model.head_dim)
    w.add_value_length(model.head_dim)
    w.add_context_length(model.max_position_embeddings or 4096)
    w.add_vocab_size(model.vocab_size)
    if model.is_moe:
        w.add_expert_count(model.num_experts)
        w.add_expert_used_count(model.num_experts_per_token)
        w.add_expert_feed_forward_length(model.moe_intermediate_size)
    for key, value in (extra or {}).items():
        w.add_uint32(key, value)
    for tensor in layout:
        kind = GGML_TYPES[types[tensor.name]]
        nbytes = kind.tensor_bytes(tensor.elements)
        w.add_tensor_info(tensor.name, tuple(reversed(tensor.shape)), np.dtype(np.float16), nbytes,
                          raw_dtype=gguf.GGMLQuantizationType(kind.type_id))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_ti_data_to_file()
    w.close()
    return path


@pytest.fixture
def gguf_file():
    """``write_gguf`` (skips the test when the ``gguf`` package of the dev extra is missing)."""
    pytest.importorskip("gguf")
    return write_gguf
