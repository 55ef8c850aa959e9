"""The serial chain on the host: how long one dependent operation of the numpy kernel takes,
and the three constraints (capacity aside: bandwidth, compute, dependency) measured together.

:func:`measure_operation_latency` times a step of a model so small that its bytes and FLOPs
take nanoseconds: what remains is the cost of issuing the kernel's dependent operations one
after another (:attr:`~roofline_decode.kernel.StepCounts.operations`), divided by their number.
:func:`host_latency_profile` turns that into a :class:`~roofline_decode.specs.latency.LatencyProfile`
for the kernel's own schedule, and :func:`run_chain_validation` times the kernel over a range
of hidden sizes at batch 1: small models follow the chain, large ones the bandwidth.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from numpy.typing import ArrayLike

from ..errors import InvalidValueError
from ..formats import get_format
from ..specs.accelerator import Accelerator
from ..specs.latency import LatencyProfile
from ..specs.model import Model
from .decode import DecodeKernel, StepCounts

__all__ = ["OperationLatency", "ChainPoint", "measure_operation_latency", "host_latency_profile",
           "chain_model", "run_chain_validation", "DEFAULT_HIDDEN_SIZES"]

#: Hidden sizes of :func:`run_chain_validation`: from a model whose weights sit in L1 to one
#: whose fp32 weights (about 0.3 GB) stream from DRAM.
DEFAULT_HIDDEN_SIZES = (16, 64, 256, 1024, 2048)


@dataclass(frozen=True)
class OperationLatency:
    """Minimum time of one dependent operation of the kernel on this CPU.

    ``seconds`` is the fastest timed step over ``repeats``, divided by the step's
    ``operations``; ``per_layer`` and ``outside_layers`` split that count the way
    :func:`~roofline_decode.formulas.serial_chain_time` does.
    """

    seconds: float
    operations: int
    per_layer: int
    outside_layers: int
    repeats: int

    def __str__(self) -> str:
        return (f"{self.seconds * 1e6:.2f} us per dependent operation ({self.operations} operations per tiny "
                f"step: {self.per_layer} per layer + {self.outside_layers} outside; fastest of {self.repeats})")


def chain_model(hidden_size: int, num_layers: int = 4) -> Model:
    """A Llama-like fp32 model of width ``hidden_size`` (heads of 8, GQA 4:1 where it fits,
    SwiGLU of 2.75 d, vocabulary of 8 d) for the chain validation."""
    if int(hidden_size) != hidden_size or hidden_size < 8 or hidden_size % 8:
        raise InvalidValueError("hidden_size", hidden_size, "a multiple of 8, >= 8")
    heads = int(hidden_size) // 8
    kv_heads = heads // 4 if heads % 4 == 0 else heads
    fp32 = get_format("fp32")  # what Model makes of the name "fp32"
    return Model(name=f"chain-d{int(hidden_size)}", num_layers=num_layers, hidden_size=int(hidden_size),
                 num_heads=heads, num_kv_heads=kv_heads, head_dim=8, intermediate_size=int(2.75 * hidden_size),
                 vocab_size=8 * int(hidden_size), weight_format=fp32, kv_format=fp32, activation_format=fp32)


def _fastest_step(kernel: DecodeKernel, position: int, repeats: int, warmup: int = 3) -> tuple[float, StepCounts]:
    tokens = np.zeros(kernel.batch, dtype=np.int64)
    for _ in range(warmup):
        _, counts = kernel.step(tokens, position)
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        _, counts = kernel.step(tokens, position)
        best = min(best, time.perf_counter() - start)
    return best, counts


def _check_repeats(repeats: int) -> int:
    if isinstance(repeats, bool) or int(repeats) != repeats or repeats < 1:
        raise InvalidValueError("repeats", repeats, "an integer >= 1")
    return int(repeats)


def measure_operation_latency(repeats: int = 200) -> OperationLatency:
    """Time a step of an 8-wide, 8-layer model and divide by its dependent operations.

    Its weights (a few kB) stay in L1 and its FLOPs take nanoseconds, so the fastest step is
    the chain: Python and numpy dispatch for each operation, one after another.  The
    operations per layer are read off two depths (8 and 16 layers), so those outside the layers
    (embedding gather, final norm, lm_head) are counted apart.

    Examples
    --------
    >>> latency = measure_operation_latency(repeats=5)
    >>> latency.per_layer, latency.outside_layers, latency.seconds > 0
    (16, 3, True)
    """
    repeats = _check_repeats(repeats)
    shallow, deep = (DecodeKernel(chain_model(8, layers), batch=1, max_context=1) for layers in (8, 16))
    best, counts = _fastest_step(shallow, 0, repeats)
    _, deep_counts = _fastest_step(deep, 0, 1, warmup=0)
    per_layer = (deep_counts.operations - counts.operations) // 8
    outside = counts.operations - 8 * per_layer
    return OperationLatency(seconds=best / counts.operations, operations=counts.operations,
                            per_layer=per_layer, outside_layers=outside, repeats=repeats)


def host_latency_profile(latency: OperationLatency) -> LatencyProfile:
    """The kernel's own schedule on this CPU as a latency profile (dense Llama-like layers)."""
    return LatencyProfile(
        id="host-numpy", name="numpy decode kernel on this CPU (measured)",
        operation_latency=latency.seconds, operations_per_layer=latency.per_layer,
        step_latency=latency.outside_layers * latency.seconds,
        notes=str(latency),
    )


