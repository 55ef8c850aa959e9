"""Request floors: TTFT + the exact sum of decode steps, the one request convention, shared prefixes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import InvalidValueError, decode_floor
from roofline_decode.floors.prefill import prefill_floor
from roofline_decode.floors.request import mean_decode_context, request_floor
from roofline_decode.formulas import shared_prefix_positions, shared_prefix_saved_bytes
from tests.properties.strategies import accelerators, models


def test_latency_is_ttft_plus_the_decode_steps_it_passes_through():
    """Prefill yields the first token; then O - 1 = 511 decode steps at contexts 2048 ... 2558."""
    r = request_floor("llama-3.1-8b", "h100-sxm", 2048, 512, batch=[1, 32])
    for i, batch in enumerate([1, 32]):
        ttft = float(prefill_floor("llama-3.1-8b", "h100-sxm", 2048, batch).ttft_s)
        steps = decode_floor("llama-3.1-8b", "h100-sxm", batch, np.arange(2048, 2559)).step_time_s
        assert steps.size == 511
        assert float(r.ttft_s[i]) == ttft
        assert float(r.decode_time_s[i]) == pytest.approx(float(np.sum(steps)), rel=1e-12)
        assert float(r.e2e_latency_s[i]) == pytest.approx(ttft + float(np.sum(steps)), rel=1e-12)
        assert float(r.tpot_s[i]) == pytest.approx(float(np.mean(steps)), rel=1e-12)
        assert float(r.requests_per_s[i]) == pytest.approx(batch / float(r.e2e_latency_s[i]))
        assert float(r.output_tokens_per_s[i]) == pytest.approx(batch * 512 / float(r.e2e_latency_s[i]))
    # the worked values of issue 15: batch 1 TTFT 30.0 ms, TPOT 4.571 ms, 2.366 s end to end
    assert [round(float(t) * 1e3, 1) for t in r.ttft_s] == [30.0, 960.1]
    assert [round(float(t), 3) for t in r.e2e_latency_s] == [2.366, 4.724]
    # total tokens (prompt + output) per second: B (P + O) / latency = 1 x 2560 / 2.366 s = 1,082 and
    # 32 x 2560 / 4.724 s = 17,341
    np.testing.assert_allclose(r.total_tokens_per_s, r.batch * (2048 + 512) / r.e2e_latency_s, rtol=1e-12)
    assert r.total_tokens_per_s.tolist() == pytest.approx([2560 / 2.366, 32 * 2560 / 4.724], rel=1e-3)


def test_one_output_token_is_the_prefill_alone():
    r = request_floor("llama-2-7b", "a100-80gb-sxm", 2048, 1)
    assert float(r.e2e_latency_s) == float(prefill_floor("llama-2-7b", "a100-80gb-sxm", 2048).ttft_s)
    assert np.isnan(r.tpot_s) and float(r.decode_time_s) == 0


def test_mean_decode_context_follows_the_convention():
    assert mean_decode_context(5, 200) == np.mean(np.arange(5, 5 + 199)) == 104
    assert mean_decode_context(1000, 500) == np.mean(np.arange(1000, 1499))


def test_shared_prefix_by_hand():
    # 32 sequences, a 1,024-token prefix: 31 copies of 1,024 tokens x 128 KiB less resident
    assert int(shared_prefix_saved_bytes(32, 3000, 1024, 4096, 32)) == 31 * 1024 * 32 * 4096
    # Mistral-7B (all layers slide, W = 4096): past T = S + W no prefix position is held
    assert float(shared_prefix_positions(2048 + 4096, 2048, 0, 32, 4096)) == 0
    assert float(shared_prefix_positions(4096, 2048, 0, 32, 4096)) == 32 * 2048
    plain, shared = request_floor("llama-3.1-8b", "h100-sxm", 3072, 256, batch=32, shared_prefix=[0, 2048]).kv_resident_bytes
    assert plain - shared == 31 * 2048 * 32 * 4096
    without, cascade = (request_floor("llama-3.1-8b", "h100-sxm", 3072, 256, batch=32, shared_prefix=2048, cascade=c)
                        for c in (False, True))
    assert float(cascade.decode_time_s) < float(without.decode_time_s)
    assert float(cascade.decode_bytes) == pytest.approx(float(without.decode_bytes) - 255 * 31 * 2048 * 32 * 4096)
    assert float(cascade.ttft_s) == float(without.ttft_s)
    # capacity sees the prefix once: 83.75 GiB usable - 16.06 GB weights; 3,327 tokens of 128 KiB
    # per sequence at the last step, of which 2,048 shared
    plain_max, shared_max = (int(x) for x in request_floor("llama-3.1-8b", "h100-sxm", 3072, 256, batch=32,
                                                           shared_prefix=[0, 2048]).max_batch)
    from roofline_decode.planning import usable_memory
    room = usable_memory("h100-sxm") - rd_weights()
    assert plain_max == int(room // (3327 * 131072))
    assert shared_max == int((room - 2048 * 131072) // (1279 * 131072)) > 2 * plain_max


def test_a_shared_prefix_at_batch_1_changes_no_flops():
    """One sequence shares its prefix with nobody: the prefix is prefilled once either way, so
    the prefill FLOPs are those of the whole prompt.  Llama-3.1-8B, 3,072 tokens (2,048 of them
    the shared prefix): 2 (3072 x 6,979,321,856 + 525,336,576) matrix FLOPs (the lm_head for the
    last token only) + 4 x 32 x 128 x 32 x 3072 x 3073 / 2 attention = 45,356,710,625,280;
    after 1,024 cached tokens, 2,048 new ones: 2 (2048 x 6,979,321,856 + 525,336,576)
    + 524,288 (2048 x 1024 + 2048 x 2049 / 2) = 30,787,913,121,792."""
    r = request_floor("llama-3.1-8b", "h100-sxm", 3072, 2, 1, shared_prefix=[0, 2048])
    assert r.prefill_flops.tolist() == [45_356_710_625_280] * 2
    assert 2 * (3072 * 6_979_321_856 + 525_336_576) + 4 * 32 * 128 * 32 * 3072 * 3073 // 2 == 45_356_710_625_280
    hit = request_floor("llama-3.1-8b", "h100-sxm", 3072, 2, 1, cached=1024, shared_prefix=[0, 2048])
    assert hit.prefill_flops.tolist() == [30_787_913_121_792] * 2
    assert 2 * (2048 * 6_979_321_856 + 525_336_576) + 524_288 * (2048 * 1024 + 2048 * 2049 // 2) == 30_787_913_121_792
    assert r.decode_flops[0] == r.decode_flops[1]


def rd_weights():
    from roofline_decode import load_model

    return load_model("llama-3.1-8b").weight_bytes


def test_request_renders_and_records():
    r = request_floor("qwen3-30b-a3b", "h100-sxm", [512, 4096], 64, batch=[[1], [8]], chunk=1024)
    assert r.e2e_latency_s.shape == (2, 2) and len(r.to_records()) == 4
    assert r.to_records()[3]["prompt"] == 4096 and "TTFT ms" in str(r) and "<table>" in r._repr_html_()
    assert r.to_records()[0]["fits"] is True  # 61 GB of weights and a small cache fit 80 GB
    big = request_floor("llama-3.1-70b", "h100-sxm", 2048, 16)
    assert not bool(big.fits) and " no" in str(big)


@pytest.mark.parametrize("kwargs, field", [
    ({"prompt": 10, "output": 0}, "output"), ({"prompt": 10.5, "output": 4}, "prompt"),
    ({"prompt": 10, "output": 4, "shared_prefix": 10}, "shared_prefix"), ({"prompt": 10, "output": 4, "batch": 0}, "batch"),
    ({"prompt": 10, "output": 4, "cached": 12}, "cached"),
])
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(InvalidValueError, match=field):
        request_floor("llama-2-7b", "a100-80gb-sxm", **kwargs)


@settings(max_examples=15, deadline=None)
@given(model=models(), device=accelerators(), prompt=st.integers(1, 4000), output=st.integers(1, 40),
       batch=st.integers(1, 32), shared=st.integers(0, 4000))
def test_request_laws(model, device, prompt, output, batch, shared):
    shared = min(shared, prompt - 1)
    r = request_floor(model, device, prompt, [output, output + 5], batch)
    assert r.e2e_latency_s[1] >= r.e2e_latency_s[0] and (r.e2e_latency_s >= r.ttft_s).all()
    s = request_floor(model, device, prompt, output, batch, shared_prefix=shared, cascade=True)
    assert float(s.e2e_latency_s) <= float(r.e2e_latency_s[0]) * (1 + 1e-9)  # sharing never raises the floor
    assert float(s.kv_resident_bytes) <= float(r.kv_resident_bytes[0])
    assert float(s.max_batch) >= float(r.max_batch[0])


def test_plan_carries_the_request_floor():
    from roofline_decode.planning import plan

    row = plan("llama-3.1-8b", "h100-sxm", batch=32, context=2560, prompt=2048, output=512)[0]
    r = request_floor("llama-3.1-8b", "h100-sxm", 2048, 512, 32)
    note = [n for n in row.notes if n.startswith("request 2048 in / 512 out")]
    assert note and f"TTFT {float(r.ttft_s) * 1e3:.4g} ms" in note[0] and "511 decode steps" in note[0]
    with pytest.raises(InvalidValueError, match="prompt/output"):
        plan("llama-3.1-8b", "h100-sxm", batch=1, context=10, prompt=5)


def test_end_to_end_is_e2e_latency_s_and_latency_s_a_deprecated_alias():
    r = request_floor("llama-3.1-8b", "h100-sxm", 1024, 8)
    record = r.to_records()[0]
    assert "e2e_latency_s" in record and "latency_s" not in record and "E2E ms" in str(r)
    assert float(r.e2e_latency_s) == float(r.ttft_s) + float(r.decode_time_s)
    with pytest.warns(DeprecationWarning, match="use e2e_latency_s"):
        assert r.latency_s is r.e2e_latency_s


def test_requests_of_many_lengths_share_their_decode_steps_and_memory_stays_bounded():
    """The longest request's steps are evaluated once, 2**16 at a time; a shorter one sums their
    prefix, so a grid of outputs equals separate calls bit for bit, across block boundaries too
    (65,537 outputs: 65,536 steps, one whole block; 65,538: one step into the second), and eight
    outputs of about 2**24 tokens (which took minutes and gigabytes) take one pass."""
    from roofline_decode.floors.request import DECODE_BLOCK

    outputs = [1, 2, 100, DECODE_BLOCK + 1, DECODE_BLOCK + 2, 3 * DECODE_BLOCK]
    grid = request_floor("llama-3.1-8b", "h100-sxm", 2048, outputs, batch=[[1], [4]])
    keys = ("decode_time_s", "decode_flops", "decode_bytes", "first_step_s", "last_step_s",
            "decode_compute_bound_steps", "e2e_latency_s")
    for j, output in enumerate(outputs):
        for i, batch in enumerate([1, 4]):
            one = request_floor("llama-3.1-8b", "h100-sxm", 2048, output, batch=batch)
            for key in keys:
                np.testing.assert_array_equal(np.asarray(getattr(grid, key))[i, j], getattr(one, key), err_msg=key)
    # the last step of the 65,538-token request is the first step of the second block: context 2048 + 65,536
    step = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=2048 + DECODE_BLOCK).step_time_s
    assert float(grid.last_step_s[0, 4]) == float(step)
    long = request_floor("llama-3.1-8b", "h100-sxm", 2048, [2**24 - i for i in range(8)])
    assert np.all(np.diff(long.decode_time_s) < 0)  # one step fewer each, each step > 0
