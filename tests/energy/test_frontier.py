"""The throughput-interactivity frontier: points, fit marks, a monotone envelope, the plot and CLI."""

import matplotlib
import numpy as np
import pytest

from roofline_decode import InvalidValueError
from roofline_decode.cli import main
from roofline_decode.planning import frontier, tensor_parallel_floor

matplotlib.use("Agg")


@pytest.fixture(scope="module")
def front():
    return frontier("llama-3.1-70b", ["h100-sxm", "h200-sxm", "b200"], 4096, batch=[1, 4, 16, 64, 256],
                    tp=(1, 2, 8), price_per_hour=3.0)


def test_points_are_tensor_parallel_floors(front):
    assert len(front.points) == 3 * 3 * 5
    p = next(p for p in front.points if p.accelerator == "h200-sxm" and p.num_devices == 2 and p.batch == 16)
    floor = tensor_parallel_floor("llama-3.1-70b", "h200-sxm", batch=16, context=4096, num_devices=2)
    assert p.tokens_per_s_per_user == pytest.approx(1 / float(floor.step_time_s))
    assert p.tokens_per_s_per_device == pytest.approx(16 / float(floor.step_time_s) / 2)
    assert p.usd_per_million_tokens == pytest.approx(float(floor.cost_per_million_tokens(3.0)))


def test_unfit_points_are_marked_and_left_out(front):
    # 70B in bf16 (141 GB) never fits one 80 GB H100
    h100_one = [p for p in front.points if p.accelerator == "h100-sxm" and p.num_devices == 1]
    assert h100_one and not any(p.fits for p in h100_one)
    for y in ("throughput", "energy", "energy_at_board_power", "cost"):
        assert all(p.fits for p in front.envelope(y))


@pytest.mark.parametrize("y", ["throughput", "energy", "energy_at_board_power", "cost"])
def test_envelope_is_monotone_and_undominated(front, y):
    attribute, larger = {"throughput": ("tokens_per_s_per_device", True),
                         "energy": ("joules_per_token_floor", False),
                         "energy_at_board_power": ("joules_per_token_at_board_power", False),
                         "cost": ("usd_per_million_tokens", False)}[y]
    env = front.envelope(y)
    x = np.array([p.tokens_per_s_per_user for p in env])
    v = np.array([getattr(p, attribute) for p in env]) * (1 if larger else -1)
    assert np.all(np.diff(x) > 0) and np.all(np.diff(v) < 0)
    for p in front.points:  # no fitting point beats an envelope point on both axes
        if not p.fits or not np.isfinite(getattr(p, attribute)):
            continue
        score = getattr(p, attribute) * (1 if larger else -1)
        for q, s in zip(env, v):
            assert not (p.tokens_per_s_per_user > q.tokens_per_s_per_user * (1 + 1e-9) and score > s + 1e-9 * abs(s))


def test_each_curve_trades_user_speed_for_device_throughput(front):
    for device in ("h200-sxm", "b200"):
        curve = [p for p in front.points if p.accelerator == device and p.num_devices == 8]
        assert np.all(np.diff([p.tokens_per_s_per_device for p in curve]) >= 0)
        assert np.all(np.diff([p.tokens_per_s_per_user for p in curve]) <= 0)


def test_energy_axis_skips_unsourced_memory():
    # DGX Spark: LPDDR5X, no sourced access energy
    front = frontier("llama-3.1-8b", ["h200-sxm", "dgx-spark"], 4096, batch=[1, 64], tp=(1,))
    assert all(p.accelerator != "dgx-spark" for p in front.envelope("energy"))
    assert any("dgx-spark" in n and "unavailable" in n for n in front.notes)
    records = front.to_records()
    assert all(r["joules_per_token_floor"] is None for r in records if r["accelerator"] == "dgx-spark")
    # HBM3E 2.4 pJ/bit (Micron) x the bytes of a step, per token: batch 1 moves 15,546,859,520 B
    # (test_energy_results): 8 x 15,546,859,520 x 2.4e-12 = 0.2985 J
    h200 = [r for r in records if r["accelerator"] == "h200-sxm"]
    steps = tensor_parallel_floor("llama-3.1-8b", "h200-sxm", batch=[1, 64], context=4096, num_devices=1)
    assert [r["joules_per_token_floor"] for r in h200] == pytest.approx(
        (8 * 2.4e-12 * steps.bytes_read_per_device / np.array([1, 64])).tolist(), rel=1e-12)
    assert h200[0]["joules_per_token_floor"] == pytest.approx(8 * 15_546_859_520 * 2.4e-12, rel=1e-12)


