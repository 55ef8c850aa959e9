"""Chunked local attention (Llama 4) and DeepSeek sparse attention (DeepSeek-V3.2): the
positions a decode step attends to (DESIGN.md §4b "Sparse and chunked attention")."""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import remainder

__all__ = ["chunked_attended_positions", "indexer_read_bytes", "indexer_flops"]


def chunked_attended_positions(
    context: Operand, num_chunked_layers: Operand, attention_chunk_size: Operand,
) -> ArrayOrExpr:
    r"""Cached positions the chunked-attention layers attend to, summed over those layers.

    .. math:: N_{chunk} = L_{chunk}\,(T \bmod C)

    A chunked layer attends within its chunk of C positions only: the new token at position T
    sees the T mod C cached tokens of its own chunk (and itself).

    Parameters
    ----------
    context : array_like
        Tokens already cached T [tokens].
    num_chunked_layers : array_like
        Layers with chunked local attention L_chunk [1] (Llama 4: those with rotary embedding,
        three of every four; ``no_rope_layers``).
    attention_chunk_size : array_like
        Chunk length C [tokens] (``attention_chunk_size``: 8192 for Llama 4).

    Returns
    -------
    array_like
        Positions [1]; reads and score FLOPs follow as for global layers.

    Notes
    -----
    An engine that keeps a sliding cache of C positions for these layers reads no more.

    References
    ----------
    .. [1] Meta, Llama 4 model card and transformers ``Llama4TextAttention`` (chunked mask).

    Examples
    --------
    Llama-4-Scout at T = 10,000: 36 chunked layers see 1,808 positions each.

    >>> int(chunked_attended_positions(10_000, 36, 8192))
    65088
    """
    return num_chunked_layers * remainder(context, attention_chunk_size)


def indexer_read_bytes(
    batch: Operand, context: Operand, num_sparse_layers: Operand, indexer_bytes_per_token: Operand,
) -> ArrayOrExpr:
    r"""Bytes the lightning indexer of DeepSeek sparse attention reads per decode step.

    .. math:: Q_{idx} = B\,L_{sparse}\,T\,m_{idx}

    The indexer scores every cached token with its own small key cache before the top-k
    selection; the attention proper then reads the KV of min(T, k) tokens.

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    context : array_like
        Tokens already cached T [tokens].
    num_sparse_layers : array_like
        Layers with sparse attention L_sparse [1].
    indexer_bytes_per_token : array_like
        Indexer key bytes per token and layer m_idx [B] (``index_head_dim`` elements in the
        KV-cache format).

    Returns
    -------
    array_like
        Bytes [B] of indexer keys the step reads.

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V3.2-Exp: Boosting Long-Context Efficiency with DeepSeek
       Sparse Attention" (2025), §2.1.

    Examples
    --------
    DeepSeek-V3.2-Exp (61 layers, 128-wide bf16 indexer keys) at B = 1, T = 100,000:

    >>> indexer_read_bytes(1, 100_000, 61, 256)
    1561600000
    """
    return batch * num_sparse_layers * context * indexer_bytes_per_token


def indexer_flops(
    batch: Operand, context: Operand, num_sparse_layers: Operand, indexer_heads: Operand,
    indexer_head_dim: Operand,
) -> ArrayOrExpr:
    r"""FLOPs of the lightning indexer's scores over the cache per decode step.

    .. math:: F_{idx} = 2\,B\,L_{sparse}\,H_{idx}\,d_{idx}\,T

    Parameters
    ----------
    batch, context, num_sparse_layers : array_like
        As in :func:`indexer_read_bytes`.
    indexer_heads : array_like
        Indexer heads H_idx (``index_n_heads``) [1].
    indexer_head_dim : array_like
        Indexer head width d_idx (``index_head_dim``) [1].

    Returns
    -------
    array_like
        FLOPs [FLOP] of the indexer scores.

    References
    ----------
    .. [1] DeepSeek-AI, DeepSeek-V3.2-Exp (2025), §2.1.

    Examples
    --------
    >>> indexer_flops(1, 100_000, 61, 64, 128)
    99942400000
    """
    return 2 * batch * num_sparse_layers * indexer_heads * indexer_head_dim * context
