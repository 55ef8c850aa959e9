"""Hypothesis strategies for random valid Models and Accelerators (shared by the law suite).

Models come in four kinds, each a valid :class:`~roofline_decode.Model` (the spec validates
them): ``dense`` (GQA/MQA/MHA, gated or plain MLP, optional biases, tied or untied lm_head,
learned positions), ``moe`` (routed experts, optional shared experts and leading dense
layers, optionally a different expert format), ``sliding`` (a sliding window on some or all
layers) and ``mla`` (multi-head latent attention, compressed or plain query, with routed
experts as in DeepSeek).  Sizes are kept small enough that a draw is cheap and large enough
that every term of the step matters.
"""

from __future__ import annotations

from hypothesis import strategies as st

from roofline_decode import Accelerator, Model, NumberFormat

KINDS = ("dense", "moe", "sliding", "mla")
#: formats a model may be stored in (bytes per element 0.53 ... 4)
WEIGHT_FORMATS = ("fp32", "bf16", "fp16", "fp8_e4m3", "int8", "int4", "q8_0", "q4_0", "mxfp4", "nvfp4")
KV_FORMATS = ("fp32", "bf16", "fp16", "fp8_e4m3", "int8")
PRECISIONS = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")

batches = st.integers(1, 4096).map(float)
contexts = st.integers(0, 262_144).map(float)
factors = st.floats(1.0, 16.0)


@st.composite
def models(draw, kinds=KINDS) -> Model:
    """A random valid Model of one of ``kinds``."""
    kind = draw(st.sampled_from(kinds))
    num_layers = draw(st.integers(1, 40))
    kv_heads = draw(st.sampled_from([1, 2, 4, 8]))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4, 8]))
    hidden = draw(st.sampled_from([256, 512, 768, 1024, 2048, 4096]))
    fields = dict(
        name=f"random-{kind}",
        num_layers=num_layers,
        hidden_size=hidden,
        num_heads=heads,
        num_kv_heads=kv_heads,
        head_dim=draw(st.sampled_from([32, 64, 80, 128, 256])),
        intermediate_size=hidden * draw(st.integers(1, 8)),
        vocab_size=draw(st.integers(1000, 160_000)),
        mlp_gated=draw(st.booleans()),
        qkv_bias=draw(st.booleans()),
        o_bias=draw(st.booleans()),
        mlp_bias=draw(st.booleans()),
        tie_word_embeddings=draw(st.booleans()),
        norm_type=draw(st.sampled_from(["rms", "layer"])),
        norms_per_layer=draw(st.integers(0, 4)),
        qk_norm=draw(st.booleans()),
        position_embedding_rows=draw(st.sampled_from([0, 0, 1024, 2048])),
        weight_format=draw(st.sampled_from(WEIGHT_FORMATS)),
        kv_format=draw(st.sampled_from(KV_FORMATS)),
    )
    if kind == "sliding":
        fields["sliding_window"] = draw(st.integers(16, 16_384))
        pattern = draw(st.one_of(st.none(), st.lists(st.sampled_from(["full", "sliding"]),
                                                     min_size=num_layers, max_size=num_layers)))
        fields["layer_types"] = None if pattern is None else tuple(pattern)  # None: every layer slides
    if kind in ("moe", "mla"):
        experts = draw(st.integers(2, 64))
        fields.update(
            num_experts=experts,
            num_experts_per_token=draw(st.integers(1, experts)),
            moe_intermediate_size=hidden // draw(st.sampled_from([1, 2, 4])),
            shared_expert_intermediate_size=draw(st.sampled_from([0, 0, hidden])),
            first_dense_layers=draw(st.integers(0, num_layers - 1)),
        )
        if fields["first_dense_layers"] == 0 and draw(st.booleans()):
            fields["intermediate_size"] = 0  # every MLP is routed
        if draw(st.booleans()):
            fields["expert_weight_format"] = draw(st.sampled_from(WEIGHT_FORMATS))
    if kind == "mla":
        fields.update(
            num_kv_heads=heads,
            kv_lora_rank=draw(st.sampled_from([64, 128, 256, 512])),
            q_lora_rank=draw(st.sampled_from([0, 192, 768, 1536])),
            qk_rope_head_dim=draw(st.sampled_from([32, 64])),
            qk_nope_head_dim=draw(st.sampled_from([64, 128])),
            v_head_dim=draw(st.sampled_from([64, 128])),
        )
    return Model(**fields)


dense_models = models(kinds=("dense", "sliding"))
moe_models = models(kinds=("moe", "mla"))


@st.composite
def accelerators(draw, uniform_peaks: bool = False) -> Accelerator:
    """A random Accelerator: bandwidth 50 GB/s ... 20 TB/s, peaks 10 TFLOP/s ... 5 PFLOP/s.

    With ``uniform_peaks`` every precision has the same peak, so changing a number format
    changes bytes only (never the compute rate).
    """
    bandwidth = draw(st.floats(5e10, 2e13))
    if uniform_peaks:
        peak = draw(st.floats(1e13, 5e15))
        peaks = {p: peak for p in PRECISIONS}
    else:
        peaks = {p: draw(st.floats(1e13, 5e15)) for p in PRECISIONS}
    return Accelerator(name="random-device", memory_bandwidth=bandwidth, memory_capacity=draw(st.floats(8e9, 3e11)),
                       peak_flops=peaks, plausibility_checks=False)  # laws hold for any peaks, even unordered


def storage_format(bytes_per_element: float, compute_precision: str = "bf16") -> NumberFormat:
    """A number format with given bytes per element that computes on a fixed precision."""
    return NumberFormat(name=f"test-{bytes_per_element:g}B", bits_per_element=8 * bytes_per_element,
                        compute_precision=compute_precision)
