"""Laws and refusals of the parallel layouts (hypothesis, derandomized in CI), and the CLI flags."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import InvalidValueError, Parallel
from roofline_decode.cli import main

MOE = ["deepseek-v3", "qwen3-30b-a3b", "gpt-oss-120b", "mixtral-8x7b"]
DENSE = ["llama-3.1-8b", "llama-3.1-70b", "qwen3-next-80b-a3b"]
batches = st.sampled_from([1.0, 3.0, 16.0, 64.0, 256.0])
contexts = st.sampled_from([0.0, 512.0, 8192.0])
routings = st.sampled_from(["uniform", "identical"])


def layouts(model: str, devices: int = 8) -> list[Parallel]:
    """Every layout of ``devices`` devices per stage that ``model`` takes."""
    from roofline_decode.floors.layout import check_layout

    m, found = rd.load_model(model), []
    for tp in (1, 2, 4, 8):
        for ep in (1, 2, 4, 8):
            if devices % tp or ep > devices:
                continue
            try:
                layout = Parallel(tp=tp, attention_dp=devices // tp, ep=ep)
                check_layout(m, layout)
            except InvalidValueError:
                continue
            found.append(layout)
    return found


def step(model, layout, batch, context, routing="uniform"):
    return rd.decode_floor(model, "h200-sxm", batch=batch, context=context, parallel=layout, routing=routing)


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(MOE), batch=batches, context=contexts, routing=routings)
def test_more_expert_parallelism_never_raises_the_expert_bytes_per_rank(model, batch, context, routing):
    previous = np.inf
    for n in (1, 2, 4, 8):  # one EP rank per device of a stage of n attention-DP groups
        layout = Parallel(attention_dp=n, ep=n) if n > 1 else Parallel(tp=2)
        r = step(model, layout, batch, context, routing)
        expert = float(r.expert_read_bytes_per_device)
        assert expert <= previous * (1 + 1e-12)
        previous = expert
    # with the stage's devices fixed, how they split (ep x moe_tp) leaves the per-rank share alone
    shares = {float(step(model, Parallel(attention_dp=8, ep=ep), batch, context, routing).expert_read_bytes_per_device)
              for ep in (1, 2, 4, 8)}
    assert max(shares) == pytest.approx(min(shares), rel=1e-12)


@settings(max_examples=30, deadline=None)
@given(model=st.sampled_from(MOE + DENSE), batch=batches, context=contexts, routing=routings, data=st.data())
def test_per_rank_bytes_times_devices_cover_the_step(model, batch, context, routing, data):
    layout = data.draw(st.sampled_from(layouts(model)))
    r = step(model, layout, batch, context, routing)
    whole = rd.decode_floor(model, "h200-sxm", batch=batch, context=context, routing=routing)
    assert float(r.bytes_read_per_device) * r.num_devices >= float(whole.bytes_total) * (1 - 1e-12)
    assert float(r.flops_per_device) * r.num_devices >= float(whole.flops) * (1 - 1e-12)
    # and the busiest device never moves more than the whole step (replication aside, it has a share)
    assert float(r.step_time_s) <= float(whole.step_time_s) * (1 + 1e-12) + float(r.communication_time_s)


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(MOE), batch=batches, context=contexts, data=st.data())
def test_identical_routing_is_the_strict_floor(model, batch, context, data):
    layout = data.draw(st.sampled_from(layouts(model)))
    strict, uniform = (step(model, layout, batch, context, routing) for routing in ("identical", "uniform"))
    assert float(strict.step_time_s) <= float(uniform.step_time_s) * (1 + 1e-12)
    assert float(strict.expert_read_bytes_per_device) <= float(uniform.expert_read_bytes_per_device) * (1 + 1e-12)


@settings(max_examples=20, deadline=None)
@given(model=st.sampled_from(MOE + DENSE), batch=batches, context=contexts, routing=routings)
def test_a_one_device_layout_is_decode_floor(model, batch, context, routing):
    plain = rd.decode_floor(model, "h200-sxm", batch=batch, context=context, routing=routing)
    for layout in (Parallel(), "tp1"):
        same = rd.decode_floor(model, "h200-sxm", batch=batch, context=context, routing=routing, parallel=layout)
        assert type(same) is type(plain)
        for key in ("step_time_s", "weight_bytes", "kv_read_bytes", "flops", "compute_time_s", "notes"):
            assert np.array_equal(getattr(same, key), getattr(plain, key)) if key != "notes" else same.notes == plain.notes


@settings(max_examples=15, deadline=None)
@given(batch=batches, context=contexts, n=st.sampled_from([2, 4, 8]))
def test_tensor_layouts_equal_the_tensor_parallel_floor(batch, context, n):
    from roofline_decode.floors.parallel import tensor_parallel_floor

    layout = step("llama-3.1-70b", Parallel(tp=n), batch, context)
    wrapper = tensor_parallel_floor("llama-3.1-70b", "h200-sxm", batch, context, n)
    assert float(layout.step_time_s) == float(wrapper.step_time_s)
    assert float(layout.communication_time_s) == float(wrapper.communication_time_s)


@pytest.mark.parametrize("model, layout, field", [
    ("llama-3.1-8b", Parallel(tp=3), "parallel.tp"),  # 32 heads
    ("llama-3.1-8b", Parallel(dp=8, ep=8), "parallel.ep"),  # dense
    ("deepseek-v3", Parallel(dp=12, ep=12), "parallel.ep"),  # 256 experts
    ("mixtral-8x7b", Parallel(dp=16, ep=16), "parallel.ep"),  # 8 experts
    ("llama-3.2-1b", Parallel(pp=32), "parallel.pp"),  # 16 layers
])
def test_refusals_name_the_degree(model, layout, field):
    with pytest.raises(InvalidValueError) as info:
        rd.decode_floor(model, "h200-sxm", batch=8, context=1024, parallel=layout)
    assert info.value.field == field and str(info.value.value) in str(info.value)


def test_kv_heads_must_split_or_replicate_evenly():
    m = rd.Model(name="h12-kv3", num_layers=4, hidden_size=768, num_heads=12, num_kv_heads=3, head_dim=64,
                 intermediate_size=2048, vocab_size=1000)
    with pytest.raises(InvalidValueError, match="3 KV heads"):
        rd.decode_floor(m, "h200-sxm", batch=1, context=16, parallel="tp2")
    assert rd.decode_floor(m, "h200-sxm", batch=1, context=16, parallel="tp6").kv_replication == 2.0  # 6 = 2 x 3
    # Llama-3.1-8B: 8 KV heads, tp16 replicates each on two devices
    assert rd.decode_floor("llama-3.1-8b", "h200-sxm", batch=1, context=16, parallel="tp16").kv_replication == 2.0


def test_a_device_without_a_link_figure_is_refused_for_several_devices():
    with pytest.raises(InvalidValueError) as info:
        rd.decode_floor("llama-3.1-8b", "rtx-4090", batch=1, parallel="tp2")
    assert info.value.field == "link_bandwidth"
    r = rd.decode_floor("llama-3.1-8b", "rtx-4090", batch=1, parallel="tp2", link_bandwidth=32e9)
    assert r.link_bandwidth == 32e9
    with pytest.raises(InvalidValueError) as info:
        rd.decode_floor("llama-3.1-8b", "h200-sxm", batch=1, parallel=object())  # type: ignore[call-overload]
    assert info.value.field == "parallel"


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_layout_flags(capsys):
    code, out, _ = run(capsys, "floor", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--batch", "64", "--dp", "8",
                       "--ep", "8", "--routing", "identical")
    assert code == 0 and "8 x h200-sxm (dp8 ep8)" in out and "comm ms" in out
    code, out, _ = run(capsys, "floor", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--tp", "8", "--ep", "8",
                       "--node-size", "8", "--scale-out-gbps", "50", "--format", "json")
    records = json.loads(out)
    assert code == 0 and records[0]["parallel"] == "tp8 ep8" and records[0]["num_devices"] == 8
    code, out, _ = run(capsys, "floor", "--model", "llama-3.1-8b", "--gpu", "h200-sxm", "--tp", "2", "--energy")
    assert code == 0 and "2 x h200-sxm (tp2)" in out and "J/token floor" in out and "2 x 700 W" in out
    code, out, _ = run(capsys, "floor", "--model", "llama-3.1-8b", "--gpu", "h200-sxm", "--tp", "2", "--format", "csv")
    assert code == 0 and out.splitlines()[0].startswith("model,accelerator,parallel,num_devices")


@pytest.mark.parametrize("argv, flag", [
    (("--model", "deepseek-v3", "--tp", "8", "--ep", "3"), "--ep"),
    (("--model", "deepseek-v3", "--tp", "8", "--ep", "2", "--moe-tp", "2"), "--moe-tp"),
    (("--model", "llama-3.1-8b", "--tp", "3"), "--tp"),
    (("--model", "llama-3.1-8b", "--dp", "8", "--ep", "8"), "--ep"),
    (("--model", "llama-3.2-1b", "--pp", "32"), "--pp"),
    (("--model", "llama-3.1-8b", "--tp", "0"), "--tp"),
    (("--model", "llama-3.1-8b", "--dp", "two"), "--dp"),
])
def test_cli_bad_layouts_exit_2_naming_the_flag(capsys, argv, flag):
    code, _, err = run(capsys, "floor", "--gpu", "h200-sxm", *argv)
    assert code == 2 and flag in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_latency_profile_adds_the_serial_chain_to_a_layout():
    r = rd.decode_floor("llama-3.1-70b", "h100-sxm", batch=1, context=1024, parallel="tp8", latency="cuda-graph-h100")
    assert float(r.chain_time_s) > 0 and float(r.step_time_s) >= float(r.chain_time_s)
    assert r.latency_profile is not None and any("serial chain" in note for note in r.notes)


def test_a_device_without_a_peak_gives_no_prefill_time_under_a_layout():
    r = rd.prefill_floor("llama-3.1-8b", "gh200", 1024, parallel="tp2", link_bandwidth=32e9)
    assert np.isnan(float(r.ttft_s)) and any("needs a compute peak" in note for note in r.notes)
    decode_only = rd.mixed_step_floor("llama-3.1-8b", "gh200", 8, 1024, 0, parallel="tp2", link_bandwidth=32e9)
    assert np.isfinite(float(decode_only.step_time_s))


def test_the_scale_up_domain_and_nic_are_read_from_the_spec_where_it_has_them():
    from types import SimpleNamespace

    from roofline_decode.floors.layout_links import scale_out_of, scale_up_domain

    # the fields another change adds to the specs (Interconnect.domain_size, Accelerator.scale_out)
    nvl72 = SimpleNamespace(interconnect=SimpleNamespace(domain_size=72),
                            scale_out=SimpleNamespace(per_direction_bandwidth=50e9))
    assert scale_up_domain(nvl72) == 72 and scale_out_of(nvl72) == 50e9
    h200 = rd.load_accelerator("h200-sxm")
    assert (scale_up_domain(h200), scale_out_of(h200)) == (getattr(h200.interconnect, "domain_size", None),
                                                           getattr(getattr(h200, "scale_out", None),
                                                                   "per_direction_bandwidth", None))


@settings(max_examples=25, deadline=None)
@given(model=st.sampled_from(MOE + DENSE), decode=st.sampled_from([0.0, 1.0, 32.0]), context=contexts,
       chunk=st.sampled_from([0.0, 1.0, 512.0]), cached=st.sampled_from([0.0, 4096.0]), routing=routings,
       data=st.data())
def test_a_mixed_step_per_device_covers_the_step(model, decode, context, chunk, cached, routing, data):
    if decode + chunk == 0:
        decode = 1.0
    layout = data.draw(st.sampled_from(layouts(model)))
    whole = rd.mixed_step_floor(model, "h200-sxm", decode, context, chunk, cached, routing=routing)
    r = rd.mixed_step_floor(model, "h200-sxm", decode, context, chunk, cached, routing=routing, parallel=layout)
    assert float(r.bytes_read_per_device) * r.num_devices >= float(whole.bytes_total) * (1 - 1e-12)
    assert float(r.flops_per_device) * r.num_devices >= float(whole.flops) * (1 - 1e-12)
    assert float(r.step_time_s) * r.num_devices >= float(whole.step_time_s) * (1 - 1e-12)
