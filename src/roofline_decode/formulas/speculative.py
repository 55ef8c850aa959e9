"""Speculative decoding: a round of k draft tokens and one verify step (DESIGN.md §4b).

A round drafts k tokens per sequence (k steps of a small draft model, or of multi-token
prediction heads), then the target model verifies all k + 1 positions in one step (weights read
once, KV read once, k + 1 tokens of FLOPs and KV writes per sequence).  With per-token
acceptance a, the round yields (1 − a^{k+1}) / (1 − a) tokens in expectation.
"""

from __future__ import annotations

import numpy as np

from .._typing import ArrayOrExpr, Operand
from .ops import is_symbolic

__all__ = ["expected_tokens_per_round", "speculative_time_per_token", "speculative_speedup"]


def expected_tokens_per_round(acceptance: Operand, draft_tokens: Operand) -> ArrayOrExpr:
    r"""Expected tokens one speculative round yields per sequence.

    .. math:: E = \frac{1 - a^{k + 1}}{1 - a} = \sum_{i=0}^{k} a^{i}

    The draft tokens are accepted left to right, each with probability a, until the first
    rejection; the verify step always yields one token of its own (the correction or the bonus).

    Parameters
    ----------
    acceptance : array_like
        Per-token acceptance rate a [1], 0 <= a <= 1 (a = 1 gives the limit k + 1).
    draft_tokens : array_like
        Tokens drafted per round k [1], >= 0.

    Returns
    -------
    array_like
        Tokens per round [1], between 1 (a = 0) and k + 1 (a = 1).

    References
    ----------
    .. [1] Leviathan, Kalman and Matias, "Fast Inference from Transformers via Speculative
       Decoding", ICML 2023, §3.1, eq. (1).

    Examples
    --------
    Four draft tokens at acceptance 0.8: 3.36 tokens per round.

    >>> round(float(expected_tokens_per_round(0.8, 4)), 4)
    3.3616
    """
    if is_symbolic(acceptance, draft_tokens):
        return (1 - acceptance ** (draft_tokens + 1)) / (1 - acceptance)
    acceptance = np.asarray(acceptance, dtype=float)
    # 1 - a^(k+1) as -expm1((k+1) log1p(a - 1)): the plain difference cancels as a -> 1 (at
    # a = 0.99999 it loses five digits); a - 1 is exact there, so this keeps full precision
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = -np.expm1((np.asarray(draft_tokens, dtype=float) + 1) * np.log1p(acceptance - 1)) / (1 - acceptance)
    return np.where(acceptance == 1, draft_tokens + 1.0, ratio)


def speculative_time_per_token(
    draft_step_time: Operand, verify_step_time: Operand, draft_tokens: Operand, acceptance: Operand,
) -> ArrayOrExpr:
    r"""Time per generated token of speculative decoding (per sequence).

    .. math:: t_{token} = \frac{k\,t_{draft} + t_{verify}}{E(a, k)}

    The round is priced phase by phase (the draft steps, then the verify step); the strict floor
    of :func:`~roofline_decode.floors.speculative.speculative_floor` bounds a round by its total
    bytes and its total FLOPs instead (``pricing="overlapped"``).

    Parameters
    ----------
    draft_step_time : array_like
        Mean time of one draft step t_draft [s] (the draft model or MTP heads at the batch).
    verify_step_time : array_like
        Time of the verify step of k + 1 tokens per sequence t_verify [s].
    draft_tokens : array_like
        Tokens drafted per round k [1].
    acceptance : array_like
        Per-token acceptance a [1].

    Returns
    -------
    array_like
        Seconds per generated token of one sequence [s].

    References
    ----------
    .. [1] Leviathan et al., ICML 2023, §3.4 (walltime improvement).

    Examples
    --------
    Draft steps of 1 ms, a 10 ms verify step, k = 4 at a = 0.8: 14 ms per 3.36 tokens.

    >>> round(float(speculative_time_per_token(0.001, 0.010, 4, 0.8)) * 1e3, 3)
    4.165
    """
    return (draft_tokens * draft_step_time + verify_step_time) / expected_tokens_per_round(acceptance, draft_tokens)


def speculative_speedup(
    step_time: Operand, draft_step_time: Operand, verify_step_time: Operand, draft_tokens: Operand,
    acceptance: Operand,
) -> ArrayOrExpr:
    r"""Speedup of speculative decoding over plain decoding at the same batch and context.

    .. math:: S = \frac{T_{step}\,E(a, k)}{k\,t_{draft} + t_{verify}}

    Parameters
    ----------
    step_time : array_like
        Plain decode step of the target model T_step [s].
    draft_step_time, verify_step_time, draft_tokens, acceptance : array_like
        As in :func:`speculative_time_per_token`.

    Returns
    -------
    array_like
        Speedup [1]; below 1 speculation loses.

    Notes
    -----
    Once plain decoding is compute-bound, the verify step costs at least (k + 1) plain steps
    (it has at least k + 1 times the FLOPs), so S <= E / (k + 1) <= 1: speculation cannot pay.

    References
    ----------
    .. [1] Leviathan et al., ICML 2023, §3.4; Chen et al., "Accelerating Large Language Model
       Decoding with Speculative Sampling", arXiv:2302.01318, §2.

    Examples
    --------
    A 10 ms plain step, 1 ms draft steps and a 10.5 ms verify step, k = 4 at a = 0.8:

    >>> round(float(speculative_speedup(0.010, 0.001, 0.0105, 4, 0.8)), 3)
    2.318
    """
    return step_time / speculative_time_per_token(draft_step_time, verify_step_time, draft_tokens, acceptance)
