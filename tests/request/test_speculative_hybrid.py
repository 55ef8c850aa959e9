"""Speculative decoding on targets with recurrent, chunked and sparse layers (issue 27 item 6):
the verify step counts every token mixer as a decode step does, for k + 1 tokens."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor, list_models, load_model
from roofline_decode.floors.speculative import speculative_floor
from roofline_decode.floors.verify import verify_traffic
from tests.properties.strategies import accelerators, models

#: the catalog's targets with recurrent layers (Mamba-2, Gated DeltaNet, Mamba)
HYBRIDS = ("qwen3-next-80b-a3b", "qwen3.5-397b-a17b", "granite-4.0-h-small", "nemotron-3-nano-30b-a3b", "jamba-v0.1",
           "mamba-codestral-7b")


def test_the_catalog_s_hybrids_are_these():
    assert sorted(m for m in list_models() if load_model(m).num_recurrent_layers) == sorted(HYBRIDS)


def test_verify_step_of_a_recurrent_model_by_hand():
    """Mamba-Codestral-7B (64 Mamba-2 layers, no attention), B = 2, T = 100, k = 3.

    State per layer and sequence: 8192 x 128 SSM entries + 3 x (8192 + 2 x 8 x 128) convolution
    entries = 1,048,576 + 30,720 = 1,079,296, bf16: 64 layers x 1,079,296 x 2 B = 138,149,888 B per
    sequence, read once and written once: 2 x 138,149,888 = 276,299,776 B each way (no KV cache).
    Update FLOPs per layer and token: 6 x 8192 x 128 + 2 x 4 x 10,240 = 6,373,376, for all
    2 x 4 = 8 tokens: 8 x 64 x 6,373,376 = 3,263,168,512 FLOPs beyond the projections.
    (Before issue 27 the verify step read and wrote no state and ran no update: 0, 0 and 0.)"""
    m = load_model("mamba-codestral-7b")
    t = verify_traffic(m, 2.0, 100.0, 3)
    assert float(t.kv_read_bytes) == 276_299_776 and float(t.kv_write_bytes) == 276_299_776
    assert float(t.flops) == 2 * 8 * m.matmul_parameters_per_token + 3_263_168_512
    assert float(t.group_flops["attention_scores"]) == 3_263_168_512


def test_zero_acceptance_on_a_mamba_target_by_hand():
    """Mamba-Codestral-7B with its 1-layer MTP head on an H100 SXM (3.35 TB/s), k = 1, a = 0,
    B = 64, T = 4,096; every step memory-bound (a plain step: 0.93 TFLOP, 0.95 ms at the bf16 peak).

    Plain step: weights 7,285,403,648 - 134,217,728 (embedding) = 7,151,185,920 parameters x 2 B
    + 64 gathered rows x 4096 x 2 B = 14,302,896,128 B; state 64 sequences x 138,149,888 B
    = 8,841,592,832 B read and as much written: 31,986,081,792 B, 9.548084 ms.
    Verify step (2 tokens): 64 more gathered rows (524,288 B): 9.548241 ms.
    Draft step: one Mamba-2 layer (109,576,192 + 63,872 parameters), the final norm (4,096) and
    the lm_head (134,217,728): 243,861,888 x 2 B + 524,288 B rows + the one layer's state,
    2 x 64 x 2,158,592 B = 764,547,840 B, 0.228223 ms.
    a = 0 yields one token a round: speedup 9.548084 / (0.228223 + 9.548241) = 0.97664.
    Before issue 27 the verify step dropped the state (14,303,420,416 B, 4.269678 ms): 2.1227."""
    r = speculative_floor("mamba-codestral-7b", "h100-sxm", mtp_layers=1, k=1, acceptance=0.0, batch=64, context=4096)
    assert float(r.plain_step_s) * 1e3 == pytest.approx(9.548084, abs=1e-6)
    assert float(r.verify_step_s) * 1e3 == pytest.approx(9.548241, abs=1e-6)
    assert float(r.draft_time_s) * 1e3 == pytest.approx(0.228223, abs=1e-6)
    assert float(r.speedup) == pytest.approx(0.97664, abs=1e-5)


@pytest.mark.parametrize("name", list_models())
def test_a_verify_step_of_no_draft_token_is_a_plain_decode_step(name):
    """k = 0, term for term and bit for bit, over the whole catalog (chunked, sparse and
    recurrent layers included), both routings, at chunk boundaries and an empty cache."""
    model = load_model(name)
    batch, context = np.array([[1.0], [7.0], [300.0]]), np.array([0.0, 1.0, 100.0, 8191.0, 8192.0, 131071.0])
    for routing in ("uniform", "identical"):
        v = verify_traffic(model, batch, context, np.array(0.0), routing)
        p = decode_floor(model, "h100-sxm", batch, context, routing=routing)
        for ours, plain in ((v.weight_bytes, p.weight_bytes), (v.kv_read_bytes, p.kv_read_bytes),
                            (v.kv_write_bytes, p.kv_write_bytes), (v.flops, p.flops),
                            (v.group_flops["attention_scores"], p.group_flops["attention_scores"])):
            np.testing.assert_array_equal(ours, plain)


def test_chunked_and_sparse_layers_in_the_verify_step_by_hand():
    """Llama-4-Maverick: 36 chunked layers (C = 8,192); at T = 8,190, k = 3 the verify tokens sit
    at positions 8,190 … 8,193 and attend 8,190, 8,191, 0 and 1 positions of their chunk: 16,382
    per layer, where a plain step at that context attends 8,190 (the chunked read is the same,
    8,190 positions).  Scores: 2 x B x 40 heads x 256 x 36 x 16,382 = 12,077,236,224 FLOPs at B = 1,
    beyond the 12 global layers' 40 x 256 x 2 x 12 x (8,190 + 8,191 + 8,192 + 8,193).
    DeepSeek-V3.2-Exp (61 sparse layers, top-k 2,048, a 64 x 128 indexer of 132-B keys), T = 100:
    the indexer keys of the 100 cached tokens read once (61 x 100 x 132 = 805,200 B) and 4 written
    (32,208 B); tokens attend min(100 + i, 2,048) = 100 … 103 positions."""
    m = load_model("llama-4-maverick")
    v = verify_traffic(m, 1.0, 8190.0, 3)
    plain = decode_floor(m, "h100-sxm", 1, 8190)
    assert float(v.kv_read_bytes) == float(plain.kv_read_bytes)
    global_scores = 2 * 40 * 256 * 12 * (8190 + 8191 + 8192 + 8193)
    assert float(v.group_flops["attention_scores"]) == 2 * 40 * 256 * 36 * 16_382 + global_scores
    both = verify_traffic(m, 1.0, 8190.0, np.array([0.0, 3.0]))  # k broadcast: each point its own k + 1 tokens
    assert both.group_flops["attention_scores"].tolist() == [float(plain.group_flops["attention_scores"]),
                                                             float(v.group_flops["attention_scores"])]
    d = load_model("deepseek-v3.2-exp")
    v, plain = verify_traffic(d, 1.0, 100.0, 3), decode_floor(d, "h100-sxm", 1, 100)
    assert float(v.kv_read_bytes) == float(plain.kv_read_bytes)
    assert float(v.kv_write_bytes) == 4 * float(plain.kv_write_bytes)  # 4 tokens of latent KV and indexer keys
    width = d.score_value_width
    indexer = 2 * 61 * 64 * 128 * (100 + 101 + 102 + 103)
    attention = 2 * 128 * width * 61 * (100 + 101 + 102 + 103)
    assert float(v.group_flops["attention_scores"]) == pytest.approx(attention + indexer, rel=1e-15)


@pytest.mark.parametrize("name", HYBRIDS)
def test_rejected_drafts_never_pay_on_the_hybrid_catalog(name):
    """The law over the catalog's hybrid targets: at a = 0 every round yields one token and the
    verify step costs at least a plain step, so the speedup is at most 1 (before issue 27:
    up to 2.98 at B = 512, k = 1, T = 4,096 for Mamba-Codestral); where plain decoding is
    compute-bound, no acceptance pays."""
    batch, context = np.array([[1.0], [16.0], [256.0], [4096.0]]), np.array([0.0, 4096.0, 65536.0])
    r = speculative_floor(name, "h100-sxm", mtp_layers=1, k=[[[1]], [[4]], [[8]]], acceptance=0.0,
                          batch=batch, context=context)
    assert (r.speedup <= 1 + 1e-12).all() and (r.best_k == 0).all()
    assert (r.verify_step_s >= r.plain_step_s).all()
    full = speculative_floor(name, "h100-sxm", mtp_layers=1, k=4, acceptance=1.0, batch=batch, context=context)
    plain = decode_floor(name, "h100-sxm", batch, context)
    bound = plain.compute_time_s >= plain.memory_time_s
    assert (full.speedup[bound] <= 1 + 1e-12).all()


@settings(max_examples=10, deadline=None)
@given(model=models(kinds=("hybrid",)), device=accelerators(), k=st.integers(1, 6), acceptance=st.floats(0, 1),
       batch=st.integers(1, 512), context=st.integers(0, 20000))
def test_speculation_laws_on_hybrid_targets(model, device, k, acceptance, batch, context):
    r = speculative_floor(model, device, mtp_layers=1, k=k, acceptance=[0.0, acceptance], batch=batch,
                          context=context)
    assert r.speedup[0] <= 1 + 1e-12  # rejected drafts never beat a plain step
    assert (r.speedup <= k + 1 + 1e-12).all()
    plain = decode_floor(model, device, batch, context)
    if float(plain.compute_time_s) >= float(plain.memory_time_s):
        assert (r.speedup <= 1 + 1e-12).all()
    zero = verify_traffic(model, float(batch), float(context), 0)
    assert float(zero.flops) == float(plain.flops) and float(zero.bytes_total) == float(plain.bytes_total)
