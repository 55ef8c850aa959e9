"""One default per idea across Python, the CLI and the plots (issue 30 item 4).

The context of a decode step defaults to :data:`~roofline_decode.floors.grid.DEFAULT_CONTEXT`
wherever a function or command takes one and the caller gives none; a prefix cached before a
prefill is another quantity and defaults to 0.
"""

from __future__ import annotations

import inspect

import pytest

import roofline_decode as rd
from roofline_decode.cli import build_parser, main
from roofline_decode.floors.grid import DEFAULT_CONTEXT
from roofline_decode.measure import Calibration


def _public_callables():
    """Every public function of the top level, the floors, planning and plotting (and the
    calibrated prediction), with its qualified name."""
    import roofline_decode.floors as floors
    import roofline_decode.planning as planning
    import roofline_decode.plotting as plotting

    seen = {}
    for module in (rd, floors, planning, plotting):
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isfunction(value):
                seen[f"{value.__module__}.{value.__qualname__}"] = value
    seen["Calibration.predict"] = Calibration.predict
    return seen


def test_every_context_parameter_defaults_to_the_one_default():
    defaults = {}
    for name, function in _public_callables().items():
        parameter = inspect.signature(function).parameters.get("context")
        if parameter is not None and parameter.default not in (inspect.Parameter.empty, None):
            defaults[name] = parameter.default
    assert DEFAULT_CONTEXT == 4096
    # the estimators and the views that take one context: all of them, one value
    for expected in ("floors.decode.decode_floor", "floors.sweeps.sweep", "floors.speculative.speculative_floor",
                     "floors.parallel.tensor_parallel_floor", "floors.parallel.pipeline_parallel_floor",
                     "planning.tiers.offload_floor", "planning.tiers.can_tier_feed", "Calibration.predict",
                     "plotting.request.speculative_plot", "plotting.ridge.ridge_plot", "plotting.frontier.frontier_plot"):
        assert any(key.endswith(expected) for key in defaults), expected
    assert {name: value for name, value in defaults.items() if value != DEFAULT_CONTEXT} == {}


def test_a_cached_prefix_defaults_to_zero_everywhere():
    for name, function in _public_callables().items():
        for parameter in ("cached", "prefill_context", "shared_prefix"):
            found = inspect.signature(function).parameters.get(parameter)
            if found is not None:
                assert found.default == 0, (name, parameter)


@pytest.mark.parametrize("argv", [["floor", "--model", "m", "--gpu", "g"], ["predict", "--calibration", "c.json",
                                                                             "--model", "m"]])
def test_the_cli_defaults_to_the_same_context(argv):
    assert build_parser(argv).parse_args(argv).context == [DEFAULT_CONTEXT]


class _Called(Exception):
    pass


@pytest.mark.parametrize("kind, function", [("speculative", "speculative_plot"), ("batch", "batch_plot"),
                                            ("frontier", "frontier_plot")])
def test_plots_of_one_context_take_the_same_default_from_the_cli(monkeypatch, tmp_path, kind, function):
    from roofline_decode import plotting

    seen = {}

    def record(*args, **kwargs):
        seen.update(kwargs)
        raise _Called

    monkeypatch.setattr(plotting, function, record)
    with pytest.raises(_Called):
        main(["plot", kind, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--draft", "llama-3.2-1b",
              "-o", str(tmp_path / "p.png")] if kind == "speculative" else
             ["plot", kind, "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "-o", str(tmp_path / "p.png")])
    assert seen["context"] == DEFAULT_CONTEXT


def test_the_old_default_stays_reachable():
    """context=0 is the weights-only step (the fastest any context allows): the default before 0.2."""
    at_zero = rd.decode_floor("llama-3.1-8b", "h100-sxm", 1, 0)
    default = rd.decode_floor("llama-3.1-8b", "h100-sxm")
    assert float(at_zero.kv_read_bytes) == 0 and float(default.context) == DEFAULT_CONTEXT
    assert float(default.step_time_s) > float(at_zero.step_time_s)
