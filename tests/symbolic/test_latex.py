"""LaTeX strings and Jupyter rendering of symbolic results."""

import pytest

from roofline_decode import InvalidValueError, UnknownIdError
from roofline_decode.symbolic import GLOSSARY, expression, latex, twin, twins


@pytest.mark.parametrize(
    "name, expected",
    [
        ("memory_time", r"T_{mem} = \frac{Q}{BW}"),
        ("ridge_point", r"I_{ridge} = \frac{F}{BW}"),
        ("kv_bytes_per_token_per_layer", r"m_{kv} = 2 H_{kv} b_{kv} d_{h}"),
        ("mla_kv_bytes_per_token_per_layer", r"m_{kv}^{MLA} = b_{kv} \left(d_{rope} + r_{kv}\right)"),
        ("expected_experts_touched", r"U = E \left(1 - \left(1 - \frac{k}{E}\right)^{B}\right)"),
        ("attended_positions", r"N_{pos} = L_{global} T + L_{sliding} \min\left(T, W\right)"),
        ("step_time", r"T_{step} = \max\left(T_{comp}, T_{mem}\right)"),
    ],
)
def test_latex_of_formulas(name, expected):
    assert latex(name) == expected


@pytest.mark.parametrize("name", sorted(twins()))
def test_every_twin_renders_in_jupyter_with_its_glossary_symbols(name):
    result = twin(name).expression()
    rendered = result._repr_latex_()
    assert rendered.startswith("$\\displaystyle ") and rendered.endswith("$")
    assert rendered[len("$\\displaystyle "):-1] == result.latex()
    assert result.latex().startswith(GLOSSARY[name].latex + " = ")
    for parameter in result.parameters:  # every symbol printed with its glossary LaTeX
        assert GLOSSARY[parameter].latex in result.latex()


def test_latex_of_closed_forms_and_unknown_names():
    assert latex("intensity_limit") == r"I_{\infty} = \frac{f_{seq}}{q_{seq}}"
    assert latex("crossover_context").startswith(r"T_{\times} = \begin{cases}")
    assert expression("max_batch").name == "max_batch"
    with pytest.raises(UnknownIdError, match="memory_tim"):
        latex("memory_tim")


def test_evaluate_names_missing_values():
    result = twin("memory_time").expression()
    assert float(result.evaluate(bytes_moved=20e9, memory_bandwidth=1e12)) == pytest.approx(0.02)
    with pytest.raises(InvalidValueError, match="memory_bandwidth"):
        result.evaluate(bytes_moved=20e9)
