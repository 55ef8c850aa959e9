"""Shared prefixes: KV of a prompt prefix common to the sequences of a batch (DESIGN.md §4b)."""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import maximum, minimum

__all__ = ["shared_prefix_positions", "shared_prefix_saved_bytes"]


def shared_prefix_positions(
    context: Operand, shared_prefix: Operand, num_global_layers: Operand, num_sliding_layers: Operand = 0,
    sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""Positions of a shared prefix a sequence holds (and attends to), summed over layers.

    .. math::
        N_{pos}^{shared} = L_{global}\,\min(S, T)
            + L_{sliding}\,\max\left(0, \min(S, T) - \max(0, T - W)\right)

    A sliding layer keeps the last W positions, so past T = S + W it holds none of the prefix.

    Parameters
    ----------
    context : array_like
        Tokens cached per sequence T [tokens].
    shared_prefix : array_like
        Leading tokens every sequence of the batch shares S [tokens].
    num_global_layers, num_sliding_layers, sliding_window
        As in :func:`~roofline_decode.formulas.kv_cache.attended_positions`.

    Returns
    -------
    array_like
        Layer-positions [1] of the prefix in one sequence's cache.

    References
    ----------
    .. [1] Ye et al., "Cascade Inference: Memory Bandwidth Efficient Shared Prefix Batch
       Decoding", FlashInfer blog, 2024; Zheng et al., "SGLang", arXiv:2312.07104, §3 (RadixAttention).

    Examples
    --------
    Gemma-2-9B (21 global + 21 sliding layers, W = 4096) with a 2,048-token system prompt at T = 5,000:
    the sliding layers still hold 1,144 of its positions.

    >>> int(shared_prefix_positions(5000, 2048, 21, 21, 4096))
    67032
    """
    held = minimum(shared_prefix, context)
    return num_global_layers * held + num_sliding_layers * maximum(0, held - maximum(0, context - sliding_window))


def shared_prefix_saved_bytes(
    batch: Operand, context: Operand, shared_prefix: Operand, kv_bytes_per_token_per_layer: Operand,
    num_global_layers: Operand, num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""KV bytes saved by holding (or reading) a shared prefix once instead of B times.

    .. math:: \Delta KV = (B - 1)\,m_{kv}\,N_{pos}^{shared}

    Subtract it from the resident cache (prefix blocks shared, as vLLM and SGLang do) and, with
    a shared-prefix (cascade) attention kernel, from the KV bytes a decode step reads.

    Parameters
    ----------
    batch : array_like
        Sequences sharing the prefix B [1].
    context, shared_prefix, num_global_layers, num_sliding_layers, sliding_window
        As in :func:`shared_prefix_positions`.
    kv_bytes_per_token_per_layer : array_like
        m_kv [B].

    Returns
    -------
    array_like
        Bytes saved [B]; 0 at B = 1.

    References
    ----------
    .. [1] Ye et al., "Cascade Inference", FlashInfer blog, 2024 (the prefix KV read once per step).

    Examples
    --------
    Llama-3.1-8B in bf16 (128 KiB per token), 32 sequences sharing a 1,024-token prefix: 4.16 GB.

    >>> int(shared_prefix_saved_bytes(32, 3000, 1024, 2 * 8 * 128 * 2, 32))
    4160749568
    """
    return (batch - 1) * kv_bytes_per_token_per_layer * shared_prefix_positions(
        context, shared_prefix, num_global_layers, num_sliding_layers, sliding_window)
