"""KV-cache bytes: per token, resident, read and written per decode step (DESIGN.md §4)."""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import minimum

__all__ = [
    "kv_bytes_per_token_per_layer",
    "mla_kv_bytes_per_token_per_layer",
    "attended_positions",
    "kv_cache_bytes",
    "kv_read_bytes",
    "kv_write_bytes",
]


def kv_bytes_per_token_per_layer(
    num_kv_heads: Operand, head_dim: Operand, bytes_per_kv: Operand,
) -> ArrayOrExpr:
    r"""KV-cache bytes one token occupies in one standard (GQA/MQA/MHA) attention layer.

    .. math:: m_{kv} = 2\,H_{kv}\,d_h\,b_{kv}

    Parameters
    ----------
    num_kv_heads : array_like
        Key/value heads H_kv [1].
    head_dim : array_like
        Head width d_h [1].
    bytes_per_kv : array_like
        Stored bytes per cached element b_kv [B].

    Returns
    -------
    array_like
        Bytes per token per layer [B] (one key and one value vector per KV head).

    References
    ----------
    .. [1] Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §3.3.

    Examples
    --------
    Llama-3.1-70B in bf16 (8 KV heads of 128): 4096 B per layer, × 80 layers = 327,680 B per token.

    >>> kv_bytes_per_token_per_layer(8, 128, 2) * 80
    327680
    """
    return 2 * num_kv_heads * head_dim * bytes_per_kv


def mla_kv_bytes_per_token_per_layer(
    kv_lora_rank: Operand, qk_rope_head_dim: Operand, bytes_per_kv: Operand,
) -> ArrayOrExpr:
    r"""KV-cache bytes one token occupies in one multi-head latent attention layer.

    .. math:: m_{kv}^{MLA} = (r_{kv} + d_{rope})\,b_{kv}

    One compressed latent plus the shared rotary key; no factor 2 and no head count.

    Parameters
    ----------
    kv_lora_rank : array_like
        Latent rank r_kv [1].
    qk_rope_head_dim : array_like
        Width of the decoupled rotary key d_rope [1].
    bytes_per_kv : array_like
        b_kv [B], as in :func:`kv_bytes_per_token_per_layer`.

    Returns
    -------
    array_like
        Bytes of one latent and one rotary key per token and layer [B].

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V2", arXiv:2405.04434, §2.1.2 and Table 1.

    Examples
    --------
    DeepSeek-V3 in bf16 (r_kv = 512, d_rope = 64, 61 layers): 70,272 B per token.

    >>> mla_kv_bytes_per_token_per_layer(512, 64, 2) * 61
    70272
    """
    return (kv_lora_rank + qk_rope_head_dim) * bytes_per_kv


def attended_positions(
    context: Operand, num_global_layers: Operand, num_sliding_layers: Operand = 0,
    sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""Cached positions attended to, summed over layers.

    .. math:: N_{pos} = L_{global}\,T + L_{sliding}\,\min(T, W)

    Parameters
    ----------
    context : array_like
        Tokens already cached per sequence when the step starts T [1].
    num_global_layers : array_like
        Layers with full (global) attention [1].
    num_sliding_layers : array_like, optional
        Layers with sliding-window attention [1].
    sliding_window : array_like, optional
        Window W [tokens]; a sliding layer keeps and reads at most W positions.

    Returns
    -------
    array_like
        Layer-positions [1]; drives both KV bytes and attention FLOPs.

    References
    ----------
    .. [1] Beltagy, Peters and Cohan, "Longformer", arXiv:2004.05150, §3.1 (sliding window);
       Gemma Team, "Gemma 2", arXiv:2408.00118, §2 (alternating local/global layers).

    Examples
    --------
    Gemma-2-9B (21 global + 21 sliding layers, W = 4096) at T = 8192:

    >>> attended_positions(8192, 21, 21, 4096)
    258048
    """
    return num_global_layers * context + num_sliding_layers * minimum(context, sliding_window)


def kv_cache_bytes(
    batch: Operand, context: Operand, kv_bytes_per_token_per_layer: Operand, num_global_layers: Operand,
    num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""Bytes of KV cache resident for a batch at a context, summed over layers.

    .. math:: M_{kv} = B\,m_{kv}\,\left(L_{global}\,T + L_{sliding}\,\min(T, W)\right)

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    context : array_like
        Cached tokens per sequence T [1].
    kv_bytes_per_token_per_layer : array_like
        m_kv [B], from :func:`kv_bytes_per_token_per_layer` or its MLA twin.
    num_global_layers, num_sliding_layers, sliding_window
        As in :func:`attended_positions`.

    Returns
    -------
    array_like
        Resident KV bytes [B]; a decode step reads all of them (:func:`kv_read_bytes`).

    References
    ----------
    .. [1] Kwon et al., "Efficient Memory Management for LLM Serving with PagedAttention",
       SOSP 2023, §2.3.

    Examples
    --------
    Llama-3.1-8B in bf16 (8 KV heads of 128, 32 layers), batch 1 at 8192 tokens: 1.07 GB.

    >>> kv_cache_bytes(1, 8192, 2 * 8 * 128 * 2, 32)
    1073741824.0
    """
    return batch * kv_bytes_per_token_per_layer * attended_positions(
        context, num_global_layers, num_sliding_layers, sliding_window
    )


def kv_read_bytes(
    batch: Operand, context: Operand, kv_bytes_per_token_per_layer: Operand, num_global_layers: Operand,
    num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""KV-cache bytes one decode step reads: the whole resident cache of every sequence.

    .. math:: KV_{read} = B\,m_{kv}\,\left(L_{global}\,T + L_{sliding}\,\min(T, W)\right)

    Parameters and units as in :func:`kv_cache_bytes`.

    Returns
    -------
    array_like
        KV bytes the step reads [B], equal to the resident cache.

    Notes
    -----
    Each cached key/value is read once per step (fused attention kernels such as
    FlashDecoding read K and V once per query group, so GQA heads share the read).

    References
    ----------
    .. [1] Dao et al., "Flash-Decoding for long-context inference", PyTorch blog, 2023.

    Examples
    --------
    Mistral-7B-v0.1 (all 32 layers slide with W = 4096, bf16) at T = 32768 reads only 4096 positions:

    >>> kv_read_bytes(1, 32768, 2 * 8 * 128 * 2, 0, 32, 4096)
    536870912
    """
    return kv_cache_bytes(batch, context, kv_bytes_per_token_per_layer, num_global_layers, num_sliding_layers, sliding_window)


def kv_write_bytes(batch: Operand, kv_bytes_per_token_per_layer: Operand, num_layers: Operand) -> ArrayOrExpr:
    r"""KV-cache bytes one decode step writes: one new token per sequence in every layer.

    .. math:: KV_{write} = B\,m_{kv}\,L

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    kv_bytes_per_token_per_layer : array_like
        m_kv [B].
    num_layers : array_like
        Layers with a KV cache L [1].

    Returns
    -------
    array_like
        Bytes written [B].

    References
    ----------
    .. [1] Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §3.3.

    Examples
    --------
    Llama-3.1-70B in bf16 at batch 8: 8 × 327,680 B.

    >>> kv_write_bytes(8, 4096, 80)
    2621440
    """
    return batch * kv_bytes_per_token_per_layer * num_layers
