"""Model files are untrusted input (issue 27): every reproducer gives an answer or one
ConfigError naming the file, the key or tensor, the value and what is allowed."""

from __future__ import annotations

import json
import struct
import tracemalloc

import pytest

import roofline_decode as rd
from roofline_decode.errors import ConfigError
from roofline_decode.files.gguf import GgufHeader, read_gguf_header
from roofline_decode.files.safetensors import read_safetensors_header
from tests.files.gguf_bytes import (ARRAY, BOOL, MLA, MLA_CONFIG, SMALL, STRING, U8, U16, U32, U64, gguf, llama_metadata,
                                    llama_tensors, mla_metadata, string)
from tests.files.test_safetensors import CONFIG, llama_tensors as hf_tensors, write_safetensors

DEEP = 5000


def refused(path, key: str, *parts: str, call=rd.load_model, source=None) -> ConfigError:
    """``call(path)`` raises one ConfigError naming the file (``source``, else ``path``) and
    ``key``, its message holding ``parts``."""
    with pytest.raises(ConfigError) as info:
        call(path)
    exc = info.value
    assert (exc.source, exc.field) == (str(source or path), key), str(exc)
    for part in parts:
        assert part in exc.problem, str(exc)
    assert "<config dict>" not in str(exc)
    return exc


def write(tmp_path, metadata=None, tensors=None, extra: bytes = b"", extra_count: int = 0, name: str = "m.gguf"):
    path = tmp_path / name
    path.write_bytes(gguf(llama_metadata() if metadata is None else metadata,
                          llama_tensors() if tensors is None else tensors, extra, extra_count))
    return path


def with_key(key: str, kind: int, value, arch: str = "llama") -> dict:
    metadata = llama_metadata(arch)
    metadata[key] = (kind, value)
    return metadata


def with_shape(name: str, shape: tuple[int, ...]) -> list:
    return [(n, shape if n == name else s, k) for n, s, k in llama_tensors()]


def test_the_hand_written_header_is_valid(tmp_path):
    path = write(tmp_path)
    m = rd.load_model(path)
    assert (m.num_layers, m.hidden_size, m.vocab_size, m.num_kv_heads) == (2, 256, 1000, 2)
    assert m.parameter_count == SMALL.parameter_count and m.weight_bytes == read_gguf_header(path).tensor_bytes


# -- GGUF: counts, lengths, depth ---------------------------------------------------------------
def test_gguf_array_of_count_2_40(tmp_path):
    pair = string("junk.array") + struct.pack("<IIQ", ARRAY, U8, 2**40)
    path = write(tmp_path, extra=pair, extra_count=1)
    refused(path, "junk.array", "file ends early", "1,099,511,627,776 array items need at least", "are left (of",
            call=read_gguf_header)


def test_gguf_arrays_nested_5000_deep(tmp_path):
    pair = string("junk.nested") + struct.pack("<I", ARRAY) + struct.pack("<IQ", ARRAY, 1) * DEEP
    path = write(tmp_path, extra=pair + struct.pack("<IQ", U8, 0), extra_count=1)
    refused(path, "junk.nested", "arrays nested more than 8 deep", call=read_gguf_header)


@pytest.mark.parametrize("field, count, message", [
    ("tensor_count", 2**63, "file ends early: 9,223,372,036,854,775,808 tensors need at least"),
    ("metadata_kv_count", 2**40, "file ends early: 1,099,511,627,776 key-value pairs need at least"),
])
def test_gguf_huge_tensor_and_key_counts(tmp_path, field, count, message):
    data = bytearray(write(tmp_path).read_bytes())
    at = 8 if field == "tensor_count" else 16
    data[at:at + 8] = struct.pack("<Q", count)
    path = tmp_path / "counts.gguf"
    path.write_bytes(bytes(data))
    refused(path, field, message)


