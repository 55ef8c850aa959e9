"""request_floor(parallel=) and speculative_floor(parallel=): the layout path of the request floors."""

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import decode_floor, prefill_floor, request_floor
from roofline_decode.errors import InvalidValueError

H100 = "h100-sxm"


def test_one_device_layout_is_the_plain_request():
    plain = request_floor("llama-3.1-8b", H100, 2048, 64, batch=[1, 8])
    for parallel in ("tp1", rd.Parallel()):
        same = request_floor("llama-3.1-8b", H100, 2048, 64, batch=[1, 8], parallel=parallel)
        assert same.to_records() == plain.to_records() and same.layout == "1 device"


def test_tensor_parallel_request_times_each_part_on_the_busiest_device():
    r = request_floor("llama-3.1-70b", H100, 2048, 64, batch=8, parallel="tp4")
    ttft = float(prefill_floor("llama-3.1-70b", H100, 2048, 8, parallel="tp4").step_time_s)
    steps = decode_floor("llama-3.1-70b", H100, 8, np.arange(2048, 2048 + 63), parallel="tp4").step_time_s
    assert float(r.ttft_s) == pytest.approx(ttft, rel=1e-12)
    assert float(r.tpot_s) == pytest.approx(np.mean(steps), rel=1e-12)
    assert float(r.e2e_latency_s) == pytest.approx(ttft + np.sum(steps), rel=1e-12)
    # the whole model's bytes and FLOPs, as on one device
    one = request_floor("llama-3.1-70b", H100, 2048, 64, batch=8)
    assert float(r.decode_bytes) == float(one.decode_bytes) and float(r.prefill_flops) == float(one.prefill_flops)
    # 141 GB of bf16 weights do not fit one H100; on four, 35 GB each leave room for 278 sequences of 2,111 tokens
    assert not bool(one.fits) and bool(r.fits) and float(r.max_batch) == 278 and r.layout == "tp4"


def test_uncached_shared_prefix_on_a_layout_is_the_longer_part():
    r = request_floor("llama-3.1-70b", H100, 2048, 16, batch=8, shared_prefix=1024, parallel="tp4")
    head = float(prefill_floor("llama-3.1-70b", H100, 1024, 1, parallel="tp4").step_time_s)
    tail = float(prefill_floor("llama-3.1-70b", H100, 2048, 8, cached=1024, parallel="tp4").step_time_s)
    assert float(r.ttft_s) == pytest.approx(max(head, tail), rel=1e-12)
    assert any("shared prefix" in note for note in r.notes)


def test_request_refusals():
    with pytest.raises(InvalidValueError) as info:
        request_floor("llama-3.1-8b", H100, 2048, 64, batch=8, shared_prefix=1024, cascade=True, parallel="tp2")
    assert info.value.field == "cascade"
    with pytest.raises(InvalidValueError) as info:
        request_floor("llama-3.1-8b", H100, 2048, 64, parallel="tp3")
    assert info.value.field == "parallel.tp"


def test_one_device_layout_is_the_plain_speculative_floor():
    plain = rd.speculative_floor("llama-3.1-70b", H100, draft="llama-3.2-1b", k=4, acceptance=0.8, batch=[1, 8],
                                 context=2048)
    same = rd.speculative_floor("llama-3.1-70b", H100, draft="llama-3.2-1b", k=4, acceptance=0.8, batch=[1, 8],
                                context=2048, parallel="tp1")
    assert same.to_records() == plain.to_records()


def test_speculative_on_tensor_parallel_devices():
    r = rd.speculative_floor("llama-3.1-70b", H100, draft="llama-3.2-1b", k=4, acceptance=0.8, batch=8, context=2048,
                             parallel="tp4", draft_parallel="tp1")
    plain = decode_floor("llama-3.1-70b", H100, 8, 2048, parallel="tp4")
    draft = decode_floor("llama-3.2-1b", H100, 8, np.arange(2048, 2052))
    assert float(r.plain_step_s) == pytest.approx(float(plain.step_time_s), rel=1e-12)
    assert float(r.draft_time_s) == pytest.approx(float(np.sum(draft.step_time_s)), rel=1e-12)
    # the verify step of 5 tokens per sequence costs at least a plain step on the same devices
    assert float(r.verify_step_s) >= float(plain.step_time_s)
    # overlapped round: at least the summed memory times and at most draft + verify
    assert float(r.round_time_s) <= float(r.draft_time_s) + float(r.verify_step_s) + 1e-15
    assert float(r.speedup) == pytest.approx(float(r.plain_step_s) / float(r.time_per_token_s), rel=1e-12)


def test_mtp_heads_run_on_the_target_layout_and_bad_draft_layouts_are_refused():
    r = rd.speculative_floor("deepseek-v3", "h200-sxm", mtp_layers=1, k=1, acceptance=0.8, batch=64, context=4096,
                             parallel="tp8")
    assert float(r.speedup) > 1
    with pytest.raises(InvalidValueError) as info:
        rd.speculative_floor("llama-3.1-70b", H100, draft="llama-3.2-1b", parallel="tp4", draft_parallel="tp3")
    assert info.value.field == "draft_parallel"


LAYOUTS = [rd.Parallel(tp=tp, ep=ep, attention_dp=dp) for tp in (1, 2, 4) for dp in (1, 2) for ep in (1, 2, 4, 8)
           if (tp * dp) % ep == 0]


@pytest.mark.parametrize("layout", LAYOUTS[::2], ids=str)
def test_moe_serving_on_layouts_keeps_the_laws(layout):
    # Qwen3-30B-A3B (128 experts, 8 active; 32 query and 4 KV heads) on H100s, strict routing
    r = rd.serving_floor("qwen3-30b-a3b", H100, [1, 32, 256], 2048, 256, parallel=layout, routing="identical")
    step = decode_floor("qwen3-30b-a3b", H100, r.decode_batch, 2048 + 127, routing="identical", parallel=layout)
    np.testing.assert_allclose(r.decode_step_s, step.step_time_s, rtol=1e-12)
    assert np.all(r.tpot_s >= r.decode_step_s * (1 - 1e-12))
    assert np.all(np.diff(r.tpot_s) >= 0) and np.all(np.diff(r.e2e_latency_s) >= 0)
    alone = prefill_floor("qwen3-30b-a3b", H100, 2048, routing="identical", parallel=layout)
    assert np.all(r.ttft_s >= float(alone.ttft_s) * (1 - 1e-12))
    assert r.num_devices == layout.num_devices
    assert np.all(r.output_tokens_per_s_per_gpu <= r.running_batch / r.decode_step_s / layout.num_devices * (1 + 1e-12))
