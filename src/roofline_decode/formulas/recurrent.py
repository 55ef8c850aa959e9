"""Recurrent token mixers: a fixed-size state per sequence instead of a growing KV cache
(Mamba-2, Gated DeltaNet; DESIGN.md §4b "Recurrent state").

A recurrent layer reads and writes its whole state every decode step, whatever the context:
state bytes per step = 2 × (state elements) × (bytes per state element) per layer and sequence.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand

__all__ = [
    "mamba_matrix_parameters",
    "mamba_state_elements",
    "mamba2_matrix_parameters",
    "mamba2_state_elements",
    "gated_deltanet_matrix_parameters",
    "gated_deltanet_state_elements",
    "recurrent_state_bytes",
    "recurrent_update_flops",
]


def mamba_matrix_parameters(
    hidden_size: Operand, ssm_inner_size: Operand, ssm_state_size: Operand, ssm_dt_rank: Operand,
) -> ArrayOrExpr:
    r"""Matrix parameters of one Mamba (v1) mixer: in_proj, x_proj, dt_proj and out_proj.

    .. math:: P_{mamba} = d\,2 d_{in} + d_{in}\,(r_{dt} + 2N) + r_{dt}\,d_{in} + d_{in}\,d

    Parameters
    ----------
    hidden_size : array_like
        Model width d [1].
    ssm_inner_size : array_like
        Inner width d_in = expand · d [1] (``mamba_expand``).
    ssm_state_size : array_like
        State size N per channel (``mamba_d_state``) [1].
    ssm_dt_rank : array_like
        Rank r_dt of the time-step projection (``mamba_dt_rank``) [1].

    Returns
    -------
    array_like
        Parameters [1] (conv1d, A_log, D and the biases are vectors, counted by the reader).

    References
    ----------
    .. [1] Gu and Dao, "Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
       arXiv:2312.00752, §3.4; Lieber et al., "Jamba", arXiv:2403.19887, §2.

    Examples
    --------
    Jamba-v0.1 (d = 4096, d_in = 8192, N = 16, r_dt = 256):

    >>> mamba_matrix_parameters(4096, 8192, 16, 256)
    105119744
    """
    return (hidden_size * 2 * ssm_inner_size + ssm_inner_size * (ssm_dt_rank + 2 * ssm_state_size)
            + ssm_dt_rank * ssm_inner_size + ssm_inner_size * hidden_size)


def mamba_state_elements(
    ssm_inner_size: Operand, ssm_state_size: Operand, conv_kernel: Operand,
) -> ArrayOrExpr:
    r"""State elements one Mamba (v1) layer keeps per sequence.

    .. math:: S_{mamba} = d_{in}\,N + d_{in}\,(K - 1)

    Parameters
    ----------
    ssm_inner_size, ssm_state_size : array_like
        d_in and N as in :func:`mamba_matrix_parameters` [1].
    conv_kernel : array_like
        Convolution width K (``mamba_d_conv``) [1].

    Returns
    -------
    array_like
        SSM state plus convolution inputs, per layer and sequence [1].

    References
    ----------
    .. [1] Gu and Dao, arXiv:2312.00752, §3.3 (recurrent mode).

    Examples
    --------
    Jamba-v0.1: 8192 × 16 SSM entries plus 3 × 8192 convolution entries.

    >>> mamba_state_elements(8192, 16, 4)
    155648
    """
    return ssm_inner_size * ssm_state_size + ssm_inner_size * (conv_kernel - 1)


def mamba2_matrix_parameters(
    hidden_size: Operand, ssm_inner_size: Operand, ssm_groups: Operand, ssm_state_size: Operand,
    ssm_heads: Operand,
) -> ArrayOrExpr:
    r"""Matrix parameters of one Mamba-2 mixer: the input and output projections.

    .. math:: P_{mamba2} = d\,(2 d_{in} + 2 g N + H_{ssm}) + d_{in}\,d

    The input projection yields z and x (d_in each), B and C (g·N each) and one dt per head.

    Parameters
    ----------
    hidden_size : array_like
        Model width d [1].
    ssm_inner_size : array_like
        Inner width d_in = expand · d [1] (``mamba_d_ssm``/``expand`` keys).
    ssm_groups : array_like
        Groups g sharing B and C (``n_groups``) [1].
    ssm_state_size : array_like
        State size N per head and channel (``state_size``/``d_state``) [1].
    ssm_heads : array_like
        SSM heads H_ssm (``num_heads``/``mamba_n_heads``) [1].

    Returns
    -------
    array_like
        Parameters [1] of in_proj and out_proj (conv1d, dt_bias, A_log, D and the gated norm
        are vectors, counted by the reader).

    References
    ----------
    .. [1] Dao and Gu, "Transformers are SSMs: Generalized Models and Efficient Algorithms
       Through Structured State Space Duality", ICML 2024, §7 (the Mamba-2 block).

    Examples
    --------
    Mamba-Codestral-7B (d = 4096, d_in = 8192, 8 groups, N = 128, 128 heads):

    >>> mamba2_matrix_parameters(4096, 8192, 8, 128, 128)
    109576192
    """
    return hidden_size * (2 * ssm_inner_size + 2 * ssm_groups * ssm_state_size + ssm_heads) + ssm_inner_size * hidden_size


def mamba2_state_elements(
    ssm_inner_size: Operand, ssm_groups: Operand, ssm_state_size: Operand, conv_kernel: Operand,
) -> ArrayOrExpr:
    r"""State elements one Mamba-2 layer keeps per sequence: the SSM state and the convolution window.

    .. math:: S_{mamba2} = d_{in}\,N + (d_{in} + 2 g N)\,(K - 1)

    (H heads of P = d_in / H channels, N state entries each; the causal convolution keeps the
    last K − 1 inputs of its d_in + 2gN channels.)

    Parameters
    ----------
    ssm_inner_size, ssm_groups, ssm_state_size : array_like
        d_in, g and N as in :func:`mamba2_matrix_parameters` [1].
    conv_kernel : array_like
        Convolution width K (``conv_kernel``/``d_conv``) [1].

    Returns
    -------
    array_like
        State elements per layer and sequence [1], independent of the context.

    References
    ----------
    .. [1] Dao and Gu, ICML 2024, §7; vLLM ``MambaStateShapeCalculator.mamba2_state_shape``.

    Examples
    --------
    Mamba-Codestral-7B: 8192 × 128 SSM entries plus 3 × (8192 + 2048) convolution entries.

    >>> mamba2_state_elements(8192, 8, 128, 4)
    1079296
    """
    return ssm_inner_size * ssm_state_size + (ssm_inner_size + 2 * ssm_groups * ssm_state_size) * (conv_kernel - 1)


def gated_deltanet_matrix_parameters(
    hidden_size: Operand, linear_key_heads: Operand, linear_key_head_dim: Operand,
    linear_value_heads: Operand, linear_value_head_dim: Operand,
) -> ArrayOrExpr:
    r"""Matrix parameters of one Gated DeltaNet layer (Qwen3-Next linear attention).

    .. math:: P_{GDN} = d\,(2 H_k d_k + 2 H_v d_v) + d\,2 H_v + H_v d_v\,d

    in_proj_qkvz (q, k: H_k·d_k each; v, z: H_v·d_v each), in_proj_ba (β and α: one per value
    head each) and out_proj.

    Parameters
    ----------
    hidden_size : array_like
        Model width d [1].
    linear_key_heads, linear_key_head_dim : array_like
        Key heads H_k and their width d_k (``linear_num_key_heads``, ``linear_key_head_dim``) [1].
    linear_value_heads, linear_value_head_dim : array_like
        Value heads H_v and their width d_v (``linear_num_value_heads``, ``linear_value_head_dim``) [1].

    Returns
    -------
    array_like
        Parameters [1] of the three projections (conv1d, A_log, dt_bias and the norm are vectors).

    References
    ----------
    .. [1] Yang, Kautz and Hatamizadeh, "Gated Delta Networks: Improving Mamba2 with Delta Rule",
       ICLR 2025, §3; transformers ``Qwen3NextGatedDeltaNet``.

    Examples
    --------
    Qwen3-Next-80B-A3B (d = 2048, 16 key heads and 32 value heads of 128):

    >>> gated_deltanet_matrix_parameters(2048, 16, 128, 32, 128)
    33685504
    """
    return (hidden_size * (2 * linear_key_heads * linear_key_head_dim + 2 * linear_value_heads * linear_value_head_dim)
            + hidden_size * 2 * linear_value_heads + linear_value_heads * linear_value_head_dim * hidden_size)


def gated_deltanet_state_elements(
    linear_key_heads: Operand, linear_key_head_dim: Operand, linear_value_heads: Operand,
    linear_value_head_dim: Operand, conv_kernel: Operand,
) -> ArrayOrExpr:
    r"""State elements one Gated DeltaNet layer keeps per sequence.

    .. math:: S_{GDN} = H_v\,d_k\,d_v + (2 H_k d_k + H_v d_v)\,(K - 1)

    One d_k × d_v delta-rule state per value head, plus the causal convolution's last K − 1
    inputs of the q, k and v channels.

    Parameters
    ----------
    linear_key_heads, linear_key_head_dim, linear_value_heads, linear_value_head_dim : array_like
        As in :func:`gated_deltanet_matrix_parameters` [1].
    conv_kernel : array_like
        Convolution width K (``linear_conv_kernel_dim``) [1].

    Returns
    -------
    array_like
        State elements per layer and sequence [1].

    References
    ----------
    .. [1] Yang et al., ICLR 2025, §3; vLLM ``MambaStateShapeCalculator.gated_delta_net_state_shape``.

    Examples
    --------
    Qwen3-Next-80B-A3B: 32 × 128 × 128 state entries plus 3 × 8192 convolution entries.

    >>> gated_deltanet_state_elements(16, 128, 32, 128, 4)
    548864
    """
    return (linear_value_heads * linear_key_head_dim * linear_value_head_dim
            + (2 * linear_key_heads * linear_key_head_dim + linear_value_heads * linear_value_head_dim) * (conv_kernel - 1))


def recurrent_state_bytes(
    batch: Operand, num_recurrent_layers: Operand, recurrent_state_elements: Operand,
    bytes_per_state: Operand,
) -> ArrayOrExpr:
    r"""Recurrent-state bytes one decode step reads (and, equally, writes back).

    .. math:: Q_{state} = B\,L_{rec}\,S\,b_{state}

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    num_recurrent_layers : array_like
        Layers with a recurrent mixer L_rec [1].
    recurrent_state_elements : array_like
        State elements per layer and sequence S [1].
    bytes_per_state : array_like
        Bytes per state element b_state [B].

    Returns
    -------
    array_like
        Bytes read [B] per step; the same amount is written (DESIGN.md §4b: 2 × state bytes).

    Notes
    -----
    Independent of the context T: the state has a fixed size.

    References
    ----------
    .. [1] Gu and Dao, "Mamba: Linear-Time Sequence Modeling with Selective State Spaces",
       arXiv:2312.00752, §3.3 (recurrent mode).

    Examples
    --------
    Qwen3-Next-80B-A3B, 36 Gated DeltaNet layers, bf16 state, batch 1:

    >>> recurrent_state_bytes(1, 36, 548864, 2)
    39518208
    """
    return batch * num_recurrent_layers * recurrent_state_elements * bytes_per_state


def recurrent_update_flops(
    batch: Operand, num_recurrent_layers: Operand, recurrent_flops_per_token: Operand,
) -> ArrayOrExpr:
    r"""FLOPs of the recurrent state updates of one decode step (beyond the projections).

    .. math:: F_{state} = B\,L_{rec}\,f_{rec}

    ``f_rec`` per layer and token follows the update rule: Mamba-2 6·d_in·N (decay, rank-1
    update and readout of the d_in × N state, 2 FLOPs per multiply-add) plus 2·K per
    convolution channel; Gated DeltaNet 8·H_v·d_k·d_v (kᵀS, the decayed rank-1 delta update and
    qᵀS) plus 2·K per convolution channel.

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    num_recurrent_layers : array_like
        Recurrent layers L_rec [1].
    recurrent_flops_per_token : array_like
        Update FLOPs per layer and token f_rec [FLOP].

    Returns
    -------
    array_like
        FLOPs [FLOP] of the state updates, summed over layers.

    References
    ----------
    .. [1] Dao and Gu, ICML 2024, §7; Yang et al., ICLR 2025, §3.

    Examples
    --------
    >>> recurrent_update_flops(2, 36, 8 * 32 * 128 * 128)
    301989888
    """
    return batch * num_recurrent_layers * recurrent_flops_per_token