def test_gguf_string_longer_than_the_file(tmp_path):
    path = tmp_path / "s.gguf"
    path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 2**24 - 1) + b"k" + bytes(16))
    refused(path, "metadata[0].key", "file ends early: a key needs 16,777,215 bytes")


def test_gguf_duplicate_key_and_tensor(tmp_path):
    pair = string("general.name") + struct.pack("<I", STRING) + string("again")
    refused(write(tmp_path, extra=pair, extra_count=1), "general.name", "duplicate metadata key")
    tensors = llama_tensors()
    refused(write(tmp_path, tensors=tensors + tensors[:1], name="t.gguf"), "token_embd.weight",
            "duplicate tensor name")


# -- GGUF: metadata values of the wrong type or range name the file and the GGUF key -----------------
def test_gguf_architecture_stored_as_an_array(tmp_path):
    path = write(tmp_path, with_key("general.architecture", ARRAY, (STRING, ["llama"])))
    refused(path, "general.architecture", "expected a string, got an array of 1 items", "supported: ")


@pytest.mark.parametrize("kind, value, got", [(U32, 0, "got 0"), (BOOL, False, "got False"),
                                              (ARRAY, (U32, [4, 4, 4]), "got an array of 3 items")])
def test_gguf_head_count_0_false_or_an_array(tmp_path, kind, value, got):
    path = write(tmp_path, with_key("llama.attention.head_count", kind, value))
    allowed = "expected one integer or one per block (2 entries)" if kind == ARRAY else "expected an integer from 1"
    refused(path, "llama.attention.head_count", allowed, got)


def test_gguf_head_count_per_block_is_an_answer(tmp_path):
    # an array of one entry per block (OpenELM-style) is read as its largest entry
    m = rd.load_model(write(tmp_path, with_key("llama.attention.head_count", ARRAY, (U32, [4, 4]))))
    assert m.num_heads == 4 and m.parameter_count == SMALL.parameter_count


def test_gguf_5000_item_per_layer_head_count_kv(tmp_path):
    path = write(tmp_path, with_key("llama.attention.head_count_kv", ARRAY, (U32, [2] * DEEP)))
    refused(path, "llama.attention.head_count_kv", "one per block (2 entries)", "an array of 5,000 items")


def test_granitehybrid_block_count_2_64_minus_1(tmp_path):
    metadata = with_key("granitehybrid.block_count", U64, 2**64 - 1, arch="granitehybrid")
    refused(write(tmp_path, metadata), "granitehybrid.block_count", "expected an integer from 1 to 65,536",
            "got 18446744073709551615")


def test_gguf_value_the_model_refuses_names_the_gguf_key(tmp_path):
    # a dense model of feed_forward_length 0: the family reader refuses it, the error names the GGUF key
    path = write(tmp_path, with_key("llama.feed_forward_length", U32, 0))
    refused(path, "llama.feed_forward_length", "expected an integer >= 1, got 0")
    path = write(tmp_path, with_key("llama.attention.head_count_kv", U32, 3), name="kv.gguf")
    refused(path, "llama.attention.head_count_kv", "3 KV heads do not divide llama.attention.head_count = 4")
    path = write(tmp_path, with_key("llama.context_length", U16, 0), name="ctx.gguf")
    refused(path, "llama.context_length", "expected an integer from 1", "got 0")


# -- GGUF: tensor shapes ---------------------------------------------------------------------------
def test_gguf_one_dimensional_token_embd(tmp_path):
    refused(write(tmp_path, tensors=with_shape("token_embd.weight", (256,))), "token_embd.weight",
            "shape [256] (ne0 first) contradicts the metadata", "expected [256, vocabulary >= 1]")


def test_gguf_token_embd_of_64_by_0(tmp_path):
    refused(write(tmp_path, tensors=with_shape("token_embd.weight", (64, 0))), "token_embd.weight",
            "shape [64, 0]", "expected [256, vocabulary >= 1]")


