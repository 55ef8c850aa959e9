"""Multi-device decode: tensor and pipeline parallelism (values with citations, laws)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import formulas as f
from roofline_decode.errors import InvalidValueError
from roofline_decode.planning import pipeline_parallel_floor, plan, tensor_parallel_floor
from roofline_decode.floors.parallel import DEFAULT_COLLECTIVE_LATENCY

# kipply, "Transformer Inference Arithmetic" (2022), "comparing against real benchmarks": a 13B model
# (40 layers, d_model 5120, 40 heads, V = 50272, d_ff = 4d, fp16) under NVIDIA FasterTransformer on
# A100 40GB, batch 1, 512 context: 22.0 ms per generated token on 1 GPU, 13.5 ms on 2 GPUs (tensor
# parallel).  Numbers and config as reproduced in cli99/llm-analysis examples/fastertransformer/README.md
# and llm_analysis/model_configs/test-13b.json (which also reports 17.07 / 9.35 ms "ideal efficiency").
KIPPLY_13B = rd.Model(
    name="kipply-13B", num_layers=40, hidden_size=5120, num_heads=40, num_kv_heads=40, head_dim=128,
    intermediate_size=20480, vocab_size=50272, mlp_gated=False, weight_format="fp16", kv_format="fp16",
    activation_format="fp16",
)
FT_MEASURED_MS = {1: 22.0, 2: 13.5}
LLM_ANALYSIS_IDEAL_MS = {1: 17.07, 2: 9.35}


@pytest.mark.parametrize("devices", [1, 2])
def test_kipply_fastertransformer_13b_on_a100(devices):
    # llm-analysis's "ideal" counts the all-reduces serially: compare the realistic variant
    floor = tensor_parallel_floor(KIPPLY_13B, "a100-40gb-sxm", batch=1, context=512, num_devices=devices,
                                  collective_latency=DEFAULT_COLLECTIVE_LATENCY, overlap_communication=False)
    step_ms = float(floor.step_time_s) * 1e3
    # a floor: below what FasterTransformer measured ...
    assert step_ms < FT_MEASURED_MS[devices]
    # ... and not absurdly below (kipply profiles ~0.87-0.9 of HBM bandwidth in FT's kernels)
    assert step_ms > 0.6 * FT_MEASURED_MS[devices]
    # the same "ideal efficiency" arithmetic as llm-analysis, within 10%
    assert step_ms == pytest.approx(LLM_ANALYSIS_IDEAL_MS[devices], rel=0.10)


def test_kipply_13b_tensor_parallel_halves_the_memory_time():
    one = tensor_parallel_floor(KIPPLY_13B, "a100-40gb-sxm", 1, 512, 1)
    two = tensor_parallel_floor(KIPPLY_13B, "a100-40gb-sxm", 1, 512, 2, collective_latency=5e-6)
    assert float(two.memory_time_s) == pytest.approx(float(one.memory_time_s) / 2, rel=1e-3)
    # two all-reduces per layer (80 of 10,240 B, 2·(n−1)/n = 1 of it over the link at 300 GB/s), the
    # embedding's all-reduce (10,240 B) and the logits' all-gather (50,272 · 2 B, (n−1)/n = 1/2 of it):
    # 82 collectives at 5 µs each
    expected = 81 * (5e-6 + 10240 / 300e9) + (5e-6 + 0.5 * 50272 * 2 / 300e9)
    assert float(two.communication_time_s) == pytest.approx(expected, rel=1e-9)


def test_scaling_book_llama3_70b_int8_on_8_v5e():
    # Austin et al., "How to Scale Your Model" (2025), Part 8 "Serving LLaMA 3-70B on TPUs": int8 params
    # (70 GB) + int8 KV at batch 32, 8192 context (41.9 GB) on 8 TPU v5e -> "(70e9 + 41.9e9) / (8 * 8.1e11)
    # = 17 ms" per step, bandwidth-bound.
    model = rd.load_model("llama-3.1-70b", weights="int8", kv="int8")
    floor = tensor_parallel_floor(model, "tpu-v5e", batch=32, context=8192, num_devices=8, collective_latency=0)
    assert float(floor.memory_time_s) * 1e3 == pytest.approx(17.27, rel=0.03)
    assert float(floor.compute_time_s) < float(floor.memory_time_s)


@pytest.mark.parametrize("weights,chips", [("bf16", 16), ("int8", 8), ("int4", 4)])
def test_scaling_book_smallest_v5e_slice_for_llama3_70b(weights, chips):
    # Same chapter: smallest slice for batch 1 at 8k context: bf16 -> 4x4 = 16 chips, int8 -> 4x2 = 8,
    # int4 -> 2x2 = 4 (KVs in the same dtype; slices are powers of two, our TP degrees divide 64 heads).
    kv = {"bf16": "bf16", "int8": "int8", "int4": "int8"}[weights]
    model = rd.load_model("llama-3.1-70b", weights=weights, kv=kv)
    row = plan(model, "tpu-v5e", batch=1, context=8192, max_devices=16)[0]
    assert row.min_devices == chips


def test_scaling_book_full_hbm_step_time_on_v5e():
    # Same chapter: with the batch filling HBM, a step takes about "16GB / 8.2e11 = 19ms".
    model = rd.load_model("llama-3.1-70b", weights="int8", kv="int8")
    row = plan(model, "tpu-v5e", batch=1, context=8192, tp=8)[0]
    full = tensor_parallel_floor(model, "tpu-v5e", row.max_batch, 8192, 8, collective_latency=0)
    assert float(full.memory_time_s) * 1e3 == pytest.approx(19.0, rel=0.06)
    assert float(full.memory_time_s) <= row.usable_bytes_per_device / 819e9 * 1.001


SHARDABLE = ["llama-3.1-8b", "llama-3.1-70b", "qwen2.5-7b", "mixtral-8x7b", "deepseek-v2-lite", "gemma-2-9b",
             "opt-6.7b"]


@settings(max_examples=40, deadline=None)
@given(model=st.sampled_from(SHARDABLE), n=st.integers(1, 16), m=st.integers(1, 16), batch=st.integers(1, 128),
       context=st.integers(0, 65536))
def test_more_devices_never_raise_per_device_bytes(model, n, m, batch, context):
    small, large = sorted((n, m))
    a = tensor_parallel_floor(model, "h100-sxm", batch, context, small)
    b = tensor_parallel_floor(model, "h100-sxm", batch, context, large)
    assert b.weight_bytes_per_device <= a.weight_bytes_per_device * (1 + 1e-12)
    assert float(b.kv_bytes_per_device) <= float(a.kv_bytes_per_device) * (1 + 1e-12)
    assert float(b.bytes_read_per_device) <= float(a.bytes_read_per_device) * (1 + 1e-12)
    assert float(b.memory_time_s) <= float(a.memory_time_s) * (1 + 1e-12)
    p = pipeline_parallel_floor(model, "h100-sxm", batch, context, small)
    q = pipeline_parallel_floor(model, "h100-sxm", batch, context, large)
    assert q.weight_bytes_per_device <= p.weight_bytes_per_device
    assert float(q.kv_bytes_per_device) <= float(p.kv_bytes_per_device)


def test_kv_heads_replicate_beyond_h_kv():
    # Llama-3.1-70B has 8 KV heads: the per-device cache stops shrinking at 8 devices
    kv = {n: float(tensor_parallel_floor("llama-3.1-70b", "h100-sxm", 8, 8192, n).kv_bytes_per_device)
          for n in (1, 2, 4, 8, 16)}
    assert kv[2] == pytest.approx(kv[1] / 2) and kv[8] == pytest.approx(kv[1] / 8)
    assert kv[16] == pytest.approx(kv[8])
    sixteen = tensor_parallel_floor("llama-3.1-70b", "h100-sxm", 8, 8192, 16, link_bandwidth=450e9)
    assert sixteen.kv_replication == 2.0 and any("replicated" in note for note in sixteen.notes)


def test_mla_latent_cache_splits_by_context_in_the_strict_floor():
    # DeepSeek-V2-Lite at B = 4, T = 4096: 4 x 27 layers x 4096 x (512 + 64) x 2 B of latents; split by
    # context over 2 devices in the strict floor, whole on each under the engines' replicated layout
    one = tensor_parallel_floor("deepseek-v2-lite", "h100-sxm", 4, 4096, 1)
    two = tensor_parallel_floor("deepseek-v2-lite", "h100-sxm", 4, 4096, 2)
    whole = tensor_parallel_floor("deepseek-v2-lite", "h100-sxm", 4, 4096, 2, mla_layout="replicated")
    assert float(one.kv_bytes_per_device) == 4 * 27 * 4096 * 576 * 2
    assert float(two.kv_bytes_per_device) == pytest.approx(float(one.kv_bytes_per_device) / 2, rel=1e-15)
    assert float(whole.kv_bytes_per_device) == pytest.approx(float(one.kv_bytes_per_device))
    assert two.weight_bytes_per_device < whole.weight_bytes_per_device < one.weight_bytes_per_device
    assert (two.mla_layout, whole.mla_layout, two.kv_replication, whole.kv_replication) == ("sharded", "replicated", 1, 2)
    assert tensor_parallel_floor("llama-3.1-8b", "h100-sxm", 1, 0, 2).mla_layout is None


def test_one_device_equals_decode_floor():
    single = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 16, 128], context=4096)
    tp1 = tensor_parallel_floor("llama-3.1-8b", "h100-sxm", [1, 16, 128], 4096, 1)
    np.testing.assert_allclose(tp1.step_time_s, single.step_time_s, rtol=1e-12)
    assert np.all(tp1.communication_time_s == 0)


def test_communication_formula_and_overlap():
    floor = tensor_parallel_floor("llama-3.1-70b", "h100-sxm", 16, 4096, 8,
                                  collective_latency=DEFAULT_COLLECTIVE_LATENCY, overlap_communication=False)
    expected = (f.tensor_parallel_communication_time(16, 8192, 2, 80, 8, 450e9, 5e-6)
                + f.ring_all_reduce_time(16 * 8192 * 2, 8, 450e9, 5e-6)  # vocab-parallel embedding
                + f.ring_all_gather_time(16 * 128256 * 2, 8, 450e9, 5e-6))  # logits
    assert float(floor.communication_time_s) == pytest.approx(expected)
    assert float(floor.step_time_s) == pytest.approx(
        max(float(floor.memory_time_s), float(floor.compute_time_s)) + expected)
    assert any("not a floor" in note for note in floor.notes)
    strict = tensor_parallel_floor("llama-3.1-70b", "h100-sxm", 16, 4096, 8)  # the default: no α, overlapped
    assert float(strict.step_time_s) == max(float(strict.memory_time_s), float(strict.compute_time_s),
                                            float(strict.communication_time_s))
    assert float(strict.step_time_s) < float(floor.step_time_s) and not any("not a floor" in n for n in strict.notes)
    zero = tensor_parallel_floor("llama-3.1-70b", "h100-sxm", 16, 4096, 8, collective_latency=0)
    assert float(zero.communication_time_s) < float(floor.communication_time_s)


def test_ring_all_gather_is_half_the_link_time_of_an_all_reduce():
    assert f.ring_all_gather_time(1e6, 8, 1e9) == pytest.approx(f.ring_all_reduce_time(1e6, 8, 1e9) / 2)
    assert f.ring_all_gather_time(1e6, 1, 1e9, 1e-3) == 0


@pytest.mark.parametrize("weights, sharded_gb, replicated_gb", [("fp8", 4.58, 5.39), (None, 4.71, 5.52)])
def test_mla_latent_projections_shard_in_the_strict_floor_and_replicate_as_engines_do(weights, sharded_gb,
                                                                                       replicated_gb):
    # issue 27 item 6.2, DeepSeek-V3 TP = 8, batch 1, context 0: q_a (7168 x 1536) and kv_a (7168 x 576) of
    # 61 layers, 923,467,776 parameters, split 8 ways like every other matrix in the strict floor (two small
    # all-gathers of the latents per layer) and the latent cache split by context; the engines' layout
    # holds both whole on every device: + 7/8 of the projections and + 7/8 of the one token's latent the
    # step writes (61 x 576 x 2 B = 70,272 B).  Strict floor 5.52 -> 4.71 GB per device (fp8: 5.39 -> 4.58).
    model = rd.load_model("deepseek-v3", weights=weights)
    b = model.group_format("attention").bytes_per_element
    latent = 61 * 7168 * (1536 + 512 + 64)
    assert latent == 923_467_776
    strict = tensor_parallel_floor(model, "h100-sxm", batch=1, context=0, num_devices=8)
    engines = tensor_parallel_floor(model, "h100-sxm", batch=1, context=0, num_devices=8, mla_layout="replicated")
    assert float(strict.bytes_read_per_device) / 1e9 == pytest.approx(sharded_gb, abs=0.005)
    assert float(engines.bytes_read_per_device) / 1e9 == pytest.approx(replicated_gb, abs=0.005)
    assert float(engines.bytes_read_per_device) - float(strict.bytes_read_per_device) == pytest.approx(
        7 / 8 * (latent * b + 61 * 576 * 2), rel=1e-9)
    # the variant is recorded in the result and its notes
    assert strict.mla_layout == "sharded" and any("mla_layout='sharded' (the strict floor)" in n for n in strict.notes)
    assert engines.mla_layout == "replicated" and any("held whole" in n for n in engines.notes)
    # the replicated projections' FLOPs run on every device: 2 x 4 x latent x 7/8 more per device at B = 4
    four = tensor_parallel_floor(model, "h100-sxm", batch=4, context=0, num_devices=8)
    four_whole = tensor_parallel_floor(model, "h100-sxm", batch=4, context=0, num_devices=8, mla_layout="replicated")
    assert float(four_whole.compute_time_s) > float(four.compute_time_s)
    from roofline_decode.floors.parallel import device_traffic

    flops = [float(device_traffic(model, np.array(4.0), np.array(0.0), 8, mla_layout=layout).flops)
             for layout in ("sharded", "replicated")]
    assert flops[1] - flops[0] == pytest.approx(2 * 4 * latent * 7 / 8, rel=1e-9)


def test_mla_long_context_cache_splits_eight_ways():
    # DeepSeek-V3 TP = 8 at B = 64, T = 32,768 on H100s: the latent cache is 64 x 61 x 32,768 x 576 x 2 B =
    # 147,371,065,344 B, whole on every device before; split by context, 18,421,383,168 B per device
    # (the step 66.08 -> 27.35 ms)
    strict = tensor_parallel_floor("deepseek-v3", "h100-sxm", 64, 32768, 8)
    engines = tensor_parallel_floor("deepseek-v3", "h100-sxm", 64, 32768, 8, mla_layout="replicated")
    assert float(engines.kv_bytes_per_device) == 64 * 61 * 32768 * 576 * 2 == 147_371_065_344
    assert float(strict.kv_bytes_per_device) == 147_371_065_344 / 8 == 18_421_383_168
    assert float(strict.step_time_s) < float(engines.step_time_s)


def test_mla_layout_is_checked():
    with pytest.raises(InvalidValueError, match="mla_layout"):
        tensor_parallel_floor("deepseek-v3", "h100-sxm", 1, 0, 8, mla_layout="whole")


def test_ring_all_reduce_costs_nothing_on_one_device():
    assert f.ring_all_reduce_time(1e6, 1, 1e9, 1e-3) == 0


def test_no_interconnect_needs_a_link_bandwidth():
    with pytest.raises(InvalidValueError, match="link_bandwidth"):
        tensor_parallel_floor("llama-3.1-8b", "l4", 1, 1024, 2)
    floor = tensor_parallel_floor("llama-3.1-8b", "l4", 1, 1024, 2, link_bandwidth=32e9)
    assert floor.link_bandwidth == 32e9


def test_per_peer_bridge_beyond_two_devices_is_noted():
    floor = tensor_parallel_floor("llama-3.1-70b", "h100-pcie", 1, 1024, 4)
    assert any("per-peer" in note for note in floor.notes)


def test_pipeline_one_microbatch_is_no_faster_than_one_device():
    one = rd.decode_floor("llama-3.1-70b", "h200-sxm", batch=8, context=4096)
    pipe = pipeline_parallel_floor("llama-3.1-70b", "h200-sxm", 8, 4096, 4, collective_latency=0, link_bandwidth=1e30)
    assert float(pipe.step_time_s) == pytest.approx(float(one.step_time_s), rel=1e-9)
    assert pipe.weight_bytes_per_device == pytest.approx(one.spec.weight_bytes / 4)


def test_pipeline_microbatches_raise_throughput():
    one = pipeline_parallel_floor("llama-3.1-70b", "h100-sxm", 64, 4096, 4, microbatches=1)
    four = pipeline_parallel_floor("llama-3.1-70b", "h100-sxm", 64, 4096, 4, microbatches=4)
    assert float(four.tokens_per_s) > float(one.tokens_per_s)
    with pytest.raises(InvalidValueError, match="microbatches"):
        pipeline_parallel_floor("llama-3.1-70b", "h100-sxm", 2, 4096, 4, microbatches=4)


def test_pipeline_step_time_pays_a_hop_per_stage():
    # T_round = max(m t_stage, p (t_stage + t_hop)): a token crosses all p stages and p hand-offs
    assert f.pipeline_step_time(5e-3, 4, 1, 1e-4) == pytest.approx(4 * (5e-3 + 1e-4), rel=1e-12)  # m = 1
    assert f.pipeline_step_time(5e-3, 4, 4, 1e-4) == pytest.approx(4 * (5e-3 + 1e-4), rel=1e-12)  # m = p
    assert f.pipeline_step_time(5e-3, 4, 8, 1e-4) == pytest.approx(8 * 5e-3, rel=1e-12)  # m > p, hops hidden
    assert f.pipeline_step_time(5e-3, 4, 8, 6e-3) == pytest.approx(4 * (5e-3 + 6e-3), rel=1e-12)  # m > p, hops not


# Llama-2-7B in bf16 at context 0 on a 1 TB/s, 1 PFLOP/s device: a micro-batch of b sequences
# reads (6738415616 - 32000 x 4096 + b x 4096) x 2 B of weights (all but the input table, plus
# b gathered rows) and writes b x 524288 B of KV (32 layers x 2 x 32 heads x 128 x 2 B); its
# 2 b x 6607077376 FLOPs take 1/1000 of that time in compute, so a stage (1/p of the layers) is
# memory-bound: t_stage = bytes / (p x 1e12).  A hand-off carries b x 4096 x 2 B of bf16
# activations: t_hop = latency + b x 8192 / link.
PIPE_DEVICE = rd.Accelerator(name="1 TB/s, 1 PFLOP/s", memory_bandwidth=1e12, memory_capacity=80e9,
                             peak_flops={"bf16": 1e15})


def _stage_and_hop(b, p, latency, link):
    stage = ((6_738_415_616 - 32000 * 4096 + b * 4096) * 2 + b * 524_288) / p / 1e12
    return stage, latency + b * 4096 * 2 / link


@pytest.mark.parametrize("batch, p, m, latency", [
    (8, 4, 1, 1e-4),  # m = 1: the stages run one after another, each followed by its hop
    (8, 4, 4, 1e-4),  # m = p: every stage busy, and still p hops per token
    (8, 4, 8, 5e-3),  # m > p with slow hops: p (t_stage + t_hop) > m t_stage
])
def test_pipeline_floor_hand_values_with_hops(batch, p, m, latency):
    link = 1e10
    stage, hop = _stage_and_hop(batch / m, p, latency, link)
    assert p * (stage + hop) > m * stage  # the hops are on the critical path in each case
    floor = pipeline_parallel_floor("llama-2-7b", PIPE_DEVICE, batch, 0, num_stages=p, microbatches=m,
                                    collective_latency=latency, link_bandwidth=link)
    assert float(floor.step_time_s) == pytest.approx(p * (stage + hop), rel=1e-12)
    assert float(floor.communication_time_s) == pytest.approx(p * hop, rel=1e-12)
    assert float(floor.memory_time_s) == pytest.approx(m * stage, rel=1e-12)
    assert float(floor.tokens_per_s) == pytest.approx(batch / (p * (stage + hop)), rel=1e-12)


def test_pipeline_floor_hides_fast_hops_behind_many_microbatches():
    stage, hop = _stage_and_hop(1, 4, 1e-6, 1e10)
    floor = pipeline_parallel_floor("llama-2-7b", PIPE_DEVICE, 8, 0, num_stages=4, microbatches=8,
                                    collective_latency=1e-6, link_bandwidth=1e10)
    assert 8 * stage > 4 * (stage + hop)
    assert float(floor.step_time_s) == pytest.approx(8 * stage, rel=1e-12)


@pytest.mark.parametrize("n", [0, -1, 1.5, True])
def test_bad_device_count(n):
    with pytest.raises(InvalidValueError, match="num_devices"):
        tensor_parallel_floor("llama-3.1-8b", "h100-sxm", 1, 1024, n)


@pytest.mark.parametrize("kwargs,field", [
    (dict(num_stages="two"), "num_stages"), (dict(num_stages=None), "num_stages"),
    (dict(microbatches=1.5), "microbatches"), (dict(collective_latency=-1e-6), "collective_latency"),
    (dict(collective_latency=float("nan")), "collective_latency"),
])
def test_pipeline_rejects_bad_options(kwargs, field):
    args = dict(num_stages=2) | kwargs
    with pytest.raises(InvalidValueError, match=field):
        pipeline_parallel_floor("llama-3.1-8b", "h100-sxm", 4, 1024, **args)


@pytest.mark.parametrize("kwargs,field", [(dict(num_devices="8"), "num_devices"), (dict(num_devices="a"), "num_devices"),
                                          (dict(link_bandwidth="fast", num_devices=2), "link_bandwidth")])
def test_tensor_parallel_options_are_checked(kwargs, field):
    # strings are refused like everywhere in the API (even "8"); the CLI parses its own text
    with pytest.raises(InvalidValueError, match=field):
        tensor_parallel_floor("llama-3.1-8b", "h100-sxm", 1, 0, **kwargs)


# -- issue 27 item 6.1: the recurrent state splits over the recurrent heads, not the KV heads --------

#: Qwen3-Next-80B-A3B: 36 Gated DeltaNet layers, each with a state of 32 value heads x 128 x 128 plus
#: 3 x 8192 convolution inputs = 548,864 bf16 elements per sequence (formulas.gated_deltanet_state_elements);
#: 12 full-attention layers with 2 KV heads of 256 (2 x 2 x 256 x 2 B = 2048 B per token and layer).
QWEN3_NEXT_STATE = 36 * 548_864 * 2  # B per sequence


@pytest.mark.parametrize("model, heads", [
    ("qwen3-next-80b-a3b", 32),        # linear_num_value_heads (not the 16 key heads, nor the 2 KV heads)
    ("mamba-codestral-7b", 128),       # Mamba-2 num_heads
    ("granite-4.0-h-small", 128),      # mamba_n_heads
    ("nemotron-3-nano-30b-a3b", 64),   # mamba_num_heads
    ("jamba-v0.1", 8192),              # Mamba (v1): no heads, d_in = 2 x 4096 independent channels
])
def test_recurrent_heads_come_from_the_mixer_fields(model, heads):
    assert rd.load_model(model).recurrent_heads == heads


def test_qwen3_next_state_splits_eight_ways_on_eight_devices():
    # B = 128, T = 0 on 8 H200s, routing "identical": the state read and written per step is
    # 128 x 36 x 548,864 x 2 B = 5,058,330,624 B each way.  vLLM shards it by value heads (32 // 8 = 4 per
    # rank): each device reads and writes 1/8 of it, 632,291,328 B each way; before, it split only over the
    # 2 KV heads (1/2 each way), 2 x 5,058,330,624 x (1/2 - 1/8) = 3,793,747,968 B more per device:
    # 6.029 GB -> 2.235 GB per device, 1.256 ms -> 0.466 ms at 4.8 TB/s.  At T = 0 the KV cache holds
    # nothing and the step writes one token: 128 x 12 x 2048 B, split over the 2 KV heads.
    from roofline_decode.floors.parallel import device_traffic

    model = rd.load_model("qwen3-next-80b-a3b")
    state = 128 * QWEN3_NEXT_STATE
    assert state == 5_058_330_624
    floor = tensor_parallel_floor(model, "h200-sxm", 128, 0, 8, routing="identical")
    assert float(floor.kv_bytes_per_device) == state / 8 == 632_291_328
    weights = float(device_traffic(model, np.array(128.0), np.array(0.0), 8, "identical").weight_read_bytes)
    cache = 2 * state / 8 + 128 * 12 * 2048 / 2
    assert float(floor.bytes_read_per_device) == pytest.approx(weights + cache, rel=1e-12)
    assert float(floor.bytes_read_per_device) / 1e9 == pytest.approx(2.2351, abs=5e-5)
    assert float(floor.step_time_s) * 1e3 == pytest.approx(2.2351e9 / 4.8e12 * 1e3, rel=1e-4)  # memory-bound
    assert not any("recurrent heads" in note for note in floor.notes)


def test_recurrent_state_and_its_flops_stop_splitting_at_the_recurrent_heads():
    # 64 devices > 32 value heads: each head's state sits on 2 devices, so a device holds 1/32 of the
    # state and runs 1/32 of its update FLOPs, 128 x 36 x 4,259,840 / 32 (f_rec = 8 x 32 x 128 x 128
    # + 2 x 8192 x 4 per layer and token); the rest of the FLOPs splits 64 ways.
    model = rd.load_model("qwen3-next-80b-a3b")
    from roofline_decode.floors.parallel import device_traffic

    one = device_traffic(model, np.array(128.0), np.array(0.0), 1)
    many = device_traffic(model, np.array(128.0), np.array(0.0), 64)
    state_flops = 128 * 36 * 4_259_840
    assert float(many.flops) == pytest.approx((float(one.flops) - state_flops) / 64 + state_flops / 32, rel=1e-12)
    assert float(many.group_flops["attention_scores"]) == pytest.approx(
        (float(one.group_flops["attention_scores"]) - state_flops) / 64 + state_flops / 32, rel=1e-12)
    assert float(many.kv_bytes) == 128 * QWEN3_NEXT_STATE / 32
    floor = tensor_parallel_floor(model, "h200-sxm", 128, 0, 64, link_bandwidth=450e9)
    assert any("64 devices > 32 recurrent heads" in note for note in floor.notes)


def test_recurrent_heads_not_given_split_over_every_device():
    # a hand-made hybrid without recurrent_heads: the state splits n ways (the smallest it can be)
    from roofline_decode.floors.parallel import device_traffic

    model = rd.load_model("qwen3-next-80b-a3b").model_copy(update={"recurrent_heads": 0})
    assert float(device_traffic(model, np.array(4.0), np.array(0.0), 16).kv_bytes) == 4 * QWEN3_NEXT_STATE / 16
