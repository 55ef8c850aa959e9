"""Meta-tests: every public formula has a twin, every parameter a glossary entry."""

import inspect
import subprocess
import sys

import pytest
import sympy

from roofline_decode import UnknownIdError, formulas
from roofline_decode.symbolic import GLOSSARY, GlossaryError, Twin, entry, symbol, twin, twins
from roofline_decode.symbolic.expressions import canonical_names


def test_every_public_formula_has_a_twin():
    assert set(twins()) == set(formulas.PUBLIC_FORMULAS)
    for name, t in twins().items():
        assert t.function is formulas.PUBLIC_FORMULAS[name]  # the same function, not a copy


@pytest.mark.parametrize("name", sorted(formulas.PUBLIC_FORMULAS))
def test_every_parameter_and_formula_has_a_glossary_entry(name):
    function = formulas.PUBLIC_FORMULAS[name]
    missing = [p for p in (name, *inspect.signature(function).parameters) if p not in GLOSSARY]
    assert not missing, (
        f"formula {name}: add glossary entries for {missing} in src/roofline_decode/symbolic/glossary.py"
    )


@pytest.mark.parametrize("name", sorted(formulas.PUBLIC_FORMULAS))
def test_every_twin_builds_an_expression_in_its_own_symbols(name):
    t = twin(name)
    result = t.expression()
    assert result.lhs == symbol(name)
    own = {symbol(p) for p in t.symbolic_parameters}
    assert result.rhs.free_symbols <= own
    assert isinstance(result.rhs, sympy.Basic)


def test_a_formula_without_glossary_entries_is_refused(monkeypatch):
    def shiny_new_formula(batch, frobnication_factor):
        return batch * frobnication_factor

    monkeypatch.setitem(formulas.PUBLIC_FORMULAS, "shiny_new_formula", shiny_new_formula)
    with pytest.raises(GlossaryError) as info:
        twin("shiny_new_formula").expression()
    message = str(info.value)
    assert "shiny_new_formula" in message and "glossary.py" in message


def test_unknown_names_raise_library_errors():
    with pytest.raises(UnknownIdError, match="memory_tme"):
        twin("memory_tme")
    with pytest.raises(GlossaryError, match="did_not_exist"):
        entry("did_not_exist")


def test_aliases_share_one_symbol_and_resolve_to_the_first_name():
    assert symbol("arrival_rate") == symbol("requests_per_second")
    assert symbol("usable_bytes") == symbol("usable_memory")
    assert canonical_names()[symbol("concurrency")] == "batch"
    symbols = {}
    for name, e in GLOSSARY.items():
        other = symbols.setdefault(e.symbol, e)
        assert (other.latex, other.unit, other.assumptions) == (e.latex, e.unit, e.assumptions), name


def test_glossary_entries_are_complete():
    units = {"1", "tokens", "B", "B/s", "FLOP", "FLOP/s", "FLOP/B", "s", "1/s",
             "J", "J/bit", "J/FLOP", "W", "$", "$/h"}  # energy and cost (formulas/energy.py)
    for name, e in GLOSSARY.items():
        assert e.name == name and e.symbol and e.latex and e.meaning
        assert e.unit in units, f"{name}: unit {e.unit!r} not one of {sorted(units)}"


def test_switches_keep_their_default_and_can_be_fixed():
    t = twin("required_tier_bandwidth")
    assert "overlapped" in t.parameters and "overlapped" not in t.symbolic_parameters
    serial, overlapped = t.expression(), t.expression(overlapped=True)
    assert overlapped.rhs == symbol("tier_bytes") / symbol("target_step_time")
    assert serial.rhs != overlapped.rhs


def test_fixing_a_parameter_selects_the_python_branch():
    compressed = twin("mla_matrix_parameters").expression().rhs
    plain = twin("mla_matrix_parameters").expression(q_lora_rank=0).rhs
    d, h, nope, rope = (symbol(n) for n in ("hidden_size", "num_heads", "qk_nope_head_dim", "qk_rope_head_dim"))
    assert sympy.simplify(plain - compressed.subs(symbol("q_lora_rank"), 0) - d * h * (nope + rope)) == 0
    with pytest.raises(Exception, match="not_a_parameter"):
        twin("memory_time").expression(not_a_parameter=1)


def test_importing_the_symbolic_layer_does_not_import_sympy():
    code = "import sys, roofline_decode.symbolic; assert 'sympy' not in sys.modules, 'sympy imported eagerly'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_spelled_out_export_list_names_every_formula():
    # formulas.__all__ is a literal (mypy reads re-exports from it); it must match the registry
    assert set(formulas.__all__) == {*formulas.PUBLIC_FORMULAS, "PUBLIC_FORMULAS"}
    assert len(formulas.__all__) == len(set(formulas.__all__))
