"""Fuzz the file readers: config.json, spec TOML files, measurement files, published layouts.

Inputs are the bundled files, mutated structurally (a key or value replaced, removed or
duplicated) and byte by byte (bytes flipped, inserted, deleted; text truncated).
"""

from __future__ import annotations

import copy
import json
import math
import re
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import catalog
from roofline_decode.measure import compare, load_measurements, load_published
from roofline_decode.specs.model import Model
from roofline_decode.specs.spec_file import load_spec_file
from tests.fuzz.strategies import anything, edit_json, finite_positive, outcome
from tests.fuzz.test_fuzz_estimate import check_floor, fuzz

WORK = Path(tempfile.mkdtemp(prefix="roofline-fuzz-"))
CONFIG_FILES = sorted(catalog._MODEL_DIR.glob("*.json"))
SPEC_FILES = sorted(catalog.bundled_spec_directory().rglob("*.toml"))
PUBLISHED = sorted((Path(__file__).resolve().parents[1] / "data" / "measured").glob("*.csv"))
H100 = rd.load_accelerator("h100-sxm")

#: JSON values: every kind, nested a little.
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.sampled_from([10**400, 2**31, 2**53 + 1]),
              st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=5)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6,
)

#: Values a lying file holds: every JSON kind, and the ones JSON reads as infinity or NaN.
json_lies = st.one_of(
    json_values,
    st.sampled_from([math.inf, -math.inf, math.nan, -3, 0, 1, 2**64, 10**400, 5e-324, 1e300, 0.5, True, False, None,
                     "-inf", "inf", "nan", "1e400", "-3", "", " ", "x", "f16", "q8_0", "9" * 40, [], {}, [[1]],
                     ["full_attention"], ["re:("], [0, 1]]),
)


@st.composite
def byte_mutations(draw, files: list[Path]) -> bytes:
    """A bundled file with a few bytes flipped, inserted or deleted, or cut short."""
    data = bytearray(draw(st.sampled_from(files)).read_bytes())
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut", "nest"]))
        at = draw(st.integers(0, max(len(data) - 1, 0)))
        if kind == "flip" and data:
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "cut":
            del data[at:]
        else:  # deep nesting, a long integer
            data[at:at] = draw(st.sampled_from([b"[" * 3000, b"{\"a\":" * 2000, b"9" * 5000, b"1e999"]))
    return bytes(data)


def _write(name: str, data: bytes) -> Path:
    path = WORK / name
    path.write_bytes(data)
    return path


def check_model(model) -> None:
    finite_positive("weight_bytes", model.weight_bytes)
    r = outcome("config.json (floor of the model read)", lambda: rd.decode_floor(model, H100, batch=[1, 32], context=[0, 2048]))
    if r is not None:
        check_floor(r)


@fuzz(1200)
@given(path=st.sampled_from(CONFIG_FILES), edits=st.lists(
    st.tuples(st.sampled_from(["set", "delete", "quantization", "layer_types"]),
              st.sampled_from(["num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
                               "head_dim", "intermediate_size", "vocab_size", "sliding_window", "model_type",
                               "num_local_experts", "num_experts_per_tok", "n_routed_experts", "kv_lora_rank",
                               "tie_word_embeddings", "max_position_embeddings", "moe_intermediate_size",
                               "first_k_dense_replace", "layer_types", "_roofline", "quantization_config", "n_layer",
                               "group_size", "bits", "quant_method", "weight_block_size"]),
              json_values), min_size=1, max_size=3))
def test_config_dicts(path, edits):
    config = json.loads(path.read_text())
    for kind, key, value in edits:
        if kind == "set":
            config[key] = value
        elif kind == "delete":
            config.pop(key, None)
        elif kind == "quantization":
            config["quantization_config"] = {"quant_method": "gptq", "bits": 4, "group_size": 128, key: value}
        elif isinstance(config.get("layer_types"), list) and config["layer_types"]:
            config["layer_types"][0] = value
    model = outcome("config.json (mutated keys)", lambda: Model.from_hf_config(config))
    if model is not None:
        check_model(model)


