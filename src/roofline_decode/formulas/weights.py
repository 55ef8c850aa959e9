"""Parameter counts and weight bytes read per decode step (DESIGN.md §4).

Only matrices count as *matmul* parameters (they drive FLOPs); biases and norm weights are
*vector* parameters: read every step, never multiplied as matrices.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import minimum

__all__ = [
    "attention_matrix_parameters",
    "mla_matrix_parameters",
    "mlp_matrix_parameters",
    "expected_experts_touched",
    "distinct_experts_read",
    "weight_bytes_read",
]


def attention_matrix_parameters(
    hidden_size: Operand, num_heads: Operand, num_kv_heads: Operand, head_dim: Operand,
) -> ArrayOrExpr:
    r"""Matrix parameters of one grouped-query attention layer (q, k, v and o projections).

    .. math:: P_{attn} = d\,H_q d_h + 2\,d\,H_{kv} d_h + H_q d_h\,d

    Parameters
    ----------
    hidden_size : array_like
        Model width d [1].
    num_heads : array_like
        Query heads H_q [1].
    num_kv_heads : array_like
        Key/value heads H_kv [1]; H_kv = H_q is multi-head attention, 1 is multi-query.
    head_dim : array_like
        Width of one head d_h [1]; taken from the config, never assumed to be d / H_q.

    Returns
    -------
    array_like
        Parameters [1] of the four projection matrices (biases not included).

    Notes
    -----
    The projection width H_q·d_h may differ from d (Qwen3-30B-A3B: 32·128 = 4096 vs d = 2048).

    References
    ----------
    .. [1] Ainslie et al., "GQA: Training Generalized Multi-Query Transformer Models from
       Multi-Head Checkpoints", arXiv:2305.13245, §2.

    Examples
    --------
    Llama-3.1-8B (d = 4096, 32 query heads, 8 KV heads, d_h = 128):

    >>> attention_matrix_parameters(4096, 32, 8, 128)
    41943040
    """
    return hidden_size * num_heads * head_dim * 2 + 2 * hidden_size * num_kv_heads * head_dim


def mla_matrix_parameters(
    hidden_size: Operand, num_heads: Operand, q_lora_rank: float, kv_lora_rank: Operand,
    qk_nope_head_dim: Operand, qk_rope_head_dim: Operand, v_head_dim: Operand,
) -> ArrayOrExpr:
    r"""Matrix parameters of one multi-head latent attention (MLA) layer.

    .. math::
        P_{MLA} = \underbrace{d\,r_q + r_q H (d_{nope} + d_{rope})}_{q}
                + \underbrace{d\,(r_{kv} + d_{rope}) + r_{kv} H (d_{nope} + d_v)}_{kv}
                + \underbrace{H d_v\,d}_{o}

    With ``q_lora_rank = 0`` the query is a single d × H(d_nope + d_rope) matrix (DeepSeek-V2-Lite).

    Parameters
    ----------
    hidden_size : array_like
        Model width d [1].
    num_heads : array_like
        Attention heads H [1].
    q_lora_rank : float
        Query compression rank r_q [1]; 0 for an uncompressed query projection (a Python-level
        branch: one value per call, it does not broadcast).
    kv_lora_rank : array_like
        Key/value latent rank r_kv [1].
    qk_nope_head_dim, qk_rope_head_dim : array_like
        Per-head query/key widths without and with rotary embedding [1].
    v_head_dim : array_like
        Per-head value width d_v [1].

    Returns
    -------
    array_like
        Parameters [1] of the MLA projection matrices (norms not included).

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts
       Language Model", arXiv:2405.04434, §2.1.

    Examples
    --------
    DeepSeek-V3 (d = 7168, H = 128, r_q = 1536, r_kv = 512, 128 + 64 q/k, d_v = 128):

    >>> mla_matrix_parameters(7168, 128, 1536, 512, 128, 64, 128)
    187105280
    """
    qk_head_dim = qk_nope_head_dim + qk_rope_head_dim
    if q_lora_rank == 0:
        query = hidden_size * num_heads * qk_head_dim
    else:
        query = hidden_size * q_lora_rank + q_lora_rank * num_heads * qk_head_dim
    key_value = hidden_size * (kv_lora_rank + qk_rope_head_dim) + kv_lora_rank * num_heads * (
        qk_nope_head_dim + v_head_dim
    )
    output = num_heads * v_head_dim * hidden_size
    return query + key_value + output


def mlp_matrix_parameters(
    hidden_size: Operand, intermediate_size: Operand, gated: Operand = True,
) -> ArrayOrExpr:
    r"""Matrix parameters of one feed-forward block (or one expert).

    .. math:: P_{mlp} = (2 + g)\,d\,d_{ff}, \qquad g = 1 \text{ (gated: SwiGLU, GeGLU)}, 0 \text{ (plain)}

    Parameters
    ----------
    hidden_size : array_like
        Model width d [1].
    intermediate_size : array_like
        Feed-forward width d_ff [1].
    gated : bool or array_like
        1 (True) for a gated MLP with gate, up and down matrices; 0 for up and down only.

    Returns
    -------
    array_like
        Parameters [1] of the MLP matrices (biases not included).

    References
    ----------
    .. [1] Shazeer, "GLU Variants Improve Transformer", arXiv:2002.05202, §2.

    Examples
    --------
    Llama-2-7B (d = 4096, d_ff = 11008, SwiGLU):

    >>> mlp_matrix_parameters(4096, 11008, gated=True)
    135266304
    """
    return (2 + 1 * gated) * hidden_size * intermediate_size


def expected_experts_touched(
    num_experts: Operand, num_experts_per_token: Operand, batch: Operand,
) -> ArrayOrExpr:
    r"""Expected number of distinct routed experts a batch touches in one MoE layer.

    .. math:: U(B) = E \left(1 - \left(1 - \frac{k}{E}\right)^{B}\right)

    Parameters
    ----------
    num_experts : array_like
        Routed experts per layer E [1].
    num_experts_per_token : array_like
        Experts each token is routed to k [1], 1 <= k <= E.
    batch : array_like
        Sequences in the decode step B [1].

    Returns
    -------
    array_like
        Expected distinct experts read [1]; U(1) = k, U → E as B → ∞.

    Notes
    -----
    Exact for uniform, independent routing: each token picks a uniformly random set of k
    distinct experts, so one expert is missed by a token with probability exactly 1 − k/E and
    by all B independent tokens with probability (1 − k/E)^B (the distinctness of a token's k
    picks changes no marginal).  It is also the **maximum** expected count over independent
    routers with any expert popularity: with per-token marginals p_e (Σ p_e = k) the
    expectation Σ_e (1 − (1 − p_e)^B) is concave in p and largest at p_e = k/E.  Real routers
    are skewed and tokens correlated, which touches fewer experts: an upper estimate of the
    expert bytes read for a given batch (the strict floor takes ``routing="identical"``, k).

    References
    ----------
    .. [1] Fedus, Zoph and Shazeer, "Switch Transformers", JMLR 23 (2022), §2.1 (routing);
       the occupancy expectation is the classical balls-in-bins result.

    Examples
    --------
    Mixtral-8x7B (E = 8, k = 2) at batch 1 and batch 8:

    >>> float(expected_experts_touched(8, 2, 1))
    2.0
    >>> round(float(expected_experts_touched(8, 2, 8)), 3)
    7.199
    """
    return num_experts * (1 - (1 - num_experts_per_token / num_experts) ** batch)


def distinct_experts_read(
    num_experts_per_token: Operand, batch: Operand, effective_experts: Operand,
) -> ArrayOrExpr:
    r"""Distinct routed experts one MoE layer reads when the batch's routing spreads over
    ``effective_experts`` equally likely experts.

    .. math:: D(B) = E_{eff} \left(1 - \left(1 - \frac{k}{E_{eff}}\right)^{B}\right),
              \qquad k \le E_{eff} \le E

    The routing assumption of a floor in one formula: :math:`E_{eff} = E` is uniform,
    independent routing (:func:`expected_experts_touched`, ``routing="uniform"``);
    :math:`E_{eff} = k` is every sequence picking the same k experts (``routing="identical"``),
    :math:`D = k` at any batch: the fewest a step can read, so the floor that holds for any
    routing.  A router whose choices concentrate on fewer experts than E sits between.

    Parameters
    ----------
    num_experts_per_token : array_like
        Experts each token is routed to k [1].
    batch : array_like
        Sequences in the decode step B [1], >= 1.
    effective_experts : array_like
        Experts the routing spreads over E_eff [1], k <= E_eff <= E.

    Returns
    -------
    array_like
        Distinct experts read per MoE layer D [1]; D(1) = k for every E_eff, and
        k <= D <= min(E_eff, k·B).

    Notes
    -----
    D grows with E_eff, so identical routing (E_eff = k) is the lower bound and uniform routing
    (E_eff = E) the expectation of the independent model; a measured count (llama-batched-bench
    feeds every sequence the same tokens, which routes like ``identical``) sits between.  The
    same exactness as :func:`expected_experts_touched` holds (uniform k-subsets of E_eff).

    References
    ----------
    .. [1] Fedus, Zoph and Shazeer, "Switch Transformers", JMLR 23 (2022), §2.1 (routing);
       occupancy of E_eff equally likely bins by B·k balls.

    Examples
    --------
    gpt-oss-120b (E = 128, k = 4) at batch 8: uniform routing reads 28.7 experts per layer,
    identical routing 4.

    >>> round(float(distinct_experts_read(4, 8, 128)), 1), float(distinct_experts_read(4, 8, 4))
    (28.7, 4.0)
    """
    return effective_experts * (1 - (1 - num_experts_per_token / effective_experts) ** batch)


def weight_bytes_read(
    batch: Operand, streamed_parameters: Operand, embedding_row_parameters: Operand, vocab_size: Operand,
    bytes_per_weight: Operand, num_moe_layers: Operand = 0, num_experts: Operand = 1,
    num_experts_per_token: Operand = 1, expert_parameters: Operand = 0,
    bytes_per_expert_weight: Operand | None = None, experts_read: Operand | None = None,
) -> ArrayOrExpr:
    r"""Weight bytes one decode step reads from memory.

    .. math::
        W_{read} = b_w \left(P_{stream} + \min(B, V)\,P_{row}\right)
                 + b_e\,L_{moe}\,D\,P_{expert}, \qquad D = U(B) \text{ unless given}

    Parameters
    ----------
    batch : array_like
        Sequences in the step B [1].
    streamed_parameters : array_like
        Parameters read in full every step [1]: attention, dense MLPs, shared experts, routers,
        norms, biases and the full lm_head (V × d, also when tied to the embedding).
    embedding_row_parameters : array_like
        Parameters gathered per distinct token from the embedding tables [1]: d, plus d for a
        learned position table.
    vocab_size : array_like
        Vocabulary size V [1]; at most V distinct embedding rows exist.
    bytes_per_weight : array_like
        Stored bytes per weight b_w [B], block scales included.
    num_moe_layers : array_like, optional
        Layers with routed experts L_moe [1].
    num_experts, num_experts_per_token : array_like, optional
        Routed experts E and experts per token k [1].
    expert_parameters : array_like, optional
        Matrix and bias parameters of one routed expert P_expert [1].
    bytes_per_expert_weight : array_like, optional
        Bytes per expert weight b_e [B]; defaults to ``bytes_per_weight`` (gpt-oss ships its
        experts in MXFP4 and the rest in bf16).
    experts_read : array_like, optional
        Distinct routed experts read per MoE layer D [1] (:func:`distinct_experts_read`, or a
        measured count); defaults to the uniform expectation :func:`expected_experts_touched`.

    Returns
    -------
    array_like
        Weight bytes the step reads [B].

    Notes
    -----
    Each distinct gathered row is read once; the sequences of a batch are assumed to hold
    distinct tokens (the worst case, min(B, V) rows). A learned position table (GPT-2, OPT)
    is gathered alongside with the same count, but every sequence of the step sits at the same
    context T and reads the same position row: the position rows are overcounted by
    (B − 1)·d weights (GPT-2 at B = 1024: 1.57 MB in bf16, 0.63 % of its weight bytes, 0.008 %
    of the step's bytes at T = 512), so for these models the weight bytes are that much above
    the strict minimum. Routed experts follow :func:`expected_experts_touched`.

    References
    ----------
    .. [1] Pope et al., "Efficiently Scaling Transformer Inference", MLSys 2023, §2 (memory
       time of weight loading).

    Examples
    --------
    Llama-2-7B in bf16 at batch 1: everything but the 32000 × 4096 input embedding, plus one row.

    >>> weight_bytes_read(1, 6_738_415_616 - 32000 * 4096, 4096, 32000, 2)
    13214695424
    """
    if bytes_per_expert_weight is None:
        bytes_per_expert_weight = bytes_per_weight
    gathered = minimum(batch, vocab_size) * embedding_row_parameters
    experts: Operand
    if isinstance(num_moe_layers, int) and num_moe_layers == 0:
        experts = 0  # dense model: skip the (vanishing) expert term
    else:
        if experts_read is None:
            experts_read = expected_experts_touched(num_experts, num_experts_per_token, batch)
        experts = num_moe_layers * experts_read
    return bytes_per_weight * (streamed_parameters + gathered) + bytes_per_expert_weight * experts * expert_parameters
