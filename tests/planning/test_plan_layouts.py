"""Planning under one layout (issue 26 item 1): plan, offload_floor, serving_rate and frontier take
``parallel=``; their tensor-parallel arguments stay thin wrappers with the same numbers."""

import json

import numpy as np
import pytest

from roofline_decode import Parallel, decode_floor
from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError
from roofline_decode.planning import frontier, plan, serving_rate
from roofline_decode.planning.tiers import offload_floor

_SAME = ("devices", "fits", "max_batch", "step_time_s", "tokens_per_s", "bound", "verdict", "min_devices",
         "resident_bytes_per_device", "tier_resident_bytes_per_device")


def test_plan_tp_is_the_layout_tp_bit_for_bit():
    kwargs = dict(batch=16, context=32768, slo_ms=50, offload_kv=0.25, tier="pcie5-x16")
    [by_tp] = plan("llama-3.1-70b", "h100-sxm", tp=4, **kwargs)
    [by_layout] = plan("llama-3.1-70b", "h100-sxm", parallel=Parallel(tp=4), **kwargs)
    assert {k: getattr(by_tp, k) for k in _SAME} == {k: getattr(by_layout, k) for k in _SAME}
    assert by_tp.parallel is None and by_layout.parallel == "tp4"


def test_plan_expert_parallel_layout_is_the_busiest_device():
    [row] = plan("deepseek-v3", "h200-sxm", batch=64, context=4096, slo_ms=50, parallel="dp8 ep8")
    floor = decode_floor("deepseek-v3", "h200-sxm", batch=64, context=4096, parallel="dp8 ep8")
    assert row.devices == 8 and row.fits and row.verdict == "ok"
    assert row.resident_bytes_per_device == float(floor.resident_bytes_per_device)
    # collectives on the critical path at 5 us each: never faster than the strict floor
    assert row.step_time_s >= float(floor.step_time_s)
    # the largest batch that fits: one more sequence does not
    resident = lambda b: float(decode_floor("deepseek-v3", "h200-sxm", batch=b, context=4096,  # noqa: E731
                                            parallel="dp8 ep8").resident_bytes_per_device)
    assert resident(row.max_batch) <= row.usable_bytes_per_device < resident(row.max_batch + 1)


def test_plan_refuses_tp_beside_a_layout_and_a_bad_layout():
    with pytest.raises(InvalidValueError, match="tp"):
        plan("llama-3.1-70b", "h100-sxm", batch=1, context=1024, tp=2, parallel="tp4")
    with pytest.raises(InvalidValueError, match="parallel.tp"):
        plan("llama-3.1-70b", "h100-sxm", batch=1, context=1024, parallel="tp3")
    with pytest.raises(InvalidValueError, match="parallel.ep"):
        plan("llama-3.1-70b", "h100-sxm", batch=1, context=1024, parallel="dp2 ep2")


def test_offload_under_a_pipeline_is_refused_and_without_offload_is_the_layout_floor():
    with pytest.raises(InvalidValueError, match="parallel.pp"):
        offload_floor("llama-3.1-70b", "h100-sxm", "pcie5-x16", 4, 4096, kv_fraction=0.5, parallel="tp2 pp2")
    r = offload_floor("llama-3.1-70b", "h100-sxm", None, 4, 4096, parallel="tp2 pp2", collective_latency=0.0,
                      overlap_communication=True)
    floor = decode_floor("llama-3.1-70b", "h100-sxm", batch=4, context=4096, parallel="tp2 pp2")
    assert float(r.step_time_s) == float(floor.step_time_s) and r.num_devices == 4


def test_offload_layout_with_num_devices_is_refused():
    with pytest.raises(InvalidValueError, match="num_devices"):
        offload_floor("llama-3.1-70b", "h100-sxm", None, 4, 4096, num_devices=2, parallel="tp2")


def test_serving_rate_num_devices_is_the_layout_tp():
    a = serving_rate("llama-3.1-70b", "h100-sxm", 500, 1000, slo_ms=30, num_devices=4)
    b = serving_rate("llama-3.1-70b", "h100-sxm", 500, 1000, slo_ms=30, parallel="tp4")
    assert (a.concurrency, a.step_time_s, a.requests_per_s, a.max_concurrency, a.limited_by) == (
        b.concurrency, b.step_time_s, b.requests_per_s, b.max_concurrency, b.limited_by)
    assert np.array_equal(a.curve_requests_per_s, b.curve_requests_per_s)
    assert b.parallel == "tp4" and "(tp4)" in str(b)


