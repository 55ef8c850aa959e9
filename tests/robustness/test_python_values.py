"""Python values that used to crash or give a silent wrong answer (issue 27, item 4): each now
gives an answer or one InvalidValueError/UnknownIdError that names the argument."""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode.errors import InvalidValueError, UnknownIdError
from roofline_decode.floors.energy import PRICE_RANGE

pytest.importorskip("xarray")


@pytest.fixture(scope="module")
def floor():
    return rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096)


@pytest.mark.parametrize("price", [1e308, 5e-324, True, "3.5", float("nan"), -1.0, 0.0, 2e6])
def test_a_price_is_a_real_number_in_its_range(floor, price):
    with pytest.raises(InvalidValueError, match="price_per_hour=.*dollars for one device for one hour"):
        floor.cost_per_million_tokens(price)


def test_prices_at_the_ends_of_the_range_give_finite_costs(floor):
    low, high = PRICE_RANGE
    costs = [float(floor.cost_per_million_tokens(p)) for p in (low, 3.0, high)]
    # $3/h at 215.5 tokens/s (4.641 ms per token): 3 / 3600 / 215.5 x 1e6 = $3.867 per million
    assert costs[1] == pytest.approx(3.0 / 3600 * float(floor.step_time_s) * 1e6)
    # the same law at both ends of the range: finite, and proportional to the price
    assert costs == pytest.approx([p / 3600 * float(floor.step_time_s) * 1e6 for p in (low, 3.0, high)], rel=1e-12)


def test_frontier_lists_a_device_once():
    twice = rd.planning.frontier("llama-3.1-8b", ["h100-sxm", "h100-sxm"], 4096, batch=[1, 8], tp=[1, 1, 2])
    once = rd.planning.frontier("llama-3.1-8b", ["h100-sxm"], 4096, batch=[1, 8], tp=[1, 2])
    assert [(p.accelerator, p.num_devices, p.batch) for p in twice.points] == \
           [(p.accelerator, p.num_devices, p.batch) for p in once.points] == \
           [("h100-sxm", 1, 1.0), ("h100-sxm", 1, 8.0), ("h100-sxm", 2, 1.0), ("h100-sxm", 2, 8.0)]


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"context": "abc"}, "context"), ({"context": [1, 2]}, "context"), ({"batch": ["a"]}, "batch"),
    ({"batch": [0.5]}, "batch"), ({"tp": ["2"]}, "tp"), ({"tp": [10**400]}, "tp"), ({"tp": [1.5]}, "tp"),
    ({"tp": []}, "tp"), ({"batch": []}, "batch")])
def test_frontier_refuses_a_bad_argument_by_name(kwargs, field):
    args = {"context": 4096, **kwargs}
    with pytest.raises(InvalidValueError, match=f"^{field}="):
        rd.planning.frontier("llama-3.1-8b", ["h100-sxm"], args.pop("context"), **args)


def test_the_envelope_axis_is_one_name():
    front = rd.planning.frontier("llama-3.1-8b", ["h100-sxm"], 4096, batch=[1, 8], tp=[1])
    with pytest.raises(InvalidValueError, match=r"^y=\['cost'\] .* one of throughput"):
        front.envelope(["cost"])


def test_the_default_frontier_grid_holds_the_largest_batch_that_fits():
    """Llama-3.1-8B bf16 at 4096 tokens on one H100: 81,559 MiB less 2 GiB = 77.647 GiB usable
    (83,373,326,336 B), 16,060,522,496 B of weights and 536,870,912 B of KV per sequence:
    (83,373,326,336 - 16,060,522,496) / 536,870,912 = 125.4 -> 125 sequences (capacity.max_batch)."""
    front = rd.planning.frontier("llama-3.1-8b", ["h100-sxm"], 4096, tp=[1])
    largest = rd.planning.max_batch("llama-3.1-8b", "h100-sxm", context=4096)
    fitting = [p.batch for p in front.points if p.fits]
    assert max(fitting) == largest == 125
    assert not any(p.fits for p in front.points if p.batch > largest)


def test_sweep_refuses_routing_that_is_not_a_number():
    with pytest.raises(InvalidValueError, match=r"^routing=\['x'\].*'uniform', 'identical'"):
        rd.sweep(["mixtral-8x7b"], ["h100-sxm"], batch=[1, 2], context=[0], routing=["x"])


