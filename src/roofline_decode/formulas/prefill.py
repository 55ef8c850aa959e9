"""Prefill: bytes and FLOPs of processing a prompt of P tokens (DESIGN.md §4b).

A prefill of P prompt tokens per sequence, for B sequences, on top of C tokens already cached
(a prefix-cache hit), split into chunks of c tokens per sequence (chunked prefill; c >= P is one
chunk).  Chunk j (j = 0 … n−1, n = ⌈P / c⌉) starts with s_j = C + j·c tokens in the cache.

* **FLOPs**: every prompt token multiplies through the matrices; the lm_head only for the last
  token of each sequence (it yields the first output token; engines compute no other logits).
  Causal attention: the token at position C + i attends T_eff(C + i) positions (itself
  included), T_eff = that position for global layers and min(that, W) for sliding ones, summed
  exactly over i = 1 … P.
* **Bytes** (a lower bound a real kernel can only exceed): every chunk reads the weights once
  (the lm_head once, with the last chunk), gathers one embedding row per token, writes the KV of
  each of its tokens, and reads once the KV of the s_j tokens before it (its own tokens' keys and
  values are attended from on-chip memory).

Every function is pure arithmetic on numpy arrays or sympy symbols.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import ceiling, floor, maximum, minimum
from .weights import expected_experts_touched

__all__ = [
    "prefill_attended_positions",
    "prefill_attention_flops",
    "prefill_matmul_flops",
    "prefill_weight_bytes",
    "prefill_kv_read_bytes",
    "mla_prefill_score_value_width",
]


def _cumulative_positions(last: Operand, sliding_window: Operand) -> ArrayOrExpr:
    """Σ_{n=1}^{m} min(n, W) for m = ``last`` >= -1: m·u − u(u − 1)/2 with u = min(m, W)."""
    u = minimum(last, sliding_window)
    return last * u - u * (u - 1) / 2


def prefill_attended_positions(
    prompt: Operand, cached: Operand, num_global_layers: Operand, num_sliding_layers: Operand = 0,
    sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""Positions the P prompt tokens attend to (causal), summed over tokens and layers.

    .. math::
        N_{pos}^{prefill} = \sum_{i=1}^{P} \left(L_{global}\,(C + i) + L_{sliding}\,\min(C + i, W)\right)
        = L_{global}\left(P C + \tfrac{P (P + 1)}{2}\right) + L_{sliding}\left(S(C + P) - S(C)\right)

    with :math:`S(m) = \sum_{n=1}^{m} \min(n, W) = m u - u (u - 1) / 2`, :math:`u = \min(m, W)`.

    Parameters
    ----------
    prompt : array_like
        Prompt tokens processed per sequence P [tokens].
    cached : array_like
        Tokens already in the KV cache before the prompt C [tokens] (a prefix-cache hit), >= 0.
    num_global_layers, num_sliding_layers, sliding_window
        As in :func:`~roofline_decode.formulas.kv_cache.attended_positions`.

    Returns
    -------
    array_like
        Query-key pairs per head, summed over layers [1].

    Notes
    -----
    Each token attends to itself and every earlier position (a sliding layer: the last W of
    them, itself included).  The sum is exact: no P²/2 approximation.

    References
    ----------
    .. [1] Vaswani et al., "Attention Is All You Need", NeurIPS 2017, §3.2.3 (causal masking);
       Beltagy, Peters and Cohan, "Longformer", arXiv:2004.05150, §3.1 (sliding window).

    Examples
    --------
    Llama-2-7B (32 global layers), a 2,048-token prompt: 32 · 2048 · 2049 / 2 pairs.

    >>> int(prefill_attended_positions(2048, 0, 32))
    67141632

    Mistral-7B-v0.1 (32 sliding layers, W = 4096): an 8,192-token prompt attends at most W per token.

    >>> int(prefill_attended_positions(8192, 0, 0, 32, 4096))
    805371904
    """
    global_pairs = prompt * cached + prompt * (prompt + 1) / 2
    sliding_pairs = _cumulative_positions(cached + prompt, sliding_window) - _cumulative_positions(
        cached, sliding_window
    )
    return num_global_layers * global_pairs + num_sliding_layers * sliding_pairs


