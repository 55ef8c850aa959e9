"""roofline_decode._json_limits: JSON from untrusted files within size, depth and digit limits."""

from __future__ import annotations

import math
import os

import pytest

from roofline_decode._json_limits import (
    MAX_DEPTH,
    JSONProblem,
    first_non_finite,
    load_file,
    loads,
    read_limited,
    shown,
)


def test_nesting_is_bounded_at_max_depth():
    assert loads("[" * MAX_DEPTH + "]" * MAX_DEPTH) is not None
    for depth in (MAX_DEPTH + 1, 5000):
        with pytest.raises(JSONProblem, match="nested too deeply") as info:
            loads('{"a": ' + "[" * depth + "]" * depth + "}")
        assert info.value.where == "(json)" and not info.value.syntax
    with pytest.raises(JSONProblem, match=r"more than 3 levels"):
        loads('{"a": {"b": [[1]]}}', max_depth=3)


def test_long_integers_are_refused_before_int_parses_them():
    assert loads("9" * 4300) == int("9" * 4300)
    with pytest.raises(JSONProblem, match=r"an integer of more than 4300 digits \(5000\)"):
        loads('{"n": -' + "9" * 5000 + "}")


def test_syntax_errors_are_marked_as_such():
    with pytest.raises(JSONProblem, match="not valid JSON: Expecting value at line 1 column 1") as info:
        loads("nope")
    assert info.value.syntax
    with pytest.raises(JSONProblem, match=r"not UTF-8 text") as info:
        loads(b'{"a": "\xff"}')
    assert info.value.where == "(file)"


def test_file_size_is_bounded_before_reading_on(tmp_path):
    path = tmp_path / "big.json"
    path.write_text("[" + "1," * 100 + "1]")
    assert len(load_file(path)) == 101
    with pytest.raises(JSONProblem, match=r"larger than 100 bytes") as info:
        load_file(path, max_bytes=100)
    assert info.value.where == "(file)"
    if os.path.exists("/dev/zero"):  # endless: read no further than the limit
        with pytest.raises(JSONProblem, match="larger than 1,000 bytes"):
            read_limited("/dev/zero", 1000)
    with pytest.raises(JSONProblem, match="cannot read"):
        load_file(tmp_path / "missing.json")


def test_non_finite_numbers_parse_and_are_found_by_path():
    data = loads('{"rate": Infinity, "fit": {"beta": [1, 2, NaN]}, "big": 1e400}')
    assert data["rate"] == math.inf
    where, value = first_non_finite(data)
    assert where == "rate" and value == math.inf
    where, value = first_non_finite(data["fit"], "fit")
    assert where == "fit.beta[2]" and math.isnan(value)
    assert first_non_finite({"a": [1, 2.5, "inf"], "b": True}) is None


def test_shown_keeps_messages_short():
    assert "..." in shown("x" * 10**6) and len(shown("x" * 10**6)) < 80
    assert shown(10**5000) == "<an integer of about 5001 digits>"
    assert shown([[[[[1]]]]]) == "[[[[...]]]]"
    assert shown(-3) == "-3" and shown(True) == "True"
