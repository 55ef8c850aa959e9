"""MoE routing: uniform (expectation), identical (strict floor), a measured count; laws and errors."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import InvalidValueError, decode_floor, formulas, sweep
from roofline_decode.cli import main
from roofline_decode.measure import MeasurementRow
from roofline_decode.measure.compare import FASTER_THAN_UNIFORM, IMPOSSIBLE, compare

MOE = ("gpt-oss-120b", "qwen3-30b-a3b", "mixtral-8x7b", "deepseek-v2-lite")


def test_identical_routing_reads_k_experts_at_any_batch():
    model = rd.load_model("gpt-oss-120b")  # E = 128, k = 4, experts in MXFP4
    r = decode_floor(model, "h100-sxm", batch=[1, 8, 64], context=1024, routing="identical")
    np.testing.assert_array_equal(r.experts_read, [4, 4, 4])
    assert r.routing == "identical"
    # beyond batch 1 only the gathered embedding rows grow
    row = model.embedding_row_bytes
    np.testing.assert_allclose(r.weight_bytes - r.weight_bytes[0], np.array([0, 7, 63]) * row)
    uniform = decode_floor(model, "h100-sxm", batch=[1, 8, 64], context=1024)
    assert uniform.routing == "uniform"
    np.testing.assert_allclose(uniform.experts_read, [4, 28.710415, 111.221244], rtol=1e-6)


def test_measured_count_broadcasts_with_batch_and_is_recorded():
    r = decode_floor("gpt-oss-120b", "h100-sxm", batch=[1, 8, 64], context=[[0], [4096]], routing=[4, 12, 60])
    assert r.shape == (2, 3) and r.routing == "measured"
    np.testing.assert_array_equal(r.experts_read, [[4, 12, 60], [4, 12, 60]])
    assert "MoE routing 'measured': 4 to 60 distinct of E=128 experts per layer (k=4)" in r.notes
    # one count per batch along a sweep's batch axis
    s = sweep("qwen3-30b-a3b", "h100-sxm", batch=[1, 8, 64], context=[0, 4096], routing=[8, 30, 100])
    np.testing.assert_array_equal(s[0].experts_read, [[8, 8], [30, 30], [100, 100]])


@pytest.mark.parametrize("model", MOE)
def test_routing_notes_name_the_assumption(model):
    assert any("routing 'uniform'" in n and "routing='identical' is the strict floor" in n
               for n in decode_floor(model, "h100-sxm", batch=8).notes)
    assert any("routing 'identical'" in n for n in decode_floor(model, "h100-sxm", batch=8, routing="identical").notes)
    assert not any("routing" in n for n in decode_floor("llama-3.1-8b", "h100-sxm", batch=8).notes)


@pytest.mark.parametrize("model", MOE)
def test_breakdown_follows_the_routing(model):
    r = decode_floor(model, "h100-sxm", batch=[1, 16], context=2048, routing="identical")
    np.testing.assert_allclose(sum(r.breakdown()["bytes"].values()), r.bytes_total)


@pytest.mark.parametrize("model", MOE)
@pytest.mark.parametrize("routing", ["identical", "measured"])
def test_critical_batch_of_each_routing_separates_memory_and_compute(model, routing):
    if routing == "measured":
        m = rd.load_model(model)
        routing = (m.num_experts_per_token + m.num_experts) / 2
    r0 = decode_floor(model, "h100-sxm", batch=1, context=0, routing="identical")
    b_star = float(decode_floor(model, "h100-sxm", batch=max(routing, 1) if not isinstance(routing, str) else 1,
                                context=0, routing=routing).critical_batch)
    assert np.isfinite(b_star) and b_star > 1
    below = decode_floor(model, "h100-sxm", batch=np.floor(b_star), context=0, routing=routing)
    above = decode_floor(model, "h100-sxm", batch=np.ceil(b_star), context=0, routing=routing)
    assert str(below.bound) == "memory" and str(above.bound) == "compute"
    # fewer bytes: the strict floor turns compute-bound no later than uniform routing
    assert float(r0.critical_batch) <= float(decode_floor(model, "h100-sxm", batch=1, context=0).critical_batch)


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(MOE), batch=st.integers(1, 4096), context=st.integers(0, 65536),
       share=st.floats(0, 1), gpu=st.sampled_from(["h100-sxm", "mi300x", "l4"]))
def test_identical_le_measured_le_uniform(model, batch, context, share, gpu):
    m = rd.load_model(model)
    k, experts = m.num_experts_per_token, m.num_experts
    expected = float(formulas.expected_experts_touched(experts, k, batch))
    count = k + share * (expected - k)  # any count up to the uniform expectation
    floors = [decode_floor(m, gpu, batch=batch, context=context, routing=r)
              for r in ("identical", count, "uniform")]
    identical, measured, uniform = (float(fl.step_time_s) for fl in floors)
    assert identical <= measured * (1 + 1e-12) and measured <= uniform * (1 + 1e-12)
    w = [float(fl.weight_bytes) for fl in floors]
    assert w[0] <= w[1] * (1 + 1e-12) <= w[2] * (1 + 1e-12)
    if batch == 1:
        assert identical == pytest.approx(measured, rel=1e-12) and measured == pytest.approx(uniform, rel=1e-12)


@pytest.mark.parametrize("model", MOE)
def test_all_routings_agree_at_batch_one(model):
    k = rd.load_model(model).num_experts_per_token
    steps = {r: float(decode_floor(model, "h100-sxm", batch=1, context=512, routing=r).step_time_s)
             for r in ("identical", "uniform", k)}
    assert len(set(steps.values())) == 1


def test_symbolic_twin_of_the_routing_formula():
    sympy = pytest.importorskip("sympy")
    from roofline_decode.symbolic import symbol, twin

    t = twin("distinct_experts_read")
    k, batch, e_eff = symbol("num_experts_per_token"), symbol("batch"), symbol("effective_experts")
    # identical routing (E_eff = k) reads k experts at any batch
    assert sympy.simplify(t.expression(effective_experts=k).rhs - k) == 0
    # uniform routing (E_eff = E) is the expectation U(B)
    uniform = twin("expected_experts_touched").expression().rhs
    assert sympy.simplify(t.expression(effective_experts=symbol("num_experts")).rhs - uniform) == 0
    assert sympy.simplify(t.expression().rhs.subs(batch, 1) - k) == 0  # D(1) = k for every E_eff
    assert e_eff in t.expression().rhs.free_symbols
    # the weight bytes read take the distinct count D as a symbol
    assert symbol("experts_read") in twin("weight_bytes_read").expression().rhs.free_symbols


@pytest.mark.parametrize(
    "model, routing, needle",
    [
        ("gpt-oss-120b", "skewed", "'uniform', 'identical', or a number"),
        ("gpt-oss-120b", 3, "routing=3 is invalid: expected 'uniform', 'identical', or distinct experts per MoE "
                            "layer in [k, E] = [4, 128]"),
        ("gpt-oss-120b", 129, "[4, 128]"),
        ("gpt-oss-120b", float("nan"), "[4, 128]"),
        ("gpt-oss-120b", True, "[4, 128]"),
        ("gpt-oss-120b", [], "empty"),
        ("gpt-oss-120b", 12, "at most k·B = 4 distinct experts at that batch"),
        ("gpt-oss-120b", [4, 5, 6, 7], "broadcasts with batch"),
        ("llama-3.1-8b", 4, "has no routed experts"),
    ],
)
def test_bad_routing_is_one_clear_error(model, routing, needle):
    with pytest.raises(InvalidValueError, match="routing") as info:
        decode_floor(model, "h100-sxm", batch=[1, 2, 8] if needle.startswith("broad") else 1, routing=routing)
    assert needle in str(info.value)
    if model != "llama-3.1-8b" and not isinstance(routing, list):
        with pytest.raises(InvalidValueError, match="routing"):
            sweep(model, "h100-sxm", batch=[1, 2], routing=routing)


def test_compare_judges_impossible_against_the_strict_floor():
    # Qwen3-30B-A3B at batch 16 on an H100, 512 tokens: strict floor 2.06 ms, uniform 12.12 ms
    def judged(ms, **kwargs):
        return compare([MeasurementRow(batch=16, context=512, step_time_s=ms / 1e3)], "qwen3-30b-a3b", "h100-sxm",
                       **kwargs)[0]

    assert judged(2.0).flags == (IMPOSSIBLE,) and judged(2.0).impossible
    between = judged(3.0)
    assert between.flags == (FASTER_THAN_UNIFORM,) and not between.impossible
    assert between.routing == "uniform" and round(between.floor_step_time_s * 1e3, 2) == 12.12
    assert round(between.strict_floor_step_time_s * 1e3, 2) == 2.06
    assert judged(13.0).flags == ()
    # the reported floor follows the routing asked for; the judgement does not
    strict = judged(3.0, routing="identical")
    assert strict.floor_step_time_s == strict.strict_floor_step_time_s and strict.flags == (FASTER_THAN_UNIFORM,)
    # a dense model has one floor: below it is impossible
    dense = compare([MeasurementRow(batch=16, context=512, step_time_s=1e-3)], "llama-3.1-8b", "h100-sxm")[0]
    assert dense.flags == (IMPOSSIBLE,) and dense.strict_floor_step_time_s is None


def test_cli_routing(capsys):
    code = main(["floor", "--model", "gpt-oss-120b", "--gpu", "h100-sxm", "--batch", "8", "--routing", "identical",
                 "--format", "json"])
    (record,) = json.loads(capsys.readouterr().out)
    assert code == 0 and any("routing 'identical'" in n for n in record["notes"])
    assert record["weight_bytes"] == float(decode_floor("gpt-oss-120b", "h100-sxm", batch=8, context=4096,
                                                        routing="identical").weight_bytes)
    code = main(["floor", "--model", "gpt-oss-120b", "--gpu", "h100-sxm", "--batch", "8", "--routing", "20"])
    assert code == 0 and "routing 'measured': 20 distinct" in capsys.readouterr().out
    for bad, needle in (("skewed", "routing must be"), ("1e400", "finite"), ("2", "[4, 128]")):
        try:
            code = main(["floor", "--model", "gpt-oss-120b", "--gpu", "h100-sxm", "--routing", bad])
        except SystemExit as exit_:  # argparse refuses the text itself
            code = exit_.code
        err = capsys.readouterr().err
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("routing", ["uniform", "identical", 40.0])
def test_planning_floors_follow_the_routing(routing):
    from roofline_decode.planning import offload_floor, plan, tensor_parallel_floor

    floor = decode_floor("qwen3-30b-a3b", "h100-sxm", batch=64, context=4096, routing=routing)
    tp = tensor_parallel_floor("qwen3-30b-a3b", "h100-sxm", batch=64, context=4096, routing=routing)
    (row,) = plan("qwen3-30b-a3b", "h100-sxm", batch=64, context=4096, routing=routing)
    assert float(tp.step_time_s) == pytest.approx(float(floor.step_time_s), rel=1e-12)
    assert row.step_time_s == pytest.approx(float(floor.step_time_s), rel=1e-12)
    assert any(f"routing '{floor.routing}'" in n for n in row.notes) and any("routing" in n for n in tp.notes)
    # resident bytes hold every expert whatever the routing
    assert row.resident_bytes_per_device == plan("qwen3-30b-a3b", "h100-sxm", batch=64, context=4096)[0].resident_bytes_per_device
    off = offload_floor("qwen3-30b-a3b", "h100-sxm", "pcie5-x16", batch=64, context=4096, kv_fraction=0.5,
                        routing=routing)
    assert float(off.hbm_only_step_time_s) == pytest.approx(float(floor.step_time_s), rel=1e-12)


def test_plan_cli_routing(capsys):
    code = main(["plan", "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm", "--batch", "64", "--context", "4K",
                 "--routing", "identical", "--format", "json"])
    (record,) = json.loads(capsys.readouterr().out)
    assert code == 0 and round(record["step_time_s"] * 1e3, 2) == 9.51  # uniform: 25.46 ms
    assert main(["plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "0",
                 "--routing", "3"]) == 2
    assert "has no routed experts" in capsys.readouterr().err


def test_compare_cli_routing(tmp_path, capsys):
    rows = tmp_path / "rows.csv"
    rows.write_text("batch,context,step_time_s\n16,512,0.003\n16,512,0.0019\n")
    argv = ["compare", str(rows), "--model", "qwen3-30b-a3b", "--gpu", "h100-sxm"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "1 row(s) faster than the strict floor" in out
    assert "1 MoE row(s) between the strict (identical-routing) and the uniform-routing floor" in out
    assert main([*argv, "--routing", "identical", "--format", "json"]) == 0
    between, below = json.loads(capsys.readouterr().out)
    assert between["routing"] == "identical" and between["flags"] == [FASTER_THAN_UNIFORM]
    assert below["flags"][0] == IMPOSSIBLE
    assert between["floor_step_time_s"] == between["strict_floor_step_time_s"] < between["uniform_floor_step_time_s"]


def test_experts_read_is_the_same_for_a_number_a_0d_array_and_a_grid():
    """U(B) takes its power through numpy's ufunc for every container: a batch given as a 0-d
    array (general path), a Python float (scalar fast path) and a grid agree bit for bit.
    Python's ``**`` on numpy scalars (the C library's pow) and the ufunc (vectorised on AVX-512
    machines) differ in the last bit for about 2 % of (k/E, B) pairs; B = 1.6712736255243155 on
    gpt-oss-120b was one of them."""
    model = rd.load_model("gpt-oss-120b")
    batches = [1.6712736255243155, *np.random.default_rng(7).uniform(1, 5000, 300)]
    grid = decode_floor(model, "h100-sxm", np.array(batches), 0).experts_read
    for batch, expected in zip(batches, grid):
        as_array = decode_floor(model, "h100-sxm", np.array(batch), 0).experts_read
        as_number = decode_floor(model, "h100-sxm", float(batch), 0).experts_read
        assert float(as_array) == float(as_number) == float(expected), batch
