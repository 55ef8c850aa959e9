"""Without sympy every entry point raises MissingExtraError naming the ``symbolic`` extra."""

import sys

import pytest

from roofline_decode import MissingExtraError, symbolic
from roofline_decode.symbolic import expressions as twins_module


@pytest.fixture
def no_sympy(monkeypatch):
    monkeypatch.setitem(sys.modules, "sympy", None)  # makes `import sympy` raise ImportError
    twins_module.symbol.cache_clear()
    yield
    twins_module.symbol.cache_clear()


def test_require_sympy_names_the_extra(no_sympy):
    with pytest.raises(MissingExtraError) as info:
        symbolic.require_sympy()
    assert "roofline_decode[symbolic]" in str(info.value) and "sympy" in str(info.value)
    assert isinstance(info.value, ImportError)


@pytest.mark.parametrize(
    "call",
    [lambda: symbolic.latex("memory_time"), lambda: symbolic.twin("step_time").expression(),
     lambda: symbolic.symbol("batch")],
)
def test_entry_points_raise_missing_extra(no_sympy, call):
    with pytest.raises(MissingExtraError, match="symbolic"):
        call()
