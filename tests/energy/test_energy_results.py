"""Energy and cost on the results: values by hand, laws, multi-device plans, the CLI."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode import InvalidValueError, decode_floor
from roofline_decode.cli import main
from roofline_decode.floors.energy import ENERGY_RECORD_KEYS
from roofline_decode.floors.results import RECORD_KEYS
from roofline_decode.floors.prefill import prefill_floor
from roofline_decode.floors.request import request_floor
from roofline_decode.planning import tensor_parallel_floor

# Llama-3.1-8B (config.json): L=32, d=4096, d_ff=14336, H_q=32, H_kv=8, d_h=128, V=128256.
_LAYER = 2 * 4096 * 4096 + 2 * 4096 * 8 * 128 + 3 * 4096 * 14336 + 2 * 4096
_PARAMS_READ = 32 * _LAYER + 4096 + 4096 + 128256 * 4096  # + final norm, one embedding row, lm_head
_KV_READ = 32 * 4096 * 2 * 8 * 128 * 2  # layers x context x (K and V) x H_kv x d_h x 2 bytes
_KV_WRITE = 32 * 2 * 8 * 128 * 2


def test_llama_8b_bf16_batch_1_by_hand_on_hbm3e():
    r = decode_floor("llama-3.1-8b", "h200-sxm", batch=1, context=4096)
    bytes_by_hand = 2 * _PARAMS_READ + _KV_READ + _KV_WRITE
    assert float(r.bytes_total) == bytes_by_hand == 15_546_859_520
    # HBM3E 2.4 pJ/bit (Micron HBM2E 6.0 / 2.5, the smaller vendor figure): 8 bits per byte,
    # 8 x 15,546,859,520 x 2.4e-12 = 0.2985 J (0.4851 J at Samsung's 3.9 pJ/bit before)
    assert float(r.joules_per_token_floor) == pytest.approx(8 * bytes_by_hand * 2.4e-12, rel=1e-12)
    assert round(float(r.joules_per_token_floor), 4) == 0.2985
    assert float(r.tokens_per_joule_floor) == pytest.approx(1 / (8 * bytes_by_hand * 2.4e-12), rel=1e-12)
    # at board power: 700 W (NVIDIA H200 SXM) x the step time
    assert float(r.joules_per_token_at_board_power) == pytest.approx(700 * bytes_by_hand / 4.8e12, rel=1e-12)
    assert r.memory_technology == "HBM3E" and r.board_power_w == 700.0


def test_llama_8b_bf16_batch_1_by_hand_on_hbm3():
    # the example: Llama-3.1-8B bf16, batch 1, on an H100 SXM x the HBM3 access energy
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096)
    bytes_by_hand = 2 * _PARAMS_READ + _KV_READ + _KV_WRITE
    assert float(r.bytes_total) == bytes_by_hand
    # HBM3 4.29 pJ/bit (derived: Samsung HBM3E 3.9 pJ/bit x 1.1) -> 0.5336 J per token
    assert float(r.joules_per_token_floor) == pytest.approx(8 * bytes_by_hand * 4.29e-12, rel=1e-12)
    assert round(float(r.joules_per_token_floor), 4) == 0.5336
    assert r.memory_technology == "HBM3"
    assert float(r.joules_per_token_at_board_power) == pytest.approx(700 * bytes_by_hand / 3.35e12, rel=1e-12)


def test_unsourced_memory_floor_is_unavailable_not_invented():
    r = decode_floor("llama-3.1-8b", "dgx-spark", batch=1, context=4096)
    assert math.isnan(float(r.joules_per_token_floor)) and r.memory_technology is None
    assert any("unavailable" in n and "LPDDR5X" in n for n in r.energy_notes)
    assert float(r.joules_per_token_at_board_power) == pytest.approx(r.board_power_w * float(r.step_time_s))


def test_board_power_is_an_estimate_and_four_times_the_floor_here():
    """Memory-bound at all three batches, both energies are per byte moved: at board power
    1000 W x bytes / 8 TB/s, the floor 8 x 2.4 pJ/bit x bytes (Micron HBM3E).  Their ratio is
    1000 / (8 x 2.4e-12 x 8e12) = 6.510 whatever the batch (the bytes cancel)."""
    r = decode_floor("llama-3.1-70b", "b200", batch=[1, 8, 64], context=4096)
    assert any("not a floor" in n for n in r.energy_notes)
    assert list(r.bound) == ["memory"] * 3
    ratio = r.joules_per_token_at_board_power / r.joules_per_token_floor
    np.testing.assert_allclose(ratio, 1000 / (8 * 2.4e-12 * 8e12), rtol=1e-12)
    assert round(float(ratio[0]), 3) == 6.510


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 512), st.integers(1, 64), st.integers(0, 32768))
def test_energy_floor_per_token_non_increasing_in_batch(batch, extra, context):
    r = decode_floor("llama-3.1-8b", "h200-sxm", batch=[batch, batch + extra], context=context)
    per_token = r.joules_per_token_floor.ravel()
    assert per_token[1] <= per_token[0] * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 100), st.floats(1.01, 10))
def test_cost_per_token_proportional_to_price(price, factor):
    r = decode_floor("llama-3.1-8b", "mi300x", batch=[1, 64], context=4096)
    np.testing.assert_allclose(r.cost_per_million_tokens(price * factor), factor * r.cost_per_million_tokens(price),
                               rtol=1e-12)


def test_cost_by_hand():
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=64, context=4096)
    assert float(r.cost_per_million_tokens(2.5)) == pytest.approx(1e6 * 2.5 * float(r.step_time_s) / 3600 / 64)


@pytest.mark.parametrize("price", [0, -1, float("nan"), float("inf"), "x", None])
def test_bad_price_names_the_field(price):
    r = decode_floor("llama-3.1-8b", "h100-sxm")
    with pytest.raises(InvalidValueError, match="price_per_hour"):
        r.cost_per_million_tokens(price)


def test_tensor_parallel_multiplies_by_the_device_count():
    one = decode_floor("llama-3.1-70b", "h200-sxm", batch=1, context=4096)
    tp = tensor_parallel_floor("llama-3.1-70b", "h200-sxm", batch=1, context=4096, num_devices=4)
    assert float(tp.cost_per_million_tokens(3.0)) == pytest.approx(
        1e6 * 4 * 3.0 * float(tp.step_time_s) / 3600)
    assert float(tp.energy_at_board_power_j_per_step) == pytest.approx(4 * 700 * float(tp.step_time_s))
    # the same bytes (split, plus what each device must hold whole) move: never less energy than one device
    assert float(tp.energy_floor_j_per_step) >= float(one.energy_floor_j_per_step) * (1 - 1e-12)


def test_prefill_and_request_energy_and_cost():
    p = prefill_floor("llama-3.1-8b", "h200-sxm", prompt=4096)
    assert float(p.joules_per_token_floor) == pytest.approx(8 * float(p.bytes_total) * 2.4e-12 / 4096)
    assert float(p.cost_per_million_tokens(2.0)) == pytest.approx(1e6 * 2.0 * float(p.ttft_s) / 3600 / 4096)
    q = request_floor("llama-3.1-8b", "h200-sxm", prompt=1024, output=128, batch=4)
    assert float(q.cost_per_request(2.0)) == pytest.approx(2.0 * float(q.e2e_latency_s) / 3600 / 4)
    assert float(q.joules_per_token_floor) == pytest.approx(
        8 * (float(q.prefill_bytes) + float(q.decode_bytes)) * 2.4e-12 / (4 * 128))


def test_energy_records_align_with_records():
    r = decode_floor("llama-3.1-8b", "h200-sxm", batch=[[1], [8]], context=[0, 4096])
    extras = r.energy_records(1.0)
    assert len(extras) == len(r.to_records()) == 4
    assert set(ENERGY_RECORD_KEYS) <= set(extras[0])
    assert extras[3]["joules_per_token_floor"] == pytest.approx(float(r.joules_per_token_floor[1, 1]))


def test_cli_floor_energy_json_keeps_the_keys_and_adds(capsys):
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--format", "json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpu", "h200-sxm", "--batch", "1,64",
                 "--energy", "--price-per-hour", "2.5", "--format", "json"]) == 0
    rich = json.loads(capsys.readouterr().out)
    assert list(plain[0])[:len(RECORD_KEYS)] == list(RECORD_KEYS)
    assert all(rich[0][k] == v for k, v in plain[0].items())
    # HBM3 (H100): 4.29 pJ/bit x 15.55 GB; HBM3E (H200) at batch 64
    assert rich[0]["joules_per_token_floor"] == pytest.approx(8 * 15_546_859_520 * 4.29e-12, rel=1e-9)
    assert rich[-1]["joules_per_token_floor"] == pytest.approx(0.02407202 * 2.4 / 3.9, rel=1e-6)  # HBM3E 2.4 pJ/bit: 0.01481355
    # $2.5 per hour over 64 tokens per step: 1e6 x 2.5 x T_step / 3600 / 64 per million tokens
    assert rich[-1]["price_per_hour"] == 2.5 and rich[-1]["batch"] == 64
    assert rich[-1]["usd_per_million_tokens"] == pytest.approx(1e6 * 2.5 * rich[-1]["step_time_s"] / 3600 / 64,
                                                               rel=1e-12)


def test_cli_floor_energy_table_and_bad_price(capsys):
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "h200-sxm", "--energy", "--price-per-hour", "3"]) == 0
    out = capsys.readouterr().out
    assert "J/token floor" in out and "$/M tokens @3/h" in out and "not a floor" in out
    with pytest.raises(SystemExit) as info:
        main(["floor", "--model", "llama-3.1-8b", "--gpu", "h200-sxm", "--price-per-hour", "0"])
    assert info.value.code == 2
    assert "--price-per-hour" in capsys.readouterr().err


def test_every_path_of_decode_floor_keeps_the_device():
    # one point (the scalar fast path), a grid (the general path), a sweep
    from roofline_decode import sweep

    for r in (decode_floor("llama-3.1-8b", "h200-sxm", batch=1, context=4096),
              decode_floor("llama-3.1-8b", "h200-sxm", batch=[1, 2], context=4096),
              *sweep(["llama-3.1-8b"], ["h200-sxm"], batch=[1, 2], context=[4096])):
        assert r.device is not None and r.memory_technology == "HBM3E"


def test_a_derived_access_energy_is_named_as_an_estimate_in_the_notes():
    # HBM3 (H100) is scaled from Samsung's relative claim, HBM3E (H200) from Micron's; GDDR6X (RTX 4090) is
    # a printed figure
    derived = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096).energy_notes
    micron = decode_floor("llama-3.1-8b", "h200-sxm", batch=1, context=4096).energy_notes
    printed = decode_floor("llama-3.1-8b", "rtx-4090", batch=1, context=4096).energy_notes
    assert any("HBM3 access energy is derived" in n and "x 1.1" in n for n in derived)
    assert any("HBM3E access energy is derived" in n and "/ 2.5" in n for n in micron)
    assert not any("is derived" in n for n in printed)
