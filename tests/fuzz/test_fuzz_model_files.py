"""Fuzz the model-file readers (issue 27): GGUF headers and safetensors checkpoints.

Inputs are small valid files (a dense llama, an MoE qwen3moe and an MLA deepseek2 GGUF written byte by byte, a
llama safetensors checkpoint), mutated byte by byte (flips, inserts, deletes, cuts, a count or
type field overwritten with an edge value) and structurally (a metadata value replaced by one of
any GGUF type, arrays nested deep or counted huge, tensor shapes and types changed, tensors
dropped or repeated; safetensors dtypes, shapes and offsets replaced by any JSON value, header
lengths that lie, index weight maps of any JSON).  The only acceptable outcomes are a Model (of
finite, positive weight bytes) or a RooflineError.
"""

from __future__ import annotations

import json
import struct
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.files.gguf import read_gguf_header
from roofline_decode.formats.ggml_types import GGML_TYPE_IDS
from roofline_decode.files.safetensors import read_safetensors_header
from tests.files.gguf_bytes import (ARRAY, BOOL, F32, F64, I8, I16, I32, I64, MLA, STRING, U8, U16, U32, U64, gguf,
                                    llama_metadata, llama_tensors, mla_metadata, string)
from tests.fuzz.strategies import finite_positive, outcome
from tests.fuzz.test_fuzz_estimate import fuzz

WORK = Path(tempfile.mkdtemp(prefix="roofline-fuzz-files-"))
H100 = rd.load_accelerator("h100-sxm")

_SMALL = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
              intermediate_size=128, vocab_size=96, tie_word_embeddings=False)
DENSE = rd.Model.from_hf_config({"model_type": "llama", **_SMALL})
MOE = rd.Model.from_hf_config({"model_type": "qwen3_moe", **_SMALL, "head_dim": 16, "num_experts": 4,
                               "num_experts_per_tok": 2, "moe_intermediate_size": 32})


def _moe_metadata() -> dict:
    metadata = llama_metadata("qwen3moe", MOE)
    metadata.update({"qwen3moe.expert_count": (U32, 4), "qwen3moe.expert_used_count": (U32, 2),
                     "qwen3moe.expert_feed_forward_length": (U32, 32), "qwen3moe.attention.key_length": (U32, 16)})
    return metadata


#: (metadata, tensors) of the valid GGUF seeds.
GGUF_SEEDS = [(llama_metadata("llama", DENSE), llama_tensors(DENSE)), (_moe_metadata(), llama_tensors(MOE)),
              (mla_metadata(absorbed=True), llama_tensors(MLA))]
GGUF_BYTES = [gguf(metadata, tensors) for metadata, tensors in GGUF_SEEDS]


def _write(name: str, data: bytes) -> Path:
    path = WORK / name
    path.write_bytes(data)
    return path


def check_model(entry: str, model) -> None:
    finite_positive("weight_bytes", model.weight_bytes)
    r = outcome(entry, lambda: rd.decode_floor(model, H100, batch=[1, 8], context=[0, 512]))
    if r is not None:
        finite_positive("bytes_total", r.bytes_total)


# -- GGUF -------------------------------------------------------------------------------------------
_RANGES = {U8: (0, 2**8 - 1), I8: (-(2**7), 2**7 - 1), U16: (0, 2**16 - 1), I16: (-(2**15), 2**15 - 1),
           U32: (0, 2**32 - 1), I32: (-(2**31), 2**31 - 1), U64: (0, 2**64 - 1), I64: (-(2**63), 2**63 - 1)}


def _integer(kind: int) -> st.SearchStrategy:
    low, high = _RANGES[kind]
    return st.one_of(st.integers(max(low, -2), min(high, 5000)), st.sampled_from([low, high]), st.integers(low, high))


