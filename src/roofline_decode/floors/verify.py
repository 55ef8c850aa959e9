"""Layer 3 (a part of :mod:`~roofline_decode.floors.speculative`): bytes and FLOPs of the verify
step of speculative decoding, k + 1 tokens per sequence at context T (DESIGN.md §4b).

Every kind of token mixer is counted as a decode step counts it (:mod:`.traffic`), for k + 1
tokens: with k = 0 the verify step *is* a plain decode step, term for term.

* full and sliding attention: the KV of the T cached tokens read once, token i (0 … k) attends
  T + i positions (the k earlier verify tokens' keys and values come from on-chip memory, as in
  a prefill chunk), k + 1 KV writes;
* chunked attention (Llama 4): the cached part of the current chunk read once (T mod C
  positions); token i attends (T + i) mod C positions;
* DeepSeek sparse attention: the indexer keys of the T cached tokens and the KV of min(T, top-k)
  selected ones read once (the smallest admissible read: every verify token may select the same
  cached tokens), k + 1 indexer-key writes; token i scores T + i positions with the indexer and
  attends min(T + i, top-k);
* recurrent layers (Mamba-2, Gated DeltaNet): the fixed state read once and written once per
  sequence, and the state-update FLOPs of all k + 1 tokens.

**Convention for the recurrent state (a floor).**  A verify step must also leave the state after
the *last accepted* token, which it learns only at the end; real engines keep the k + 1
intermediate states (vLLM, SGLang write one per verify position) or recompute the accepted
prefix.  The floor takes the smallest admissible traffic: the state read once and written once
(the intermediate states kept on chip, or rebuilt from the per-token rank-1 factors after the
acceptance is known, as NVIDIA Megatron-LM's Mamba speculative decoding does, PR #5803), with
no recomputation FLOPs.  Every one of the k + 1 tokens runs the layer's update rule
(:func:`~roofline_decode.formulas.recurrent_update_flops`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import formulas as f
from .._typing import Operand
from ..formulas import prefill as fp
from .prefill import Traffic, group_flops, make_traffic, routed_experts
from ..specs.model import Model
from .traffic import NO_MIXERS, MixerTerms, layer_terms, sparse_read_bytes, streamed_terms

__all__ = ["verify_traffic", "verify_mixer_terms"]


def verify_mixer_terms(model: Model, batch: Operand, context: Operand, tokens: Operand) -> MixerTerms:
    """Terms of the chunked, sparse and recurrent layers in a verify step of ``tokens`` = k + 1
    tokens per sequence at ``context`` T (the module's conventions); the same operations in the
    same order as :func:`~roofline_decode.floors.traffic.mixer_terms`, so that one token gives a
    plain step's terms bit for bit.

    .. math::
        Q_{read} = B\\,m_{kv}\\,L_{chunk}\\,(T \\bmod C) + B\\,m_{kv}\\,L_{sparse}\\min(T, k_{top})
        + B\\,L_{sparse}\\,T\\,m_{idx}, \\qquad
        F_{state} = B\\,(k + 1)\\,L_{rec}\\,f_{rec}

    Parameters
    ----------
    model : Model
        The target.
    batch, context, tokens : array_like
        Sequences B [1], tokens cached T [tokens] and tokens verified per sequence k + 1 [1]
        (broadcast against each other).

    Returns
    -------
    MixerTerms
        ``kv_read`` [B] (chunked and sparse KV plus the indexer keys), ``kv_write`` [B] (indexer
        keys of the k + 1 tokens), ``scores`` [FLOP] (chunked and sparse attention plus the
        indexer), ``state`` [B] (the recurrent state, read once and written once),
        ``state_flops`` [FLOP].

    References
    ----------
    .. [1] Leviathan, Kalman and Matias, ICML 2023, §3 (the verify pass); DeepSeek-AI,
       DeepSeek-V3.2-Exp (2025), §2.1; NVIDIA Megatron-LM PR #5803 (Mamba state updated once,
       after the acceptance, from per-token rank-1 factors).
    """
    if not (model.num_chunked_layers or model.num_sparse_layers or model.num_recurrent_layers):
        return NO_MIXERS
    m_kv, heads, width = model.kv_bytes_per_token_per_layer, model.num_heads, model.score_value_width
    read: Any = 0.0  # floats, arrays or (from the formulas) anything they return
    write: Any = 0.0
    scores: Any = 0.0
    if model.num_chunked_layers:
        size = model.attention_chunk_size
        assert size is not None  # chunked layers need it (Model validates)
        layers = model.num_chunked_layers
        read = read + f.kv_read_bytes(batch, f.chunked_attended_positions(context, 1, size), m_kv, layers)
        chunked: Any = 0.0
        for i in range(int(np.max(tokens))):  # token i attends (T + i) mod C positions
            term = f.attention_flops(batch, f.chunked_attended_positions(context + i, 1, size), heads, width, layers)
            chunked = chunked + np.where(i < np.asarray(tokens), term, 0.0)
        scores = scores + chunked
    if model.num_sparse_layers:
        L_sparse, top_k = model.num_sparse_layers, model.sparse_top_k
        assert top_k is not None  # sparse layers need it (Model validates)
        read = read + sparse_read_bytes(model, batch, context)
        write = write + f.kv_write_bytes(batch * tokens, model.indexer_bytes_per_token_per_layer, L_sparse)
        # Σ_{i=0..k} min(T + i, top-k) attended and Σ_{i=0..k} (T + i) scored by the indexer
        selected = fp.prefill_attended_positions(tokens, context - 1, 0, L_sparse, top_k)
        scored = fp.prefill_attended_positions(tokens, context - 1, 1)
        scores = scores + 2 * batch * heads * width * selected + f.indexer_flops(
            batch, scored, L_sparse, model.indexer_heads, model.indexer_head_dim)
    state = f.recurrent_state_bytes(batch, model.num_recurrent_layers, model.recurrent_state_elements,
                                    model.state_format.bytes_per_element)
    state_flops = f.recurrent_update_flops(batch * tokens, model.num_recurrent_layers, model.recurrent_flops_per_token)
    return MixerTerms(read, write, scores, state, state_flops)


def verify_traffic(model: Model, batch: Operand, context: Operand, draft_tokens: Operand,
                   routing: str = "uniform") -> Traffic:
    """Bytes and FLOPs of the verify step of ``draft_tokens`` + 1 tokens per sequence (the
    three broadcast against each other).

    .. math::
        Q = W(B\\,(k + 1)) + KV_{read}(T) + (k + 1)\\,KV_{write} + 2\\,Q_{state}, \\qquad
        F = 2\\,B\\,(k + 1)\\,P_{used} + 2\\,B\\,H_q\\,w \\sum_{i=0}^{k} N_{pos}(T + i) + F_{mixers}

    Weights are read once (embedding rows and routed experts for B·(k + 1) tokens), the cache
    once; the chunked, sparse and recurrent layers as :func:`verify_mixer_terms` counts them.

    Parameters
    ----------
    model : Model
        The target.
    batch, context, draft_tokens : array_like
        Sequences B [1], tokens cached T [tokens], tokens drafted k [1] (k = 0: a plain decode step).
    routing : {"uniform", "identical"}
        MoE routing, as in :func:`~roofline_decode.floors.speculative.speculative_floor`.

    Returns
    -------
    Traffic
        Weight, KV read (the recurrent state included) and KV written [B], FLOPs [FLOP] and
        their compute groups.

    References
    ----------
    .. [1] Leviathan, Kalman and Matias, "Fast Inference from Transformers via Speculative
       Decoding", ICML 2023, §3.

    Examples
    --------
    Llama-3.1-8B, B = 2, T = 100, k = 3: the cache of 2 × 100 tokens read once, 8 tokens written
    (128 KiB each).

    >>> from roofline_decode import load_model
    >>> t = verify_traffic(load_model("llama-3.1-8b"), 2.0, 100.0, 3)
    >>> int(t.kv_read_bytes), int(t.kv_write_bytes)
    (26214400, 1048576)
    """
    b_e = model.routed_expert_format.bytes_per_element
    layers, m_kv, _ = layer_terms(model)
    experts = routed_experts(model, routing)
    streamed, row, b_w = streamed_terms(model)
    tokens = draft_tokens + 1
    mixers = verify_mixer_terms(model, batch, context, tokens)
    weight = f.weight_bytes_read(batch * tokens, streamed, row, model.vocab_size, b_w, *experts,
                                 model.expert_parameters, b_e)
    kv_read = f.kv_read_bytes(batch, context, m_kv, *layers) + mixers.kv_read + mixers.state
    kv_write = f.kv_write_bytes(batch * tokens, m_kv, model.num_attention_layers) + mixers.kv_write + mixers.state
    # token i (0 … k) attends the T + i positions before it: Σ_{i=0..k} T_eff(T + i)
    positions = fp.prefill_attended_positions(tokens, context - 1, *layers)
    attention = 2 * batch * model.num_heads * model.score_value_width * positions + mixers.scores + mixers.state_flops
    flops = f.matmul_flops(batch * tokens, model.matmul_parameters_per_token) + attention
    return make_traffic(weight, kv_read, kv_write, flops, group_flops(model, batch * tokens, batch * tokens, attention))