def test_serving_rate_expert_parallel_layout():
    r = serving_rate("deepseek-v3", "h200-sxm", 1000, 1000, slo_ms=50, parallel="dp8 ep8")
    tp8 = serving_rate("deepseek-v3", "h200-sxm", 1000, 1000, slo_ms=50, num_devices=8)
    assert r.num_devices == 8 and r.concurrency > 0
    # attention DP holds each group's own KV cache: far more sequences fit than under tp8 (MLA sharded by context)
    assert r.step_time_s <= 0.050
    assert tp8.concurrency > 0
    with pytest.raises(InvalidValueError, match="num_devices"):
        serving_rate("deepseek-v3", "h200-sxm", 1000, 1000, num_devices=2, parallel="dp8 ep8")


def test_frontier_tp_is_the_layouts_tp():
    by_tp = frontier("llama-3.1-70b", ["h100-sxm", "h200-sxm"], 4096, tp=(1, 2, 4))
    by_layout = frontier("llama-3.1-70b", ["h100-sxm", "h200-sxm"], 4096, parallel=["tp1", "tp2", Parallel(tp=4)])
    fields = ("accelerator", "num_devices", "batch", "step_time_s", "tokens_per_s_per_device", "fits",
              "joules_per_token_floor")
    assert [[getattr(p, k) for k in fields] for p in by_tp.points] == [
        [getattr(p, k) for k in fields] for p in by_layout.points]
    assert {p.parallel for p in by_layout.points} == {"tp1", "tp2", "tp4"}
    assert {p.parallel for p in by_tp.points} == {None}


def test_frontier_layouts_divide_over_all_devices_and_refuse_bad_input():
    front = frontier("deepseek-v3", "h200-sxm", 4096, batch=[256], parallel=["tp8", "dp8 ep8"])
    for p in front.points:
        floor = decode_floor("deepseek-v3", "h200-sxm", batch=256, context=4096, parallel=p.parallel)
        assert p.tokens_per_s_per_device == 256 / float(floor.step_time_s) / 8
    with pytest.raises(InvalidValueError, match="tp"):
        frontier("llama-3.1-8b", "h100-sxm", 4096, tp=(1, 2), parallel=["tp2"])
    with pytest.raises(InvalidValueError, match="parallel"):
        frontier("llama-3.1-8b", "h100-sxm", 4096, parallel=[])
    with pytest.raises(InvalidValueError, match="parallel.tp"):
        frontier("llama-3.1-8b", "h100-sxm", 4096, parallel=["tp3"])


def _plan_cli(capsys, *argv):
    try:
        code = main(["plan", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--batch", "64", "--context", "4096",
                     "--format", "json", *argv])
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_cli_takes_the_layout_flags(capsys):
    code, out, _ = _plan_cli(capsys, "--dp", "8", "--ep", "8", "--slo-ms", "50")
    [record] = json.loads(out)
    assert code == 0 and record["devices"] == 8 and record["parallel"] == "dp8 ep8" and record["verdict"] == "ok"
    code, out, _ = _plan_cli(capsys, "--tp", "8")
    [record] = json.loads(out)
    assert code == 0 and record["devices"] == 8 and record["parallel"] is None  # the tp= path, as before


@pytest.mark.parametrize("argv,flag", [
    (["--ep", "3"], "--ep"), (["--tp", "3", "--dp", "2"], "--tp"), (["--dp", "2", "--moe-tp", "3"], "--moe-tp"),
    (["--tp", "2", "--pp", "2", "--offload-kv", "0.5", "--tier", "pcie5-x16"], "--pp"),
    (["--tp", "0"], "--tp"),
])
def test_plan_cli_bad_layouts_exit_2_naming_the_flag(capsys, argv, flag):
    code, out, err = _plan_cli(capsys, *argv)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and flag in err and "Traceback" not in err


def test_tier_bandwidth_and_answer_under_a_layout():
    from roofline_decode.planning.tiers import can_tier_feed, required_tier_bandwidth

    kwargs = dict(slo_ms=100, kv_fraction=0.25)
    by_tp = required_tier_bandwidth("llama-3.1-70b", "h100-sxm", 16, 32768, num_devices=4, **kwargs)
    by_layout = required_tier_bandwidth("llama-3.1-70b", "h100-sxm", 16, 32768, parallel="tp4", **kwargs)
    assert float(by_tp) == float(by_layout)
    # attention DP: each group reads its own sequences' cache, a quarter of it over the tier
    one = offload_floor("llama-3.1-8b", "h100-sxm", "pcie5-x16", 64, 32768, kv_fraction=0.25, parallel="dp4")
    assert float(one.tier_bytes) == pytest.approx(0.25 * float(decode_floor(
        "llama-3.1-8b", "h100-sxm", batch=64, context=32768, parallel="dp4").kv_read_bytes_per_device), rel=1e-15)
    answer = can_tier_feed("llama-3.1-70b", "h100-sxm", "pcie5-x16", 16, 32768, parallel="tp4", **kwargs)
    assert not answer.ok
    with pytest.raises(InvalidValueError, match="parallel.pp"):
        required_tier_bandwidth("llama-3.1-70b", "h100-sxm", 16, 32768, parallel="tp2 pp2", **kwargs)
