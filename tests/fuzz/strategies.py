"""Strategies and checks shared by the fuzz suite (issue 12, item 6).

Every fuzz test feeds generated, mostly bad, input to one public entry point and asserts the
contract of docs/inputs.md: either a :class:`~roofline_decode.errors.RooflineError` comes out,
or the answer holds finite, positive numbers wherever the API promises them.
"""

from __future__ import annotations

import contextlib
import copy
import io
import math
from collections import Counter
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

from roofline_decode.errors import RooflineError

#: Inputs generated per entry point in this run (printed in the terminal summary).
INPUTS: Counter = Counter()

_ODD = object()

#: Numbers of every kind a user (or a slip) may pass: good, negative, huge, tiny, NaN, inf,
#: booleans, numpy scalars, Fractions and Python ints beyond any float.
numbers = st.one_of(
    st.integers(-3, 5000),
    st.integers(-(2**70), 2**70),
    st.sampled_from([10**400, -(10**400), 2**53, 2**53 + 1, 2**63, 2**64]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(min_value=1.0, max_value=1e6),
    st.sampled_from([0, 0.0, -0.0, 5e-324, 1e-300, 1e300, 1e308, math.inf, -math.inf, math.nan, 0.5, 1.0]),
    st.booleans(),
    st.builds(np.float32, st.floats(width=32, allow_nan=True)),
    st.builds(np.int64, st.integers(-(2**62), 2**62)),
    st.builds(Fraction, st.integers(-100, 100), st.integers(1, 100)),
)

#: Everything else: None, text, complex numbers, containers, arrays (ragged ones too), objects.
others = st.one_of(
    st.none(),
    st.text(max_size=6),
    st.sampled_from(["", "1", "8", "1e3", "nan", "inf", "-1", "4k", "\x00", "a\nb", "x" * 300]),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.lists(numbers, max_size=4),
    st.lists(st.lists(st.integers(1, 9), max_size=3), max_size=3),
    st.builds(lambda a: np.asarray(a), st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=4)),
    st.builds(lambda a: np.asarray(a, dtype=complex), st.lists(st.floats(-5, 5), min_size=1, max_size=3)),
    st.just(_ODD),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.tuples(st.integers(), st.integers()),
)

anything = st.one_of(numbers, numbers, others)

#: Mostly sensible batch/context values, with every kind of bad one mixed in.
grid_values = st.one_of(
    st.integers(0, 100_000),
    st.lists(st.integers(1, 10_000), min_size=1, max_size=4),
    st.floats(0.0, 1e7),
    anything,
)


def edit_json(root: Any, path: tuple[Any, ...], kind: str, value: Any) -> None:
    """One edit of a parsed JSON document at ``path`` (keys and indices): ``"set"`` a value,
    ``"delete"`` the entry, ``"empty"`` it, or (any other kind) append to a list there.  A path
    an earlier edit removed raises KeyError, IndexError or TypeError."""
    *parents, last = path
    node = root
    for key in parents:
        node = node[key]
    if kind == "set":
        node[last] = copy.deepcopy(value)
    elif kind == "delete":
        node.pop(last)
    elif kind == "empty":
        node[last] = [] if isinstance(node[last], list) else {}
    elif isinstance(node[last], list):
        node[last] = node[last] + [copy.deepcopy(value)]


def finite_positive(name: str, value: Any) -> None:
    """Every element of ``value`` is a finite number > 0."""
    array = np.asarray(value, dtype=float)
    assert np.all(np.isfinite(array)), f"{name} is not finite: {value!r}"
    assert np.all(array > 0), f"{name} is not positive: {value!r}"


def finite_non_negative(name: str, value: Any) -> None:
    array = np.asarray(value, dtype=float)
    assert np.all(np.isfinite(array)) and np.all(array >= 0), f"{name} is not finite >= 0: {value!r}"


def outcome(entry: str, call: Callable[[], Any]) -> Any:
    """``call()``; None when it raised a RooflineError (the contract), re-raising anything else.

    Warnings are errors here (numpy overflow, invalid value): a clean answer emits none.
    """
    INPUTS[entry] += 1
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            return call()
        except RooflineError:
            return None


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    """The CLI in-process: (exit code, stdout, stderr); SystemExit codes are returned."""
    from roofline_decode.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    return code, out.getvalue(), err.getvalue()