def prefill_attention_flops(
    batch: Operand, prompt: Operand, cached: Operand, num_heads: Operand, score_value_width: Operand,
    num_global_layers: Operand, num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""FLOPs of causal attention (scores and weighted sums) over a prompt.

    .. math:: F_{attn}^{prefill} = 2\,B\,H_q\,w\,N_{pos}^{prefill}

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    prompt, cached : array_like
        Prompt tokens P and tokens cached before it C [tokens].
    num_heads : array_like
        Query heads H_q [1].
    score_value_width : array_like
        Multiply-adds per head per attended position w [1]: 2 d_h; for MLA see
        :func:`mla_prefill_score_value_width`.
    num_global_layers, num_sliding_layers, sliding_window
        As in :func:`prefill_attended_positions`.

    Returns
    -------
    array_like
        Attention FLOPs of the whole prompt [FLOP].

    References
    ----------
    .. [1] Dao, "FlashAttention-2", arXiv:2307.08691, §3.1 (4 N² d FLOPs for the forward pass,
       halved by the causal mask).

    Examples
    --------
    Llama-2-7B (32 heads of 128), a 2,048-token prompt at batch 1: 1.1 TFLOP.

    >>> int(prefill_attention_flops(1, 2048, 0, 32, 2 * 128, 32))
    1100048498688
    """
    return 2 * batch * num_heads * score_value_width * prefill_attended_positions(
        prompt, cached, num_global_layers, num_sliding_layers, sliding_window
    )


def prefill_matmul_flops(
    batch: Operand, prompt: Operand, matmul_parameters_per_token: Operand, lm_head_parameters: Operand,
) -> ArrayOrExpr:
    r"""FLOPs of the weight matrix products of a prefill.

    .. math:: F_{matmul}^{prefill} = 2\,B\,\left(P\,(P_{used} - P_{lm}) + P_{lm}\right)

    Every prompt token multiplies through the matrices; the lm_head only for the last one of
    each sequence, whose logits give the first output token.

    Parameters
    ----------
    batch, prompt : array_like
        Sequences B [1] and prompt tokens per sequence P [tokens].
    matmul_parameters_per_token : array_like
        Matrix parameters a token multiplies through P_used [1], lm_head included.
    lm_head_parameters : array_like
        Parameters of the output projection P_lm = V·d [1].

    Returns
    -------
    array_like
        Matrix-product FLOPs of the prefill [FLOP].

    References
    ----------
    .. [1] Kaplan et al., "Scaling Laws for Neural Language Models", arXiv:2001.08361, §2.1.

    Examples
    --------
    Llama-2-7B, a 2,048-token prompt at batch 1: 26.5 TFLOP.

    >>> prefill_matmul_flops(1, 2048, 6_607_077_376, 32000 * 4096)
    26525980164096
    """
    return 2 * batch * (prompt * (matmul_parameters_per_token - lm_head_parameters) + lm_head_parameters)


def prefill_weight_bytes(
    batch: Operand, prompt: Operand, chunk: Operand, streamed_parameters: Operand,
    lm_head_parameters: Operand, embedding_row_parameters: Operand, vocab_size: Operand,
    bytes_per_weight: Operand, num_moe_layers: Operand = 0, num_experts: Operand = 1,
    num_experts_per_token: Operand = 1, expert_parameters: Operand = 0,
    bytes_per_expert_weight: Operand | None = None,
) -> ArrayOrExpr:
    r"""Weight bytes a chunked prefill reads: the weights once per chunk, the lm_head once.

    .. math::
        W^{prefill} = b_w\left(n\,(P_{stream} - P_{lm}) + P_{lm}
            + \left(n_f \min(B c, V) + \min(B r, V)\right) P_{row}\right)
            + b_e\,L_{moe}\left(n_f\,U(B c) + U(B r)\right) P_{expert}

    with n = ⌈P / c⌉ chunks, n_f = ⌊P / c⌋ full ones and a last partial chunk of r = P − n_f c
    tokens per sequence; U is :func:`~roofline_decode.formulas.weights.expected_experts_touched`.

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    prompt : array_like
        Prompt tokens per sequence P [tokens].
    chunk : array_like
        Tokens per sequence in one chunk c [tokens]; c >= P is an unchunked prefill.
    streamed_parameters : array_like
        Parameters read in full by a decode step P_stream [1], lm_head included.
    lm_head_parameters : array_like
        Output projection P_lm [1]; read with the last chunk only.
    embedding_row_parameters, vocab_size, bytes_per_weight, num_moe_layers, num_experts, \
num_experts_per_token, expert_parameters, bytes_per_expert_weight
        As in :func:`~roofline_decode.formulas.weights.weight_bytes_read`.

    Returns
    -------
    array_like
        Weight bytes the whole prefill reads [B].

    Notes
    -----
    A chunk of B·c tokens gathers at most min(B·c, V) distinct embedding rows and touches
    U(B·c) routed experts per MoE layer (uniform routing, as for a decode step of batch B·c).

    References
    ----------
    .. [1] Agrawal et al., "Taming Throughput-Latency Tradeoff in LLM Inference with
       Sarathi-Serve", OSDI 2024, §3 (chunked prefill re-reads the weights per chunk).

    Examples
    --------
    Llama-2-7B in bf16, a 2,048-token prompt in one chunk, then in 512-token chunks:

    >>> stream, lm = 6_738_415_616 - 32000 * 4096, 32000 * 4096
    >>> int(prefill_weight_bytes(1, 2048, 2048, stream, lm, 4096, 32000, 2))
    13231464448
    >>> int(prefill_weight_bytes(1, 2048, 512, stream, lm, 4096, 32000, 2))
    52089094144
    """
    if bytes_per_expert_weight is None:
        bytes_per_expert_weight = bytes_per_weight
    chunks = ceiling(prompt / chunk)
    full = floor(prompt / chunk)
    rest = prompt - full * chunk
    rows = full * minimum(batch * chunk, vocab_size) + minimum(batch * rest, vocab_size)
    streamed = chunks * (streamed_parameters - lm_head_parameters) + lm_head_parameters
    dense = bytes_per_weight * (streamed + rows * embedding_row_parameters)
    if isinstance(num_moe_layers, int) and num_moe_layers == 0:
        return dense  # dense model: no routed experts
    touched = full * expected_experts_touched(num_experts, num_experts_per_token, batch * chunk) + (
        expected_experts_touched(num_experts, num_experts_per_token, batch * rest)
    )
    return dense + bytes_per_expert_weight * num_moe_layers * touched * expert_parameters


def prefill_kv_read_bytes(
    batch: Operand, prompt: Operand, chunk: Operand, cached: Operand, kv_bytes_per_token_per_layer: Operand,
    num_global_layers: Operand, num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""KV-cache bytes a chunked prefill reads: each chunk reads once the KV before it.

    .. math::
        KV_{read}^{prefill} = B\,m_{kv} \sum_{j=0}^{n-1}\left(L_{global}\,s_j + L_{sliding}\,\min(s_j, W)\right),
        \qquad s_j = C + j c,\; n = \lceil P / c \rceil

    in closed form :math:`\sum_j s_j = n C + c\,n (n - 1) / 2` and
    :math:`\sum_j \min(s_j, W) = J C + c\,J (J - 1) / 2 + (n - J)\,W'` with
    :math:`W' = \min(W, C + P)` and :math:`J = \min(\max(\lfloor (W' - C) / c \rfloor + 1, 0), n)`
    the chunks that start inside the window.

    Parameters
    ----------
    batch, prompt, chunk : array_like
        B [1], P and c [tokens], as in :func:`prefill_weight_bytes`.
    cached : array_like
        Tokens cached before the prompt C [tokens].
    kv_bytes_per_token_per_layer : array_like
        m_kv [B].
    num_global_layers, num_sliding_layers, sliding_window
        As in :func:`~roofline_decode.formulas.kv_cache.attended_positions`.

    Returns
    -------
    array_like
        Bytes read [B]; 0 for an unchunked prefill without a cached prefix.

    Notes
    -----
    A lower bound: a kernel that tiles the keys may read them more than once per chunk; the
    chunk's own keys and values are assumed to stay on chip.

    References
    ----------
    .. [1] Agrawal et al., Sarathi-Serve, OSDI 2024, §3.2 (each chunk attends the KV of the
       earlier ones).

    Examples
    --------
    Llama-2-7B in bf16 (m_kv = 16 KiB per layer, 32 layers): a 2,048-token prompt in 512-token
    chunks reads the KV of 512 + 1024 + 1536 earlier tokens: 1.6 GB.

    >>> int(prefill_kv_read_bytes(1, 2048, 512, 0, 2 * 32 * 128 * 2, 32))
    1610612736
    """
    chunks = ceiling(prompt / chunk)
    global_tokens = chunks * cached + chunk * chunks * (chunks - 1) / 2
    window = minimum(sliding_window, cached + prompt)
    inside = minimum(maximum(floor((window - cached) / chunk) + 1, 0), chunks)
    sliding_tokens = inside * cached + chunk * inside * (inside - 1) / 2 + (chunks - inside) * window
    return batch * kv_bytes_per_token_per_layer * (num_global_layers * global_tokens + num_sliding_layers * sliding_tokens)


def mla_prefill_score_value_width(
    kv_lora_rank: Operand, qk_nope_head_dim: Operand, qk_rope_head_dim: Operand, v_head_dim: Operand,
) -> ArrayOrExpr:
    r"""Multiply-adds per head per attended position of MLA in prefill: the cheaper of two forms.

    .. math:: w^{MLA}_{prefill} = \min\left(2 r_{kv} + d_{rope},\; d_{nope} + d_{rope} + d_v\right)

    Prefill kernels decompress the latent into per-head keys and values and attend with
    q·k over d_nope + d_rope and p·v over d_v (FlashMLA, vLLM); decode attends in the absorbed
    form over the latent (2 r_kv + d_rope).  The floor takes the cheaper form and leaves out
    the decompression of cached latents (its FLOPs are >= 0), so it holds for either kernel.

    Parameters
    ----------
    kv_lora_rank, qk_nope_head_dim, qk_rope_head_dim, v_head_dim : array_like
        r_kv, d_nope, d_rope and d_v [1], as in
        :func:`~roofline_decode.formulas.weights.mla_matrix_parameters`.

    Returns
    -------
    array_like
        w [1] for :func:`prefill_attention_flops`.

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, §2.1.2 (absorbing W_UK and W_UV at
       inference); vLLM, ``vllm/attention/backends/mla/common.py`` (prefill in the
       decompressed form, decode absorbed).

    Examples
    --------
    DeepSeek-V3 (r_kv = 512, 128 + 64 q/k, d_v = 128): 320 per head instead of 1,088 absorbed.

    >>> int(mla_prefill_score_value_width(512, 128, 64, 128))
    320
    """
    return minimum(2 * kv_lora_rank + qk_rope_head_dim, qk_nope_head_dim + qk_rope_head_dim + v_head_dim)
