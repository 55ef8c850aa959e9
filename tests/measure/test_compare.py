"""compare(): the floor is a lower bound, flags, devices, KV-read scope, and records."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, load_accelerator, load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure import EXCEEDS_MEMORY, IMPOSSIBLE, MeasurementRow, compare
from roofline_decode.measure.published import kv_read_layer_model


@settings(max_examples=40, deadline=None)
@given(batch=st.integers(1, 512), context=st.integers(0, 32768), slack=st.floats(0.0, 3.0),
       weights=st.sampled_from(["bf16", "int8", "int4-g32", "fp8"]))
def test_rows_at_or_above_the_floor_are_never_flagged_and_rows_below_always_are(batch, context, slack, weights):
    model = load_model("llama-3.1-8b", weights=weights)
    floor = float(decode_floor(model, "h100-sxm", batch=batch, context=context).step_time_s)
    slow = MeasurementRow(batch=batch, context=context, step_time_s=floor * (1 + slack))
    fast = MeasurementRow(batch=batch, context=context, step_time_s=floor * (1 - 0.01 - slack / 4))
    above, below = compare([slow, fast], model, "h100-sxm")
    assert not above.flags and above.efficiency == pytest.approx(1 / (1 + slack))
    assert below.flags == (IMPOSSIBLE,) and below.efficiency > 1


def test_tolerance_and_formats_from_the_row():
    floor = float(decode_floor(load_model("llama-2-7b", weights="int8"), "a100-80gb-sxm", batch=1, context=0).step_time_s)
    row = MeasurementRow(batch=1, context=0, step_time_s=floor * 0.99, weight_format="int8")
    assert compare([row], "llama-2-7b", "a100-80gb-sxm")[0].impossible
    assert not compare([row], "llama-2-7b", "a100-80gb-sxm", tolerance=0.02)[0].impossible
    with pytest.raises(InvalidValueError, match="tolerance"):
        compare([row], "llama-2-7b", "a100-80gb-sxm", tolerance=1.5)


def test_several_devices_use_their_aggregate():
    one = MeasurementRow(batch=1, context=0, step_time_s=1.0)
    eight = one.replace(num_devices=8)
    a, b = compare([one, eight], "llama-2-70b", "a100-80gb-sxm")
    assert b.floor_step_time_s == pytest.approx(a.floor_step_time_s / 8)
    assert b.bandwidth_utilisation == pytest.approx(a.bandwidth_utilisation / 8)
    assert EXCEEDS_MEMORY in a.flags and EXCEEDS_MEMORY not in b.flags


def test_a_layer_split_is_a_pipeline_not_a_perfect_split():
    """llama.cpp's default -sm layer puts the layers of a model on several GPUs one after another.
    Llama-2-7B in f16 on 2 x RTX 4090 (1008 GB/s each), batch 1, context 0: every step reads
    2 x (6,607,343,616 + 4096) B of weights (all but the embedding table, one row of it) and
    writes 524,288 B of KV: 13,215,219,712 B, 6,607,609,856 on each GPU, in turn.  Floor
    13,215,219,712 / 1.008e12 = 13.110 ms (76.3 tokens/s), as on one GPU; a perfect split over
    the two would claim 6.555 ms.  A row at 100 tokens/s (10 ms) is impossible for a layer
    split, and possible with a row split (-sm row, tensor parallel)."""
    layer = MeasurementRow(batch=1, context=0, tokens_per_s=100, pipeline_parallel=2, weight_format="f16")
    row = layer.replace(pipeline_parallel=1, num_devices=2)
    a, b = compare([layer, row], "llama-2-7b", "rtx-4090")
    assert a.floor_step_time_s == pytest.approx(13_215_219_712 / 1.008e12, rel=1e-12)
    assert round(a.floor_step_time_s * 1e3, 3) == 13.110 and a.flags == (IMPOSSIBLE,)
    assert b.floor_step_time_s == pytest.approx(13_215_219_712 / 2.016e12, rel=1e-12) and not b.flags
    assert a.bytes_moved == 13_215_219_712 and a.bandwidth_utilisation == pytest.approx(13.215219712 / 2.016 / 10)
    one = compare([layer.replace(pipeline_parallel=1)], "llama-2-7b", "rtx-4090")[0]
    assert a.floor_step_time_s == pytest.approx(one.floor_step_time_s, rel=1e-12)


@pytest.mark.parametrize("batch, stages", [(1, 2), (3, 4), (8, 2), (64, 4)])
def test_the_pipeline_floor_is_pipeline_parallel_floor_without_hand_off_costs(batch, stages):
    """m = min(B, p) micro-batches (the fastest schedule): the floor of
    pipeline_parallel_floor with hand-offs free (no latency, a link without limit)."""
    from roofline_decode.floors import pipeline_parallel_floor
    from roofline_decode.measure.compare import microbatches

    m = microbatches(batch, stages)
    assert m == min(batch, stages)
    row = MeasurementRow(batch=batch, context=2048, step_time_s=1.0, pipeline_parallel=stages)
    (c,) = compare([row], "llama-3.1-8b", "h100-sxm")
    floor = pipeline_parallel_floor("llama-3.1-8b", "h100-sxm", batch=batch, context=2048, num_stages=stages,
                                    microbatches=m, collective_latency=0.0, link_bandwidth=1e300)
    assert c.floor_step_time_s == pytest.approx(float(floor.step_time_s), rel=1e-12)
    # never below the perfect split of the same devices, and never above one device at this batch
    single = float(decode_floor("llama-3.1-8b", "h100-sxm", batch=batch, context=2048).step_time_s)
    assert single / stages <= c.floor_step_time_s <= single * (1 + 1e-12)


def test_a_moe_layer_split_keeps_the_strict_routing_floor():
    """Qwen3-30B-A3B at batch 16 over 2 stages: 2 micro-batches of 8, each reading the experts
    its 8 sequences touch; the impossible flag uses identical routing (k experts per layer)."""
    row = MeasurementRow(batch=16, context=512, step_time_s=1.0, pipeline_parallel=2)
    (c,) = compare([row], "qwen3-30b-a3b", "h100-sxm")
    uniform = float(decode_floor("qwen3-30b-a3b", "h100-sxm", batch=8, context=512).step_time_s)
    strict = float(decode_floor("qwen3-30b-a3b", "h100-sxm", batch=8, context=512, routing="identical").step_time_s)
    assert c.uniform_floor_step_time_s == pytest.approx(uniform, rel=1e-12)
    assert c.strict_floor_step_time_s == pytest.approx(strict, rel=1e-12) and strict < uniform


def test_kv_read_scope_counts_only_kv_bytes():
    row = MeasurementRow(batch=4, context=8192, step_time_s=0.686e-3, scope="kv_read")
    (c,) = compare([row], kv_read_layer_model(), "a100-80gb-sxm")
    assert c.bytes_moved == 4 * 8192 * 4096
    assert c.floor_step_time_s == pytest.approx(c.bytes_moved / 2.039e12, rel=1e-3)


def test_records_and_missing_model():
    row = MeasurementRow(batch=1, context=105, tokens_per_s=104.9, label="gpt-fast bf16")
    comparison = compare([row], "llama-2-7b", "a100-80gb-sxm")
    (record,) = comparison.to_records()
    assert record["label"] == "gpt-fast bf16" and record["flags"] == [] and record["bound"] == "memory"
    assert "gpt-fast bf16" in str(comparison) and comparison.flagged == []
    with pytest.raises(InvalidValueError, match="model"):
        compare([row], None, "a100-80gb-sxm")
    with pytest.raises(InvalidValueError, match="accelerator"):
        compare([row], "llama-2-7b")


def test_weights_exceed_memory_uses_the_planning_capacity_rule():
    # issue 21 item 3: Qwen3-30B-A3B in bf16 (61 GB of weights) is under the M1 Max's printed
    # 64 GB (6.4e10 B, the old check) but over the 48 GiB (5.15e10 B) its GPU may wire by default
    from roofline_decode.planning import device_memory

    row = MeasurementRow(batch=1, context=0, step_time_s=1.0)
    weights = load_model("qwen3-30b-a3b").weight_bytes
    assert device_memory("m1-max") < weights < 64e9
    (c,) = compare([row], "qwen3-30b-a3b", "m1-max")
    assert EXCEEDS_MEMORY in c.flags
    # the same rule with a raised wired limit (sysctl iogpu.wired_limit_mb): it fits
    raised = load_accelerator("m1-max").replace(gpu_memory_share=0.95)
    (c,) = compare([row], "qwen3-30b-a3b", raised)
    assert EXCEEDS_MEMORY not in c.flags


def test_each_row_keeps_its_own_routing():
    """A row that states identical routing (llama-batched-bench) is compared with the identical-
    routing floor; compare() used the uniform one for every row.  routing= still overrides."""
    stated = MeasurementRow(batch=16, context=512, step_time_s=20e-3, routing="identical")
    plain = MeasurementRow(batch=16, context=512, step_time_s=20e-3)
    own, default = compare([stated, plain], "qwen3-30b-a3b", "h100-sxm")
    assert own.routing == "identical" and default.routing == "uniform"
    strict = decode_floor("qwen3-30b-a3b", "h100-sxm", batch=16, context=512, routing="identical")
    assert own.floor_step_time_s == pytest.approx(float(strict.step_time_s))
    assert own.floor_step_time_s < default.floor_step_time_s
    assert compare([stated], "qwen3-30b-a3b", "h100-sxm", routing="uniform")[0].routing == "uniform"
