"""Speculative decoding: the verify step by hand, the closed forms, and the laws of DESIGN §4b."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import InvalidValueError, decode_floor, load_model
from roofline_decode.floors.speculative import speculative_floor, verify_traffic
from roofline_decode.formulas import expected_tokens_per_round, speculative_speedup
from tests.properties.strategies import accelerators, models


def test_expected_tokens_per_round():
    assert float(expected_tokens_per_round(0.8, 4)) == pytest.approx(1 + 0.8 + 0.64 + 0.512 + 0.4096)
    assert float(expected_tokens_per_round(0.0, 4)) == 1 and float(expected_tokens_per_round(1.0, 4)) == 5


def test_verify_step_by_hand():
    """Llama-3.1-8B, B = 2, T = 100, k = 3: weights once with 8 gathered rows, KV of 2 x 100 tokens
    read once, 8 tokens written; attention over 100 + 101 + 102 + 103 positions per sequence."""
    m = load_model("llama-3.1-8b")
    t = verify_traffic(m, 2.0, 100.0, 3)
    kv = 2 * 8 * 128 * 2 * 32  # bytes per token over all layers
    assert float(t.kv_read_bytes) == 2 * 100 * kv and float(t.kv_write_bytes) == 8 * kv
    assert float(t.weight_bytes) == float(decode_floor(m, "h100-sxm", 8, 0).weight_bytes)
    attention = 2 * 2 * 32 * 256 * 32 * (100 + 101 + 102 + 103)
    assert float(t.flops) == 2 * 8 * m.matmul_parameters_per_token + attention
    plain = decode_floor(m, "h100-sxm", 2, 100)
    zero = verify_traffic(m, 2.0, 100.0, 0)  # k = 0 is a plain decode step
    assert float(zero.flops) == float(plain.flops) and float(zero.bytes_total) == float(plain.bytes_total)


def test_worked_values_70b_with_a_1b_draft():
    r = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", k=4, acceptance=[[0.6], [0.8]],
                          batch=[1, 8, 64], context=2048)
    assert np.round(r.speedup, 2).tolist() == [[2.15, 2.13, 2.01], [3.13, 3.1, 2.92]]
    mean_draft_step = r.draft_time_s / 4
    np.testing.assert_allclose(r.speedup, speculative_speedup(r.plain_step_s, mean_draft_step, r.verify_step_s, 4,
                                                              r.acceptance), rtol=1e-12)
    # break-even: at that acceptance the speedup is 1
    at = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", k=4,
                           acceptance=float(r.break_even_acceptance[0, 2]), batch=64, context=2048)
    assert float(at.speedup) == pytest.approx(1, abs=1e-6)
    assert (r.max_useful_batch <= np.ceil(r.plain_critical_batch)).all()
    # tokens/s: plain decoding's B / T_step times the speedup (B / time per token), at a = 0.8:
    # 23.98 x 3.13 = 75.1, 185.6 x 3.10 = 575, 1178 x 2.92 = 3,440 tokens/s
    plain = decode_floor("llama-3.1-70b", "h100-sxm", batch=[1, 8, 64], context=2048)
    np.testing.assert_allclose(r.tokens_per_s, plain.tokens_per_s * r.speedup, rtol=1e-12)
    np.testing.assert_allclose(r.tokens_per_s[1], [75.1, 575, 3440], rtol=2e-3)


def test_best_k_is_the_fastest_draft_length_by_hand():
    """Llama-3.1-70B with a Llama-3.2-1B draft on an H100 SXM, batch 1, T = 2,048: a plain step
    takes 41.695 ms, a draft step 0.758 ms, a verify step 41.695 ms (+ 0.1 us per drafted token:
    every step reads its weights once).  At a = 0.8, E(k) = 5 (1 - 0.8^(k+1)) and
    speedup(k) = E(k) x 41.695 / (k x 0.758 + 41.695): k = 10: 4.5705 x 41.695 / 49.27 = 3.868;
    k = 11: 4.6564 x 41.695 / 50.03 = 3.880; k = 12: 4.7251 x 41.695 / 50.79 = 3.879.  Best k = 11.
    At a = 0.9 the speedup still rises at k = 16, the largest k searched; at a = 0 every round
    yields one token, nothing pays: best k is 0 and the best speedup that of k = 1, 0.982."""
    r = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", k=4, acceptance=[0.0, 0.8, 0.9],
                          batch=1, context=2048)
    assert r.best_k.tolist() == [0, 11, 16]
    assert np.round(r.best_speedup, 3).tolist() == [0.982, 3.880, 6.455]
    for a, best in zip((0.0, 0.8, 0.9), r.best_speedup):  # the k = 1 ... 16 sweep, one k at a time
        sweep = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", k=np.arange(1, 17),
                                  acceptance=a, batch=1, context=2048).speedup
        assert float(best) == pytest.approx(float(sweep.max()), rel=1e-12)
    assert r.speedup[1] < r.best_speedup[1]  # k = 4 is not the best at a = 0.8


def test_mtp_heads_and_bad_input():
    r = speculative_floor("deepseek-v3", "h200-sxm", mtp_layers=1, k=1, acceptance=0.85, batch=[1, 64], context=4096)
    assert r.draft == "1-layer MTP heads"
    # speedup = E x plain / (draft + verify), E = 1 + 0.85 = 1.85.  Batch 1: the verify step's 2
    # tokens touch up to 2 x 8 routed experts per MoE layer where a plain step touches 8, so it
    # reads 1.52 times the bytes: 1.85 x 7.908 / (0.509 + 12.033) ms = 1.166.  Batch 64 (both
    # steps touch nearly every expert): 1.85 x 125.83 / (2.54 + 141.35) ms = 1.618.
    np.testing.assert_allclose(r.speedup, 1.85 * r.plain_step_s / (r.draft_time_s + r.verify_step_s), rtol=1e-12)
    assert np.round(r.speedup, 3).tolist() == [1.166, 1.618]
    assert "speedup" in str(r) and len(r.to_records()) == 2 and "<table>" in r._repr_html_()
    for kwargs, field in (({"k": 0}, "k"), ({"k": 2.5}, "k"), ({"acceptance": 1.5}, "acceptance"),
                          ({"mtp_layers": 1}, "draft"), ({"draft": None}, "draft")):
        with pytest.raises(InvalidValueError, match=field):
            speculative_floor("llama-3.1-8b", "h100-sxm", **{"draft": "llama-3.2-1b", **kwargs})


@settings(max_examples=10, deadline=None)
@given(model=models(kinds=("dense", "sliding")), draft=models(kinds=("dense",)), device=accelerators(),
       k=st.integers(1, 6), acceptance=st.floats(0, 1), batch=st.integers(1, 512), context=st.integers(0, 20000))
def test_speculation_laws(model, draft, device, k, acceptance, batch, context):
    r = speculative_floor(model, device, draft=draft, k=k, acceptance=[0.0, acceptance], batch=batch, context=context)
    assert r.speedup[0] <= 1 + 1e-12  # a = 0 is never faster
    assert (r.speedup <= k + 1 + 1e-12).all()
    plain = decode_floor(model, device, batch, context)
    if float(plain.compute_time_s) >= float(plain.memory_time_s):  # plain decode compute-bound: cannot pay
        assert (r.speedup <= 1 + 1e-12).all()


def test_identical_routing_is_the_strict_floor_everywhere():
    from roofline_decode.floors.mixed_step import mixed_step_floor
    from roofline_decode.floors.prefill import prefill_floor
    from roofline_decode.floors.request import request_floor

    m = "qwen3-30b-a3b"
    strict = prefill_floor(m, "h100-sxm", 4096, chunk=1024, routing="identical")
    uniform = prefill_floor(m, "h100-sxm", 4096, chunk=1024)
    model = load_model(m)
    assert float(uniform.weight_bytes - strict.weight_bytes) == pytest.approx(
        4 * model.num_moe_layers * (model.num_experts - model.num_experts_per_token) * model.expert_parameters * 2,
        rel=1e-9)  # 1,024 tokens per chunk touch every expert
    step = mixed_step_floor(m, "h100-sxm", 8, 1000, 0, routing="identical")
    assert float(step.step_time_s) == float(decode_floor(m, "h100-sxm", 8, 1000, routing="identical").step_time_s)
    assert float(request_floor(m, "h100-sxm", 512, 32, 8, routing="identical").e2e_latency_s) <= float(
        request_floor(m, "h100-sxm", 512, 32, 8).e2e_latency_s)
    s = speculative_floor(m, "h100-sxm", draft="qwen3-8b", k=3, acceptance=0.7, batch=4, context=0, routing="identical")
    assert float(s.plain_step_s) == float(decode_floor(m, "h100-sxm", 4, 0, routing="identical").step_time_s)
    with pytest.raises(InvalidValueError, match="routing"):
        prefill_floor(m, "h100-sxm", 10, routing="skewed")


def test_the_strict_round_overlaps_draft_and_verify_by_hand():
    """Llama-3.1-70B with a Llama-3.2-1B draft on an H100 SXM (3.35 TB/s, 989.5 TFLOP/s bf16),
    k = 4, a = 0.6 (E = 1 + 0.6 + 0.36 + 0.216 + 0.1296 = 2.3056), T = 2,048, B = 343.

    Plain step: 69,503,033,344 streamed parameters x 2 B + B x (8192 x 2 B row + 2,048 x 327,680 B
    of KV read + 327,680 B written) = 139,006,066,688 + 343 x 671,432,704 = 369,307,484,160 B:
    110.2410 ms (memory-bound: 0.050 s of compute).
    Verify (5 tokens a sequence): 139,006,066,688 + 5 x 343 x 16,384 + 343 x 671,088,640
    + 5 x 343 x 327,680 = 369,779,539,968 B (110.382 ms); 2 x 1,715 x 69,501,714,432
    + 4 x 64 x 128 x 80 x (2,048 + … + 2,052) x 343 = 247,607,208,181,760 FLOPs: 250.2347 ms,
    compute-bound.
    Four draft steps at T + i (1,235,814,400 parameters x 2 B, 4,096 B rows, 32,768 B of KV per
    token): 102,077,890,560 B, 30.4710 ms, memory-bound; 3,759,452,454,912 FLOPs (3.799 ms).
    Phased (each phase at its own max): 30.4710 + 250.2347 = 280.7057 ms a round,
    speedup 110.2410 x 2.3056 / 280.7057 = 0.90547.
    Overlapped (the strict floor): max(471,857,430,528 B / BW = 140.853 ms,
    (3.7595e12 + 2.4761e14) FLOP / F = 254.0340 ms) = 254.0340 ms, speedup 1.00054.
    At B = 344 the strict round no longer pays (0.99945), so the batch where speculation stops
    paying moves from 266 (phased: 1.00109 at 266, 0.99949 at 267) to 343."""
    kwargs = dict(draft="llama-3.2-1b", k=4, acceptance=0.6, context=2048)
    strict = speculative_floor("llama-3.1-70b", "h100-sxm", batch=[343, 344], **kwargs)
    phased = speculative_floor("llama-3.1-70b", "h100-sxm", batch=[266, 267, 343], pricing="phased", **kwargs)
    assert np.round(strict.round_time_s * 1e3, 4).tolist() == [254.034, 254.7746]
    assert float(strict.draft_time_s[0]) * 1e3 == pytest.approx(30.4710, abs=1e-4)
    assert float(strict.verify_step_s[0]) * 1e3 == pytest.approx(250.2347, abs=1e-4)
    assert np.round(strict.speedup, 5).tolist() == [1.00054, 0.99945]
    assert np.round(phased.speedup, 5).tolist() == [1.00109, 0.99949, 0.90547]
    assert float(phased.round_time_s[2]) == float(phased.draft_time_s[2] + phased.verify_step_s[2])
    assert strict.max_useful_batch.tolist() == [343, 343] and phased.max_useful_batch.tolist() == [266] * 3
    # the law still holds: this plain step is memory-bound at any batch (T = 2,048 keeps the
    # intensity below the ridge), and speculation pays up to where the verify FLOPs end it


def test_pricing_is_recorded_and_checked():
    kwargs = dict(draft="llama-3.2-1b", k=4, acceptance=0.6, batch=64, context=2048)
    strict = speculative_floor("llama-3.1-70b", "h100-sxm", **kwargs)
    phased = speculative_floor("llama-3.1-70b", "h100-sxm", pricing="phased", **kwargs)
    assert strict.pricing == "overlapped" and not any("phase" in note for note in strict.notes)
    assert phased.pricing == "phased" and any("pricing='phased'" in note for note in phased.notes)
    assert phased.to_records()[0]["pricing"] == "phased" and "round ms" in str(phased)
    # memory-bound phases: the two pricings agree (the worked example's numbers stand)
    assert float(strict.round_time_s) == pytest.approx(float(phased.round_time_s), rel=1e-12)
    with pytest.raises(InvalidValueError, match="pricing"):
        speculative_floor("llama-3.1-70b", "h100-sxm", pricing="serial", **kwargs)


@settings(max_examples=10, deadline=None)
@given(model=models(kinds=("dense", "moe", "sliding")), draft=models(kinds=("dense",)), device=accelerators(),
       k=st.integers(1, 6), acceptance=st.floats(0, 1), batch=st.integers(1, 4096), context=st.integers(0, 20000))
def test_the_strict_round_is_never_slower_and_keeps_the_law(model, draft, device, k, acceptance, batch, context):
    """The overlapped round lies between the verify step and the phased round; once plain
    decoding is compute-bound neither pricing lets speculation pay (the law of DESIGN §4b holds
    for the strict floor: its round has at least the verify step's FLOPs)."""
    kwargs = dict(draft=draft, k=k, acceptance=[0.0, acceptance], batch=batch, context=context)
    strict = speculative_floor(model, device, **kwargs)
    phased = speculative_floor(model, device, pricing="phased", **kwargs)
    assert (strict.round_time_s <= phased.round_time_s * (1 + 1e-12)).all()
    assert (strict.round_time_s >= strict.verify_step_s * (1 - 1e-12)).all()
    assert (strict.speedup >= phased.speedup * (1 - 1e-12)).all() and strict.speedup[0] <= 1 + 1e-12
    plain = decode_floor(model, device, batch, context)
    if float(plain.compute_time_s) >= float(plain.memory_time_s):
        assert (strict.speedup <= 1 + 1e-12).all()


def test_a_draft_of_another_vocabulary_gets_a_note():
    """Qwen2.5-3B (151,936 token ids, publisher Qwen) drafting for Llama-3.1-70B (128,256,
    meta-llama): another tokenizer.  Not refused (Hugging Face transformers' universal assisted
    decoding runs such pairs; vLLM, SGLang and llama.cpp refuse them), noted; before issue 27 the
    result carried no note at all.  Qwen2.5-3B for Qwen2.5-72B (152,064 ids, one publisher): one
    tokenizer padded to two sizes, noted as such.  Llama-2-7B for Mistral-7B (32,000 ids each,
    two publishers): same size, other tokenizer.  Llama-3.2-1B for Llama-3.1-70B, MTP heads: none."""
    def vocabulary(target, **kwargs):
        r = speculative_floor(target, "h100-sxm", k=4, acceptance=0.7, **kwargs)
        return [note for note in r.notes if note.startswith("vocabulary")]

    (note,) = vocabulary("llama-3.1-70b", draft="qwen2.5-3b")
    assert "151,936" in note and "128,256" in note and "publishers Qwen and meta-llama" in note
    assert "vLLM" in note and "universal assisted decoding" in note
    (note,) = vocabulary("qwen2.5-72b", draft="qwen2.5-3b")
    assert "151,936" in note and "152,064" in note and "one publisher, Qwen" in note
    (note,) = vocabulary("mistral-7b-v0.1", draft="llama-2-7b")
    assert "32,000 token ids each" in note and "(meta-llama, mistralai)" in note
    assert vocabulary("llama-3.1-70b", draft="llama-3.2-1b") == []
    assert vocabulary("deepseek-v3", mtp_layers=1) == []
    # a draft without a source: only the sizes can be compared
    bare = load_model("llama-2-7b").replace(source=None, name="my-draft")
    assert vocabulary("mistral-7b-v0.1", draft=bare) == []
    (note,) = vocabulary("llama-3.1-70b", draft=bare)
    assert "32,000" in note and "publisher" not in note.split(";")[0]


@pytest.mark.parametrize("acceptance, k", [(0.99999, 64), (0.9999999999, 16), (0.8, 4), (0.5, 1), (1e-300, 3)])
def test_tokens_per_round_keeps_full_precision_near_acceptance_one(acceptance, k):
    """1 - a^(k+1) cancels as a -> 1 (at a = 0.99999, k = 64 the plain quotient was 1.45e-12 off,
    which the fuzz suite's 1e-12 check caught); the exact sum in rationals is the reference."""
    from fractions import Fraction

    exact = sum(Fraction(acceptance) ** i for i in range(k + 1))
    got = float(expected_tokens_per_round(acceptance, k))
    assert abs(Fraction(got) - exact) / exact < 4e-16
