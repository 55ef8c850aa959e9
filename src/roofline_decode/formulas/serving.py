"""Serving rate: generated tokens per second, requests per second, and Little's law.

Under continuous batching a request occupies one batch slot for its whole decode, so the
steady state obeys Little's law: concurrency = arrival rate × time in the system.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand

__all__ = ["requests_per_second", "littles_law_concurrency", "request_rate_at_concurrency"]


def requests_per_second(tokens_per_second: Operand, output_length: Operand) -> ArrayOrExpr:
    r"""Requests completed per second for a generated-token rate and an output length.

    .. math:: \lambda = \frac{\text{tok/s}}{N_{out}}

    Parameters
    ----------
    tokens_per_second : array_like
        Generated tokens per second, aggregated over the batch [1/s].
    output_length : array_like
        Tokens generated per request N_out [1].

    Returns
    -------
    array_like
        Requests per second [1/s] (decode only: prefill time is not counted).

    References
    ----------
    .. [1] Austin et al., "How to Scale Your Model", 2025, "Serving LLaMA 3-70B on TPUs"
       (queries per second = batch / (step time × median decode length)).

    Examples
    --------
    2,000 tokens/s with 500-token answers: 4 requests/s.

    >>> requests_per_second(2000.0, 500)
    4.0
    """
    return tokens_per_second / output_length


def littles_law_concurrency(arrival_rate: Operand, output_length: Operand, step_time: Operand) -> ArrayOrExpr:
    r"""Requests decoding at once in the steady state of continuous batching.

    .. math:: B = \lambda\,N_{out}\,T_{step}(B)

    Parameters
    ----------
    arrival_rate : array_like
        Requests arriving per second λ [1/s].
    output_length : array_like
        Tokens generated per request N_out [1]; a request stays N_out steps.
    step_time : array_like
        Seconds per decode step at that concurrency T_step(B) [s].

    Returns
    -------
    array_like
        Mean concurrency B [1] (= the mean batch).  Since T_step depends on B, the steady
        state is a fixed point; :mod:`roofline_decode.planning.serving` solves it.

    References
    ----------
    .. [1] Little, "A Proof for the Queuing Formula: L = λW", Operations Research 9(3), 1961.

    Examples
    --------
    4 requests/s of 500 tokens at 20 ms per step keep 40 requests in flight.

    >>> littles_law_concurrency(4.0, 500, 0.02)
    40.0
    """
    return arrival_rate * output_length * step_time


def request_rate_at_concurrency(
    concurrency: Operand, output_length: Operand, step_time: Operand,
) -> ArrayOrExpr:
    r"""Arrival rate that keeps a given concurrency in steady state (Little's law solved for λ).

    .. math:: \lambda = \frac{B}{N_{out}\,T_{step}(B)}

    Parameters
    ----------
    concurrency : array_like
        Requests decoding at once B [1].
    output_length : array_like
        Tokens generated per request N_out [1].
    step_time : array_like
        Seconds per decode step at batch B [s].

    Returns
    -------
    array_like
        Requests per second λ [1/s]; equals :func:`requests_per_second` of B / T_step.

    References
    ----------
    .. [1] Little, Operations Research 9(3), 1961.

    Examples
    --------
    The Scaling Book's LLaMA 3-70B on a TPU v5e 4x4 in bf16: batch 43, 19 ms per step,
    512-token decodes: 4.42 requests/s (0.28 per chip).

    >>> round(request_rate_at_concurrency(43, 512, 0.019), 2)
    4.42
    """
    return concurrency / (output_length * step_time)