def test_gguf_tensor_blocks_that_are_not_whole(tmp_path):
    tensors = [(n, (48, 16) if n == "blk.1.attn_norm.weight" else s, "q4_0" if n == "blk.1.attn_norm.weight" else k)
               for n, s, k in llama_tensors()]
    path = write(tmp_path, tensors=tensors)
    refused(path, "blk.1.attn_norm.weight", "rows of 48 elements", "not a whole number of q4_0 blocks of 32",
            call=lambda p: read_gguf_header(p).tensor_bytes)
    # a header built by hand: tensor_bytes refuses it too (ConfigError, not ValueError)
    header = GgufHeader(str(path), 3, {}, [("odd.weight", (33,), "q8_0")])
    with pytest.raises(ConfigError, match="odd.weight: shape \\[33\\] \\(ne0 first\\): 33 elements are not a whole "
                                          "number of q8_0 blocks of 32"):
        header.tensor_bytes


def test_gguf_group_stored_in_a_type_that_is_no_weight_format(tmp_path):
    # found by the fuzz suite: an f64 embedding raised a bare ValueError
    tensors = [(n, s, "f64" if n == "token_embd.weight" else k) for n, s, k in llama_tensors()]
    refused(write(tmp_path, tensors=tensors), "token_embd.weight", "the embedding tensors are all GGML f64, which is "
            "not a weight format")


def test_gguf_vocab_size_1_beside_a_1000_by_256_embedding(tmp_path):
    refused(write(tmp_path, with_key("llama.vocab_size", U32, 1)), "token_embd.weight",
            "1,000 rows but llama.vocab_size = 1")


@pytest.mark.parametrize("name, shape, expected", [
    ("output.weight", (256, 999), "expected [256, 1,000]"),
    ("blk.1.attn_q.weight", (256, 128), "expected [256, 256]"),
    ("blk.0.attn_k.weight", (256, 256), "expected [256, 128]"),
    ("blk.0.attn_v.weight", (128, 128), "expected [256, 128]"),
    ("blk.1.attn_output.weight", (128, 256), "expected [256, 256]"),
    ("blk.0.ffn_down.weight", (256, 256), "expected [512, 256]"),
    ("blk.0.ffn_gate.weight", (256, 512, 1), "expected [256, 512]"),
])
def test_gguf_tensor_shape_contradicting_the_metadata(tmp_path, name, shape, expected):
    refused(write(tmp_path, tensors=with_shape(name, shape)), name, "contradicts the metadata", expected)


@pytest.mark.parametrize("absorbed", [False, True])
def test_gguf_mla_shapes(tmp_path, absorbed):
    # DeepSeek's MLA projections, in files of either key_length convention (llama.cpp's absorbed
    # MLA writes key_length = kv_lora_rank + rope = 40 and the per-head 24 as key_length_mla)
    m = rd.load_model(write(tmp_path, mla_metadata(absorbed), llama_tensors(MLA)))
    assert (m.qk_nope_head_dim, m.qk_rope_head_dim, m.v_head_dim, m.kv_lora_rank) == (16, 8, 16, 32)
    assert m.parameter_count == MLA.parameter_count and m.num_experts == 4
    tensors = [(n, (32, 96) if n == "blk.2.attn_kv_b.weight" else s, k) for n, s, k in llama_tensors(MLA)]
    refused(write(tmp_path, mla_metadata(absorbed), tensors, name="kv_b.gguf"), "blk.2.attn_kv_b.weight",
            "expected [32, 128]", "kv_lora_rank 32", "nope 16, rope 8, value 16")
    tensors = [(n, (64, 32, 3) if n == "blk.1.ffn_up_exps.weight" else s, k) for n, s, k in llama_tensors(MLA)]
    refused(write(tmp_path, mla_metadata(absorbed), tensors, name="exps.gguf"), "blk.1.ffn_up_exps.weight",
            "expected [64, 32, 4]", "4 experts of 32")


