"""Floating-point operations of one decode step (DESIGN.md §4).

A multiply-add counts as 2 FLOPs.  Elementwise work (norms, softmax, activations, RoPE,
residual adds) is not counted: it is O(B·d) per layer against O(B·d²) for the matrices.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .kv_cache import attended_positions

__all__ = ["matmul_flops", "attention_flops"]


def matmul_flops(batch: Operand, matmul_parameters_per_token: Operand) -> ArrayOrExpr:
    r"""FLOPs of the weight matrix products of one decode step.

    .. math:: F_{matmul} = 2\,B\,P_{used}

    Parameters
    ----------
    batch : array_like
        Sequences in the step B [1].
    matmul_parameters_per_token : array_like
        Matrix parameters each token multiplies through P_used [1]: attention projections,
        dense MLPs, routers, shared experts, the k routed experts it is sent to, and the lm_head.
        The embedding gather is not a product and is not counted.

    Returns
    -------
    array_like
        Matrix FLOPs of the step, lm_head included [FLOP].

    References
    ----------
    .. [1] Kaplan et al., "Scaling Laws for Neural Language Models", arXiv:2001.08361, §2.1
       (2N FLOPs per token for the forward pass).

    Examples
    --------
    Llama-2-7B at batch 1: every matrix except the input embedding (6.6 GFLOP·2 per token).

    >>> matmul_flops(1, 6_607_077_376)
    13214154752
    """
    return 2 * batch * matmul_parameters_per_token


def attention_flops(
    batch: Operand, context: Operand, num_heads: Operand, score_value_width: Operand,
    num_global_layers: Operand, num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""FLOPs of the attention scores and the weighted sum over cached positions.

    .. math:: F_{attn} = 2\,B\,H_q\,w\,\left(L_{global}\,T + L_{sliding}\,\min(T, W)\right)

    where w is the multiply-adds per head per cached position: q·k plus p·v.
    Standard attention: w = 2 d_h (so F = 4 B H_q d_h T per layer); MLA in the absorbed form:
    w = 2 r_kv + d_rope (the query meets the latent and the rotary key, the probabilities meet
    the latent).

    Parameters
    ----------
    batch, context : array_like
        Sequences B [1] and cached tokens per sequence T [1].
    num_heads : array_like
        Query heads H_q [1].
    score_value_width : array_like
        w [1], see above.
    num_global_layers, num_sliding_layers, sliding_window
        As in :func:`~roofline_decode.formulas.kv_cache.attended_positions`.

    Returns
    -------
    array_like
        Attention FLOPs of the step [FLOP].

    Notes
    -----
    The new token's attention to itself (one position) is left out, like the KV read of a
    cache of T tokens; the relative error is 1/T.

    References
    ----------
    .. [1] Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §2.
    .. [2] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, §2.1.2 (absorbed projections).

    Examples
    --------
    Llama-3.1-8B (32 heads of 128, 32 layers) at batch 1, T = 8192:

    >>> attention_flops(1, 8192, 32, 2 * 128, 32)
    4294967296.0
    """
    return 2 * batch * num_heads * score_value_width * attended_positions(
        context, num_global_layers, num_sliding_layers, sliding_window
    )
