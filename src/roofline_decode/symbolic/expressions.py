"""Symbolic twins: every public formula evaluated on sympy symbols.

A twin is not a second copy of a formula: it calls the very function of
:data:`roofline_decode.formulas.PUBLIC_FORMULAS` that the numeric path calls, with one sympy
symbol per parameter.  The symbols come from :data:`~roofline_decode.symbolic.glossary.GLOSSARY`
by parameter name (introspected from the function's signature), so a formula added to the
registry gets its twin automatically, and one whose parameters lack a glossary entry fails
loudly (:class:`~roofline_decode.symbolic.glossary.GlossaryError`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from numpy.typing import ArrayLike

from .._typing import ArrayOrExpr, FloatArray, SympyExpr
from ..errors import UnknownIdError
from ._sympy import require_sympy
from .glossary import GLOSSARY, entry

__all__ = ["SymbolicResult", "Twin", "symbol", "symbols_for", "latex_names", "twins", "twin"]


@lru_cache(maxsize=None)
def symbol(name: str) -> SympyExpr:
    """The sympy Symbol of a glossary name (one object per name, with its assumptions)."""
    sympy = require_sympy()
    e = entry(name)
    return sympy.Symbol(e.symbol, **e.assumptions)


def symbols_for(names: Iterable[str]) -> dict[str, SympyExpr]:
    """``{name: Symbol}`` for several glossary names."""
    return {name: symbol(name) for name in names}


def canonical_names() -> dict[SympyExpr, str]:
    """``{Symbol: name}``; for aliases (several names, one symbol) the first name in the table."""
    names: dict[SympyExpr, str] = {}
    for name in GLOSSARY:
        names.setdefault(symbol(name), name)
    return names


def latex_names() -> dict[SympyExpr, str]:
    """``{Symbol: LaTeX}`` for every glossary entry, for ``sympy.latex(symbol_names=...)``."""
    return {symbol(name): e.latex for name, e in GLOSSARY.items()}


@lru_cache(maxsize=512)
def _compile(rhs: SympyExpr, parameters: tuple[str, ...]) -> Callable[..., Any]:
    sympy = require_sympy()
    compiled: Callable[..., Any] = sympy.lambdify([symbol(n) for n in parameters], rhs, modules="numpy")
    return compiled


@dataclass(frozen=True)
class SymbolicResult:
    """An equation ``lhs = rhs`` in glossary symbols; renders as LaTeX in Jupyter.

    Attributes
    ----------
    name : str
        Glossary name of the quantity (``"memory_time"``, ``"critical_batch"``, ...).
    lhs : sympy.Symbol
        The quantity's symbol.
    rhs : sympy.Expr
        Its expression in glossary symbols.
    """

    name: str
    lhs: SympyExpr
    rhs: SympyExpr

    @property
    def parameters(self) -> tuple[str, ...]:
        """Glossary names of the symbols the expression depends on, sorted."""
        by_symbol = canonical_names()
        return tuple(sorted(by_symbol[s] for s in self.rhs.free_symbols if s in by_symbol))

    def latex(self) -> str:
        """``lhs = rhs`` as a LaTeX string (no dollar signs)."""
        sympy = require_sympy()
        names = latex_names()
        return f"{sympy.latex(self.lhs, symbol_names=names)} = {sympy.latex(self.rhs, symbol_names=names)}"

    def _repr_latex_(self) -> str:
        return f"$\\displaystyle {self.latex()}$"

    def __str__(self) -> str:
        return f"{self.lhs} = {self.rhs}"

    def lambdify(self, parameters: Iterable[str] | None = None) -> Callable[..., FloatArray]:
        """A numpy function of the glossary names (positional, in ``parameters`` order).

        Arguments become float arrays, so a zero denominator gives ±inf like the numeric
        formulas (not ``ZeroDivisionError``); the warnings of branches that ``Piecewise``
        discards are silenced; the result has the broadcast shape of all arguments.
        """
        import numpy as np

        names = tuple(parameters) if parameters is not None else self.parameters
        compiled = _compile(self.rhs, names)

        def evaluate(*args: ArrayLike) -> FloatArray:
            arrays = [np.asarray(a, dtype=float) for a in args]
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                result = np.asarray(compiled(*arrays), dtype=float)
            shape = np.broadcast_shapes(result.shape, *(a.shape for a in arrays))
            return result if result.shape == shape else np.array(np.broadcast_to(result, shape))

        evaluate.__doc__ = f"{self.lhs} = {self.rhs}; arguments: {', '.join(names)}"
        return evaluate

    def evaluate(self, values: Mapping[str, ArrayLike] | None = None, **kwargs: ArrayLike) -> FloatArray:
        """Evaluate numerically with numpy, giving each glossary name a number or an array.

        Values the expression does not use are allowed; the result has the broadcast shape
        of every value given.

        Examples
        --------
        >>> from roofline_decode import symbolic
        >>> float(symbolic.twin("ridge_point").expression().evaluate(peak_flops=989.5e12, memory_bandwidth=3.35e12))
        295.3731343283582
        """
        given = {**(values or {}), **kwargs}
        missing = [n for n in self.parameters if n not in given]
        if missing:
            from ..errors import InvalidValueError

            raise InvalidValueError(
                ", ".join(missing), "missing",
                f"a number or an array for {'each of ' if len(missing) > 1 else ''}{', '.join(missing)} "
                f"(evaluate(..., {missing[0]}=...))",
            )
        import numpy as np

        result = self.lambdify()(*(given[n] for n in self.parameters))
        shape = np.broadcast_shapes(result.shape, *(np.shape(v) for v in given.values()))
        return result if result.shape == shape else np.array(np.broadcast_to(result, shape))


@dataclass(frozen=True)
class Twin:
    """The symbolic twin of one public formula: the same function, called on symbols."""

    name: str
    function: Callable[..., ArrayOrExpr]

    @property
    def parameters(self) -> tuple[str, ...]:
        """The function's parameter names, in signature order."""
        return tuple(inspect.signature(self.function).parameters)

    @property
    def symbolic_parameters(self) -> tuple[str, ...]:
        """The parameters that become symbols: all but switches (which keep their default)."""
        return tuple(p for p in self.parameters if not entry(p, where=f"formula {self.name}").is_switch)

    def symbols(self) -> dict[str, SympyExpr]:
        """``{parameter: Symbol}`` from the glossary; :class:`GlossaryError` names a missing one."""
        for name in (self.name, *self.parameters):
            entry(name, where=f"formula {self.name}")
        return symbols_for(self.symbolic_parameters)

    def expression(self, **fixed: Any) -> SymbolicResult:
        """Call the formula on its symbols: ``Q = f(symbols)``.

        ``fixed`` replaces symbols by values before the call, which selects a Python-level
        branch: ``twin("mla_matrix_parameters").expression(q_lora_rank=0)`` is the uncompressed
        query; ``twin("required_tier_bandwidth").expression(overlapped=True)`` the overlapped form.
        """
        unknown = sorted(set(fixed) - set(self.parameters))
        if unknown:
            from ..errors import InvalidValueError

            raise InvalidValueError("fixed", unknown, f"parameters of {self.name}: {', '.join(self.parameters)}")
        arguments = {**self.symbols(), **fixed}
        return SymbolicResult(self.name, symbol(self.name), self.function(**arguments))

    def lambdify(self) -> Callable[..., FloatArray]:
        """A numpy function of :attr:`symbolic_parameters`, in signature order."""
        return self.expression().lambdify(self.symbolic_parameters)

    def latex(self) -> str:
        return self.expression().latex()


def twins() -> dict[str, Twin]:
    """``{name: Twin}`` for every function in :data:`roofline_decode.formulas.PUBLIC_FORMULAS`.

    Read at call time, so formulas registered later get twins too.

    Examples
    --------
    >>> from roofline_decode import symbolic
    >>> print(symbolic.twin("kv_bytes_per_token_per_layer").expression())
    m_kv = 2*H_kv*b_kv*d_h
    """
    from ..formulas import PUBLIC_FORMULAS

    return {name: Twin(name, function) for name, function in PUBLIC_FORMULAS.items()}


def twin(name: str) -> Twin:
    """The twin of one public formula; :class:`UnknownIdError` lists the known names."""
    registry = twins()
    if name not in registry:
        raise UnknownIdError("formula", name, registry)
    return registry[name]