@pytest.mark.parametrize("latency", ["x" * 300, "a\x00b", "../latency_profiles/eager-launch"])
def test_a_latency_id_that_no_file_can_have_is_an_unknown_id(latency):
    with pytest.raises(UnknownIdError, match="latency profile"):
        rd.decode_floor("llama-3.1-8b", "h100-sxm", latency=latency)


@pytest.mark.parametrize("loader", [rd.load_model, rd.load_accelerator])
def test_an_id_with_a_nul_byte_is_refused(loader):
    with pytest.raises(InvalidValueError, match="without NUL bytes"):
        loader("llama-3.1-8b\x00.json")


@pytest.mark.parametrize("field", ["operation_latency", "collective_latency", "step_latency"])
def test_a_latency_of_a_second_or_more_is_a_unit_slip(field):
    values = {"operation_latency": 1.3e-6, "operations_per_layer": 10, field: 1e300}
    with pytest.raises(InvalidValueError, match=f"{field}.*less than or equal to 1"):  # a SpecValidationError
        rd.LatencyProfile(name="slip", **values)


@pytest.mark.parametrize("call", [
    lambda lat: rd.planning.plan("llama-3.1-70b", "h100-sxm", 8, 4096, tp=8, collective_latency=lat),
    lambda lat: rd.planning.tensor_parallel_floor("llama-3.1-70b", "h100-sxm", 8, 4096, 8, collective_latency=lat),
])
def test_a_collective_latency_of_more_than_a_second_is_refused(call):
    # the fuzz suite drew 2.8e306 s, which overflowed the step time to inf: a unit slip, as LatencyProfile says
    call(1.0)
    for value in (1.5, 2.8e306, float("inf")):
        with pytest.raises(InvalidValueError, match="collective_latency.*from 0 to 1 s"):
            call(value)


def test_xarray_keeps_two_formats_of_one_model_apart():
    spec = rd.load_model("llama-3.1-8b")
    sweep = rd.sweep([spec, spec.with_precision(weights="int4")], ["h100-sxm"], batch=[1, 2], context=[0])
    data = sweep.to_xarray()
    assert list(data.model.values) == ["Llama-3.1-8B (bf16 weights, bf16 KV)", "Llama-3.1-8B (int4 weights, bf16 KV)"]
    weights = data.weight_bytes.sel(accelerator=sweep[0].accelerator, batch=1, context=0).values
    assert list(weights) == [float(f.weight_bytes[0, 0]) for f in sweep]
    assert weights[0] == pytest.approx(4 * weights[1], rel=0.01)  # 16 vs 4 bits per weight


def test_xarray_of_a_repeated_model_and_device_and_a_mixed_precision_ridge():
    sweep = rd.sweep(["deepseek-v3"] * 2, ["mi300x"] * 2, batch=[1], context=[0, 4096])
    data = sweep.to_xarray()
    assert dict(data.sizes) == {"model": 1, "accelerator": 1, "batch": 1, "context": 2}
    # fp8 matmuls and bf16 attention: the effective peak, and so the ridge, depend on the context
    ridge = data.ridge_point.values.ravel()
    assert ridge.shape == (2,) and ridge[0] != ridge[1]
    np.testing.assert_array_equal(ridge, np.broadcast_to(sweep[0].ridge_point, (1, 2)).ravel())


