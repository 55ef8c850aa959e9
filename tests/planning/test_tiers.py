"""Offloading to a slower memory tier (laws, values, the plain answer)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import formulas as f
from roofline_decode.errors import InvalidValueError
from roofline_decode.planning import can_tier_feed, offload_floor, required_tier_bandwidth

TIERS = rd.list_memory_tiers()
MODELS = ["llama-3.1-8b", "llama-3.1-70b", "mistral-7b-v0.1", "mixtral-8x7b"]
DEVICES = ["h100-sxm", "a100-80gb-sxm", "l4", "mi300x"]
#: The tiers slower than every device above (the GH200's NVLink-C2C tier, 450 GB/s, outruns the L4's 300 GB/s).
SLOWER_TIERS = [t for t in TIERS
                if rd.load_memory_tier(t).read_bandwidth < min(rd.load_accelerator(d).memory_bandwidth for d in DEVICES)]


def test_catalog_tiers_are_there():
    for tier in ("pcie4-x16", "pcie5-x16", "cxl2-x8", "cxl2-x16", "ddr5-4800-channel"):
        assert tier in TIERS


@settings(max_examples=50, deadline=None)
@given(model=st.sampled_from(MODELS), device=st.sampled_from(DEVICES), tier=st.sampled_from(SLOWER_TIERS),
       batch=st.integers(1, 64), context=st.integers(0, 65536), kv=st.floats(0, 1), weights=st.floats(0, 1))
def test_offloading_to_a_slower_tier_is_never_faster(model, device, tier, batch, context, kv, weights):
    # the serial floor (default): every offloaded byte costs more time than it did in HBM
    floor = offload_floor(model, device, tier, batch, context, kv_fraction=kv, weight_fraction=weights)
    assert rd.load_memory_tier(tier).read_bandwidth < rd.load_accelerator(device).memory_bandwidth
    assert float(floor.step_time_s) >= float(floor.hbm_only_step_time_s) * (1 - 1e-12)
    more = offload_floor(model, device, tier, batch, context, kv_fraction=min(1, kv + 0.1), weight_fraction=weights)
    assert float(more.step_time_s) >= float(floor.step_time_s) * (1 - 1e-12)
    # overlapped <= serial, never below either tier's own time, and never below all bytes streaming
    # through both tiers at once: perfect overlap can beat HBM alone by at most the tier's share of
    # the summed bandwidth (PCIe 5.0 adds 2% to an H100)
    over = offload_floor(model, device, tier, batch, context, kv_fraction=kv, weight_fraction=weights,
                         overlapped=True)
    assert float(over.step_time_s) <= float(floor.step_time_s) * (1 + 1e-12)
    assert float(over.memory_time_s) >= max(float(over.tier_time_s), float(over.device_time_s)) * (1 - 1e-12)
    total = float(over.device_bytes + over.tier_bytes)
    aggregate = rd.load_accelerator(device).memory_bandwidth + over.tier_bandwidth
    assert float(over.memory_time_s) >= total / aggregate * (1 - 1e-12)


def test_bytes_are_conserved_and_resident_bytes_move():
    zero = offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768)
    half = offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768, kv_fraction=0.5)
    assert float(half.device_bytes + half.tier_bytes) == pytest.approx(float(zero.device_bytes))
    assert float(half.tier_resident_bytes) == pytest.approx(0.5 * 16 * 32768 * 131072)
    assert float(half.device_resident_bytes + half.tier_resident_bytes) == pytest.approx(
        float(zero.device_resident_bytes))


def test_pcie5_value():
    # half of 16 x 4 GiB of KV = 34.36 GB per step through 63 GB/s (PCIe 5.0 x16 per direction): 545 ms
    floor = offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768, kv_fraction=0.5)
    assert float(floor.tier_time_s) == pytest.approx(34.36e9 / 63e9, rel=1e-3)
    assert float(floor.slowdown) > 20


def test_required_bandwidth_meets_the_target_exactly():
    slo_ms = 100.0
    need = float(required_tier_bandwidth("llama-3.1-8b", "h100-sxm", 16, 32768, slo_ms=slo_ms,
                                         kv_fraction=0.5))
    custom = rd.MemoryTier(name="just enough", bandwidth=need)
    floor = offload_floor("llama-3.1-8b", "h100-sxm", custom, 16, 32768, kv_fraction=0.5)
    assert float(floor.step_time_s) * 1e3 == pytest.approx(slo_ms, rel=1e-9)
    overlapped = float(required_tier_bandwidth("llama-3.1-8b", "h100-sxm", 16, 32768, slo_ms=slo_ms,
                                               kv_fraction=0.5, overlapped=True))
    assert overlapped < need


def test_required_bandwidth_is_infinite_when_hbm_alone_misses():
    need = required_tier_bandwidth("llama-3.1-70b", "h100-sxm", 16, 32768, slo_ms=5, kv_fraction=0.5)
    assert np.isinf(need)
    assert np.isinf(f.required_tier_bandwidth(1e9, 0.01, 1e10, 1e12))


def test_plain_answer():
    no = can_tier_feed("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768, kv_fraction=0.5)
    assert not no and str(no).startswith("No:") and "pcie5-x16" in str(no)
    # a sliver of the weights over a fast link hides behind the HBM reads
    yes = can_tier_feed("llama-3.1-8b", "h100-sxm", "pcie5-x16", 64, 4096, weight_fraction=0.001)
    assert yes and str(yes).startswith("Yes")
    target = can_tier_feed("llama-3.1-8b", "h100-sxm", "pcie5-x16", 16, 32768, kv_fraction=0.05,
                           slo_ms=100)
    assert "100 ms per token" in str(target) and target.required_bandwidth is not None


def test_ddr5_channels_aggregate():
    one = offload_floor("llama-3.1-8b", "h100-sxm", "ddr5-4800-channel", 8, 8192, kv_fraction=1.0)
    eight = offload_floor("llama-3.1-8b", "h100-sxm", "ddr5-4800-channel", 8, 8192, kv_fraction=1.0, links=8)
    assert eight.tier_bandwidth == 8 * 38.4e9
    assert float(eight.tier_time_s) == pytest.approx(float(one.tier_time_s) / 8)


@pytest.mark.parametrize("kwargs,field", [(dict(kv_fraction=1.5), "kv_fraction"),
                                          (dict(weight_fraction=-0.1), "weight_fraction"),
                                          (dict(links=0), "links"), (dict(kv_fraction="half"), "kv_fraction"),
                                          (dict(kv_fraction=float("nan")), "kv_fraction"), (dict(links=1.5), "links")])
def test_bad_offload_arguments(kwargs, field):
    with pytest.raises(InvalidValueError, match=field):
        offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", 1, 1024, **kwargs)


def test_offload_without_a_tier_is_an_error():
    with pytest.raises(InvalidValueError, match="tier"):
        offload_floor("llama-3.1-8b", "h100-sxm", None, 1, 1024, kv_fraction=0.5)


def test_a_bidirectional_tier_reads_at_half_its_figure():
    # a "bidirectional" figure sums both directions; reads toward the device get half of it,
    # while a per-direction or half-duplex figure is what reads get (MemoryTier.read_bandwidth)
    both = rd.MemoryTier(name="128 GB/s both ways", bandwidth=128e9, direction="bidirectional")
    one = rd.MemoryTier(name="128 GB/s each way", bandwidth=128e9, direction="per_direction")
    shared = rd.MemoryTier(name="128 GB/s shared bus", bandwidth=128e9, direction="half_duplex")
    assert both.read_bandwidth == 64e9
    assert one.read_bandwidth == shared.read_bandwidth == 128e9
    # offload_floor: the same tier bytes take twice as long through the bidirectional figure.
    # Llama-3.1-8B, B = 16 at T = 32768, half its KV in the tier: 0.5 x 16 x 32768 x 131072 B
    # (32 layers x 2 x 8 KV heads x 128 x 2 B = 131072 B per token) = 34.36 GB per step.
    tier_bytes = 0.5 * 16 * 32768 * 131072
    fast = offload_floor("llama-3.1-8b", "h100-sxm", one, 16, 32768, kv_fraction=0.5)
    slow = offload_floor("llama-3.1-8b", "h100-sxm", both, 16, 32768, kv_fraction=0.5)
    assert float(fast.tier_bytes) == float(slow.tier_bytes) == pytest.approx(tier_bytes, rel=1e-12)
    assert slow.tier_bandwidth == 64e9 and fast.tier_bandwidth == 128e9
    assert float(fast.tier_time_s) == pytest.approx(tier_bytes / 128e9, rel=1e-12)
    assert float(slow.tier_time_s) == pytest.approx(tier_bytes / 64e9, rel=1e-12)
    # serial floor: device time + tier time (compute is far below memory here)
    assert float(slow.step_time_s) == pytest.approx(float(slow.device_time_s) + tier_bytes / 64e9, rel=1e-12)
