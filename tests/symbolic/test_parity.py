"""Parity: ``sympy.lambdify`` of every twin equals the numeric formula (rtol 1e-12).

Values are drawn per parameter from the domain its glossary entry states (positive,
non-negative, 0/1, real), with the few cross-parameter constraints a formula documents.
"""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import formulas
from roofline_decode.symbolic import entry, twin

positive = st.one_of(st.integers(1, 10_000).map(float), st.floats(0.25, 1e4, allow_nan=False))
nonnegative = st.one_of(st.just(0.0), positive)
real = st.floats(-1e4, 1e4, allow_nan=False)


def _strategy(name):
    e = entry(name)
    if name == "sliding_window":  # a model without sliding layers passes +inf
        return st.one_of(positive, st.just(math.inf))
    if e.assumptions.get("integer"):
        return st.sampled_from([0.0, 1.0])
    if e.assumptions.get("positive"):
        return positive
    if e.assumptions.get("nonnegative"):
        return nonnegative
    return real


def _constrain(values):
    """Cross-parameter constraints the formulas document."""
    if "acceptance" in values:  # the closed form (1 - a^(k+1)) / (1 - a) holds for a < 1
        values["acceptance"] = values["acceptance"] / (1 + values["acceptance"])
    if "num_experts_per_token" in values and "num_experts" in values:  # 1 <= k <= E
        values["num_experts_per_token"] = min(values["num_experts_per_token"], values["num_experts"])
    if "effective_experts" in values:  # k <= E_eff
        values["num_experts_per_token"] = min(values["num_experts_per_token"], values["effective_experts"])
    return values


@pytest.mark.parametrize("name", sorted(formulas.PUBLIC_FORMULAS))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_lambdified_twin_equals_numeric_formula(name, data):
    t = twin(name)
    drawn = _constrain({p: data.draw(_strategy(p), label=p) for p in t.symbolic_parameters})
    values = {p: np.float64(v) for p, v in drawn.items()}  # numpy scalars: x / 0 is inf, as on arrays
    with np.errstate(all="ignore"):
        numeric = t.function(**values)
    symbolic = t.lambdify()(*(values[p] for p in t.symbolic_parameters))
    np.testing.assert_allclose(np.asarray(symbolic, float), np.asarray(numeric, float), rtol=_rtol(name, values),
                               atol=0)


def _rtol(name, values):
    """1e-12, or what float64 rounding justifies where the formula cancels.

    distinct_experts_read is E_eff (1 - x^B) with x = 1 - k / E_eff: one rounding of x (relative
    eps = 2.2e-16) moves x^B by B eps x^B, and 1 - x^B divides that by 1 - x^B, which is at least
    (1 - x) B x^B; so the two evaluation orders may differ by eps E_eff / k per rounding (a few
    roundings: 8 eps E_eff / k); a stored example differed by 1.8e-12, over the former flat 1e-12."""
    if name == "distinct_experts_read":
        ratio = float(values["effective_experts"] / values["num_experts_per_token"])
        return max(1e-12, 8 * np.finfo(float).eps * ratio)
    return 1e-12


@settings(max_examples=25, deadline=None)
@given(batch=st.integers(1, 4096).map(float), context=st.integers(0, 500_000).map(float),
       window=st.sampled_from([1024.0, 4096.0, math.inf]))
def test_parity_on_arrays(batch, context, window):
    """The lambdified twin broadcasts over arrays like the numeric formula."""
    t = twin("attention_flops")
    contexts = np.array([0.0, context, 2 * context])
    args = dict(batch=batch, context=contexts, num_heads=32.0, score_value_width=256.0, num_global_layers=16.0,
                num_sliding_layers=16.0, sliding_window=window)
    symbolic = t.lambdify()(*(args[p] for p in t.symbolic_parameters))
    np.testing.assert_allclose(symbolic, t.function(**args), rtol=1e-12)
