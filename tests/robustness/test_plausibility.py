"""Issue 12, item 4: custom hardware in the wrong unit is caught; every real device is admitted."""

from __future__ import annotations

import pytest

import roofline_decode as rd
from roofline_decode.errors import InvalidValueError, SpecFileError
from roofline_decode.specs.accelerator import Accelerator, MemoryTier
from roofline_decode.specs.spec_file import load_spec_file
from tests.catalog.test_catalog_loading import GOOD

H100 = dict(name="x", memory_bandwidth=3.35e12, memory_capacity=80e9, peak_flops={"bf16": 989e12, "fp8": 1979e12})


def test_every_catalog_device_and_tier_passes():
    for gpu in rd.list_accelerators():
        assert rd.load_accelerator(gpu).plausibility_checks
    for tier in rd.list_memory_tiers():
        assert rd.load_memory_tier(tier).plausibility_checks


@pytest.mark.parametrize("fields", [
    # small and consumer devices (DESIGN.md §4b): a Raspberry Pi 4 (LPDDR4 ~4 GB/s, ~13.5 GFLOP/s fp32,
    # 1 GB), a DDR5 desktop CPU (~50-90 GB/s, ~1 TFLOP/s), a 12-channel DDR5 server (~600 GB/s),
    # a MacBook Air M2 (100 GB/s, 8 GB), a Pascal GeForce (fp16 at 1/64 of fp32), a V100 with its
    # DP4A int8 at half the fp16 tensor rate, a Groq LPU (230 MB SRAM, 80 TB/s), Cerebras WSE-3
    # (44 GB SRAM at 21 PB/s, 125 PFLOP/s sparse): above 50 TB/s, with their memory named SRAM
    dict(memory_bandwidth=4e9, memory_capacity=1e9, peak_flops={"fp32": 13.5e9}),
    dict(memory_bandwidth=5e10, memory_capacity=32e9, peak_flops={"fp32": 1e12, "bf16": 2e12}),
    dict(memory_bandwidth=6e11, memory_capacity=768e9, peak_flops={"fp32": 5e12, "bf16": 1e13}),
    dict(memory_bandwidth=1e11, memory_capacity=8e9),
    dict(memory_bandwidth=3.2e11, memory_capacity=8e9, peak_flops={"fp32": 8.9e12, "fp16": 0.139e12}),
    dict(memory_bandwidth=9e11, memory_capacity=32e9, peak_flops={"fp16": 125e12, "int8": 62e12, "fp32": 15.7e12}),
    dict(memory_bandwidth=8e13, memory_capacity=2.3e8, peak_flops={"fp16": 188e12, "int8": 750e12}, memory_type="SRAM"),
    dict(memory_bandwidth=2.1e16, memory_capacity=44e9, peak_flops={"fp16": 125e15 / 8}, memory_type="on-chip SRAM"),
    # the fastest DRAM devices: 8 TB/s of HBM3E (B200, MI355X), about 20 TB/s announced for HBM4
    dict(memory_bandwidth=8e12, memory_capacity=192e9, peak_flops={"bf16": 2.25e15}, memory_type="HBM3e"),
    dict(memory_bandwidth=2.2e13, memory_capacity=288e9, peak_flops={"bf16": 5e15}, memory_type="HBM4"),
])
def test_real_devices_are_admitted(fields):
    Accelerator(name="real", **fields)


def test_the_host_probe_accelerator_passes():
    from roofline_decode.kernel.probe import BandwidthReport, host_accelerator

    # a slow CPU as `validate` would measure it: 2 GB/s read, 1 GFLOP/s fp32
    report = BandwidthReport(read_bandwidth=2e9, copy_bandwidth=1.5e9, fp32_flops=1e9, array_bytes=2**28,
                         cache_bytes=2**25, repeats=3, threads=1)
    assert host_accelerator(report).memory_bandwidth == 2e9


@pytest.mark.parametrize("field, value, words", [
    ("memory_bandwidth", 3350, "did you mean 3350 GB/s = 3.35e+12 B/s"),
    ("memory_bandwidth", 3.35, "did you mean 3.35 TB/s = 3.35e+12 B/s"),
    ("memory_capacity", 80, "did you mean 80 GB = 8e+10 B"),
    ("peak_flops", {"bf16": 989}, "did you mean 989 TFLOP/s = 9.89e+14 FLOP/s"),
    ("peak_flops", {"bf16": 989e12, "fp8": 1979e9}, "peak_flops.fp8=1.979e+12 FLOP/s is more than 100 times below"),
    ("memory_bandwidth", 3.35e24, "multiplied by its unit again"),
])
def test_unit_slips_name_the_field_the_value_and_the_likely_mistake(field, value, words):
    with pytest.raises(InvalidValueError) as info:
        Accelerator(**{**H100, field: value})
    assert field in str(info.value) and words in str(info.value) and "plausibility_checks=False" in str(info.value)


