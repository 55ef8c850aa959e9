"""MoE routing: the assumption behind the routed-expert bytes of a floor (DESIGN.md §4b).

A decode step reads every routed expert that at least one sequence of the batch is sent to.
How many that is depends on the router, which no config states, so a floor of an MoE model
rests on a *routing* assumption, and the result records it:

``"uniform"`` (default)
    Independent, uniform routing: the expected count U(B) = E(1 − (1 − k/E)^B) per MoE layer
    (:func:`~roofline_decode.formulas.expected_experts_touched`).  The expectation of that model,
    not a bound: correlated or skewed routing reads fewer experts.
``"identical"``
    Every sequence picks the same k experts: k per layer at any batch, the fewest a step can
    read.  The **strict** floor, which holds for any routing (llama-batched-bench, which feeds
    every sequence the same tokens, routes like this).
a number or an array
    A measured mean number of distinct experts per MoE layer D, k <= D <= min(E, k·B); an
    array broadcasts with the batch (along the batch axis of a sweep).

All three are :func:`~roofline_decode.formulas.distinct_experts_read` with E_eff = E, E_eff = k,
or D given directly; identical <= measured <= uniform, and all equal k at B = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .. import formulas as f
from .._typing import Broadcastable, FloatArray
from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..specs.model import Model

__all__ = ["ROUTINGS", "Routing", "resolve_routing", "compact"]

#: The named routing assumptions; a number (or array) is a measured count.
ROUTINGS = ("uniform", "identical")


def compact(array: Broadcastable) -> np.ndarray:
    """``array`` without its broadcast copies: axes of stride 0 (a batch broadcast against the
    context) shrink to length 1, so a function of it is evaluated once per distinct value and
    broadcasts back (``np.broadcast_arrays`` returns such views)."""
    values = np.asarray(array)
    return values[tuple(slice(None) if stride else slice(0, 1) for stride in values.strides)]


@dataclass(frozen=True)
class Routing:
    """A checked routing assumption: ``kind`` is ``"uniform"``, ``"identical"`` or ``"measured"``
    (then ``measured`` holds the distinct experts per MoE layer)."""

    kind: str
    measured: np.ndarray | None = None

    def experts_read(self, model: Model, batch: Broadcastable) -> FloatArray | np.float64:
        """Distinct routed experts read per MoE layer D [1] at ``batch`` (0 for a dense model)."""
        if not model.is_moe:
            return np.zeros(np.shape(batch))
        k, experts = model.num_experts_per_token, model.num_experts
        if self.kind == "measured":
            assert self.measured is not None  # resolve_routing gives kind "measured" its count
            return self.measured
        # D depends on the batch alone: evaluate it on the batch axis, not on the whole grid.  An
        # array, also for one point: its power goes through numpy's ufunc, as on a grid (a numpy
        # scalar's ``**`` is the C library's pow, which differs in the last bit now and then)
        distinct: FloatArray | np.float64 = f.distinct_experts_read(k, np.asarray(compact(batch)),
                                                                     experts if self.kind == "uniform" else k)
        return distinct

    def note(self, model: Model, batch: Broadcastable | None = None) -> str | None:
        """The sentence a result's notes carry for an MoE model (None for a dense one)."""
        if not model.is_moe:
            return None
        k, experts = model.num_experts_per_token, model.num_experts
        if self.kind == "uniform":
            return (f"MoE routing 'uniform': independent, uniform routing reads U(B) = E(1-(1-k/E)^B) of E={experts} "
                    f"experts per layer (k={k}); correlated or skewed routing reads fewer: routing='identical' "
                    "is the strict floor")
        if self.kind == "identical":
            return (f"MoE routing 'identical': every sequence picks the same k={k} of E={experts} experts per layer "
                    "(the strict floor for any routing)")
        measured = self.measured
        assert measured is not None  # resolve_routing gives kind "measured" its count
        low, high = float(np.min(measured)), float(np.max(measured))
        count = f"{low:g}" if low == high else f"{low:g} to {high:g}"
        return f"MoE routing 'measured': {count} distinct of E={experts} experts per layer (k={k})"


UNIFORM = Routing("uniform")
IDENTICAL = Routing("identical")


def resolve_routing(routing: Broadcastable | Routing, model: Model, batch: Broadcastable | None = None) -> Routing:
    """Check ``routing`` for ``model`` (and, for a measured count, against ``batch``).

    Raises
    ------
    InvalidValueError
        An unknown name, a count outside [k, E] (or above k·B at its batch), a count for a
        model without routed experts, or a value that is not a number.
    """
    if isinstance(routing, Routing):
        return routing
    if isinstance(routing, str):
        if routing == "uniform":
            return UNIFORM
        if routing == "identical":
            return IDENTICAL
        raise InvalidValueError("routing", routing, "'uniform', 'identical', or a number of distinct experts per "
                                                    "MoE layer (a measured count in [k, E])")
    if not model.is_moe:
        raise InvalidValueError("routing", routing, f"'uniform' or 'identical': {model.name} has no routed experts, "
                                                    "so a count of distinct experts does not apply")
    k, experts = model.num_experts_per_token, model.num_experts
    allowed = f"'uniform', 'identical', or distinct experts per MoE layer in [k, E] = [{k}, {experts}]"
    from .grid import checked_array  # the kinds of value batch and context accept (no bool, complex, str)

    try:
        measured = checked_array("routing", routing, k, inclusive=True)
    except InvalidValueError as exc:
        empty = " (got an empty array)" if "empty" in exc.allowed else ""
        shown = exc.value if isinstance(routing, (list, tuple, np.ndarray)) else routing
        raise InvalidValueError("routing", shown, allowed + empty) from None
    bad = measured > experts
    if bad.any():
        raise InvalidValueError("routing", routing if measured.ndim == 0 else measured[bad].flat[0].item(), allowed)
    if batch is not None:
        try:
            most = k * np.broadcast_arrays(np.asarray(batch, dtype=float), measured)[0]
        except ValueError:
            raise InvalidValueError("routing", routing, f"an array that broadcasts with batch {np.shape(batch)}") from None
        over = measured > most
        if over.any():
            value = routing if measured.ndim == 0 else np.broadcast_to(measured, over.shape)[over].flat[0].item()
            raise InvalidValueError("routing", value, f"at most k·B = {most[over].flat[0].item():g} distinct experts "
                                                      "at that batch (each of B tokens picks k)")
    return Routing("measured", measured)