#: A GGUF value of any type: (type, value); arrays of small values, nested a little.
scalars = st.one_of(
    st.sampled_from(sorted(_RANGES)).flatmap(lambda kind: _integer(kind).map(lambda v: (kind, v))),
    st.floats(width=32, allow_nan=True).map(lambda v: (F32, v)), st.floats().map(lambda v: (F64, v)),
    st.booleans().map(lambda v: (BOOL, v)),
    st.sampled_from(["llama", "qwen3moe", "granitehybrid", "deepseek2", "", "x" * 100]).map(lambda v: (STRING, v)),
)
#: An array's payload (item type, items): integers of one type, or arrays of arrays, nested.
array_payloads = st.recursive(
    st.sampled_from(sorted(_RANGES)).flatmap(lambda kind: st.lists(_integer(kind), max_size=6).map(
        lambda items: (kind, items))),
    lambda inner: st.lists(inner, max_size=3).map(lambda items: (ARRAY, items)),
    max_leaves=4,
)
gguf_values = st.one_of(scalars, array_payloads.map(lambda payload: (ARRAY, payload)))
ARCH_KEYS = ["block_count", "embedding_length", "feed_forward_length", "attention.head_count",
             "attention.head_count_kv", "attention.key_length", "vocab_size", "context_length", "expert_count",
             "expert_used_count", "expert_feed_forward_length", "attention.sliding_window", "ssm.inner_size",
             "leading_dense_block_count", "nextn_predict_layers", "expert_shared_feed_forward_length",
             "rope.dimension_count", "attention.kv_lora_rank", "attention.q_lora_rank", "attention.key_length_mla",
             "attention.value_length", "expert_shared_count"]
dimensions = st.one_of(st.integers(0, 300), st.sampled_from([0, 1, 32, 64, 96, 128, 2**31, 2**53, 2**63, 2**64 - 1]))


@st.composite
def gguf_headers(draw) -> bytes:
    """A seed GGUF with metadata values, tensor shapes and types replaced, tensors dropped or
    repeated, and raw pairs (huge counts, deep nesting) appended."""
    metadata, tensors = draw(st.sampled_from(GGUF_SEEDS))
    metadata, tensors = dict(metadata), list(tensors)
    arch = metadata["general.architecture"][1]
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["value", "delete", "architecture", "shape", "type", "drop", "repeat"]))
        if kind == "value":
            metadata[f"{arch}.{draw(st.sampled_from(ARCH_KEYS))}"] = draw(gguf_values)
        elif kind == "delete":
            metadata.pop(draw(st.sampled_from(sorted(metadata))), None)
        elif kind == "architecture":
            metadata["general.architecture"] = draw(gguf_values)
        elif tensors:
            i = draw(st.integers(0, len(tensors) - 1))
            name, shape, ggml = tensors[i]
            if kind == "shape":
                tensors[i] = (name, tuple(draw(st.lists(dimensions, min_size=1, max_size=4))), ggml)
            elif kind == "type":
                tensors[i] = (name, shape, draw(st.sampled_from(sorted(GGML_TYPE_IDS.values()))))
            elif kind == "drop":
                del tensors[i]
            else:
                tensors.append(tensors[i])
    extra = draw(st.sampled_from([b"", string("x.count") + struct.pack("<IIQ", ARRAY, U8, 2**40),
                                  string("x.nested") + struct.pack("<I", ARRAY) + struct.pack("<IQ", ARRAY, 1) * 300,
                                  string("x.type") + struct.pack("<I", 13)]))
    return gguf(metadata, tensors, extra, 1 if extra else 0)


_EDGES = [0, 1, 2, 9, 13, 2**31, 2**32 - 1, 2**40, 2**63, 2**64 - 1]


@st.composite
def gguf_byte_mutations(draw) -> bytes:
    """A seed GGUF with bytes flipped, inserted or deleted, cut short, or a 4- or 8-byte field
    overwritten with an edge value (a count, a length, a type)."""
    data = bytearray(draw(st.sampled_from(GGUF_BYTES)))
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut", "field4", "field8", "field8"]))
        at = draw(st.one_of(st.integers(0, 64), st.integers(0, len(data) - 1)))
        if kind == "flip":
            data[at % len(data)] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "cut":
            del data[at:]
        else:
            width = 4 if kind == "field4" else 8
            value = draw(st.sampled_from(_EDGES)) % 2 ** (8 * width)
            data[at:at + width] = value.to_bytes(width, "little")
        if not data:
            break
    return bytes(data)


def _load_gguf(entry: str, data: bytes) -> None:
    path = _write("fuzz.gguf", data)
    header = outcome(f"{entry}: read_gguf_header", lambda: read_gguf_header(path))
    if header is not None:
        outcome(f"{entry}: read_gguf_header", lambda: header.tensor_bytes)
    model = outcome(f"{entry}: load_model", lambda: rd.load_model(path))
    if model is not None:
        check_model(f"{entry}: floor of the model read", model)


@fuzz(450)
@given(data=gguf_headers())
def test_gguf_mutated_headers(data):
    _load_gguf("GGUF (mutated header)", data)