def test_gguf_tensors_missing_or_past_block_count(tmp_path):
    # an MoE header beside a dense file's tensors: the weight bytes would be the metadata's alone
    metadata = llama_metadata()
    metadata.update({"llama.expert_count": (U32, 8), "llama.expert_used_count": (U32, 2)})
    refused(write(tmp_path, metadata), "(tensors)", "hold 1,692,928 parameters", "has 7,202,048", "more than 1% apart")
    only_embedding = [t for t in llama_tensors() if t[0] == "token_embd.weight"]
    refused(write(tmp_path, tensors=only_embedding, name="e.gguf"), "(tensors)", "more than 1% apart")
    extra = llama_tensors() + [("blk.7.attn_norm.weight", (256,), "f32")]
    refused(write(tmp_path, tensors=extra, name="b.gguf"), "blk.7.attn_norm.weight",
            "a tensor of block 7, but llama.block_count = 2")


def test_gguf_overlapping_and_misaligned_offsets(tmp_path):
    path = write(tmp_path)
    data = path.read_bytes()
    # output.weight is the last tensor: its data offset is the header's last 8 bytes
    path.write_bytes(data[:-8] + struct.pack("<Q", 0))
    refused(path, "token_embd.weight", "data offset 0 lies inside the data of tensor 'output.weight' (bytes 0 to "
            "272,000)", call=read_gguf_header)
    path.write_bytes(data[:-8] + struct.pack("<Q", 33))
    refused(path, "output.weight", "data offset 33 is not a multiple of general.alignment = 32", call=read_gguf_header)


def peak_bytes(call, path) -> int:
    tracemalloc.start()
    try:
        call(path)
    except ConfigError:
        pass
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak


def test_gguf_reader_holds_a_small_multiple_of_the_file(tmp_path):
    # the worst cases of Python objects per file byte: short u16 arrays (kept: 36 B an item for 2),
    # many keys, many tensors; a long array is skipped, not read
    arrays = {f"junk.{i:05d}": (ARRAY, (U16, list(range(1000, 5096)))) for i in range(64)}
    keys = {f"k{i:05d}": (U8, 1) for i in range(5_000)}
    tensors = [(f"t{i:06d}", (32,), "f32") for i in range(5_000)]
    long = {"junk.long": (ARRAY, (U32, list(range(100_000))))}
    for metadata, tensor_list in ((arrays, []), (keys, []), ({}, tensors), (long, [])):
        path = tmp_path / "big.gguf"
        path.write_bytes(gguf({**llama_metadata(), **metadata}, llama_tensors() + tensor_list))
        size = path.stat().st_size
        assert peak_bytes(read_gguf_header, path) < 12 * size + 2**18, size


# -- safetensors --------------------------------------------------------------------------------
def raw_header(path, text: bytes, length: int | None = None) -> None:
    path.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text)


@pytest.mark.parametrize("text, message", [
    (b'{"a": ' + b"[" * DEEP + b"]" * DEEP + b"}", "5,001 objects or arrays and 1 strings in 10,007 bytes"),
    (b'{"a": {"dtype": "F32", "shape": [' + b"[" * DEEP + b"]" * DEEP + b"]}" + b" " * 60_000 + b"}",
     "not valid JSON: nested too deeply"),
    (b'{"a": {"dtype": "F32", "shape": [' + b"9" * 5000 + b"]}}", "an integer of more than 4300 digits"),
])
def test_safetensors_header_nested_5000_deep_or_a_5000_digit_integer(tmp_path, text, message):
    path = tmp_path / "deep.safetensors"
    raw_header(path, text)
    refused(path, "(header)", message, call=read_safetensors_header)


