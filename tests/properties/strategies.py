"""Hypothesis strategies of the law suite: the public ones of :mod:`roofline_decode.testing`
(dense, MoE, sliding, MLA and hybrid recurrent models; accelerators), plus a helper format."""

from __future__ import annotations

from hypothesis import strategies as st

from roofline_decode import NumberFormat
from roofline_decode import testing
from roofline_decode.testing import (  # noqa: F401  (re-exported for the law modules)
    KV_FORMATS,
    PRECISIONS,
    WEIGHT_FORMATS,
    accelerators,
    dense_models,
    moe_models,
)

#: Kinds of the laws about attention and its KV cache (a hybrid's recurrent state is neither
#: weights nor a growing cache: its laws ask for ``kinds=("hybrid",)`` explicitly).
KINDS = ("dense", "moe", "sliding", "mla")


def models(kinds=KINDS, **bounds):
    """:func:`roofline_decode.testing.models`, attention-only kinds unless asked."""
    return testing.models(kinds, **bounds)


batches = st.integers(1, 4096).map(float)
contexts = st.integers(0, 262_144).map(float)
factors = st.floats(1.0, 16.0)


def storage_format(bytes_per_element: float, compute_precision: str = "bf16") -> NumberFormat:
    """A number format with given bytes per element that computes on a fixed precision."""
    return NumberFormat(name=f"test-{bytes_per_element:g}B", bits_per_element=8 * bytes_per_element,
                        compute_precision=compute_precision)
