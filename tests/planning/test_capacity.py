"""Capacity planning: the usable-memory rule, max_batch and max_context (values and laws)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.errors import InvalidValueError
from roofline_decode.planning import (
    DEFAULT_RESERVE, capacity_bytes, kv_bytes_per_sequence, max_batch, max_context, usable_memory,
)
from roofline_decode.floors.capacity import resident_bytes
from roofline_decode.units import GiB

MODELS = ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "gemma-2-9b", "mixtral-8x7b", "deepseek-v2-lite",
          "qwen3-30b-a3b", "gpt-oss-20b"]
DEVICES = ["h100-sxm", "h200-sxm", "a100-80gb-sxm", "mi300x", "l4", "tpu-v4", "b200", "rtx-4090"]


def test_vendor_gb_is_read_as_gib():
    # SPECS_NOTES.md §2: H100 "80 GB" is 5 x 16 GiB = 80 GiB; the spec keeps the printed unit.
    h100 = rd.load_accelerator("h100-sxm")
    assert h100.figures["memory_capacity"].unit == "GB"
    assert capacity_bytes(h100) == 80 * GiB
    assert capacity_bytes(h100, binary_units=False) == 80e9
    # a capacity printed in GiB (TPU v4: "32 GiB") is taken as printed
    assert capacity_bytes("tpu-v4") == 32 * GiB == capacity_bytes("tpu-v4", binary_units=False)


def test_user_built_accelerator_keeps_bytes():
    gpu = rd.Accelerator(name="my-gpu", memory_bandwidth=4.0e11, memory_capacity=64e9, peak_flops={"bf16": 1e14})
    assert capacity_bytes(gpu) == 64e9
    assert usable_memory(gpu, reserve=0) == 64e9


H100_MIB = 81559  # nvidia-smi memory.total of an H100 80GB HBM3 (hardware_specs/nvidia/h100-sxm.toml)


def test_reserve_is_overridable():
    assert DEFAULT_RESERVE == 2 * GiB
    assert usable_memory("h100-sxm") == H100_MIB * 2**20 - 2 * GiB
    assert usable_memory("h100-sxm", reserve=0) == H100_MIB * 2**20
    # vLLM's gpu_memory_utilization = 0.9 as a fractional reserve
    assert usable_memory("h100-sxm", reserve=0, reserve_fraction=0.1) == pytest.approx(0.9 * H100_MIB * 2**20)
    # usable stays below what nvidia-smi reports for an H100 (about 79.6 GiB, SPECS_NOTES §2)
    assert usable_memory("h100-sxm") < 79.6 * GiB


def test_fixed_and_fractional_reserves_combine_as_documented():
    # M (1 - f) - R (formulas.usable_memory): the fraction is of the whole capacity, and the
    # fixed reserve comes off after it.  A100 80GB SXM, 80 GiB, R = 2 GiB, f = 0.1:
    # 80 x 0.9 - 2 = 70 GiB (not (80 - 2) x 0.9 = 70.2 GiB).
    assert usable_memory("a100-80gb-sxm", reserve=2 * GiB, reserve_fraction=0.1) == pytest.approx(70 * GiB, rel=1e-12)
    # H100 SXM: the fraction is of the 81,559 MiB the runtime exposes
    assert usable_memory("h100-sxm", reserve=2 * GiB, reserve_fraction=0.1) == pytest.approx(
        0.9 * H100_MIB * 2**20 - 2 * GiB, rel=1e-12)
    gpu = rd.Accelerator(name="my-gpu", memory_bandwidth=4.0e11, memory_capacity=64e9, peak_flops={"bf16": 1e14})
    # 64e9 x 0.75 - 1e9 = 47e9 B (not (64e9 - 1e9) x 0.75 = 47.25e9)
    assert usable_memory(gpu, reserve=1e9, reserve_fraction=0.25) == pytest.approx(47e9, rel=1e-12)


@pytest.mark.parametrize("bad", [dict(reserve=-1), dict(reserve=float("nan")), dict(reserve_fraction=1.0),
                                 dict(reserve_fraction=-0.1)])
def test_bad_reserve_names_the_field(bad):
    with pytest.raises(InvalidValueError) as info:
        usable_memory("h100-sxm", **bad)
    assert next(iter(bad)) in str(info.value)


def test_kv_per_sequence_values():
    # Llama-3.1-70B bf16: 327,680 B per token (Scaling Book, "Serving LLaMA 3-70B": 2·K·H·L bytes per
    # token per byte of KV dtype) -> 2.5 GiB at 8192 tokens.
    assert float(kv_bytes_per_sequence(rd.load_model("llama-3.1-70b"), 8192)) == 327680 * 8192
    # Mistral-7B slides every layer with W = 4096: the cache stops growing at the window
    mistral = rd.load_model("mistral-7b-v0.1")
    assert float(kv_bytes_per_sequence(mistral, 32768)) == float(kv_bytes_per_sequence(mistral, 4096))


def test_max_batch_value_llama_8b_h100():
    # 77.65 GiB usable - 16.06 GB weights = 67.3 GB; 4 GiB of KV per sequence at 32K -> 15 sequences
    assert int(max_batch("llama-3.1-8b", "h100-sxm", 32768)) == 15
    assert int(max_batch("llama-3.1-70b", "h100-sxm", 32768)) == 0  # 141 GB of weights do not fit


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MODELS), device=st.sampled_from(DEVICES), context=st.integers(1, 200_000),
       reserve_gib=st.floats(0, 8))
def test_max_batch_fills_capacity_within_one_sequence(model, device, context, reserve_gib):
    model = rd.load_model(model)
    reserve = reserve_gib * GiB
    batch = int(max_batch(model, device, context, reserve=reserve))
    usable = usable_memory(device, reserve=reserve)
    per_sequence = float(kv_bytes_per_sequence(model, context))
    if model.weight_bytes > usable:
        assert batch == 0
        return
    assert model.weight_bytes + batch * per_sequence <= usable
    assert model.weight_bytes + (batch + 1) * per_sequence > usable
    assert usable - (model.weight_bytes + batch * per_sequence) < per_sequence


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MODELS), device=st.sampled_from(DEVICES), batch=st.integers(1, 256))
def test_max_context_fills_capacity_within_one_token(model, device, batch):
    model = rd.load_model(model)
    tokens = max_context(model, device, batch)
    usable = usable_memory(device)
    if model.weight_bytes > usable:
        assert int(tokens) == 0
        return
    if not np.isfinite(tokens):  # every layer slides and the window fits
        assert model.num_global_layers == 0
        assert float(resident_bytes(model, batch, model.window)) <= usable
        return
    tokens = int(tokens)
    assert float(resident_bytes(model, batch, tokens)) <= usable
    assert float(resident_bytes(model, batch, tokens + 1)) > usable


def test_max_context_sliding_window_model_is_unbounded_when_the_window_fits():
    assert math.isinf(float(max_context("mistral-7b-v0.1", "h100-sxm", batch=16)))
    # ... and bounded by the window arithmetic when it does not
    assert 0 < float(max_context("mistral-7b-v0.1", "h100-sxm", batch=200)) < 4096


def test_max_context_is_the_inverse_of_max_batch():
    # at the context max_context returns, the batch fits; max_batch at that context is >= the batch
    for batch in (1, 8, 64):
        t = int(max_context("llama-3.1-8b", "a100-80gb-sxm", batch))
        assert int(max_batch("llama-3.1-8b", "a100-80gb-sxm", t)) >= batch


@pytest.mark.parametrize("context", [0, -5, float("nan"), []])
def test_max_batch_rejects_bad_context(context):
    with pytest.raises(InvalidValueError, match="context"):
        max_batch("llama-3.1-8b", "h100-sxm", context)


def test_max_batch_broadcasts_over_context():
    out = max_batch("llama-3.1-8b", "h100-sxm", [1024, 8192, 32768])
    assert out.shape == (3,) and out.dtype.kind == "i"
    assert list(out) == sorted(out, reverse=True)


def test_model_ids_are_accepted_like_models():
    model = rd.load_model("llama-3.1-70b")
    assert float(kv_bytes_per_sequence("llama-3.1-70b", 8192)) == float(kv_bytes_per_sequence(model, 8192))
    assert float(resident_bytes("llama-3.1-70b", 2, 8192)) == model.weight_bytes + 2 * 327680 * 8192


@pytest.mark.parametrize("bad", [dict(reserve=None), dict(reserve="2GiB"), dict(reserve_fraction="a"),
                                 dict(reserve_fraction=True)])
def test_non_numbers_for_the_reserve_are_invalid_values(bad):
    with pytest.raises(InvalidValueError, match=next(iter(bad))):
        usable_memory("h100-sxm", **bad)


# -- issue 21 item 3: the device's share (ECC on GDDR data-center cards, unified memory) --------

#: nvidia-smi memory.total with ECC on (modal-labs/modal-client PR #2797; A10G: NVIDIA/DCGM #232;
#: A40: chatdoc-com/OCRFlux #64).
ECC_MIB = {"t4": 15360, "l4": 23034, "a10": 23028, "a10g": 23028, "l40s": 46068, "a40": 46068}


@pytest.mark.parametrize("device, mib", sorted(ECC_MIB.items()))
def test_ecc_cards_expose_what_nvidia_smi_shows(device, mib):
    from roofline_decode.planning import device_memory

    gpu = rd.load_accelerator(device)
    assert gpu.figures["usable_memory"].unit == "MiB" and gpu.figures["usable_memory"].value == mib
    assert device_memory(gpu) == mib * 2**20
    # about 15/16 of the printed capacity read as GiB (ECC takes 1/16 of GDDR)
    assert device_memory(gpu) / capacity_bytes(gpu) == pytest.approx(15 / 16, abs=1e-3)
    assert usable_memory(gpu) == mib * 2**20 - DEFAULT_RESERVE
    # overridable: ECC off gives back the whole capacity
    assert device_memory(gpu.replace(usable_memory_capacity=None)) == capacity_bytes(gpu)


def test_l40s_usable_no_longer_exceeds_its_physical_memory():
    # before: 48 GiB - 2 GiB = 46.0 GiB "usable", above the 45.0 GiB (46,068 MiB) the card has with ECC
    assert usable_memory("l40s") / GiB == pytest.approx(46068 / 1024 - 2)
    assert usable_memory("l40s") < 46068 * 2**20


def test_one_rule_for_every_device_the_measured_figure_where_there_is_one():
    # issue 27 item 6.5: an H100's "80 GB" was read as 81,920 MiB although nvidia-smi shows 81,559 MiB
    # (the driver and firmware keep 361 MiB; HBM's ECC sits beside the data and takes none), while the
    # L40S already took its measured 46,068 MiB.  Now every device takes its usable_memory figure where a
    # source measures one, whatever its memory: device memory 81,920 -> 81,559 MiB, usable (2 GiB reserve)
    # 78.00 -> 77.65 GiB.
    from roofline_decode.planning import device_memory

    h100 = rd.load_accelerator("h100-sxm")
    assert h100.memory_type == "HBM3" and h100.figures["usable_memory"].kind == "measured"
    assert capacity_bytes(h100) == 81920 * 2**20 and device_memory(h100) == 81559 * 2**20
    assert round(usable_memory(h100) / GiB, 2) == 77.65
    assert device_memory("l40s") == 46068 * 2**20  # GDDR6 with ECC on: the same rule
    # devices without a measured figure keep their whole capacity
    for device in ("a100-80gb-sxm", "mi300x", "tpu-v4"):
        assert "usable_memory" not in rd.load_accelerator(device).figures
        assert device_memory(device) == capacity_bytes(device)


@pytest.mark.parametrize("device, gib, share", [
    ("m1-max", 64, 3 / 4), ("m2-max", 96, 3 / 4), ("m2-ultra", 192, 3 / 4), ("m3-ultra", 512, 3 / 4),
])
def test_apple_gpu_wires_three_quarters_of_large_memories(device, gib, share):
    # llama.cpp logs Metal's recommendedMaxWorkingSetSize: 73,728 MB on a 96 GiB M2 Max (llama.cpp #3213)
    from roofline_decode.planning import device_memory, gpu_memory_share

    assert gpu_memory_share(device) == share
    assert device_memory(device) == gib * GiB * share
    assert usable_memory(device) == gib * GiB * share - DEFAULT_RESERVE


def test_apple_small_memories_get_two_thirds_and_the_share_is_overridable():
    from roofline_decode.planning import device_memory, gpu_memory_share

    m1_max = rd.load_accelerator("m1-max")
    # 32 GiB: 21,845.34 MB in ollama #434; 16 GiB: 10,922.67 MB in llama-cpp-python #687
    assert device_memory(m1_max.replace(memory_capacity=32 * GiB)) / 2**20 == pytest.approx(21845.33, abs=0.01)
    assert device_memory(m1_max.replace(memory_capacity=16 * GiB)) / 2**20 == pytest.approx(10922.67, abs=0.01)
    # sudo sysctl iogpu.wired_limit_mb=... : the user's share wins
    assert gpu_memory_share(m1_max.replace(gpu_memory_share=0.9)) == 0.9
    assert device_memory(m1_max.replace(gpu_memory_share=1.0)) == 64 * GiB
    with pytest.raises(InvalidValueError, match="gpu_memory_share"):
        m1_max.replace(gpu_memory_share=1.5)


def test_replacing_the_capacity_drops_the_stale_printed_figure():
    # issue 21 item 3: load_accelerator("m1-max").replace(memory_capacity=32e9) read the printed 64 GB
    from roofline_decode.planning import device_memory

    mac = rd.load_accelerator("m1-max").replace(memory_capacity=32e9)
    assert "memory_capacity" not in mac.figures and "memory_bandwidth" in mac.figures
    assert capacity_bytes(mac) == 32e9
    assert device_memory(mac) == pytest.approx(32e9 * 2 / 3)
    assert int(max_batch("llama-3.1-8b", mac, 8192)) == int(max_batch(
        "llama-3.1-8b", rd.Accelerator(name="m", memory_bandwidth=4e11, memory_capacity=32e9, unified_memory=True,
                                       vendor="Apple"), 8192))
    # an ECC card given a new capacity loses the old exposed figure too
    l40s = rd.load_accelerator("l40s").replace(memory_capacity=96e9)
    assert l40s.usable_memory_capacity is None and "usable_memory" not in l40s.figures
    assert device_memory(l40s) == 96e9
    # a hand-made stale figure is not read either
    stale = rd.load_accelerator("h100-sxm")
    stale = rd.Accelerator(**{**{k: getattr(stale, k) for k in type(stale).model_fields}, "memory_capacity": 40e9})
    assert capacity_bytes(stale) == 40e9


def test_a_usable_figure_in_the_wrong_unit_is_refused():
    # 23034 typed as bytes where MiB was meant: the same plausibility range as memory_capacity
    with pytest.raises(InvalidValueError, match="usable_memory_capacity"):
        rd.Accelerator(name="l4-like", memory_bandwidth=3e11, memory_capacity=24e9, usable_memory_capacity=23034)
    from roofline_decode.planning import device_memory

    gpu = rd.Accelerator(name="l4-like", memory_bandwidth=3e11, memory_capacity=24 * 2**30,
                         usable_memory_capacity=23034 * 2**20)
    assert device_memory(gpu) == 23034 * 2**20
    # an exposed figure above the capacity given (24e9 B < 23,034 MiB) never raises what a device holds
    assert device_memory(gpu.replace(memory_capacity=24e9, usable_memory_capacity=23034 * 2**20)) == 24e9


def test_reserves_larger_than_the_device_leave_nothing_usable():
    """80 GiB x (1 - 0.984375) - 2 GiB < 0: nothing is usable, not a negative amount (found by
    the fuzz suite through plan(reserve_fraction=0.984375))."""
    from roofline_decode.planning import plan, usable_memory

    assert usable_memory("h100-sxm", reserve_fraction=0.984375) == 0.0
    row = plan("llama-3.1-8b", "h100-sxm", batch=1, context=0, reserve_fraction=0.984375)[0]
    assert row.usable_bytes_per_device == 0.0


# -- issue 27 item 6.5: capacity --------------------------------------------------------------------


@pytest.mark.parametrize("device", ["rtx-3090", "l40s", "h100-sxm", "m1-max"])
def test_replacing_a_field_with_its_own_value_changes_nothing(device):
    # rtx-3090 prints "24 GB", stored as 24e9 B and read as 24 GiB by the usable-memory rule.  Replacing
    # memory_capacity with that same 24e9 dropped the printed figure, so 24e9 B = 22.35 GiB was taken:
    # usable (no reserve) 24.00 -> 22.35 GiB.  A field given its current value is unchanged.
    from roofline_decode.planning import device_memory

    gpu = rd.load_accelerator(device)
    same = gpu.replace(memory_capacity=gpu.memory_capacity, memory_bandwidth=gpu.memory_bandwidth)
    assert same.figures == gpu.figures and same.usable_memory_capacity == gpu.usable_memory_capacity
    assert usable_memory(same) == usable_memory(gpu) and device_memory(same) == device_memory(gpu)
    if device == "rtx-3090":
        assert usable_memory(same, reserve=0) / GiB == 24.0 != round(24e9 / GiB, 2) == 22.35
    # a changed value still drops the stale figure (test_replacing_the_capacity_drops_the_stale_printed_figure)
    assert "memory_capacity" not in gpu.replace(memory_capacity=gpu.memory_capacity * 2).figures


def test_a_recurrent_state_bounds_the_batch_at_context_zero():
    # issue 27 item 6.5: max_batch was +inf at context 0 whatever the model, though a recurrent model's
    # sequence holds its fixed state from the first step.  Mamba-Codestral-7B: 64 Mamba-2 layers x
    # 1,079,296 bf16 state elements = 138,149,888 B per sequence; on an A100 80GB (80 GiB - 2 GiB reserve
    # = 83,751,862,272 B) beside 14,570,807,296 B of weights: floor(69,181,054,976 / 138,149,888) = 500
    # at every context (no KV cache) - before: inf at context 0, 500 from context 1.
    codestral = rd.load_model("mamba-codestral-7b")
    assert codestral.recurrent_state_bytes_per_sequence == 64 * 1_079_296 * 2 == 138_149_888
    assert codestral.weight_bytes == 14_570_807_296 and usable_memory("a100-80gb-sxm") == 83_751_862_272
    r = rd.decode_floor(codestral, "a100-80gb-sxm", batch=1, context=[0, 1, 4096])
    assert list(r.max_batch) == [500, 500, 500] == [(83_751_862_272 - 14_570_807_296) // 138_149_888] * 3
    # Qwen3-Next on a B200 (180 GiB - 2 GiB = 191,126,044,672 B, weights 159,348,585,984 B): 36 x 548,864
    # x 2 B = 39,518,208 B of state per sequence at context 0 -> 804; one token of KV more in 12 layers
    # (12 x 2048 B) at context 1 -> 803
    qwen = rd.load_model("qwen3-next-80b-a3b")
    free = usable_memory("b200") - qwen.weight_bytes
    assert free == 191_126_044_672 - 159_348_585_984
    r = rd.decode_floor(qwen, "b200", batch=1, context=[0, 1])
    assert list(r.max_batch) == [free // 39_518_208, free // (39_518_208 + 12 * 2048)] == [804, 803]
    # a model without a state is still unbounded at context 0
    assert math.isinf(float(rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 2], context=0).max_batch[0]))


def test_a_model_inside_the_on_chip_cache_gets_a_note():
    # issue 27 item 6.5: the onchip_cache figure was read by nothing.  GPT-2 in bf16: 124,439,808
    # parameters x 2 B = 248,879,616 B of weights; its KV cache 12 layers x 2 x 12 heads x 64 x 2 B = 36,864 B
    # per token.  An MI300X's Infinity Cache holds 256 MB: weights + T x 36,864 <= 256e6 up to
    # T = floor((256e6 - 248,879,616) / 36,864) = 193 at batch 1.  There a run may serve the step from the
    # cache, faster than the 5.3 TB/s HBM the memory-bound floor divides by: each such point says so.
    from roofline_decode.planning import pipeline_parallel_floor, tensor_parallel_floor
    from roofline_decode.floors.capacity import onchip_cache_bytes

    gpt2 = rd.load_model("gpt2")
    assert gpt2.weight_bytes == 248_879_616 and gpt2.kv_bytes_per_token == 36_864
    assert onchip_cache_bytes("mi300x") == 256e6 and (256e6 - 248_879_616) // 36_864 == 193
    r = rd.decode_floor(gpt2, "mi300x", batch=1, context=[0, 193, 194, 4096])
    inside = [any("on-chip cache of mi300x" in note for note in record["notes"]) for record in r.to_records()]
    assert inside == [True, True, False, False]
    # an H100's 50 MB L2 holds none of it; a device without the figure has no note
    assert not any(record["notes"] for record in rd.decode_floor(gpt2, "h100-sxm", batch=1, context=[0]).to_records())
    # per device under tensor and pipeline parallelism: about 124.5 MB each on 2 MI300X at context 0
    tp = tensor_parallel_floor(gpt2, "mi300x", 1, 0, 2)
    assert any("MB resident per device fit in the 256 MB on-chip cache" in note for note in tp.notes)
    assert any("on-chip cache" in note for note in pipeline_parallel_floor(gpt2, "mi300x", 1, 0, 2).notes)
    assert not any("on-chip cache" in note for note in tensor_parallel_floor("llama-3.1-8b", "mi300x", 1, 0, 2).notes)
