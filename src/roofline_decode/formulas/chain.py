"""The serial chain of one decode step: the third constraint beside bandwidth and capacity.

A token cannot start before the previous one has left the last layer, and inside a step each
layer waits for the one before it.  However little data an operation moves, a dependent
operation takes a minimum time (a kernel launch and its drain, a barrier, a collective's
handshake), so a step can never be shorter than the chain of those minima:

.. math:: T_{chain} = L\\,(n_{op}\\,t_{op} + n_{AR}\\,t_{AR}) + h\\,t_{hop} + t_{0}

No positive latency is a physical law (a persistent fused kernel approaches zero launch cost),
so the library's floors leave the chain out unless a latency profile is given
(:mod:`roofline_decode.specs.latency`).
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand

__all__ = ["serial_chain_time"]


def serial_chain_time(
    num_layers: Operand, operations_per_layer: Operand, operation_latency: Operand,
    all_reduces_per_layer: Operand = 0, all_reduce_time: Operand = 0, pipeline_hops: Operand = 0,
    hop_time: Operand = 0, step_latency: Operand = 0,
) -> ArrayOrExpr:
    r"""Shortest time the dependent operations of one decode step can take, one after another.

    .. math:: T_{chain} = L\,(n_{op}\,t_{op} + n_{AR}\,t_{AR}) + h\,t_{hop} + t_{0}

    Parameters
    ----------
    num_layers : array_like
        Layers every token passes through in order L [1].
    operations_per_layer : array_like
        Dependent operations (kernels, barriers) per layer n_op [1], each waiting for the last.
    operation_latency : array_like
        Minimum time of one dependent operation t_op [s], however little it computes.
    all_reduces_per_layer : array_like, optional
        Tensor-parallel collectives per layer n_AR [1] (2 for Megatron: after attention and
        after the MLP; 0 on one device).
    all_reduce_time : array_like, optional
        Time of one collective t_AR [s] (latency plus bytes over the link, e.g.
        :func:`~roofline_decode.formulas.ring_all_reduce_time`).
    pipeline_hops : array_like, optional
        Stage-to-stage hand-offs a token makes per step h [1] (0 without pipeline stages).
    hop_time : array_like, optional
        Time of one hand-off t_hop [s].
    step_latency : array_like, optional
        Fixed cost of a step outside the layers t_0 [s]: sampling, the host's round trip.

    Returns
    -------
    array_like
        Seconds [s]; a floor on the step only under the profile's assumptions.

    Notes
    -----
    The chain is independent of batch and context: it bounds the step when little data moves
    (small models, batch 1, wide tensor parallelism), and is hidden behind the weight stream
    otherwise.  Operations that overlap (a kernel launched while the previous drains) count
    once per dependency, not per launch; n_op is a property of the kernel schedule (fusion
    lowers it), t_op of the device and runtime (CUDA graphs lower it).

    References
    ----------
    .. [1] B. Spector, J. Juravsky et al., "Look Ma, No Bubbles! Designing a Low-Latency
       Megakernel for Llama-1B", Hazy Research blog, 2025-05-27 (about a hundred kernels per
       Llama-1B forward pass, about 1.3 µs per kernel boundary with CUDA graphs on an H100).

    Examples
    --------
    Llama-3.2-1B (16 layers), 10 dependent kernels per layer at 1.3 µs each (CUDA graphs on
    an H100): 208 µs per step, beside the 0.74 ms its 2.47 GB of bf16 weights take to stream
    on an H100 SXM.

    >>> round(serial_chain_time(16, 10, 1.3e-6) * 1e6, 1)
    208.0

    Llama-3.1-70B (80 layers) on 8 tensor-parallel devices, adding two 6 µs all-reduces per
    layer: 2.0 ms, more than the 1.84 ms each H200 needs to stream its eighth of the 70.6 GB
    of fp8 weights at 4.8 TB/s.

    >>> round(serial_chain_time(80, 10, 1.3e-6, 2, 6e-6) * 1e3, 3)
    2.0
    """
    per_layer = operations_per_layer * operation_latency + all_reduces_per_layer * all_reduce_time
    return num_layers * per_layer + pipeline_hops * hop_time + step_latency
