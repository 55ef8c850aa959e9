"""Value tests of the parallel layouts: a DeepSeek-V3 step by hand under tp8, tp8 ep8 and dp8 ep8.

DeepSeek-V3 (config.json, deepseek-ai/DeepSeek-V3): 61 layers, the first 3 dense, so 58 MoE
layers of E = 256 routed experts, k = 8 per token, moe_intermediate_size 2048 at d = 7168
(3 x 7168 x 2048 = 44,040,192 parameters per expert), MLA latent cache 512 + 64 = 576 values
per token and layer, vocabulary 129,280.  Served in fp8 with 128 x 128 block scales (1 + 4 /
16384 bytes per weight), bf16 cache and activations.  H200 SXM: 4.8 TB/s, NVLink 900 GB/s
bidirectional = 450 GB/s per direction.
"""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import formulas as f
from roofline_decode.floors.parallel import ParallelFloor, tensor_parallel_floor

L, L_MOE, E, K, D, V = 61, 58, 256, 8, 7168, 129_280
P_EXPERT = 3 * 7168 * 2048
B_FP8 = 1 + 4 / (128 * 128)
KV_PER_TOKEN_LAYER = (512 + 64) * 2
LINK, HBM = 450e9, 4.8e12
B, T = 64, 4096


def floor(parallel, routing="identical", **kw):
    r = rd.decode_floor("deepseek-v3", "h200-sxm", batch=B, context=T, parallel=parallel, routing=routing, **kw)
    assert isinstance(r, ParallelFloor)
    return r


def single(batch, routing="identical"):
    return rd.decode_floor("deepseek-v3", "h200-sxm", batch=batch, context=T, routing=routing)


def test_config_numbers():
    m = rd.load_model("deepseek-v3")
    assert (m.num_layers, m.num_moe_layers, m.num_experts, m.num_experts_per_token) == (L, L_MOE, E, K)
    assert m.expert_parameters == P_EXPERT and m.routed_expert_format.bytes_per_element == B_FP8
    assert m.kv_bytes_per_token_per_layer == KV_PER_TOKEN_LAYER


def test_dp8_ep8_busiest_rank_by_hand():
    r = floor("dp8 ep8")
    # each of 8 attention-DP ranks: 8 of the 64 sequences, its own cache, the non-expert weights whole
    kv_read = 8 * T * L * KV_PER_TOKEN_LAYER
    assert float(r.kv_read_bytes_per_device) == pytest.approx(kv_read, rel=1e-12)
    assert float(r.kv_write_bytes_per_device) == pytest.approx(8 * L * KV_PER_TOKEN_LAYER, rel=1e-12)
    # identical routing: k = 8 experts per MoE layer for the whole batch, the busiest of 8 EP ranks at least 1
    experts = L_MOE * (K / 8) * P_EXPERT * B_FP8
    assert float(r.expert_read_bytes_per_device) == pytest.approx(experts, rel=1e-12)
    # non-expert weights: what one device reads for 8 sequences, less its k experts
    non_expert = float(single(8).weight_bytes) - L_MOE * K * P_EXPERT * B_FP8
    assert float(r.weight_read_bytes_per_device) == pytest.approx(non_expert + experts, rel=1e-12)
    read = non_expert + experts + kv_read + 8 * L * KV_PER_TOKEN_LAYER
    assert float(r.memory_time_s) == pytest.approx(read / HBM, rel=1e-12)
    # dispatch and combine: 64 / 8 tokens per device, k copies of d bf16 values, 7/8 of them leave it
    a2a = 2 * L_MOE * (64 / 8) * K * D * 2 * (7 / 8) / LINK
    assert float(r.communication_time_s) == pytest.approx(a2a, rel=1e-12)
    assert float(r.step_time_s) == pytest.approx(max(read / HBM, float(r.compute_time_s), a2a), rel=1e-12)
    assert float(r.tokens_per_s) == pytest.approx(B / float(r.step_time_s))
    assert r.num_devices == 8 and str(r.parallel) == "dp8 ep8" and r.strategy == "layout"
    # FLOPs: 8 sequences' attention and dense work, k x 64 / 8 tokens' expert work
    groups = r.group_flops_per_device
    assert sum(float(v) for v in groups.values()) == pytest.approx(float(r.flops_per_device), rel=1e-12)
    assert float(groups["experts"]) == pytest.approx(2 * (64 * K / 8) * L_MOE * P_EXPERT, rel=1e-12)


