"""decode_floor runs on every bundled model, MoE critical batch (bisection) included."""

from __future__ import annotations

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import decode_floor


@pytest.mark.parametrize("model_id", rd.list_models())
def test_decode_floor_on_every_bundled_model(model_id):
    r = decode_floor(model_id, "h100-sxm", batch=[[1], [16], [256]], context=[0, 2048, 32768])
    assert r.shape == (3, 3)
    for name in ("weight_bytes", "kv_write_bytes", "bytes_total", "flops", "step_time_s", "tokens_per_s"):
        value = getattr(r, name)
        assert np.all(np.isfinite(value)) and np.all(value > 0), name
    # at context 0 only a recurrent state is read (DESIGN.md §4b); none for attention-only models
    state = r.batch[:, 0] * r.spec.recurrent_state_bytes_per_sequence
    assert np.all(r.kv_read_bytes[:, 0] == state)
    if r.spec.num_attention_layers:
        assert np.all(r.kv_read_bytes[:, 1:] > state[:, None])
    parts = r.breakdown()
    assert np.allclose(sum(parts["bytes"].values()), r.bytes_total, rtol=1e-12)
    assert np.allclose(sum(parts["flops"].values()), r.flops, rtol=1e-12)
    if r.spec.num_recurrent_layers:
        # read and written every step, a recurrent state caps the intensity: where the cap (at a
        # batch so large that every expert is read) lies below H100's ridge, there is no critical
        # batch (Qwen3-Next, Mamba-2, Nemotron 3 Nano in bf16; Jamba's 8.7 MB state does not cap)
        cap = decode_floor(model_id, "h100-sxm", batch=1e9, context=0).arithmetic_intensity
        if cap < r.ridge_point:
            assert np.all(np.isinf(r.critical_batch))
            return
    # the critical batch is finite at context 0 (weights amortise) and separates the regimes
    b_star = r.critical_batch[0, 0]
    assert np.isfinite(b_star) and b_star > 1
    edge = decode_floor(model_id, "h100-sxm", batch=[b_star * 0.99, b_star * 1.01], context=0)
    assert list(edge.bound) == ["memory", "compute"]