@fuzz(300)
@given(data=gguf_byte_mutations())
def test_gguf_mutated_bytes(data):
    _load_gguf("GGUF (mutated bytes)", data)


# -- safetensors ------------------------------------------------------------------------------------
def _hf_tensors() -> dict[str, dict]:
    d, ff, kv = 64, 128, 2 * 16
    shapes = {"model.embed_tokens.weight": [96, d], "lm_head.weight": [96, d], "model.norm.weight": [d]}
    for i in range(2):
        for name, shape in {"self_attn.q_proj": [d, d], "self_attn.k_proj": [kv, d], "self_attn.v_proj": [kv, d],
                            "self_attn.o_proj": [d, d], "mlp.gate_proj": [ff, d], "mlp.up_proj": [ff, d],
                            "mlp.down_proj": [d, ff], "input_layernorm": [d], "post_attention_layernorm": [d]}.items():
            shapes[f"model.layers.{i}.{name}.weight"] = shape
    header, offset = {}, 0
    for name, shape in shapes.items():
        size = 2 * shape[0] * (shape[1] if len(shape) > 1 else 1)
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    return header


HF_HEADER = _hf_tensors()
HF_CONFIG = {"model_type": "llama", **_SMALL}
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([10**19, 2**53, 2**64, -1]),
              st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(["BF16", "F8_E4M3", "I32", "Q4", ""])),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=5,
)


@st.composite
def safetensors_files(draw) -> bytes:
    """The seed header with fields replaced by any JSON value, shapes of huge or odd integers,
    entries added or removed, then as bytes: a header length that may lie, the text cut short,
    deep nesting or long integers spliced in."""
    header = json.loads(json.dumps(HF_HEADER))
    names = sorted(header)
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(names))
        kind = draw(st.sampled_from(["dtype", "shape", "dim", "data_offsets", "entry", "delete", "junk"]))
        entry = header.get(name)
        if kind == "dim" and isinstance(entry, dict) and isinstance(entry.get("shape"), list) and entry["shape"]:
            entry["shape"][draw(st.integers(0, len(entry["shape"]) - 1))] = draw(st.one_of(dimensions, json_values))
        elif kind in ("dtype", "shape", "data_offsets") and isinstance(entry, dict):
            entry[kind] = draw(json_values)
        elif kind == "entry":
            header[name] = draw(json_values)
        elif kind == "delete":
            header.pop(name, None)
        else:
            header[draw(st.text(max_size=6))] = draw(json_values)
    text = bytearray(json.dumps(header).encode())
    splice = draw(st.sampled_from([None, None, None, b"[" * 3000, b"9" * 5000, b'"' * 7, b"{" * 40]))
    if splice is not None:
        at = draw(st.integers(0, len(text)))
        text[at:at] = splice
    length = draw(st.one_of(st.just(len(text)), st.sampled_from(_EDGES), st.integers(0, len(text) + 16)))
    cut = draw(st.one_of(st.none(), st.integers(0, len(text))))
    return struct.pack("<Q", length % 2**64) + bytes(text[:cut] if cut is not None else text)


_FOLDER = WORK / "checkpoint"
_FOLDER.mkdir()
(_FOLDER / "config.json").write_text(json.dumps(HF_CONFIG))


@fuzz(400)
@given(data=safetensors_files())
def test_safetensors_mutated_headers(data):
    path = _write("fuzz.safetensors", data)
    outcome("safetensors (mutated header): read_safetensors_header", lambda: read_safetensors_header(path))
    (_FOLDER / "model.safetensors").write_bytes(data)
    model = outcome("safetensors (mutated header): load_model", lambda: rd.load_model(_FOLDER))
    if model is not None:
        check_model("safetensors: floor of the model read", model)


@fuzz(150)
@given(weight_map=st.one_of(json_values, st.dictionaries(st.sampled_from(sorted(HF_HEADER)), st.one_of(
    st.sampled_from(["model.safetensors", "../model.safetensors", "missing.safetensors", "", ".", "a/b", "\x00"]),
    json_values), max_size=4)), wrapped=st.booleans())
def test_safetensors_index_weight_maps(weight_map, wrapped):
    folder = WORK / "indexed"
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(HF_CONFIG))
    text = json.dumps(HF_HEADER).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(text)) + text)
    index = {"metadata": {}, "weight_map": weight_map} if wrapped else weight_map
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    model = outcome("safetensors index (weight_map)", lambda: rd.load_model(folder))
    if model is not None:
        check_model("safetensors: floor of the model read", model)