#: quantization_config samples of every method the reader knows (and its module lists).
QUANTIZATION = [
    {"quant_method": "gptq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["lm_head", "re:.*mlp.gate$"]},
    {"quant_method": "awq", "w_bit": 4, "q_group_size": 64},
    {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128], "modules_to_not_convert": ["self_attn"]},
    {"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf4",
     "bnb_4bit_use_double_quant": True, "llm_int8_skip_modules": ["lm_head"]},
    {"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"]},
    {"quant_method": "compressed-tensors", "ignore": ["lm_head", "re:.*router"], "config_groups": {"group_0": {
        "weights": {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]},
        "input_activations": {"num_bits": 8, "type": "float"}}}},
    {"quant_method": "compressed-tensors", "config_groups": {"group_0": {
        "weights": {"num_bits": 4, "type": "int", "strategy": "group", "group_size": 128, "symmetric": False}}}},
]


def config_paths(value, prefix=()) -> list[tuple]:
    """Every key path into a config (the first 3 items of a list)."""
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            out += config_paths(item, prefix + (key,))
    elif isinstance(value, list):
        for i, item in enumerate(value[:3]):
            out += config_paths(item, prefix + (i,))
    return out


@fuzz(500)
@given(path=st.sampled_from(CONFIG_FILES), quantization=st.one_of(st.none(), st.sampled_from(QUANTIZATION)),
       edits=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["set", "set", "delete", "empty"]), json_lies),
                      min_size=1, max_size=3), as_file=st.booleans())
def test_config_nested_keys(path, quantization, edits, as_file):
    config = json.loads(path.read_text())
    if quantization is not None:
        config["quantization_config"] = copy.deepcopy(quantization)
    for index, kind, value in edits:
        paths = config_paths(config)
        if not paths:
            break
        edit_json(config, paths[index % len(paths)], kind, value)
    if as_file:
        target = _write("nested-config.json", json.dumps(config).encode())
        model = outcome("config.json (mutated nested keys)", lambda: catalog.load_model(target))
    else:
        model = outcome("config.json (mutated nested keys)", lambda: Model.from_hf_config(config))
    if model is not None:
        check_model(model)


@fuzz(500)
@given(data=byte_mutations(CONFIG_FILES))
def test_config_bytes(data):
    path = _write("config.json", data)
    model = outcome("config.json (mutated bytes)", lambda: catalog.load_model(path))
    if model is not None:
        check_model(model)


TOML_FRAGMENTS = st.one_of(
    st.sampled_from(["1e300", "-1", "0", "nan", "inf", "-inf", '"80"', "true", "[1]", "{a = 1}", "9" * 5000,
                     "[" * 2000 + "]" * 2000, "1e-300", "3350", "0.000001", '"GB/sec"', '"derived"', '""', "1979e30"]),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-(2**64), 2**64).map(str),
)


@fuzz(600)
@given(path=st.sampled_from(SPEC_FILES), edits=st.lists(
    st.tuples(st.sampled_from(["value", "unit", "kind", "source", "delete", "duplicate", "key"]), st.integers(0, 400),
              TOML_FRAGMENTS), min_size=1, max_size=3))
def test_spec_toml_mutated_lines(path, edits):
    lines = path.read_text().splitlines()
    for kind, index, fragment in edits:
        i = index % len(lines)
        if kind in ("value", "unit", "kind", "source"):
            hits = [j for j, line in enumerate(lines) if line.startswith(f"{kind} =")]
            if hits:
                lines[hits[index % len(hits)]] = f"{kind} = {fragment}"
        elif kind == "delete":
            del lines[i]
        elif kind == "duplicate":
            lines.insert(i, lines[i])
        else:
            lines.insert(i, f"odd_key = {fragment}")
    spec_path = _write(path.name, "\n".join(lines).encode())
    spec = outcome("spec TOML (mutated lines)", lambda: load_spec_file(spec_path))
    if spec is not None and isinstance(spec, rd.Accelerator):
        r = outcome("spec TOML (mutated lines)", lambda: rd.decode_floor("llama-3.1-8b", spec, batch=[1, 64], context=4096))
        if r is not None:
            check_floor(r)


