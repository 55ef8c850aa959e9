"""The planning formulas are pure arithmetic: they run on sympy symbols and agree with numpy."""

import inspect

import numpy as np
import pytest

from roofline_decode import formulas as f

sympy = pytest.importorskip("sympy")

NEW = ["usable_memory", "batch_capacity", "context_capacity", "ring_all_reduce_time",
       "tensor_parallel_communication_time", "kv_head_share", "sharded_bytes", "pipeline_step_time",
       "requests_per_second", "littles_law_concurrency", "request_rate_at_concurrency", "tiered_memory_time",
       "overlapped_tiered_memory_time", "required_tier_bandwidth"]


@pytest.mark.parametrize("name", NEW)
def test_registered_and_symbolic(name):
    func = f.PUBLIC_FORMULAS[name]
    params = [p for p in inspect.signature(func).parameters.values() if p.name != "overlapped"]
    symbols = [sympy.Symbol(p.name, positive=True) for p in params]
    expr = func(*symbols)
    assert isinstance(expr, sympy.Basic)
    values = {s: v for s, v in zip(symbols, np.linspace(2.0, 9.0, len(symbols)))}
    numeric = func(*values.values())
    assert float(expr.subs(values)) == pytest.approx(float(numeric), rel=1e-12)
