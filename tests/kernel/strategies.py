"""Hypothesis strategies: small decoder configurations the kernel runs in milliseconds."""

from __future__ import annotations

from hypothesis import strategies as st

from roofline_decode import Model


@st.composite
def small_models(draw, moe: bool | None = None) -> Model:
    """A tiny Model: GQA/MQA/MHA, optional sliding layers, gated or plain MLP, biases, norms, MoE."""
    layers = draw(st.integers(1, 3))
    kv_heads = draw(st.integers(1, 2))
    fields = dict(
        name="tiny",
        num_layers=layers,
        hidden_size=draw(st.sampled_from([8, 12, 16])),
        num_kv_heads=kv_heads,
        num_heads=kv_heads * draw(st.integers(1, 3)),
        head_dim=draw(st.sampled_from([2, 4, 8])),
        intermediate_size=draw(st.sampled_from([8, 16, 24])),
        vocab_size=draw(st.integers(12, 40)),
        mlp_gated=draw(st.booleans()),
        qkv_bias=draw(st.booleans()),
        o_bias=draw(st.booleans()),
        mlp_bias=draw(st.booleans()),
        tie_word_embeddings=draw(st.booleans()),
        norm_type=draw(st.sampled_from(["rms", "layer"])),
        norms_per_layer=draw(st.sampled_from([2, 4])),
        qk_norm=draw(st.booleans()),
    )
    if draw(st.booleans()):
        fields["sliding_window"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            fields["layer_types"] = tuple(draw(st.lists(st.sampled_from(["full", "sliding"]),
                                                        min_size=layers, max_size=layers)))
    if moe if moe is not None else draw(st.booleans()):
        experts = draw(st.integers(2, 5))
        fields.update(
            num_experts=experts,
            num_experts_per_token=draw(st.integers(1, experts)),
            moe_intermediate_size=draw(st.sampled_from([4, 8, 12])),
            shared_expert_intermediate_size=draw(st.sampled_from([0, 8])),
            first_dense_layers=draw(st.integers(0, layers - 1)),
        )
    return Model(**fields)