@fuzz(300)
@given(data=byte_mutations(SPEC_FILES))
def test_spec_toml_bytes(data):
    path = _write("mutated.toml", data)
    outcome("spec TOML (mutated bytes)", lambda: load_spec_file(path))


COLUMNS = ["batch", "context", "step_time_ms", "mean_ms", "tokens_per_s", "B", "T", "model", "gpu", "weights",
           "num_devices", "std_ms", "kv_format", "odd"]
cells = st.one_of(st.sampled_from(["1", "8", "4096", "0", "-1", "1e300", "5e-324", "nan", "inf", "", "x", "1,5",
                                   "llama-3.1-8b", "h100-sxm", "bf16", "9" * 400, "\x00", '"']),
                  st.floats(allow_nan=True).map(repr), st.text(max_size=4))


@fuzz(700)
@given(header=st.one_of(st.lists(st.sampled_from(COLUMNS), min_size=1, max_size=5),
                        st.lists(st.sampled_from(COLUMNS[5:]), max_size=2).map(lambda h: COLUMNS[:3] + h)),
       rows=st.lists(st.lists(st.one_of(cells, st.integers(1, 5000).map(str)), max_size=6), max_size=3),
       as_json=st.booleans())
def test_measurement_files(header, rows, as_json):
    if as_json:
        records = [dict(zip(header, row)) for row in rows]
        path = _write("rows.json", json.dumps(records).encode())
    else:
        text = ",".join(header) + "\n" + "".join(",".join(row) + "\n" for row in rows)
        path = _write("rows.csv", text.encode("utf-8", "surrogatepass"))
    loaded = outcome("measurement files", lambda: load_measurements(path, weight_format="bf16"))
    if loaded:
        result = outcome("compare (loaded rows)", lambda: compare(loaded, "llama-3.1-8b", "h100-sxm"))
        for row in result or []:
            finite_positive("floor_step_time_s", row.floor_step_time_s)


@fuzz(300)
@given(data=st.one_of(byte_mutations(PUBLISHED), st.builds(
    lambda path, index, cell: re.sub(r",[^,\n]*", "," + cell, path.read_text(), count=1 + index % 50),
    st.sampled_from(PUBLISHED), st.integers(0, 49), st.sampled_from(["", "0", "5e-324", "-1", "x", "1e400", "nan"]),
).map(str.encode)))
def test_published_layouts(data):
    path = _write("published.csv", data)
    result = outcome("published layouts", lambda: load_published(path))
    for row in getattr(result, "rows", []):
        finite_positive("step_time", row.step_time)
        assert np.isfinite(row.batch) and row.batch >= 1


@fuzz(200)
@given(rows=st.lists(st.dictionaries(st.sampled_from(COLUMNS), anything, max_size=4), max_size=3))
def test_measurement_records(rows):
    from roofline_decode.measure import rows_from_records

    outcome("measurement records", lambda: rows_from_records(rows))


@fuzz(300)
@given(rows=st.lists(st.tuples(st.one_of(st.integers(1, 4096), st.floats(0, 1e6)), st.one_of(st.integers(0, 10**6),
                                                                                            st.floats(0, 1e9)),
                               st.floats(1e-6, 1e4)), min_size=1, max_size=4),
       tolerance=st.one_of(st.just(0.0), st.floats(-1, 2)))
def test_compare_numeric_rows(rows, tolerance):
    text = "batch,context,step_time_ms\n" + "".join(f"{b!r},{t!r},{s!r}\n" for b, t, s in rows)
    path = _write("numeric.csv", text.encode())
    loaded = outcome("measurement files", lambda: load_measurements(path))
    if loaded:
        result = outcome("compare (loaded rows)", lambda: compare(loaded, "llama-3.1-8b", "h100-sxm", tolerance=tolerance))
        for row in result or []:
            finite_positive("floor_step_time_s", row.floor_step_time_s)
            finite_positive("efficiency", row.efficiency)
