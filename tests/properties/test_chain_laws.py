"""Laws of the serial chain as a third constraint of decode_floor."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import decode_floor
from roofline_decode.specs.latency import LatencyProfile

from .strategies import accelerators, models


@settings(max_examples=40, deadline=None)
@given(model=models(), device=accelerators(), batch=st.integers(1, 512), context=st.integers(0, 32768),
       t_op=st.floats(0, 1e-4), ops=st.floats(0, 40), t0=st.floats(0, 1e-3))
def test_a_profile_never_lowers_the_floor(model, device, batch, context, t_op, ops, t0):
    strict = decode_floor(model, device, batch=batch, context=context)
    profile = LatencyProfile(name="p", operation_latency=t_op, operations_per_layer=ops, step_latency=t0)
    timed = decode_floor(model, device, batch=batch, context=context, latency=profile)
    assert float(timed.step_time_s) >= float(strict.step_time_s)
    assert float(timed.step_time_s) == pytest.approx(max(float(strict.step_time_s), float(timed.chain_time_s)))
    assert float(timed.critical_batch) == float(strict.critical_batch) or np.isnan(float(strict.critical_batch))