@pytest.mark.parametrize(("call", "name"), [
    (lambda v: rd.planning.plan("llama-3.1-8b", "h100-sxm", batch=1, context=1024, overlapped_tier=v), "overlapped_tier"),
    (lambda v: rd.planning.plan("llama-3.1-8b", "h100-sxm", batch=1, context=1024, binary_units=v), "binary_units"),
    (lambda v: rd.planning.offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", overlapped=v), "overlapped"),
    (lambda v: rd.planning.offload_floor("llama-3.1-8b", "h100-sxm", None, overlap_communication=v),
     "overlap_communication"),
])
@pytest.mark.parametrize("value", ["no", "false", 0, 1, None])
def test_a_switch_is_true_or_false_not_a_string(call, name, value):
    """bool("no") is True: a string, a number or None is refused instead of turning a switch on."""
    with pytest.raises(InvalidValueError, match=f"^{name}=.* True or False"):
        call(value)


@pytest.mark.parametrize(("call", "name"), [
    (lambda v: rd.decode_floor("llama-3.1-8b", "h100-sxm", sparse=v), "sparse"),
    (lambda v: rd.sweep(["llama-3.1-8b"], ["h100-sxm"], sparse=v), "sparse"),
    (lambda v: rd.prefill_floor("llama-3.1-8b", "h100-sxm", 2048, sparse=v), "sparse"),
    (lambda v: rd.mixed_step_floor("llama-3.1-8b", "h100-sxm", 8, 1024, 512, sparse=v), "sparse"),
    (lambda v: rd.request_floor("llama-3.1-8b", "h100-sxm", 2048, 16, sparse=v), "sparse"),
    (lambda v: rd.request_floor("llama-3.1-8b", "h100-sxm", 2048, 16, cascade=v), "cascade"),
    (lambda v: rd.speculative_floor("llama-3.1-8b", "h100-sxm", draft="llama-3.2-1b", sparse=v), "sparse"),
    (lambda v: rd.planning.tensor_parallel_floor("llama-3.1-8b", "h100-sxm", num_devices=2, overlap_communication=v),
     "overlap_communication"),
])
@pytest.mark.parametrize("value", ["false", "no", 1, None])
def test_the_floors_switches_are_true_or_false(call, name, value):
    """prefill_floor(..., sparse="false") halved TTFT and cascade="no" turned the cascade kernel on."""
    with pytest.raises(InvalidValueError, match=f"^{name}=.* True or False"):
        call(value)


def test_prefill_routing_is_a_name_not_a_count():
    """A measured expert count is decode_floor's (one per batch); an array crashed prefill_floor."""
    with pytest.raises(InvalidValueError, match=r"^routing=array\(\[2\., 3\.\]\) .* 'uniform' or 'identical'"):
        rd.prefill_floor("mixtral-8x7b", "h100-sxm", 512, routing=np.array([2.0, 3.0]))


@pytest.mark.parametrize(("make", "name"), [
    (lambda t: t.models(max_layers=2.5), "max_layers"), (lambda t: t.models(max_vocab="big"), "max_vocab"),
    (lambda t: t.models(hidden_sizes="x"), "hidden_sizes"), (lambda t: t.models(kinds=["dense", "rnn"]), "kinds"),
    (lambda t: t.accelerators(bandwidth="fast"), "bandwidth"), (lambda t: t.accelerators(peak=(2.0, 1.0)), "peak"),
    (lambda t: t.accelerators(capacity=(1.0, float("inf"))), "capacity"),
    (lambda t: t.accelerators(precisions=["fp7"]), "precisions"),
    (lambda t: t.accelerators(uniform_peaks="yes"), "uniform_peaks"),
])
def test_the_testing_strategies_check_their_arguments_when_made(make, name):
    pytest.importorskip("hypothesis")
    import roofline_decode.testing as strategies

    with pytest.raises(InvalidValueError, match=f"^{name}="):
        make(strategies)


def test_a_speculative_context_names_the_value_the_caller_gave():
    """The draft steps reach context + 16: 2**53 - 4 was refused as 2**53 + 2, a value never passed."""
    with pytest.raises(InvalidValueError, match=r"^context=9007199254740988\.0 .* 2\*\*53 - 16"):
        rd.speculative_floor("llama-3.1-8b", "h100-sxm", draft="llama-3.2-1b", context=2**53 - 4)
    assert np.isfinite(rd.speculative_floor("llama-3.1-8b", "h100-sxm", draft="llama-3.2-1b",
                                            context=2**53 - 16).speedup).all()


@pytest.mark.parametrize("value", [float("inf"), "inf", float("nan")])
def test_board_power_and_tier_capacity_are_finite(value):
    """A calibration file carrying its device spec with tdp_w 'inf' loaded and could not be saved
    again (found by the fuzz suite); a memory tier's capacity had the same gap."""
    with pytest.raises(InvalidValueError, match="tdp_w: Input should be a finite number"):
        rd.Accelerator(name="x", memory_bandwidth=4e11, memory_capacity=64e9, tdp_w=value)
    with pytest.raises(InvalidValueError, match="capacity: Input should be a finite number"):
        rd.MemoryTier(name="t", bandwidth=6.4e10, capacity=value)
