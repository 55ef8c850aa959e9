"""roofline_decode.testing: public strategies draw valid specs, honour their bounds and reject bad ones."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import Accelerator, Model, NumberFormat
from roofline_decode.errors import InvalidValueError
from roofline_decode.testing import KINDS, accelerators, grids, models, number_formats


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_every_kind_draws_a_valid_model_within_bounds(data):
    kind = data.draw(st.sampled_from(KINDS))
    model = data.draw(models(kinds=(kind,), max_layers=6, hidden_sizes=(256,), weight_formats=("q4_0",),
                             max_vocab=2000))
    assert isinstance(model, Model) and model.name == f"random-{kind}"
    assert model.num_layers <= 6 and model.hidden_size == 256 and model.vocab_size <= 2000
    assert model.weight_format.name == "q4_0"
    if kind in ("moe", "mla"):
        assert model.is_moe
    if kind == "mla":
        assert model.is_mla
    if kind == "hybrid":
        assert "recurrent" in model.layer_types and "full" in model.layer_types
    if kind == "sliding":
        assert model.sliding_window is not None


@settings(max_examples=40, deadline=None)
@given(accelerators(bandwidth=(1e11, 2e11), peak=(1e14, 2e14), capacity=(1e10, 2e10), precisions=("bf16",)))
def test_accelerators_honour_their_ranges(device):
    assert isinstance(device, Accelerator)
    assert 1e11 <= device.memory_bandwidth <= 2e11 and 1e10 <= device.memory_capacity <= 2e10
    assert list(device.peak_flops) == ["bf16"] and 1e14 <= device.peak_flops["bf16"] <= 2e14


@settings(max_examples=30, deadline=None)
@given(number_formats(["q4_0", "bf16"]), grids(max_batch=64, max_context=1000, max_points=3))
def test_formats_and_grids(fmt, grid):
    batch, context = grid
    assert isinstance(fmt, NumberFormat) and fmt.name in ("q4_0", "bf16")
    assert batch.shape[1] == 1 and context.shape[0] == 1 and batch.size <= 3 and context.size <= 3
    assert (batch >= 1).all() and (batch <= 64).all() and (context >= 0).all() and (context <= 1000).all()
    assert np.broadcast(batch, context).shape == (batch.size, context.size)


@pytest.mark.parametrize("call", [
    lambda: models(kinds=("transformer",)),
    lambda: models(kinds=()),
    lambda: models(max_layers=1),
    lambda: accelerators(bandwidth=(2e11, 1e11)),
    lambda: number_formats([]),
    lambda: grids(max_batch=0),
])
def test_bad_bounds_are_our_error(call):
    @settings(max_examples=1, database=None, deadline=None)
    @given(st.data())
    def draw(data):
        data.draw(call())  # a bound is checked when the strategy is built or first drawn

    with pytest.raises(InvalidValueError):
        draw()


def test_the_module_exports_its_strategies_and_constants_only():
    import roofline_decode.testing as testing
    from hypothesis.strategies import SearchStrategy

    namespace: dict = {}
    exec("from roofline_decode.testing import *", namespace)  # noqa: S102 - what a star import brings
    assert sorted(set(namespace) - {"__builtins__"}) == sorted(testing.__all__) == dir(testing)
    for name in ("Any", "np", "Model", "Accelerator", "st", "Sequence", "InvalidValueError"):
        assert name not in testing.__all__ and name not in dir(testing)
    for name in testing.__all__:
        value = getattr(testing, name)
        if name.isupper():  # a constant: the names a strategy draws from
            assert isinstance(value, tuple) and all(isinstance(v, str) for v in value), name
        else:  # a strategy, or a function that returns one
            assert isinstance(value, SearchStrategy) or isinstance(value(), SearchStrategy), name
