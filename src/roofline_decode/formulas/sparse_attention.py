"""Chunked local attention (Llama 4) and DeepSeek sparse attention (DeepSeek-V3.2): the
positions a decode step attends to (DESIGN.md §4b "Sparse and chunked attention")."""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import remainder

__all__ = ["chunked_attended_positions", "indexer_bytes_per_token", "indexer_read_bytes", "indexer_flops"]

#: Bytes of one cached indexer key element [B]: fp8 e4m3 (:func:`indexer_bytes_per_token`).
INDEXER_KEY_BYTES = 1
#: Bytes of one indexer key scale [B]: fp32.
INDEXER_SCALE_BYTES = 4
#: Indexer key elements that share one scale [1] (DeepSeek's ``block_size``, vLLM's
#: ``quant_block_size``).
INDEXER_SCALE_BLOCK = 128


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


def indexer_bytes_per_token(indexer_head_dim: Operand) -> ArrayOrExpr:
    r"""Bytes of one token's lightning-indexer key in one sparse layer, as it is cached.

    .. math:: m_{idx} = d_{idx}\,b_{key} + \frac{d_{idx}}{g}\,b_{scale}
              = d_{idx}\left(1 + \frac{4}{128}\right)

    The indexer keys are cached in fp8 (e4m3, b_key = 1 B per element) with one fp32 scale
    (b_scale = 4 B) per block of g = 128 elements, whatever the format of the attention's own
    KV cache (:data:`INDEXER_KEY_BYTES`, :data:`INDEXER_SCALE_BYTES`, :data:`INDEXER_SCALE_BLOCK`).

    Parameters
    ----------
    indexer_head_dim : array_like
        Indexer head width d_idx (``index_head_dim``) [1].

    Returns
    -------
    array_like
        Indexer key bytes per token and sparse layer m_idx [B].

    Notes
    -----
    d_idx is a multiple of g in every released config (128); for another width the scales are
    counted as the fraction d_idx / g, which never overstates them.  The format belongs to the
    model (its indexer was trained on fp8 keys), so an fp8 or bf16 attention cache alike stores
    132 B per token for d_idx = 128, not d_idx elements of the KV format (256 B in bf16).

    References
    ----------
    .. [1] deepseek-ai/DeepSeek-V3.2-Exp, ``inference/model.py``, class ``Indexer``: ``k_cache``
       of ``index_head_dim`` ``float8_e4m3fn`` elements and ``k_scale_cache`` of
       ``index_head_dim // block_size`` ``float32`` scales per token (``block_size`` = 128).
    .. [2] vLLM ``DeepseekV32IndexerCache`` (``model_executor/models/deepseek_v2.py``): a uint8
       cache of ``index_head_dim + index_head_dim // quant_block_size * 4`` bytes per token
       (``quant_block_size`` = 128).

    Examples
    --------
    DeepSeek-V3.2-Exp (``index_head_dim`` = 128): 128 fp8 bytes and one 4-byte scale.

    >>> indexer_bytes_per_token(128)
    132.0
    """
    return indexer_head_dim * (INDEXER_KEY_BYTES + INDEXER_SCALE_BYTES / INDEXER_SCALE_BLOCK)


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
        Indexer key bytes per token and layer m_idx [B]
        (:func:`indexer_bytes_per_token`: 132 B for ``index_head_dim`` = 128).

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
    DeepSeek-V3.2-Exp (61 layers, 128-wide fp8 indexer keys with one fp32 scale, 132 B) at
    B = 1, T = 100,000:

    >>> indexer_read_bytes(1, 100_000, 61, 132)
    805200000
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
