"""The Parallel layout spec: its own arithmetic (positive degrees, moe_tp x ep = tp x dp), text, refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roofline_decode import InvalidValueError, Parallel


def test_defaults_and_the_aiconfigurator_convention():
    one = Parallel()
    assert (one.tp, one.pp, one.ep, one.attention_dp, one.moe_tp, one.num_devices) == (1, 1, 1, 1, 1, 1)
    # AIConfigurator/TRT-LLM: GPUs per stage = tp x attention_dp = moe_tp x ep; devices = tp x dp x pp
    layout = Parallel(tp=2, dp=4, ep=4, pp=2)
    assert (layout.moe_tp, layout.devices_per_stage, layout.num_devices) == (2, 8, 16)
    assert Parallel(tp=8).moe_tp == 8 and Parallel(tp=8, ep=8).moe_tp == 1
    assert Parallel(attention_dp=8, ep=8) == Parallel(dp=8, ep=8)
    assert Parallel(dp=8).dp == 8


@pytest.mark.parametrize("text, expected", [
    ("tp8ep8dp8", dict(tp=8, ep=8, attention_dp=8, moe_tp=8)),
    ("tp4 pp2", dict(tp=4, pp=2)),
    ("dp8-ep8", dict(attention_dp=8, ep=8, moe_tp=1)),
    ("tp=2,moe_tp=2,ep=4,dp=4", dict(tp=2, moe_tp=2, ep=4, attention_dp=4)),
    ("TP8 EP8", dict(tp=8, ep=8, moe_tp=1)),
])
def test_parse(text, expected):
    assert Parallel.parse(text) == Parallel(**expected)


@pytest.mark.parametrize("layout, text", [
    (Parallel(), "tp1"), (Parallel(tp=8), "tp8"), (Parallel(dp=8, ep=8), "dp8 ep8"),
    (Parallel(tp=4, pp=2), "tp4 pp2"), (Parallel(tp=4, ep=2, moe_tp=2), "tp4 ep2"),
    (Parallel(tp=2, dp=4, ep=4, moe_tp=2), "tp2 dp4 ep4"),
])
def test_str_is_readable_and_parses_back(layout, text):
    assert str(layout) == text
    assert Parallel.parse(str(layout)) == layout


@given(tp=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([1, 2, 4, 8]), pp=st.sampled_from([1, 2, 3]),
       ep_index=st.integers(0, 6))
def test_every_valid_layout_round_trips_through_its_text(tp, dp, pp, ep_index):
    stage = tp * dp
    divisors = [e for e in range(1, stage + 1) if stage % e == 0]
    ep = divisors[ep_index % len(divisors)]
    layout = Parallel(tp=tp, attention_dp=dp, pp=pp, ep=ep)
    assert layout.moe_tp * layout.ep == layout.tp * layout.attention_dp
    assert layout.num_devices == tp * dp * pp
    assert Parallel.parse(str(layout)) == layout


@pytest.mark.parametrize("degrees, field", [
    (dict(tp=0), "Parallel.tp"), (dict(pp=-1), "Parallel.pp"), (dict(tp="8"), "Parallel.tp"),
    (dict(tp=2.5), "Parallel.tp"), (dict(tp=True), "Parallel.tp"), (dict(tp=8, ep=3), "Parallel.ep"), (dict(tp=8, ep=16), "Parallel.ep"),
    (dict(tp=8, ep=2, moe_tp=2), "Parallel.moe_tp"), (dict(moe_tp=0), "Parallel.moe_tp"),
    (dict(sp=2), "Parallel.sp"), (dict(tp=2**21), "Parallel.tp"),
])
def test_refusals_name_the_field(degrees, field):
    with pytest.raises(InvalidValueError) as info:
        Parallel(**degrees)
    assert info.value.field == field


@pytest.mark.parametrize("text", ["", "xyz", "tp8 tp8", "tp", "tp8 zz2", 8])
def test_parse_refuses_what_is_not_a_layout(text):
    with pytest.raises(InvalidValueError) as info:
        Parallel.parse(text)
    assert info.value.field == "parallel"


def test_whole_numbers_of_other_types_are_degrees():
    import numpy as np

    # a table column (the AIConfigurator CSV read by pandas) holds 8.0; numpy holds int64
    assert Parallel(tp=np.int64(8), ep=8.0, dp=np.float64(2)) == Parallel(tp=8, ep=8, attention_dp=2)


def test_frozen():
    with pytest.raises(InvalidValueError):
        Parallel().tp = 2  # type: ignore[misc]
    assert Parallel(tp=2).replace(tp=4) == Parallel(tp=4)
