"""Prefill floors: hand-derived values, the exact sums against brute force, and the laws."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import InvalidValueError, decode_floor
from roofline_decode.floors.mixed_step import mixed_step_floor
from roofline_decode.floors.prefill import prefill_floor
from roofline_decode.formulas import prefill as fp
from tests.properties.strategies import accelerators, models


def test_llama2_7b_2k_prompt_on_a100_by_hand():
    """Issue 15's worked value: about 2.8e13 FLOPs, compute-bound, about 90 ms.

    By hand: matrices 6,607,077,376 per token, lm_head 32000 x 4096 for the last token only:
    2 (2048 (6,607,077,376 - 131,072,000) + 131,072,000) = 2.6526e13; causal attention
    4 H d_h L P (P + 1) / 2 = 4 * 32 * 128 * 32 * 2048 * 2049 / 2 = 1.1000e12; total 2.7626e13
    FLOPs at the A100's dense bf16 312 TFLOP/s (datasheet) = 88.54 ms."""
    r = prefill_floor("llama-2-7b", "a100-80gb-sxm", 2048)
    matmul = 2 * (2048 * (6_607_077_376 - 131_072_000) + 131_072_000)
    attention = 4 * 32 * 128 * 32 * 2048 * 2049 // 2
    assert float(r.flops) == matmul + attention == 27_626_028_662_784
    assert str(r.bound) == "compute"
    assert float(r.ttft_s) == pytest.approx((matmul + attention) / 312e12, rel=1e-12)
    assert float(r.ttft_s) * 1e3 == pytest.approx(88.54, abs=0.01)
    # bytes: bf16 weights once (all but the input embedding) + 2048 gathered rows + KV of 2048 tokens
    weights = 2 * (6_738_415_616 - 32000 * 4096 + 2048 * 4096)
    assert float(r.weight_bytes) == weights and float(r.kv_read_bytes) == 0
    assert float(r.kv_write_bytes) == 2048 * 32 * 2 * 32 * 128 * 2


def test_compute_bound_prompt_and_chunk_are_the_crossings():
    r = prefill_floor("llama-2-7b", "a100-80gb-sxm", 2048, chunk=512)
    p_star, c_star = int(r.compute_bound_prompt), int(r.compute_bound_chunk)
    assert 140 < p_star < 180  # about the A100's bf16 ridge point, 153 FLOP/B
    assert list(prefill_floor("llama-2-7b", "a100-80gb-sxm", [p_star - 1, p_star]).bound) == ["memory", "compute"]
    chunks = prefill_floor("llama-2-7b", "a100-80gb-sxm", 2048, chunk=[c_star - 1, c_star])
    assert list(chunks.bound) == ["memory", "compute"]
    short = prefill_floor("llama-2-7b", "a100-80gb-sxm", 100)
    assert str(short.bound) == "memory" and np.isinf(short.compute_bound_chunk)


