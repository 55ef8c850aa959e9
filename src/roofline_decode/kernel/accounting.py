"""The library's byte and FLOP counts for the step the kernel runs (fp32 weights and cache).

The kernel and the formulas count the same things (DESIGN.md §4), with one difference that is
not a convention but a random variable: the routed experts a batch touches.  The formulas use
the expectation ``U(B)`` under uniform routing; the kernel knows how many distinct experts each
MoE layer actually ran.  :func:`expected_counts` therefore evaluates the formulas through
:func:`~roofline_decode.decode_floor` and, when the actual counts are given, swaps the expected
expert term for the actual one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from .. import formulas as f
from ..specs.accelerator import Accelerator
from ..specs.model import Model

if TYPE_CHECKING:  # imported when called: estimate imports much of the package
    from ..floors.results import DecodeFloor

__all__ = ["expected_counts"]

# bytes and FLOPs do not depend on the device: any accelerator gives the same counts
_ANY_DEVICE = Accelerator(name="accounting only", memory_bandwidth=1.0, memory_capacity=1.0, plausibility_checks=False)


def expected_counts(model: Model, batch: int, context: int,
                    experts_touched: Sequence[int] | None = None) -> dict[str, float]:
    """Bytes [B] and FLOPs of one decode step by the library's formulas, in fp32.

    Parameters
    ----------
    model : Model
        The architecture (its formats are replaced by fp32 weights, cache and experts).
    batch, context : int
        B sequences with T cached tokens each; their B newest tokens assumed distinct (the
        formula gathers min(B, V) embedding rows).
    experts_touched : sequence of int, optional
        Distinct routed experts each MoE layer actually ran (``StepCounts.experts_touched``).
        Given, the routed-expert bytes ``L_moe·U(B)·P_expert`` are replaced by
        ``(Σ touched)·P_expert``; omitted, the expectation stays.

    Returns
    -------
    dict
        ``weight_bytes``, ``kv_read_bytes``, ``kv_write_bytes``, ``flops``.

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> counts = expected_counts(load_model("llama-3.2-1b"), batch=1, context=1024)
    >>> round(counts["weight_bytes"] / 1e9, 3), counts["kv_read_bytes"]
    (4.943, 67108864.0)
    """
    model = model.with_precision(weights="fp32", kv="fp32", activations="fp32", experts="fp32")
    floor = _floor(model, batch, context)
    weight = float(floor.weight_bytes)
    if experts_touched is not None and model.is_moe:
        if len(experts_touched) != model.num_moe_layers:
            from ..errors import InvalidValueError

            raise InvalidValueError(
                "experts_touched", list(experts_touched), f"one count per MoE layer ({model.num_moe_layers})"
            )
        b_e = model.routed_expert_format.bytes_per_element
        expected = model.num_moe_layers * f.expected_experts_touched(
            model.num_experts, model.num_experts_per_token, batch
        )
        weight += b_e * model.expert_parameters * (sum(experts_touched) - float(expected))
    return {
        "weight_bytes": weight,
        "kv_read_bytes": float(floor.kv_read_bytes),
        "kv_write_bytes": float(floor.kv_write_bytes),
        "flops": float(floor.flops),
    }


def _floor(model: Model, batch: int, context: int) -> DecodeFloor:
    from ..floors.decode import decode_floor

    return decode_floor(model, _ANY_DEVICE, batch=np.asarray(batch), context=np.asarray(context))
