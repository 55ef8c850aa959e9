"""Model and Accelerator specs: derived counts, validation errors, immutability."""

import math

import pytest

import roofline_decode as rd
from roofline_decode import Accelerator, InvalidValueError, Model, RooflineError


def test_llama2_7b_parameter_count_hand_derived():
    # 32 x (4 x 4096^2 + 3 x 4096 x 11008) + 2 x 32000 x 4096 + (2 x 32 + 1) x 4096 norm weights
    assert rd.load_model("llama-2-7b").parameter_count == 6_738_415_616


def test_llama31_70b_kv_bytes_per_token():
    # 2 (K and V) x 8 KV heads x 128 x 2 B x 80 layers
    assert rd.load_model("llama-3.1-70b").kv_bytes_per_token == 327_680


def test_with_precision_returns_a_copy():
    model = rd.load_model("llama-3.1-8b")
    quantised = model.with_precision(weights="q4_0", kv="fp8")
    assert model.weight_format.name == "bf16" and model.kv_format.name == "bf16"
    assert quantised.weight_format.bits_per_element == 4.5
    assert quantised.kv_bytes_per_token == model.kv_bytes_per_token / 2
    assert quantised.weight_bytes == pytest.approx(model.weight_bytes * 4.5 / 16)


@pytest.mark.parametrize("value", [3, -1])  # a valid and an invalid value: both refused as "frozen"
@pytest.mark.parametrize("spec, field", [(lambda: rd.load_model("llama-3.1-8b"), "num_layers"),
                                         (lambda: rd.load_accelerator("h100-sxm"), "memory_bandwidth"),
                                         (lambda: rd.load_memory_tier("pcie5-x16"), "bandwidth")],
                         ids=["model", "accelerator", "memory_tier"])
def test_specs_are_frozen(spec, field, value):
    obj = spec()
    before = getattr(obj, field)
    # our own error (not pydantic's), naming the field and the way to a changed copy
    with pytest.raises(rd.errors.InvalidValueError, match=rf"\.{field}: specs are immutable; use \.replace\({field}=\.\.\.\)"):
        setattr(obj, field, value)
    assert getattr(obj, field) == before
    assert getattr(obj.replace(**{field: 2 * before}), field) == 2 * before


def _tiny(**changes):
    fields = dict(name="tiny", num_layers=2, hidden_size=64, num_heads=4, num_kv_heads=2, head_dim=16,
                  intermediate_size=128, vocab_size=100)
    fields.update(changes)
    return Model(**fields)


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(num_layers=-1), "num_layers"),
        (dict(num_layers=0), "num_layers"),
        (dict(hidden_size=float("nan")), "hidden_size"),
        (dict(weight_format="bf61"), "weight_format"),
        (dict(num_kv_heads=3), "num_kv_heads"),
        (dict(colour="red"), "colour"),
        (dict(layer_types=("full",)), "layer_types"),
        (dict(num_experts=8, num_experts_per_token=9, moe_intermediate_size=32), "num_experts_per_token"),
    ],
)
def test_model_rejects_bad_fields_with_our_error(changes, field):
    with pytest.raises(RooflineError) as info:
        _tiny(**changes)
    assert field in str(info.value)


def test_custom_accelerator_in_si_units():
    gpu = Accelerator(name="my-gpu", memory_bandwidth=4.0e11, memory_capacity=64e9, peak_flops={"bf16": 1.0e14})
    assert gpu.ridge_point("bf16") == 250.0
    assert gpu.peak(rd.get_format("fp8")) == ("bf16", 1.0e14)  # fp8 falls back to bf16 here


@pytest.mark.parametrize(
    "changes",
    [dict(memory_bandwidth=-1.0), dict(memory_bandwidth=float("nan")), dict(memory_capacity=0.0),
     dict(peak_flops={"bf16": float("inf")}), dict(peak_flops={"bf17": 1e14})],
)
def test_accelerator_rejects_bad_values(changes):
    fields = dict(name="x", memory_bandwidth=1e12, memory_capacity=1e10, peak_flops={"bf16": 1e14})
    fields.update(changes)
    with pytest.raises(InvalidValueError) as info:
        Accelerator(**fields)
    assert next(iter(changes)) in str(info.value)


def test_catalog_entries_of_the_foundation_issue():
    for gpu in ("a100-80gb-sxm", "h100-sxm", "h200-sxm", "mi300x", "l4"):
        assert rd.load_accelerator(gpu).memory_bandwidth > 0
    for model in ("llama-2-7b", "llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "qwen2.5-7b"):
        assert rd.load_model(model).parameter_count > 0


def test_h100_figures_have_sources():
    h100 = rd.load_accelerator("h100-sxm")
    assert h100.memory_bandwidth == 3.35e12
    assert h100.peak_flops["bf16"] == pytest.approx(989.5e12)
    assert h100.source_of("memory_bandwidth").url.startswith("https://")
    assert math.isclose(h100.ridge_point("bf16"), 295.37, rel_tol=1e-3)


@pytest.mark.parametrize("loader, bad, good", [(rd.load_model, "llama-3.1-8", "llama-3.1-8b"),
                                               (rd.load_accelerator, "h100-smx", "h100-sxm")])
def test_unknown_ids_list_close_matches(loader, bad, good):
    with pytest.raises(rd.UnknownIdError) as info:
        loader(bad)
    assert good in str(info.value)


def test_hf_config_llama_mistral_qwen2_from_dicts():
    base = dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                intermediate_size=128, vocab_size=100)
    llama = Model.from_hf_config({**base, "model_type": "llama"})
    assert llama.head_dim == 16 and not llama.qkv_bias
    mistral = Model.from_hf_config({**base, "model_type": "mistral", "sliding_window": 32})
    assert mistral.num_sliding_layers == 2 and mistral.window == 32
    qwen = Model.from_hf_config({**base, "model_type": "qwen2", "head_dim": 8})
    assert qwen.head_dim == 8 and qwen.qkv_bias and not qwen.o_bias


def test_hf_config_errors_name_key_and_file(tmp_path):
    path = tmp_path / "config.json"
    # an absent key takes LlamaConfig's default; null leaves no number to read
    path.write_text('{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": null}')
    with pytest.raises(rd.ConfigError) as info:
        Model.from_hf_config(path)
    message = str(info.value)
    assert str(path) in message and "required key is missing" in message and "num_hidden_layers" in message
    path.write_text('{"model_type": "llama", ')
    with pytest.raises(rd.ConfigError, match="not valid JSON"):
        Model.from_hf_config(path)
    with pytest.raises(rd.ConfigError, match="supported"):
        Model.from_hf_config({"model_type": "not-a-model"})
