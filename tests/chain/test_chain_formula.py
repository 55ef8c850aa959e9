"""The serial-chain formula and the latency profiles (issue: the third constraint).

Hand values: Llama-3.2-1B has 16 layers (config.json ``num_hidden_layers``), Llama-3.1-70B 80.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode.errors import RooflineError, SpecFileError, UnknownIdError
from roofline_decode.formulas import ring_all_reduce_time, serial_chain_time
from roofline_decode.specs.latency import LatencyProfile, list_latency_profiles, load_latency_profile


def test_single_device_chain_by_hand():
    # 16 layers x 10 kernels x 1.3 us + 20 us sampling = 208 + 20 us
    assert serial_chain_time(16, 10, 1.3e-6, step_latency=20e-6) == pytest.approx(228e-6, rel=1e-12)


def test_tensor_parallel_chain_by_hand():
    # 80 layers x (10 x 1.3 us + 2 all-reduces x (6 us + 2(n-1)/n x 16 KiB / 450 GB/s)), n = 8
    all_reduce = ring_all_reduce_time(8192 * 2, 8, 450e9, 6e-6)
    assert all_reduce == pytest.approx(6e-6 + 1.75 * 16384 / 450e9)
    expected = 80 * (10 * 1.3e-6 + 2 * all_reduce)
    assert serial_chain_time(80, 10, 1.3e-6, 2, all_reduce) == pytest.approx(expected, rel=1e-12)


def test_pipeline_hops_count_each_hop():
    assert serial_chain_time(8, 0, 0, pipeline_hops=4, hop_time=3e-6) == pytest.approx(12e-6)


def test_broadcasts():
    out = serial_chain_time(np.array([16, 32, 80])[:, None], 10, np.array([1e-6, 4e-6])[None, :])
    assert out.shape == (3, 2)
    assert out[2, 1] == pytest.approx(80 * 10 * 4e-6)


@settings(max_examples=60, deadline=None)
@given(layers=st.integers(1, 200), ops=st.floats(0, 50), t_op=st.floats(0, 1e-4), ar=st.floats(0, 4),
       t_ar=st.floats(0, 1e-4), hops=st.integers(0, 16), t_hop=st.floats(0, 1e-4), t0=st.floats(0, 1e-3))
def test_chain_is_linear_in_layers(layers, ops, t_op, ar, t_ar, hops, t_hop, t0):
    one = serial_chain_time(layers, ops, t_op, ar, t_ar, hops, t_hop, t0)
    two = serial_chain_time(2 * layers, ops, t_op, ar, t_ar, hops, t_hop, t0)
    outside = hops * t_hop + t0
    assert two - outside == pytest.approx(2 * (one - outside), rel=1e-9, abs=1e-15)
    assert one >= outside >= 0


def test_presets_load_with_sources():
    assert {"cuda-graph-h100", "eager-launch"} <= set(list_latency_profiles())
    graph = load_latency_profile("cuda-graph-h100")
    assert graph.operation_latency == pytest.approx(1.3e-6)
    assert graph.operations_per_layer == 10
    assert graph.collective_latency == pytest.approx(6e-6)
    assert graph.step_latency == 0
    for name in list_latency_profiles():
        profile = load_latency_profile(name)
        assert profile.id == name
        for key, figure in profile.figures.items():
            assert figure.source in profile.sources, (name, key)
            assert profile.sources[figure.source].url.startswith("https://")
            assert getattr(profile, key) == pytest.approx(figure.si_value)
    assert load_latency_profile("eager-launch").operation_latency == pytest.approx(4e-6)


def test_user_profile_from_numbers_and_passthrough():
    mine = LatencyProfile(name="mine", operation_latency=2e-6, operations_per_layer=7)
    assert load_latency_profile(mine) is mine
    assert mine.label == "mine" and mine.collective_latency == 0


@pytest.mark.parametrize("bad", ["nope", "", "../hardware_specs/nvidia/h100-sxm", 5, None])
def test_unknown_profile_is_our_error(bad):
    with pytest.raises(UnknownIdError):
        load_latency_profile(bad)


def test_negative_latency_is_rejected():
    with pytest.raises(RooflineError, match="operation_latency"):
        LatencyProfile(name="x", operation_latency=-1e-6, operations_per_layer=5)
    with pytest.raises(RooflineError, match="operations_per_layer"):
        LatencyProfile(name="x", operation_latency=1e-6, operations_per_layer=math.inf)


def test_profile_file_errors_name_file_and_field(tmp_path):
    good = (load_latency_profile("eager-launch").path)
    text = open(good, encoding="utf-8").read()
    bad = tmp_path / "bad.toml"
    bad.write_text(text.replace('unit = "us"', 'unit = "fortnights"', 1), encoding="utf-8")
    with pytest.raises(SpecFileError, match=r"bad\.toml.*operation_latency\.unit"):
        load_latency_profile(bad)
    bad.write_text(text.replace('source = "pegainfer-launch"', 'source = "missing"', 1), encoding="utf-8")
    with pytest.raises(SpecFileError, match="operation_latency.source"):
        load_latency_profile(bad)
    bad.write_text("type = [", encoding="utf-8")
    with pytest.raises(SpecFileError, match="malformed TOML"):
        load_latency_profile(str(bad))


PROFILE = """\
type = "latency_profile"
name = "units test"

[operation_latency]
value = {op}
unit = "{unit}"
kind = "measured"
source = "s"

[operations_per_layer]
value = 10
unit = "1"
kind = "derived"
derivation = "by hand"
source = "s"

[collective_latency]
value = 6000
unit = "ns"
kind = "measured"
source = "s"

[step_latency]
value = 0.05
unit = "ms"
kind = "measured"
source = "s"

[sources.s]
title = "test"
url = "https://example.com/"
retrieved = "2026-01-15"
"""

#: 4 microseconds as each unit of the table prints it
FOUR_MICROSECONDS = {"s": "4e-6", "ms": "0.004", "us": "4", "µs": "4", "ns": "4000"}


def test_the_four_microseconds_cover_every_time_unit():
    from roofline_decode.specs.latency import TIME_UNITS

    assert set(FOUR_MICROSECONDS) == set(TIME_UNITS)  # a new unit needs its case below


@pytest.mark.parametrize("unit", sorted(FOUR_MICROSECONDS))
def test_profile_files_in_every_unit_convert_to_seconds(tmp_path, unit):
    """Every bundled preset prints microseconds; a user's file may print s, ms or ns.  4 us as
    each unit prints it is 4e-6 s; 6,000 ns is 6e-6 s; 0.05 ms is 5e-5 s.  Llama-3.2-1B (16
    layers, 10 operations each) then chains 16 x 10 x 4 us + 50 us = 0.69 ms per step."""
    from roofline_decode import decode_floor

    path = tmp_path / f"mine-{unit}.toml"
    path.write_text(PROFILE.format(op=FOUR_MICROSECONDS[unit], unit=unit), encoding="utf-8")
    profile = load_latency_profile(path)
    assert profile.operation_latency == pytest.approx(4e-6, rel=1e-12)
    assert profile.collective_latency == pytest.approx(6e-6, rel=1e-12)
    assert profile.step_latency == pytest.approx(5e-5, rel=1e-12)
    assert profile.figures["operation_latency"].unit == unit  # the unit as printed is kept
    r = decode_floor("llama-3.2-1b", "h200-sxm", batch=1, context=4096, latency=path)
    assert float(r.chain_time_s) == pytest.approx(16 * 10 * 4e-6 + 5e-5, rel=1e-12)