@pytest.mark.parametrize("kwargs, field", [
    (dict(tp=(0,)), "tp"), (dict(tp=(1.5,)), "tp"), (dict(batch=[0]), "batch"), (dict(price_per_hour=-1), "price"),
])
def test_bad_input_names_the_field(kwargs, field):
    with pytest.raises(InvalidValueError, match=field):
        frontier("llama-3.1-8b", "h200-sxm", 4096, **kwargs)
    with pytest.raises(InvalidValueError, match="context"):
        frontier("llama-3.1-8b", "h200-sxm", [1, 2])
    with pytest.raises(InvalidValueError, match="price"):
        frontier("llama-3.1-8b", "h200-sxm", 4096).envelope("cost")


def test_records(front):
    records = front.to_records()
    assert len(records) == len(front.points) and sum(r["on_envelope"] for r in records) == len(front.envelope())
    # each point's energy is its tensor-parallel floor's; by hand at TP 1, batch 1 (HBM3 4.29
    # pJ/bit): Llama-3.1-70B reads 80 (2 x 8192^2 + 2 x 8192 x 1024 + 3 x 8192 x 28672 + 2 x 8192)
    # + 8192 + 8192 + 128256 x 8192 = 69,503,041,536 bf16 parameters and 4096 x 80 x 4096 B of KV,
    # writes 80 x 4096 B: 140,348,588,032 B x 8 x 4.29e-12 = 4.8168 J per token
    h100 = [r for r in records if r["accelerator"] == "h100-sxm"]
    for r in h100:
        floor = tensor_parallel_floor("llama-3.1-70b", "h100-sxm", batch=r["batch"], context=4096,
                                      num_devices=r["num_devices"])
        assert r["joules_per_token_floor"] == pytest.approx(float(floor.joules_per_token_floor), rel=1e-12)
    first = next(r for r in h100 if r["num_devices"] == 1 and r["batch"] == 1)
    assert 2 * 69_503_041_536 + 4096 * 80 * 4096 + 80 * 4096 == 140_348_588_032
    assert first["joules_per_token_floor"] == pytest.approx(140_348_588_032 * 8 * 4.29e-12, rel=1e-12)


def test_frontier_plot_draws_envelope_and_marks(tmp_path):
    from roofline_decode.plotting import frontier_plot, save

    ax = frontier_plot("llama-3.1-70b", ["h100-sxm", "b200"], 4096, batch=[1, 16, 256], tp=(1, 8))
    labels = [line.get_label() for line in ax.get_lines()]
    assert "Pareto envelope" in labels and "does not fit memory" in labels and "b200 TP8" in labels
    assert save(ax, tmp_path / "f.png").stat().st_size > 0
    with pytest.raises(InvalidValueError, match="energy"):
        frontier_plot("llama-3.1-8b", ["dgx-spark"], 4096, y="energy")


def test_cli_plot_frontier(tmp_path, capsys):
    out = tmp_path / "frontier.png"
    assert main(["plot", "frontier", "--model", "llama-3.1-8b", "--gpu", "h200-sxm", "--gpu", "b200", "--tp", "1,2",
                 "--batch", "1,64", "--y", "cost", "--price-per-hour", "3", "-o", str(out)]) == 0
    assert out.stat().st_size > 0
    assert main(["plot", "frontier", "--model", "llama-3.1-8b", "--gpu", "h200-sxm", "--y", "cost", "-o", str(out)]) == 2
    assert "--price-per-hour" in capsys.readouterr().err


def test_a_price_per_device():
    prices = {"h200-sxm": 3.0, "b200": 6.0}
    front = frontier("llama-3.1-8b", ["h200-sxm", "b200"], 4096, batch=[1, 64], tp=(1,), price_per_hour=prices)
    one = frontier("llama-3.1-8b", ["b200"], 4096, batch=[1, 64], tp=(1,), price_per_hour=6.0)
    b200 = [p.usd_per_million_tokens for p in front.points if p.accelerator == "b200"]
    assert b200 == [p.usd_per_million_tokens for p in one.points]
    with pytest.raises(InvalidValueError, match="missing: b200"):
        frontier("llama-3.1-8b", ["h200-sxm", "b200"], 4096, price_per_hour={"h200-sxm": 3.0})
    from roofline_decode.plotting import frontier_plot

    ax = frontier_plot("llama-3.1-8b", ["h200-sxm", "b200"], 4096, batch=[1, 64], tp=(1,), y="cost",
                       price_per_hour=prices)
    assert "given price" in ax.get_ylabel()


def test_a_device_without_interconnect_gets_single_device_points_only():
    front = frontier("llama-3.1-8b", ["dgx-spark", "h200-sxm"], 4096, batch=[1, 8], tp=(1, 2, 4))
    assert {p.num_devices for p in front.points if p.accelerator == "dgx-spark"} == {1}
    assert {p.num_devices for p in front.points if p.accelerator == "h200-sxm"} == {1, 2, 4}
    assert any("dgx-spark" in n and "interconnect" in n and "TP 2, 4" in n for n in front.notes)