@pytest.mark.parametrize("text", [
    # a real header (8 times its size parsed), floats and empty arrays in __metadata__ (the most per byte)
    b"{" + b",".join(b'"model.layers.%d.mlp.up_proj.weight":{"dtype":"BF16","shape":[4096,4096],'
                     b'"data_offsets":[0,33554432]}' % i for i in range(5000)) + b"}",
    b'{"__metadata__":[' + b",".join([b"1e5"] * 100_000) + b"]}",
    b'{"__metadata__":[' + b",".join([b"[]" + b" " * 10] * 40_000) + b"]}",
    b'{"__metadata__":[' + b",".join([b"[]"] * 40_000) + b"]}",
])
def test_safetensors_reader_holds_a_small_multiple_of_the_file(tmp_path, text):
    path = tmp_path / "big.safetensors"
    raw_header(path, text)
    assert peak_bytes(read_safetensors_header, path) < 12 * path.stat().st_size + 2**18


def test_safetensors_dtype_as_a_list(tmp_path):
    path = tmp_path / "x.safetensors"
    raw_header(path, json.dumps({"w": {"dtype": ["BF16"], "shape": [2], "data_offsets": [0, 4]}}).encode())
    refused(path, "w", "dtype an array of 1 items is not a dtype name", "known: F64", call=read_safetensors_header)


@pytest.mark.parametrize("shape, message", [
    ([10**19, 4], "dimension 10,000,000,000,000,000,000 of shape"),
    ([2**40, 2**40], "holds more than 9,007,199,254,740,992 (2**53) elements"),
    ([-1], "expected a shape of at most 8 non-negative integers"),
    ([True], "expected a shape of at most 8 non-negative integers"),
    ([1] * 9, "expected a shape of at most 8 non-negative integers"),
])
def test_safetensors_dimension_of_10_19(tmp_path, shape, message):
    path = tmp_path / "x.safetensors"
    raw_header(path, json.dumps({"w": {"dtype": "BF16", "shape": shape}}).encode())
    refused(path, "w", message, call=read_safetensors_header)


def test_safetensors_data_offsets_must_span_the_tensor(tmp_path):
    path = tmp_path / "x.safetensors"
    raw_header(path, json.dumps({"w": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, 8]}}).encode())
    refused(path, "w", "span 8 bytes but BF16 x shape [4, 4] is 32", call=read_safetensors_header)
    raw_header(path, json.dumps({"w": {"dtype": "BF16", "shape": [4, 4], "data_offsets": [0, -32]}}).encode())
    refused(path, "w", "expected [begin, end], integers from 0", call=read_safetensors_header)


def test_safetensors_header_length_larger_than_the_file(tmp_path):
    path = tmp_path / "x.safetensors"
    raw_header(path, b"{}", length=2**63)
    refused(path, "(header)", "header length 9,223,372,036,854,775,808 is larger than the file (10 bytes",
            call=read_safetensors_header)


def test_safetensors_index_weight_map_of_null(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(CONFIG))
    write_safetensors(tmp_path / "model-1.safetensors", hf_tensors("BF16"))
    index = tmp_path / "model.safetensors.index.json"
    for weight_map, key, message in (({"a": None}, "weight_map['a']", "got None"),
                                     ({"a": "../model-1.safetensors"}, "weight_map['a']", "in the index's folder"),
                                     ([1], "weight_map", "got None")):
        index.write_text(json.dumps({"weight_map": weight_map} if isinstance(weight_map, dict) else weight_map))
        refused(tmp_path, key, message, source=index)


def hf_folder(tmp_path, config: dict, tensors: dict) -> None:
    (tmp_path / "config.json").write_text(json.dumps(config))
    write_safetensors(tmp_path / "model.safetensors", tensors)


