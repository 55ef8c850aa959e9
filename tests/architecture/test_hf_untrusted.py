"""Issue 27 ("Untrusted files"): config.json files whose values lie.

Each reproducer gives one ConfigError naming the file, the key, the value and what is allowed;
the CLI answers with exit code 2 and one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import roofline_decode as rd
from roofline_decode import ConfigError, Model
from roofline_decode.cli import main
from roofline_decode.specs.hf_config import reader

CONFIGS = Path(rd.__file__).parent / "model_configs"
DEEP = "[" * 5000 + "]" * 5000


def bundled(model_id: str, **changes: object) -> dict:
    return json.loads((CONFIGS / f"{model_id}.json").read_text()) | changes


def refused(tmp_path: Path, text: str, key: str, needle: str) -> ConfigError:
    """The one ConfigError reading ``text`` as a config.json gives: it names the path and the key."""
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        rd.load_model(path)
    assert str(info.value).startswith(f"{path}: {key}: "), str(info.value)
    assert info.value.field == key and needle in str(info.value), str(info.value)
    return info.value


def test_nesting_5000_deep_is_refused(tmp_path):
    refused(tmp_path, '{"model_type": "llama", "rope_scaling": ' + DEEP + "}", "(json)", "nested too deeply")


def test_nesting_just_beyond_the_limit_is_refused_too(tmp_path):
    # the object is level 1, then 64 arrays: 65 levels
    refused(tmp_path, '{"rope_scaling": ' + "[" * 64 + "]" * 64 + "}", "(json)", "more than 64 levels")
    path = tmp_path / "config.json"  # 64 levels is within the limit (then the model_type is missing)
    path.write_text('{"rope_scaling": ' + "[" * 63 + "]" * 63 + "}")
    with pytest.raises(ConfigError, match="model_type: required key is missing"):
        rd.load_model(path)


def test_a_5000_digit_integer_is_refused(tmp_path):
    text = json.dumps(bundled("llama-3.1-8b")).replace('"hidden_size": 4096', '"hidden_size": ' + "9" * 5000)
    refused(tmp_path, text, "(json)", "an integer of more than 4300 digits (5000)")


@pytest.mark.parametrize("value, needle", [
    (32.0, "expected an integer >= 1, got 32.0"),
    (True, "expected an integer >= 1, got True"),
    (-3, "expected an integer >= 1, got -3"),
    (2**64, f"expected an integer >= 1 and <= 65,536, got {2**64}"),
    (10**4000, "got <an integer of about 4001 digits>"),
    ("32", "got '32'"),
])
def test_layer_counts_that_are_not_sane_integers_are_refused(tmp_path, value, needle):
    refused(tmp_path, json.dumps(bundled("llama-3.1-8b", num_hidden_layers=value)), "num_hidden_layers", needle)


@pytest.mark.parametrize("key, value", [("hidden_size", 2**64), ("vocab_size", 1.5), ("num_key_value_heads", False),
                                        ("intermediate_size", -1), ("head_dim", 2**53 + 1)])
def test_other_counts_that_are_not_sane_integers_are_refused(tmp_path, key, value):
    refused(tmp_path, json.dumps(bundled("llama-3.1-8b", **{key: value})), key, "expected an integer >=")


@pytest.mark.parametrize("text, kind", [("[1, 2]", "list"), ('"llama"', "str"), ("null", "NoneType"), ("7", "int")])
def test_a_file_that_is_not_a_json_object_is_refused(tmp_path, text, kind):
    refused(tmp_path, text, "(root)", f"expected a JSON object, got {kind}")


def test_a_file_beyond_the_size_limit_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(reader, "MAX_FILE_BYTES", 1000)
    refused(tmp_path, json.dumps(bundled("llama-3.1-8b", pad="x" * 2000)), "(file)", "larger than 1,000 bytes")


def test_layer_lists_holding_lists_are_refused_not_hashed(tmp_path):
    config = bundled("qwen3-next-80b-a3b")
    config["layer_types"] = [[1]] + ["linear_attention"] * (config["num_hidden_layers"] - 1)
    refused(tmp_path, json.dumps(config), "layer_types", "expected 48 of linear_attention / full_attention")
    llama4 = bundled("llama-4-maverick")
    text = llama4["text_config"] if "text_config" in llama4 else llama4
    text["moe_layers"] = [[1], 3]
    refused(tmp_path, json.dumps(llama4), "moe_layers", "expected a list of integers, got [[1], 3]")


@pytest.mark.parametrize("quantization, key, needle", [
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {
        "num_bits": 8, "type": "float", "strategy": "block", "block_structure": [0, 0]}}}},
     "quantization_config.config_groups.g.weights.block_structure", "expected two integers from 1 to 2**20"),
    ({"quant_method": "fp8", "weight_block_size": [2**64, 1]}, "quantization_config.weight_block_size",
     "expected two integers from 1 to 2**20"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["lm_head", "re:("]},
     "quantization_config.modules_to_not_convert[1]", "expected a regular expression after 're:'"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 128, "modules_to_not_convert": ["layers"] * 100_000},
     "quantization_config.modules_to_not_convert", "expected at most 10,000,000 pairs"),
])
def test_quantization_values_that_would_crash_are_refused(tmp_path, quantization, key, needle):
    refused(tmp_path, json.dumps(bundled("llama-3.1-8b", quantization_config=quantization)), key, needle)


def test_dict_configs_with_integers_too_long_to_print_are_refused_by_size():
    with pytest.raises(ConfigError, match=r"num_hidden_layers: .*got <an integer of about 5001 digits>"):
        Model.from_hf_config(bundled("llama-3.1-8b", num_hidden_layers=10**5000))


def test_cli_answers_a_lying_config_with_one_line(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(bundled("llama-3.1-8b", num_hidden_layers=2**64)))
    code = main(["floor", "--model", str(path), "--gpu", "h100-sxm"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err
    assert f"{path}: num_hidden_layers: expected an integer >= 1 and <= 65,536" in err