def test_closed_forms_equal_brute_force_sums():
    for prompt, cached, chunk, window in itertools.product([1, 5, 17, 64], [0, 3, 40], [1, 4, 16, 100], [1, 7, 30, 1e9]):
        pairs = sum(2 * (cached + i) + 3 * min(cached + i, window) for i in range(1, prompt + 1))
        starts = [cached + j * chunk for j in range(-(-prompt // chunk))]
        earlier = sum(2 * s + 3 * min(s, window) for s in starts)
        assert fp.prefill_attended_positions(prompt, cached, 2, 3, window) == pytest.approx(pairs, abs=1e-6)
        assert fp.prefill_kv_read_bytes(1, prompt, chunk, cached, 1, 2, 3, window) == pytest.approx(earlier, abs=1e-6)


def test_mla_prefill_takes_the_cheaper_attention_form():
    assert int(fp.mla_prefill_score_value_width(512, 128, 64, 128)) == 320  # DeepSeek-V3: decompressed
    assert int(fp.mla_prefill_score_value_width(16, 128, 64, 128)) == 96  # a tiny latent: absorbed


def test_chunks_reread_the_weights():
    r = prefill_floor("llama-3.1-8b", "h100-sxm", 8192, chunk=[8192, 1024])
    lm_head = 128256 * 4096 * 2
    streamed = 2 * (8_030_261_248 - 128256 * 4096)  # bf16 weights read by a decode step, embedding table out
    assert float(r.weight_bytes[1] - r.weight_bytes[0]) == 7 * (streamed - lm_head)
    assert r.flops[0] == r.flops[1]


# Llama-3.1-8B (config.json): 32 layers, d = 4096, 32 query heads and 8 KV heads of 128, d_ff =
# 14336, V = 128256, untied.  A decode step streams 7,504,924,672 parameters (all but the
# embedding table: 32 x 218,112,000 per layer with its two norm vectors, the final norm, the
# lm_head); without the 525,336,576 of the lm_head that is the body 6,979,588,096 every chunk reads.
BODY_8B, LM_HEAD_8B, KV_PER_TOKEN_8B = 6_979_588_096, 128256 * 4096, 32 * 2 * 8 * 128 * 2



def test_a_cached_prefix_is_not_chunked_again():
    """Prompt 4,096 with 2,048 cached, chunks of 1,024: the 2,048 new tokens are 2 chunks (not
    4,096 / 1,024 = 4); each reads the bf16 body once, the lm_head once in all, 2,048 gathered
    rows: 2 (2 x 6,979,588,096 + 525,336,576 + 2048 x 4096) = 28,985,802,752 B; the chunks start
    at 2,048 and 3,072 cached tokens and read their KV: (2048 + 3072) x 131,072 B = 671,088,640 B."""
    r = prefill_floor("llama-3.1-8b", "h100-sxm", 4096, cached=2048, chunk=1024)
    assert float(r.num_chunks) == 2
    assert float(r.weight_bytes) == 2 * (2 * BODY_8B + LM_HEAD_8B + 2048 * 4096) == 28_985_802_752
    assert float(r.kv_read_bytes) == (2048 + 3072) * KV_PER_TOKEN_8B == 671_088_640
    assert float(r.kv_write_bytes) == 2048 * KV_PER_TOKEN_8B


def test_weights_are_read_once_per_chunk_for_every_chunk_size():
    """An 8,192-token prompt in chunks of 1,000 / 1,024 / 3,000 / 8,192 / 10,000 tokens is
    n = ceil(8192 / c) = 9 / 8 / 3 / 1 / 1 chunks (a last partial chunk counts); each reads the
    body once: 2 (n x 6,979,588,096 + 525,336,576 + 8192 x 4096) B, from 126,750,367,744 B (9
    chunks) down to 15,076,958,208 B (one)."""
    chunks = [1000, 1024, 3000, 8192, 10000]
    r = prefill_floor("llama-3.1-8b", "h100-sxm", 8192, chunk=chunks)
    n = [9, 8, 3, 1, 1]
    assert r.num_chunks.tolist() == n
    assert r.weight_bytes.tolist() == [2 * (k * BODY_8B + LM_HEAD_8B + 8192 * 4096) for k in n]
    assert r.weight_bytes.tolist()[0] == 126_750_367_744 and r.weight_bytes.tolist()[-1] == 15_076_958_208
    assert len(set(r.flops.tolist())) == 1  # chunking moves bytes, not FLOPs


def test_compute_bound_prompt_with_a_cached_prefix_by_hand():
    """Llama-3.1-8B on an H100 SXM (bf16 989.5 TFLOP/s, 3.35 TB/s: 295.37 FLOP/B) after 32,768
    cached tokens, n new tokens in one chunk:
    FLOPs = 2 (n x 6,979,321,856 + 525,336,576) + 4 x 32 x 128 x 32 (32768 n + n (n + 1) / 2)
          = 31,138,775,040 n + 262,144 n^2 + 1,050,673,152;
    bytes = 2 (7,504,924,672 + 4096 n) + 32768 x 131,072 (the prefix's KV, read once) + 131,072 n
          = 19,304,816,640 + 139,264 n.
    n = 183: 5.70823e12 FLOPs < 295.37 x 19,330,301,952 B = 5.70965e12 (memory-bound);
    n = 184: 5.73946e12 >= 5.70969e12 (compute-bound).  So P* = 32,768 + 184 = 32,952 prompt
    tokens; without the prefix the crossing is at 317 (the prefix's attention FLOPs win over its
    KV bytes)."""
    r = prefill_floor("llama-3.1-8b", "h100-sxm", 33000, cached=32768)
    assert float(r.compute_bound_prompt) == 32768 + 184
    assert float(prefill_floor("llama-3.1-8b", "h100-sxm", 1000).compute_bound_prompt) == 317
    crossing = prefill_floor("llama-3.1-8b", "h100-sxm", [32768 + 183, 32768 + 184], cached=32768)
    assert list(crossing.bound) == ["memory", "compute"]


def test_mixed_step_reduces_to_decode_and_to_prefill():
    decode = decode_floor("llama-3.1-8b", "h100-sxm", 16, 3000)
    mixed = mixed_step_floor("llama-3.1-8b", "h100-sxm", 16, 3000, 0)
    for key in ("weight_bytes", "kv_read_bytes", "kv_write_bytes", "flops", "step_time_s"):
        assert float(getattr(mixed, key)) == pytest.approx(float(getattr(decode, key)), rel=1e-12), key
    prefill = prefill_floor("llama-3.1-8b", "h100-sxm", 2012, cached=1500)
    alone = mixed_step_floor("llama-3.1-8b", "h100-sxm", 0, 0, 512, 1500)
    for key in ("weight_bytes", "kv_read_bytes", "kv_write_bytes", "flops"):
        assert float(getattr(alone, key)) == pytest.approx(float(getattr(prefill, key)), rel=1e-12), key
    both = mixed_step_floor("llama-3.1-8b", "h100-sxm", 16, 3000, 512, 1500)
    assert float(both.weight_bytes) < float(decode.weight_bytes + prefill.weight_bytes)  # read once
    assert float(both.step_time_s) >= max(float(decode.step_time_s), float(prefill.ttft_s))


def test_results_broadcast_and_render():
    r = prefill_floor("gemma-2-9b", "h100-sxm", [[1024], [16384]], batch=[1, 4], chunk=2048, cached=[0, 100])
    assert float(r.num_chunks[1, 1]) == np.ceil((16384 - 100) / 2048)
    assert r.ttft_s.shape == (2, 2) and len(r.to_records()) == 4
    records = r.to_records()
    assert records[-1]["prompt"] == 16384
    # every point is compute-bound on the H100 (bf16 989.5 TFLOP/s, 3.35 TB/s).  The closest,
    # 1,024 tokens at batch 1: FLOPs 2 (1024 (9,241,100,288 - 917,504,000) + 917,504,000) (tied
    # lm_head 256000 x 3584 for the last token) + 4 x 16 x 256 x 42 x 1024 x 1025 / 2 = 1.74097e13
    # -> 17.594 ms; bytes 2 (9,241,705,984 + 1024 x 3584) + KV 1024 x 42 x 8192 = 1.88431e10 ->
    # 5.625 ms: compute-bound by a factor 3.128
    assert [rec["bound"] for rec in records] == ["compute"] * 4
    assert float(r.compute_time_s[0, 0] / r.memory_time_s[0, 0]) == pytest.approx(3.128, abs=1e-3)
    assert "TTFT ms" in str(r) and "<table>" in r._repr_html_()


@pytest.mark.parametrize("kwargs, field", [
    ({"prompt": 0}, "prompt"), ({"prompt": 10, "batch": 0}, "batch"), ({"prompt": 10, "chunk": 0.5}, "chunk"),
    ({"prompt": 10, "cached": -1}, "cached"), ({"prompt": 10, "cached": 10}, "cached"),
    ({"prompt": "many"}, "prompt"),
])
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(InvalidValueError, match=field):
        prefill_floor("llama-2-7b", "a100-80gb-sxm", **kwargs)
    with pytest.raises(InvalidValueError, match="at least one token"):
        mixed_step_floor("llama-2-7b", "a100-80gb-sxm", 0, 10, 0)


prompts = st.integers(1, 20_000).map(float)


@settings(max_examples=30, deadline=None)
@given(model=models(), device=accelerators(), prompt=prompts, extra=st.integers(1, 5000).map(float),
       batch=st.integers(1, 64).map(float), more=st.integers(1, 64).map(float), chunk=st.integers(1, 4096).map(float))
def test_prefill_laws(model, device, prompt, extra, batch, more, chunk):
    r = prefill_floor(model, device, [prompt, prompt + extra], batch=[[batch], [batch + more]])
    t = r.ttft_s
    assert (t[:, 1] >= t[:, 0]).all() and (t[1] >= t[0]).all()  # non-decreasing in prompt and in batch
    assert (r.ttft_s >= r.flops / r.peak_flops * (1 - 1e-12)).all()  # TTFT >= FLOPs / peak
    chunked = prefill_floor(model, device, prompt, batch, chunk=chunk)
    whole = prefill_floor(model, device, prompt, batch)
    assert float(chunked.ttft_s) >= float(whole.ttft_s) * (1 - 1e-12)  # chunking never lowers the floor
    hit = prefill_floor(model, device, prompt + extra, batch, cached=extra)  # `extra` of the prompt cached
    assert float(hit.ttft_s) <= float(r.ttft_s[0, 1]) * (1 + 1e-12)  # a prefix-cache hit never raises it



def test_per_group_formats_reach_the_prefill():
    """q4_0 body with a bf16 lm_head and embedding, 4 chunks: the body is read 4 times, the
    lm_head once, the 4,096 gathered rows in bf16."""
    import roofline_decode as rd

    m = rd.load_model("llama-3.1-8b", weights={"default": "q4_0", "embedding": "bf16", "lm_head": "bf16"})
    V, d = 128256, 4096
    r = prefill_floor(m, "h100-sxm", 4096, chunk=1024)
    body = m.streamed_parameters - V * d
    assert float(r.weight_bytes) == 4 * body * 4.5 / 8 + V * d * 2 + 4096 * d * 2
    step = mixed_step_floor(m, "h100-sxm", 8, 1024, 0)
    assert float(step.weight_bytes) == float(decode_floor(m, "h100-sxm", 8, 1024).weight_bytes)


def test_each_flop_group_runs_at_its_own_precision():
    """q4_0 matrices multiply on int8 tensor cores (624 TOPS on the A100), the bf16 KV cache's
    attention at the bf16 312 TFLOP/s: the prefill compute time adds the two."""
    import roofline_decode as rd

    r = prefill_floor(rd.load_model("llama-2-7b", weights="q4_0"), "a100-80gb-sxm", 2048)
    matmul = 2 * (2048 * (6_607_077_376 - 131_072_000) + 131_072_000)
    attention = 4 * 32 * 128 * 32 * 2048 * 2049 // 2
    assert float(r.compute_time_s) == pytest.approx(matmul / 624e12 + attention / 312e12, rel=1e-12)
    none = rd.Accelerator(name="no-peak", memory_bandwidth=4e11, memory_capacity=64e9)
    blind = prefill_floor("llama-2-7b", none, 2048)
    # no peak: the prefill has no time (issue 27 item 5; before: compute 0, "memory", P* inf)
    assert np.isnan(blind.compute_time_s) and str(blind.bound) == "n/a" and np.isnan(blind.compute_bound_prompt)
    assert np.isnan(blind.ttft_s) and float(blind.memory_time_s) == float(blind.bytes_total) / 4e11


def test_recurrent_layers_write_no_kv_in_prefill_mixed_steps_or_verify():
    """Qwen3-Next: 12 of its 48 layers attend (2,048 B of KV per token each); the 36 Gated
    DeltaNet layers keep a fixed state instead, so a prompt writes KV for 12 layers only
    (writing it for all 48 overcounted the floor 4x)."""
    from roofline_decode import load_model, mixed_step_floor
    from roofline_decode.floors.speculative import verify_traffic

    model = load_model("qwen3-next-80b-a3b")
    assert (model.num_layers, model.num_attention_layers, model.kv_bytes_per_token_per_layer) == (48, 12, 2048.0)
    assert float(prefill_floor(model, "h100-sxm", prompt=2048).kv_write_bytes) == 2048 * 12 * 2048
    mixed = mixed_step_floor(model, "h100-sxm", decode_batch=4, decode_context=100, prefill_tokens=60,
                             prefill_context=0)
    assert float(mixed.kv_write_bytes) == 64 * 12 * 2048
    # the verify step writes the KV of its 4 tokens in 12 layers, and (as a decode step counts it
    # in kv_write_bytes) each sequence's Gated DeltaNet state once: 36 x 548,864 bf16 entries
    assert float(verify_traffic(model, 2, 100, 3).kv_write_bytes) == 2 * 4 * 12 * 2048 + 2 * 36 * 548_864 * 2


def test_the_mixed_step_has_its_own_module_and_the_released_path_warns():
    """estimate_prefill (the released path) hands the mixed step on from floors.mixed_step."""
    import sys

    import roofline_decode as rd
    from roofline_decode.floors import mixed_step

    assert rd.mixed_step_floor is mixed_step.mixed_step_floor
    sys.modules.pop("roofline_decode.estimate_prefill", None)
    vars(rd).pop("estimate_prefill", None)
    with pytest.warns(DeprecationWarning, match="estimate_prefill moved to roofline_decode.floors.prefill"):
        from roofline_decode.estimate_prefill import mixed_step_floor
    assert mixed_step_floor is mixed_step.mixed_step_floor


def test_the_prefill_names_ttft_as_the_request_does_and_time_s_is_a_deprecated_alias():
    r = prefill_floor("llama-3.1-8b", "h100-sxm", [1024, 4096])
    record = r.to_records()[0]
    assert "ttft_s" in record and "time_s" not in record
    assert "TTFT ms" in str(r)
    with pytest.warns(DeprecationWarning, match="use ttft_s"):
        alias = r.time_s
    assert alias is r.ttft_s
    from roofline_decode.floors.request import request_floor

    q = request_floor("llama-3.1-8b", "h100-sxm", 4096, 1)  # one output token: the request is the prefill
    assert float(q.ttft_s) == float(r.ttft_s[1])
