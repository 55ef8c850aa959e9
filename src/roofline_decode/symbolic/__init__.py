r"""Symbolic twins of the formulas, LaTeX, and closed forms derived with sympy.

Every public formula is evaluated on sympy symbols by calling the *same* function the numeric
path calls (DESIGN.md §2); symbols, units and meanings come from one glossary table
(:data:`GLOSSARY`).  sympy is imported on first use: without it, every entry point raises
:class:`~roofline_decode.MissingExtraError` naming the ``symbolic`` extra.

Examples
--------
>>> from roofline_decode import symbolic
>>> print(symbolic.latex("memory_time"))
T_{mem} = \frac{Q}{BW}
>>> symbolic.twin("critical_batch").expression()   # renders as LaTeX in Jupyter (_repr_latex_)
SymbolicResult(name='critical_batch', lhs=B_star, rhs=Piecewise((Q_0/(BW*(f_seq/F - q_seq/BW)), f_seq/F - q_seq/BW > 0), (oo, True)))
>>> round(float(symbolic.closed_form("critical_batch_dense").evaluate("llama-3.1-8b", "h100-sxm", context=0)), 1)
296.2
"""

from __future__ import annotations

from ..errors import UnknownIdError
from ._sympy import require_sympy
from .derived import (
    CLOSED_FORMS,
    ClosedForm,
    closed_form,
    closed_forms,
    compute_bound_context_form,
    compute_bound_reachable,
    critical_batch_form,
    crossover_context_form,
    intensity_limit_form,
    max_batch_form,
    model_values,
    per_sequence_terms,
    required_bandwidth_form,
    step_expressions,
)
from .glossary import GLOSSARY, Entry, GlossaryError, entry
from .expressions import SymbolicResult, Twin, symbol, symbols_for, twin, twins

__all__ = [
    "CLOSED_FORMS", "ClosedForm", "Entry", "GLOSSARY", "GlossaryError", "SymbolicResult", "Twin",
    "closed_form", "closed_forms", "compute_bound_context_form", "compute_bound_reachable", "critical_batch_form", "crossover_context_form",
    "entry", "expression", "intensity_limit_form", "latex", "max_batch_form", "model_values",
    "per_sequence_terms", "require_sympy", "required_bandwidth_form", "step_expressions", "symbol",
    "symbols_for", "twin", "twins",
]


def expression(name: str) -> SymbolicResult:
    """The symbolic result of a public formula, or of a closed form by its key."""
    if name in twins():
        return twin(name).expression()
    if name in CLOSED_FORMS:
        form = closed_form(name)
        return form.short or form.expression
    raise UnknownIdError("formula or closed form", name, [*twins(), *CLOSED_FORMS])


def latex(name: str) -> str:
    """``lhs = rhs`` in LaTeX for a public formula or a closed form (no dollar signs).

    Examples
    --------
    >>> latex("kv_bytes_per_token_per_layer")
    'm_{kv} = 2 H_{kv} b_{kv} d_{h}'
    """
    return expression(name).latex()