def test_tp8_by_hand_and_tp8_ep8_reads_as_much():
    m = rd.load_model("deepseek-v3")
    tp8, tp8ep8 = floor("tp8"), floor("tp8 ep8")
    # tensor parallel: every matrix split 8 ways but the norm vectors (bf16), the latent cache by context
    norms = 2 * m.parameter_groups["layer_vector"]
    weights = (float(single(B).weight_bytes) - norms) / 8 + norms
    assert float(tp8.weight_read_bytes_per_device) == pytest.approx(weights, rel=1e-12)
    assert float(tp8.kv_read_bytes_per_device) == pytest.approx(B * T * L * KV_PER_TOKEN_LAYER / 8, rel=1e-12)
    # 8 experts per layer split 8 ways (moe_tp = 8) or spread over 8 EP ranks: one expert's bytes each
    assert float(tp8.expert_read_bytes_per_device) == pytest.approx(L_MOE * P_EXPERT * B_FP8, rel=1e-12)
    assert float(tp8ep8.weight_read_bytes_per_device) == pytest.approx(weights, rel=1e-12)
    # tp8: two all-reduces per layer of B x d bf16, the embedding's all-reduce, the logits' all-gather
    comm = (f.tensor_parallel_communication_time(B, D, 2, L, 8, LINK) + f.ring_all_reduce_time(B * D * 2, 8, LINK)
            + f.ring_all_gather_time(B * V * 2, 8, LINK))
    assert float(tp8.communication_time_s) == pytest.approx(comm, rel=1e-12)
    # tp8 ep8: the MoE layers' all-reduce, or dispatch and combine of B / 8 tokens per device (the same
    # bytes here: k = ep = 8 copies of B / 8 tokens, 7/8 of them leaving the device)
    dispatch = 2 * L_MOE * f.all_to_all_time(B / 8 * K * D * 2, 8, LINK)
    assert dispatch == pytest.approx(L_MOE * f.ring_all_reduce_time(B * D * 2, 8, LINK), rel=1e-12)
    comm_ep = (f.tensor_parallel_communication_time(B, D, 2, 2 * L - L_MOE, 8, LINK, all_reduces_per_layer=1)
               + f.ring_all_reduce_time(B * D * 2, 8, LINK) + f.ring_all_gather_time(B * V * 2, 8, LINK) + dispatch)
    assert float(tp8ep8.communication_time_s) == pytest.approx(comm_ep, rel=1e-12)


def test_tp8_equals_the_tensor_parallel_floor():
    layout = floor("tp8", routing="uniform")
    wrapper = tensor_parallel_floor("deepseek-v3", "h200-sxm", B, T, 8)
    for key in ("step_time_s", "memory_time_s", "compute_time_s", "communication_time_s", "bytes_read_per_device",
                "kv_bytes_per_device"):
        np.testing.assert_array_equal(getattr(layout, key), getattr(wrapper, key))
    assert layout.weight_bytes_per_device == wrapper.weight_bytes_per_device


def test_uniform_routing_reads_the_experts_the_whole_batch_touches():
    r = floor("dp8 ep8", routing="uniform")
    touched = float(f.expected_experts_touched(E, K, B))  # U(64) of the global batch, not of 8 sequences
    assert float(r.expert_read_bytes_per_device) == pytest.approx(L_MOE * touched / 8 * P_EXPERT * B_FP8, rel=1e-12)
    assert r.routing == "uniform" and any("U(B)" in note for note in r.notes)


def test_resident_bytes_per_rank():
    m = rd.load_model("deepseek-v3")
    r = floor("dp8 ep8")
    experts = L_MOE * E * P_EXPERT * B_FP8
    assert r.weight_bytes_per_device == pytest.approx(m.weight_bytes - experts + experts / 8, rel=1e-12)
    assert float(r.kv_bytes_per_device) == pytest.approx(8 * T * L * KV_PER_TOKEN_LAYER, rel=1e-12)


def test_a_token_reaches_each_expert_rank_once():
    # ep = 2 < k = 8: each token goes once to each of the 2 ranks (1 remote), not 8 times
    r = floor("dp2 ep2")
    a2a = 2 * L_MOE * f.all_to_all_time(B / 2 * 2 * D * 2, 2, LINK)
    assert float(r.communication_time_s) == pytest.approx(a2a, rel=1e-12)


def test_scale_out_carries_what_leaves_the_domain():
    # 16 devices in two HGX nodes of 8 with 50 GB/s NICs: half of each dispatch leaves the node
    inside = floor("dp16 ep16", node_size=8, scale_out_bandwidth=50e9)
    a2a = 2 * L_MOE * f.all_to_all_time(B / 16 * K * D * 2, 16, LINK, 0, 8, 50e9)
    assert float(inside.communication_time_s) == pytest.approx(a2a, rel=1e-12)
    one_domain = floor("dp16 ep16", node_size=16)  # every device on the NVLink switch
    assert float(inside.communication_time_s) > float(one_domain.communication_time_s)
    assert inside.scale_up_domain == 8 and inside.scale_out_bandwidth == 50e9
    assert any("span 2 scale-up domains" in note for note in inside.notes)
    # the catalog's H200 SXM: an HGX domain of 8 and a 400 Gb/s ConnectX-7 NIC per GPU
    catalog = floor("dp16 ep16")
    assert (catalog.scale_up_domain, catalog.scale_out_bandwidth) == (8, 50e9)
    assert float(catalog.communication_time_s) == float(inside.communication_time_s)
    unknown = rd.decode_floor("deepseek-v3", "a100-80gb-sxm", batch=B, context=T, parallel="dp16 ep16",
                              routing="identical")
    assert any("domain size unknown" in note for note in unknown.notes)