@pytest.mark.parametrize("memory_type", ["GDDR6", "HBM3e", "LPDDR5X unified", None])
def test_a_dram_bandwidth_beyond_any_hbm_device_names_the_tb_for_gb_slip(memory_type):
    """A consumer card's 256 GB/s typed as 256 TB/s = 2.56e14 B/s: 32 times the fastest HBM3E
    device (8 TB/s), and inside the 1e17 B/s that on-chip SRAM reaches.  Above 50 TB/s only a
    device whose memory_type names SRAM is admitted; the error names the likely slip."""
    with pytest.raises(InvalidValueError) as info:
        Accelerator(name="card", memory_bandwidth=2.56e14, memory_capacity=16e9, memory_type=memory_type)
    message = str(info.value)
    assert "memory_bandwidth" in message and "above the 50 TB/s of any DRAM device" in message
    assert "did you mean 256 GB/s = 2.56e+11 B/s (GB/s typed as TB/s)?" in message
    assert 'memory_type = "SRAM"' in message and "plausibility_checks=False" in message
    assert Accelerator(name="card", memory_bandwidth=5e13, memory_capacity=16e9, memory_type=memory_type)  # the edge
    assert Accelerator(name="sram", memory_bandwidth=2.56e14, memory_capacity=16e9, memory_type="sram (on chip)")
    assert Accelerator(name="card", memory_bandwidth=2.56e14, memory_capacity=16e9, memory_type=memory_type,
                       plausibility_checks=False).memory_bandwidth == 2.56e14


def test_a_spec_file_of_a_consumer_card_at_256_tb_s_is_refused(tmp_path):
    text = (GOOD.replace('vendor = "Test"\n', 'vendor = "Test"\ncategory = "consumer"\nmemory_type = "GDDR6"\n')
            .replace("value = 2.0\n", "value = 256\n"))
    path = tmp_path / "card.toml"
    path.write_text(text)
    with pytest.raises(SpecFileError) as info:
        load_spec_file(path)
    message = str(info.value)
    assert "card.toml" in message and "memory_bandwidth:" in message and "did you mean 256 GB/s" in message
    path.write_text(text.replace("value = 256\n", "value = 0.256\n"))  # what the datasheet says
    assert load_spec_file(path).memory_bandwidth == pytest.approx(2.56e11)
    path.write_text(text.replace('memory_type = "GDDR6"', 'memory_type = "SRAM"'))
    assert load_spec_file(path).memory_bandwidth == pytest.approx(2.56e14)


def test_opt_out_admits_exotic_hardware_and_replace_keeps_checking():
    exotic = Accelerator(**{**H100, "memory_bandwidth": 3350}, plausibility_checks=False)
    assert exotic.memory_bandwidth == 3350
    with pytest.raises(InvalidValueError, match="memory_capacity"):
        rd.load_accelerator("h100-sxm").replace(memory_capacity=80)
    with pytest.raises(InvalidValueError, match="bandwidth"):
        MemoryTier(name="slow link", bandwidth=16)


def test_a_spec_file_reports_every_problem_at_once(tmp_path):
    text = (GOOD.replace('vendor = "Test"\n', "").replace('name = "Test GPU"\n', "")
            .replace('unit = "TB/s"', 'unit = "TB/sec"').replace('kind = "derived"', 'kind = "guess"'))
    path = tmp_path / "many.toml"
    path.write_text(text)
    with pytest.raises(SpecFileError) as info:
        load_spec_file(path)
    message = str(info.value)
    for field in ("name:", "vendor:", "memory_bandwidth.unit:", "peak_flops.bf16.kind:"):
        assert field in message, field
    assert "more problem" not in message


def test_a_spec_file_in_the_wrong_unit_names_each_figure(tmp_path):
    text = GOOD.replace("value = 64\n", "value = 64e-9\n").replace("value = 400\n", "value = 400e-12\n")
    path = tmp_path / "units.toml"
    path.write_text(text)
    with pytest.raises(SpecFileError) as info:
        load_spec_file(path)
    assert "memory_capacity:" in str(info.value) and "peak_flops.bf16:" in str(info.value)
    path.write_text(text.replace('vendor = "Test"', 'vendor = "Test"\nplausibility_checks = false'))
    assert load_spec_file(path).memory_capacity == pytest.approx(64)


@pytest.mark.parametrize("change, field", [({"memory_bandwidth": 5e-324}, "memory_bandwidth"),
                                           ({"memory_capacity": 0.5}, "memory_capacity"),
                                           ({"peak_flops": {"bf16": 1e-300}}, "peak_flops.bf16")])
def test_figures_below_one_si_unit_are_refused_even_without_plausibility_checks(change, field):
    # found by the fuzz suite: 5e-324 B/s made every time overflow to inf (with a warning)
    device = rd.load_accelerator("h100-sxm")
    with pytest.raises(InvalidValueError, match=rf"{field} must be at least 1 .* even with plausibility_checks=False"):
        device.replace(plausibility_checks=False, **change)
    assert device.replace(plausibility_checks=False, **{k: 1.0 if k != "peak_flops" else {"bf16": 1.0} for k in change})