@pytest.mark.parametrize("name, shape, config, expected", [
    ("model.embed_tokens.weight", [1000, 255], {}, "expected [1,000, 256]"),
    ("model.embed_tokens.weight", [1000, 256], {"vocab_size": 1}, "expected [1, 256]"),
    ("lm_head.weight", [999, 256], {}, "expected [1,000, 256]"),
    ("model.layers.1.self_attn.q_proj.weight", [128, 256], {}, "expected [256, 256]"),
    ("model.layers.0.self_attn.k_proj.weight", [256, 256], {}, "expected [128, 256]"),
    ("model.layers.0.self_attn.o_proj.weight", [256, 128], {}, "expected [256, 256]"),
    ("model.layers.1.mlp.down_proj.weight", [256, 256], {}, "expected [256, 512]"),
])
def test_safetensors_shape_contradicting_config_json(tmp_path, name, shape, config, expected):
    tensors = hf_tensors("BF16")
    tensors[name] = ("BF16", shape)
    hf_folder(tmp_path, {**CONFIG, **config}, tensors)
    refused(tmp_path, name, "(rows first) contradicts the metadata", expected, source=tmp_path / "model.safetensors")


def mla_hf_tensors() -> dict[str, tuple[str, list[int]]]:
    """The Hugging Face tensors of :data:`MLA` ([out, in]): MLA projections, a dense first layer,
    then routed experts, a shared expert and the router."""
    d = 64
    t = {"model.embed_tokens.weight": ("BF16", [96, d]), "lm_head.weight": ("BF16", [96, d]),
         "model.norm.weight": ("BF16", [d])}
    for i in range(3):
        p = f"model.layers.{i}."
        mats = {"self_attn.q_a_proj": [64, d], "self_attn.q_b_proj": [4 * 24, 64],
                "self_attn.kv_a_proj_with_mqa": [40, d], "self_attn.kv_b_proj": [4 * 32, 32],
                "self_attn.o_proj": [d, 4 * 16]}
        if i == 0:
            mats.update({"mlp.gate_proj": [128, d], "mlp.up_proj": [128, d], "mlp.down_proj": [d, 128]})
        else:
            mats.update({"mlp.gate": [4, d], "mlp.shared_experts.gate_proj": [32, d],
                         "mlp.shared_experts.up_proj": [32, d], "mlp.shared_experts.down_proj": [d, 32]})
            for e in range(4):
                mats.update({f"mlp.experts.{e}.gate_proj": [32, d], f"mlp.experts.{e}.up_proj": [32, d],
                             f"mlp.experts.{e}.down_proj": [d, 32]})
        t.update({f"{p}{name}.weight": ("BF16", shape) for name, shape in mats.items()})
        for norm in ("input_layernorm", "post_attention_layernorm", "self_attn.q_a_layernorm",
                     "self_attn.kv_a_layernorm"):
            t[f"{p}{norm}.weight"] = ("BF16", [32 if "kv_a" in norm else 64 if "q_a" in norm else d])
    return t


@pytest.mark.parametrize("name, shape, expected", [
    ("model.layers.1.self_attn.kv_b_proj.weight", [4 * 24, 32], "expected [128, 32]"),
    ("model.layers.2.self_attn.o_proj.weight", [64, 96], "expected [64, 64]"),
    ("model.layers.0.self_attn.q_b_proj.weight", [96, 48], "expected [96, 64]"),
    ("model.layers.1.mlp.experts.3.down_proj.weight", [64, 128], "expected [64, 32]"),
    ("model.layers.2.mlp.gate.weight", [8, 64], "expected [4, 64]"),
    ("model.layers.2.mlp.experts.4.up_proj.weight", [32, 64], "expert 4 of a model of 4 experts"),
])
def test_safetensors_mla_and_expert_shapes(tmp_path, name, shape, expected):
    hf_folder(tmp_path, MLA_CONFIG, mla_hf_tensors())
    m = rd.load_model(tmp_path)
    assert m.parameter_count == MLA.parameter_count and m.weight_bytes == 2 * MLA.parameter_count
    folder = tmp_path / "bad"
    folder.mkdir()
    hf_folder(folder, MLA_CONFIG, {**mla_hf_tensors(), name: ("BF16", shape)})
    refused(folder, name, expected, source=folder / "model.safetensors")