def test_pipeline_stages_divide_the_rank():
    one, two = floor("tp8"), floor("tp8 pp2")
    assert two.num_devices == 16
    assert float(two.bytes_read_per_device) == pytest.approx(float(one.bytes_read_per_device) / 2, rel=1e-12)
    assert two.weight_bytes_per_device == pytest.approx(one.weight_bytes_per_device / 2, rel=1e-12)


def test_prefill_and_mixed_step_under_a_layout():
    plain = rd.prefill_floor("llama-3.1-70b", "h100-sxm", 8192, 8)
    tp8 = rd.prefill_floor("llama-3.1-70b", "h100-sxm", 8192, 8, parallel="tp8")
    assert isinstance(tp8, ParallelFloor) and tp8.step == "prefill"
    # no better than a perfect 8-way split of the single device's floor
    assert float(tp8.ttft_s) * 8 >= float(plain.ttft_s) * (1 - 1e-12)
    assert float(tp8.flops_per_device) == pytest.approx(float(plain.flops) / 8, rel=1e-12)
    assert float(tp8.tokens_per_s) == pytest.approx(8 * 8192 / float(tp8.ttft_s))
    mixed = rd.mixed_step_floor("deepseek-v3", "h200-sxm", 128, 4096, 2048, parallel="dp8 ep8", routing="identical")
    alone = rd.mixed_step_floor("deepseek-v3", "h200-sxm", 128, 4096, 2048, routing="identical")
    assert mixed.step == "mixed" and float(mixed.step_time_s) < float(alone.step_time_s)
    assert float(mixed.flops_per_device) * 8 == pytest.approx(float(alone.flops), rel=1e-9)
    assert float(mixed.kv_read_bytes_per_device) * 8 == pytest.approx(float(alone.kv_read_bytes), rel=1e-12)


def test_one_device_layouts_are_the_plain_floors():
    for parallel in ("tp1", rd.Parallel(), {"tp": 1}):
        a = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=16, context=2048, parallel=parallel)
        b = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=16, context=2048)
        assert type(a) is type(b) and float(a.step_time_s) == float(b.step_time_s) and a.notes == b.notes
    p = rd.prefill_floor("llama-3.1-8b", "h100-sxm", 1024, parallel="tp1")
    assert float(p.ttft_s) == float(rd.prefill_floor("llama-3.1-8b", "h100-sxm", 1024).ttft_s)
    m = rd.mixed_step_floor("llama-3.1-8b", "h100-sxm", 8, 1024, 256, parallel=rd.Parallel())
    assert float(m.step_time_s) == float(rd.mixed_step_floor("llama-3.1-8b", "h100-sxm", 8, 1024, 256).step_time_s)


def test_sweep_under_a_layout():
    result = rd.sweep(["deepseek-v3"], ["h200-sxm", "b200"], batch=[1, 64], context=[1024, 4096], parallel="dp8 ep8")
    assert len(result) == 2 and all(isinstance(r, ParallelFloor) for r in result)
    assert result[0].step_time_s.shape == (2, 2)
    point = floor("dp8 ep8", routing="uniform")
    np.testing.assert_allclose(result[0].step_time_s[1, 1], point.step_time_s, rtol=1e-12)
    records = result.to_records()
    assert len(records) == 8 and records[0]["parallel"] == "dp8 ep8" and records[0]["num_devices"] == 8


def test_one_attention_group_combines_by_all_reduce_where_that_is_cheaper():
    # tp8 ep2 (moe_tp 4): dispatch over 2 ranks plus gathers over 4 slices, or one all-reduce over 8 devices
    r = floor("tp8 ep2")
    dispatch = 2 * L_MOE * f.all_to_all_time(B / 8 * 2 * D * 2, 2, LINK)
    gathers = 2 * L_MOE * f.ring_all_gather_time(B * 2 / 2 * D * 2, 4, LINK)
    all_reduce = L_MOE * f.ring_all_reduce_time(B * D * 2, 8, LINK)
    rest = (f.tensor_parallel_communication_time(B, D, 2, 2 * L - L_MOE, 8, LINK, all_reduces_per_layer=1)
            + f.ring_all_reduce_time(B * D * 2, 8, LINK) + f.ring_all_gather_time(B * V * 2, 8, LINK))
    assert float(r.communication_time_s) == pytest.approx(rest + min(dispatch + gathers, all_reduce), rel=1e-12)


def test_a_layout_floor_says_whether_the_busiest_device_fits():
    from roofline_decode.floors.capacity import usable_memory

    r = rd.decode_floor("deepseek-v3", "h200-sxm", batch=[1, 512, 4096], context=8192, parallel="tp8")
    assert r.fits.tolist() == (r.resident_bytes_per_device <= usable_memory("h200-sxm")).tolist() == [True, True, False]
    assert not rd.decode_floor("deepseek-v3", "h200-sxm", batch=1, context=8192, parallel="tp2").fits