@dataclass(frozen=True)
class ChainPoint:
    """One hidden size of :func:`run_chain_validation`: the fastest measured step and the three
    times of its floor [s], and which of them binds."""

    hidden_size: int
    weight_bytes: float
    measured_s: float
    memory_time_s: float
    compute_time_s: float
    chain_time_s: float
    bound: str

    @property
    def floor_s(self) -> float:
        return max(self.memory_time_s, self.compute_time_s, self.chain_time_s)

    @property
    def measured_over_floor(self) -> float:
        return self.measured_s / self.floor_s


def run_chain_validation(accelerator: Accelerator, profile: LatencyProfile, hidden_sizes: ArrayLike = DEFAULT_HIDDEN_SIZES, *,
                         num_layers: int = 4, context: int = 16, repeats: int = 20) -> list[ChainPoint]:
    """Time batch-1 steps of :func:`chain_model` at each hidden size against all three floors.

    Parameters
    ----------
    accelerator : Accelerator
        The host as probed (:func:`~roofline_decode.kernel.host_accelerator`).
    profile : LatencyProfile
        The kernel's chain on this CPU (:func:`host_latency_profile`).
    hidden_sizes : sequence of int
        Widths to run (multiples of 8).
    num_layers, context, repeats : int
        Depth of every model, cached tokens per step, timed steps per point (fastest kept).
    """
    from ..floors.decode import decode_floor

    repeats = _check_repeats(repeats)
    if isinstance(context, bool) or int(context) != context or context < 0:
        raise InvalidValueError("context", context, "an integer >= 0")
    points = []
    for width in np.atleast_1d(hidden_sizes).tolist():
        model = chain_model(width, num_layers)
        kernel = DecodeKernel(model, batch=1, max_context=int(context))
        kernel.fill_cache(int(context))
        measured, counts = _fastest_step(kernel, int(context), repeats)
        floor = decode_floor(model, accelerator, batch=1, context=int(context), latency=profile)
        points.append(ChainPoint(
            hidden_size=int(width), weight_bytes=float(counts.weight_bytes), measured_s=measured,
            memory_time_s=float(floor.memory_time_s), compute_time_s=float(floor.compute_time_s),
            chain_time_s=float(floor.chain_time_s), bound=str(floor.bound),
        ))
    return points
