"""Memory capacity: usable bytes, and the batch or context that fills them (DESIGN.md §4).

Capacity planning is a separate question from bandwidth planning: these formulas say what
*fits*, never how fast it runs.  They are real-valued; :mod:`roofline_decode.planning` rounds
down to whole sequences and tokens.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import maximum, minimum, ratio_or_infinite

__all__ = ["usable_memory", "batch_capacity", "context_capacity"]


def usable_memory(
    memory_capacity: Operand, reserve_bytes: Operand = 0, reserve_fraction: Operand = 0,
) -> ArrayOrExpr:
    r"""Bytes a serving process can fill with weights and KV cache.

    .. math:: M_{usable} = M\,(1 - f_{reserve}) - R

    Parameters
    ----------
    memory_capacity : array_like
        Physical device memory M [B] (for HBM printed in "GB", the GiB reading; see Notes).
    reserve_bytes : array_like, optional
        Fixed runtime reserve R [B]: CUDA context, allocator slack, communication buffers,
        activation workspace.
    reserve_fraction : array_like, optional
        Reserve as a fraction of capacity f_reserve [1] (vLLM's ``gpu_memory_utilization``
        = 0.9 corresponds to f_reserve = 0.1).

    Returns
    -------
    array_like
        Usable bytes [B]; may be negative when the reserve exceeds the capacity.

    Notes
    -----
    DRAM dies have power-of-two densities, so a vendor's "80 GB" of HBM is 80 GiB (5 stacks
    of 16 GiB on an H100); a runtime then holds 1-3 GiB for itself.  The planning layer applies
    that reading to the spec's printed unit before calling this function.

    References
    ----------
    .. [1] Kwon et al., "Efficient Memory Management for LLM Serving with PagedAttention",
       SOSP 2023, §4.3 (the KV-cache pool is what remains after weights and workspace).

    Examples
    --------
    An A100 80GB ("80 GB" = 80 GiB) with a 2 GiB runtime reserve: 83.75 GB usable; an H100 SXM,
    whose runtime exposes 81,559 MiB of its 80 GiB (nvidia-smi), 83.37 GB.

    >>> usable_memory(80 * 2**30, 2 * 2**30) / 1e9, usable_memory(81559 * 2**20, 2 * 2**30) / 1e9
    (83.751862272, 83.373326336)
    """
    return memory_capacity * (1 - reserve_fraction) - reserve_bytes


def batch_capacity(
    usable_bytes: Operand, resident_weight_bytes: Operand, kv_bytes_per_sequence: Operand,
) -> ArrayOrExpr:
    r"""Sequences whose KV caches fit beside the weights (real-valued).

    .. math:: B_{max} = \frac{M_{usable} - W}{M_{kv}(1, T)}

    Parameters
    ----------
    usable_bytes : array_like
        Usable memory M_usable [B] (:func:`usable_memory`).
    resident_weight_bytes : array_like
        Bytes the weights occupy W [B] (every expert of an MoE model, the embedding once).
    kv_bytes_per_sequence : array_like
        Resident KV cache of one sequence at the planned context [B]
        (:func:`~roofline_decode.formulas.kv_cache_bytes` with batch 1).

    Returns
    -------
    array_like
        B_max [1] as a real number (+inf when a sequence needs no KV bytes); negative when the
        weights alone do not fit.  Any integer batch ≤ B_max fits.

    References
    ----------
    .. [1] Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §3.3.

    Examples
    --------
    Llama-3.1-70B in bf16 (141.1 GB of weights, 327,680 B of KV per token) on two A100 80GB
    (2 × 83.75 GB usable) at 8192 tokens: 9.8 sequences.

    >>> round(float(batch_capacity(2 * 83.751862272e9, 141.107412992e9, 8192 * 327680)), 2)
    9.83
    """
    return ratio_or_infinite(usable_bytes - resident_weight_bytes, kv_bytes_per_sequence)


def context_capacity(
    free_bytes_per_sequence: Operand, kv_bytes_per_token_per_layer: Operand, num_global_layers: Operand,
    num_sliding_layers: Operand = 0, sliding_window: Operand = float("inf"),
) -> ArrayOrExpr:
    r"""Cached tokens per sequence that fit in a per-sequence byte budget (real-valued).

    A budget of P = free / m_kv layer-positions first fills every layer up to the window W,
    then only the global layers keep growing:

    .. math::

        T_{max} = \min\!\left(\frac{P}{L_g + L_s}, W\right)
                  + \frac{\max\left(P - (L_g + L_s)\,W,\ 0\right)}{L_g}

    Parameters
    ----------
    free_bytes_per_sequence : array_like
        Bytes left for one sequence's KV cache [B]: (usable − weights) / B.
    kv_bytes_per_token_per_layer : array_like
        m_kv [B].
    num_global_layers : array_like
        Global attention layers L_g [1]; must be > 0 (a model whose every layer slides holds
        at most W tokens per layer and its context is unbounded once those fit).
    num_sliding_layers, sliding_window : array_like, optional
        L_s [1] and W [tokens], as in :func:`~roofline_decode.formulas.attended_positions`.

    Returns
    -------
    array_like
        T_max [tokens], the inverse of :func:`~roofline_decode.formulas.kv_cache_bytes` in T.

    References
    ----------
    .. [1] Gemma Team, "Gemma 2", arXiv:2408.00118, §2 (alternating local/global layers).

    Examples
    --------
    Gemma-2-9B (21 global + 21 sliding layers, W = 4096, 8 KV heads × 256, bf16: 8192 B per
    token per layer) with 10 GB free for one sequence: 54,033 tokens.

    >>> round(float(context_capacity(10e9, 8192, 21, 21, 4096)))
    54033
    """
    positions = free_bytes_per_sequence / kv_bytes_per_token_per_layer
    layers = num_global_layers + num_sliding_layers
    beyond_window = maximum(positions - layers * sliding_window, 0)
    return minimum(positions / layers, sliding_window) + ratio_or_infinite(beyond_window, num_global_layers)
