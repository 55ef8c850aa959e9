"""The deployment search (rd.planning.deployments): frontier, SLO answer, GPU count, laws, dask parity."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.errors import InvalidValueError
from roofline_decode.planning import Deployments, deployments, usable_memory
from roofline_decode.planning.deployments_curves import mean_context
from roofline_decode.planning.deployments_search import COLUMNS, candidate_layouts, device_counts

# DeepSeek-V3 on two HGX H200 nodes (the worked example), searched once for the module
DSV3 = dict(model="deepseek-v3", device="h200-sxm", gpus=16, isl=1024, osl=1024, ttft=2.0, tpot=0.05)
# a small MoE model on one node, every point kept: the laws over all points
SMALL_LAYOUTS = ("tp1", "tp2", "tp4", "dp2 ep2", "dp4 ep4", "tp2 ep2")
SMALL = dict(model="qwen3-30b-a3b", device="h100-sxm", isl=2048, osl=256, layouts=SMALL_LAYOUTS,
             concurrency=[1, 4, 16, 64, 256])


@pytest.fixture(scope="module")
def dsv3() -> Deployments:
    return deployments(**DSV3)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def small() -> Deployments:
    return deployments(gpus=8, keep_all=True, ttft=1.0, tpot=0.02, **SMALL)  # type: ignore[arg-type]


def _rows(result: Deployments) -> list[dict[str, float]]:
    return [{name: float(result.points[name][i]) for name in COLUMNS} for i in range(result.points["ttft_s"].size)]


def test_frontier_is_pareto_against_every_point(small: Deployments) -> None:
    front = small.frontier()
    assert len(front) >= 2
    per_user = small.points["tokens_per_s_per_user"]
    per_gpu = small.points["tokens_per_s_per_gpu"]
    for p in front:
        beaten = ((per_user >= p.tokens_per_s_per_user) & (per_gpu >= p.tokens_per_s_per_gpu)
                  & ((per_user > p.tokens_per_s_per_user) | (per_gpu > p.tokens_per_s_per_gpu)))
        assert not beaten.any(), p
    # ordered: faster per user costs tokens/s per GPU, strictly
    assert all(a.tokens_per_s_per_user < b.tokens_per_s_per_user and a.tokens_per_s_per_gpu > b.tokens_per_s_per_gpu
               for a, b in zip(front, front[1:]))


def test_every_frontier_point_fits(dsv3: Deployments) -> None:
    room = usable_memory("h200-sxm")
    context = mean_context(1024, 1024)
    for p in dsv3.frontier():
        per_worker = p.running / p.decode_workers
        assert per_worker >= 1 and p.running <= p.concurrency and p.queued == p.concurrency - p.running
        floor = rd.decode_floor("deepseek-v3", "h200-sxm", batch=per_worker, context=context,
                                parallel=p.decode_layout)
        assert float(np.max(floor.resident_bytes_per_device)) <= room  # type: ignore[union-attr]


def test_slo_answer_meets_the_slos_and_is_the_best(dsv3: Deployments) -> None:
    best = dsv3.best
    assert best is not None
    assert best.ttft_s <= 2.0 and best.tpot_s <= 0.05
    ok = (dsv3.points["ttft_s"] <= 2.0) & (dsv3.points["tpot_s"] <= 0.05)
    assert best.tokens_per_s_per_gpu == pytest.approx(float(dsv3.points["tokens_per_s_per_gpu"][ok].max()))
    line = dsv3.answer()
    assert line.startswith("DeepSeek-V3 on 16 x H200") and line.endswith("; floors") and "\n" not in line
    assert f"{best.tokens_per_s_per_gpu:,.0f} tok/s/GPU" in line and best.label in line
    # the SLO frontier ends at the best point
    assert dsv3.frontier(slo=True)[0] == best


def test_best_is_below_the_single_step_bound(dsv3: Deployments) -> None:
    """Output tokens/s <= (decode tokens/s of the largest batch that fits) x OSL / (OSL - 1): every
    output token but the first comes out of a decode step, and a decode step of B sequences
    yields at most B / step(B), which grows with B."""
    room, context = usable_memory("h200-sxm"), mean_context(1024, 1024)
    bound = 0.0
    for layout in dsv3.layouts:
        one = rd.decode_floor("deepseek-v3", "h200-sxm", batch=1, context=context, parallel=layout)
        fit = np.floor((room - one.weight_bytes_per_device) / one.kv_bytes_per_device)  # type: ignore[union-attr]
        step = rd.decode_floor("deepseek-v3", "h200-sxm", batch=fit, context=context, parallel=layout)
        bound = max(bound, float(np.max(step.tokens_per_s)) / layout.num_devices * 1024 / 1023)
    top = float(np.max(dsv3.points["tokens_per_s_per_gpu"]))
    assert dsv3.best is not None and dsv3.best.tokens_per_s_per_gpu <= top <= bound


def test_deployments_respect_the_gpu_count(small: Deployments) -> None:
    sizes = {i: layout.num_devices for i, layout in enumerate(small.layouts)}
    rows = _rows(small)
    assert {r["mode"] for r in rows} == {0.0, 1.0}
    for r in rows:
        n_p, n_d = sizes[int(r["prefill"])], sizes[int(r["decode"])]
        if r["mode"] == 0:  # replicas of one layout
            assert r["prefill"] == r["decode"] and r["prefill_workers"] == 8 // n_p
            assert r["devices"] == r["prefill_workers"] * n_p <= 8
        else:
            assert r["prefill_workers"] >= 1 and r["decode_workers"] >= 1
            assert r["devices"] == r["prefill_workers"] * n_p + r["decode_workers"] * n_d <= 8


def _serving_points(gpus: int, layouts: tuple[str, ...], grid: list[int], isl: int, osl: int) -> np.ndarray:
    """(tokens/s per user, tokens/s per GPU, TTFT) of every deployment, by brute force from
    serving_floor: every replica count's layout and every (x, y) pairing of two layouts."""
    rows = []
    for text in layouts:
        n = rd.Parallel.parse(text).num_devices
        r = rd.serving_floor("qwen3-30b-a3b", "h100-sxm", grid, isl, osl, parallel=text)
        rows += list(zip(r.output_tokens_per_s_per_user, r.output_tokens_per_s_per_gpu, r.ttft_s))
        assert gpus // n >= 1
    for p in layouts:
        for d in layouts:
            n_p, n_d = rd.Parallel.parse(p).num_devices, rd.Parallel.parse(d).num_devices
            for x in range(1, gpus + 1):
                for y in range(1, gpus + 1):
                    if x * n_p + y * n_d > gpus:
                        continue
                    r = rd.serving_floor("qwen3-30b-a3b", "h100-sxm", [y * c for c in grid], isl, osl,
                                         mode="disaggregated", prefill_parallel=p, decode_parallel=d,
                                         prefill_workers=x, decode_workers=y)
                    rows += list(zip(r.output_tokens_per_s_per_user, r.output_tokens_per_s_per_gpu, r.ttft_s))
    return np.array(rows, dtype=float)


def test_the_search_is_serving_floor_over_every_deployment() -> None:
    """Brute force: serving_floor at every replica layout and every (x prefill, y decode) pairing
    gives the search's frontier and best point (the search evaluates only the two x around a
    pairing's balance; the others are beaten on every metric)."""
    grid, layouts = [2, 8, 32, 128], ("tp1", "tp2")
    result = deployments("qwen3-30b-a3b", "h100-sxm", 8, 4096, 128, ttft=0.5, layouts=layouts, concurrency=grid)
    points = _serving_points(8, layouts, grid, 4096, 128)
    kept, best = [], -np.inf
    for user, gpu, _ in sorted(points.tolist(), key=lambda r: (-r[0], -r[1])):
        if gpu > best * (1 + 1e-12):
            kept.append((user, gpu))
            best = gpu
    found = sorted((p.tokens_per_s_per_user, p.tokens_per_s_per_gpu) for p in result.frontier())
    np.testing.assert_allclose(found, sorted(kept), rtol=1e-9)
    assert result.best is not None
    assert result.best.tokens_per_s_per_gpu == pytest.approx(float(points[points[:, 2] <= 0.5, 1].max()), rel=1e-9)
    assert {p.mode for p in result.frontier()} == {"aggregated", "disaggregated"}


def test_every_point_is_serving_floor(small: Deployments) -> None:
    """Rows of the search against serving_floor at the same layouts, workers and clients."""
    rows = _rows(small)
    for r in rows[:: max(len(rows) // 25, 1)]:
        p, d = str(small.layouts[int(r["prefill"])]), str(small.layouts[int(r["decode"])])
        if r["mode"] == 0:
            floor = rd.serving_floor("qwen3-30b-a3b", "h100-sxm", r["concurrency"] / r["prefill_workers"], 2048, 256,
                                     parallel=p)
        else:
            floor = rd.serving_floor("qwen3-30b-a3b", "h100-sxm", r["concurrency"], 2048, 256, mode="disaggregated",
                                     prefill_parallel=p, decode_parallel=d, prefill_workers=int(r["prefill_workers"]),
                                     decode_workers=int(r["decode_workers"]))
        assert float(floor.ttft_s) == pytest.approx(r["ttft_s"], rel=1e-12)
        assert float(floor.tpot_s) == pytest.approx(r["tpot_s"], rel=1e-12)
        assert float(floor.output_tokens_per_s_per_gpu) == pytest.approx(r["tokens_per_s_per_gpu"], rel=1e-12)


def test_floors_hold_against_the_step_floors(small: Deployments) -> None:
    """TTFT >= one prompt's prefill floor on the layout, TPOT >= a decode step of one sequence."""
    context = mean_context(2048, 256)
    for i, layout in enumerate(small.layouts):
        prefill = rd.prefill_floor("qwen3-30b-a3b", "h100-sxm", 2048, parallel=layout)
        decode = rd.decode_floor("qwen3-30b-a3b", "h100-sxm", batch=1, context=context, parallel=layout)
        mine = small.points["prefill"] == i
        assert np.all(small.points["ttft_s"][mine] >= float(prefill.ttft_s) * (1 - 1e-12))
        theirs = small.points["decode"] == i
        assert np.all(small.points["tpot_s"][theirs] >= float(decode.step_time_s) * (1 - 1e-12))


@settings(max_examples=6, deadline=None)
@given(gpus=st.integers(2, 6), extra=st.integers(1, 6), ttft=st.sampled_from([None, 0.3, 2.0]),
       tpot=st.sampled_from([None, 0.01, 0.05]))
def test_more_gpus_never_lower_the_best_or_the_frontier(gpus: int, extra: int, ttft: float | None,
                                                        tpot: float | None) -> None:
    """With the same layouts and client grid, every deployment on g GPUs is one on g + k GPUs (or
    beaten by one there): the best tokens/s per GPU under the same SLOs never falls, and every
    frontier point is matched or beaten."""
    kw = dict(model="qwen3-30b-a3b", device="h100-sxm", isl=1024, osl=256, layouts=("tp1", "tp2"),
              concurrency=[1, 8, 64], ttft=ttft, tpot=tpot)
    fewer = deployments(gpus=gpus, **kw)  # type: ignore[arg-type]
    more = deployments(gpus=gpus + extra, **kw)  # type: ignore[arg-type]
    if fewer.best is not None:
        assert more.best is not None
        assert more.best.tokens_per_s_per_gpu >= fewer.best.tokens_per_s_per_gpu * (1 - 1e-12)
    wide = more.frontier()
    for p in fewer.frontier():
        assert any(q.tokens_per_s_per_user >= p.tokens_per_s_per_user * (1 - 1e-12)
                   and q.tokens_per_s_per_gpu >= p.tokens_per_s_per_gpu * (1 - 1e-12) for q in wide), p


@settings(max_examples=5, deadline=None)
@given(ttft=st.floats(0.05, 5.0), tpot=st.floats(0.002, 0.2), looser=st.floats(1.0, 4.0))
def test_looser_slos_and_more_modes_never_lower_the_best(ttft: float, tpot: float, looser: float) -> None:
    kw = dict(model="qwen3-30b-a3b", device="h100-sxm", gpus=4, isl=1024, osl=256, layouts=("tp1", "tp2"),
              concurrency=[1, 8, 64])
    strict = deployments(ttft=ttft, tpot=tpot, **kw)  # type: ignore[arg-type]
    loose = deployments(ttft=ttft * looser, tpot=tpot * looser, **kw)  # type: ignore[arg-type]
    one_mode = deployments(ttft=ttft, tpot=tpot, modes="aggregated", **kw)  # type: ignore[arg-type]
    for smaller, larger in ((strict, loose), (one_mode, strict)):
        if smaller.best is not None:
            assert larger.best is not None
            assert larger.best.tokens_per_s_per_gpu >= smaller.best.tokens_per_s_per_gpu


def test_chunks_give_the_same_frontier_and_best(dsv3: Deployments) -> None:
    """Every point kept (one chunk), chunks of 3 decode layouts, chunks by size: one answer."""
    every = deployments(**DSV3, keep_all=True)  # type: ignore[arg-type]
    assert every.points["ttft_s"].size == every.evaluated > dsv3.points["ttft_s"].size
    for chunked in (deployments(**DSV3, chunk_size=3), dsv3):  # type: ignore[arg-type]
        assert chunked.frontier() == every.frontier() and chunked.best == every.best
        assert chunked.frontier(slo=True) == every.frontier(slo=True) and chunked.evaluated == every.evaluated
        for mode in ("aggregated", "disaggregated"):
            assert chunked.frontier(mode=mode) == every.frontier(mode=mode)


def test_chunks_by_size_cover_every_layout_in_order() -> None:
    from roofline_decode.floors.layout import Options
    from roofline_decode.floors.prefill import device_timing
    from roofline_decode.planning.deployments import CHUNK_ELEMENTS
    from roofline_decode.planning.deployments_curves import layout_curves
    from roofline_decode.planning.deployments_search import Stack, chunks_by_size

    model, device = rd.load_model("deepseek-v3"), rd.load_accelerator("h200-sxm")
    layouts = [layout for layout in candidate_layouts(model, 64) if layout.num_devices in (8, 16)][:40]
    curves = [layout_curves(model, device, layout, 1024, 1024, np.array([1.0, 64.0]), timing=device_timing(model, device),
                            options=Options(domain_notes=False), reserve=2 * 2**30,
                            decode_workers=63 // layout.num_devices, fit_point=False) for layout in layouts]
    stack = Stack.of([c for c in curves if c is not None])
    rows = np.arange(len(stack.layouts))
    one_each = chunks_by_size(stack, 64, 1)
    assert [list(c) for c in one_each] == [[r] for r in rows]  # a layout larger than the budget: a chunk of its own
    some = chunks_by_size(stack, 64, 20_000)
    assert np.array_equal(np.concatenate(some), rows) and 1 < len(some) < len(rows)
    assert [list(c) for c in chunks_by_size(stack, 64, CHUNK_ELEMENTS)] == [list(rows)]


def test_dask_gives_the_in_memory_result(dsv3: Deployments) -> None:
    pytest.importorskip("dask", reason="dask is not installed: pip install -e '.[dask]' to run the dask search")
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (the [dask] extra)")
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster:
        with distributed.Client(cluster):
            on_dask = deployments(**DSV3, scheduler="dask", chunk_size=16)  # type: ignore[arg-type]
    assert on_dask.frontier() == dsv3.frontier() and on_dask.best == dsv3.best
    assert on_dask.evaluated == dsv3.evaluated and on_dask.answer() == dsv3.answer()


def test_cost_and_records(small: Deployments) -> None:
    priced = deployments(gpus=8, price_per_hour={"h100-sxm": 2.0}, **SMALL)  # type: ignore[arg-type]
    p = priced.frontier()[0]
    assert p.usd_per_million_tokens == pytest.approx(2.0 / 3600 * 1e6 / p.tokens_per_s_per_gpu)
    assert small.frontier()[0].usd_per_million_tokens is None
    records = priced.to_records()
    assert len(records) == len(priced.frontier()) and records[0]["label"] == p.label
    assert {"ttft_s", "tpot_s", "tokens_per_s_per_gpu", "tokens_per_s_per_user", "usd_per_million_tokens",
            "mode", "devices", "concurrency"} <= set(records[0])
    assert len(small.to_records("all")) == small.points["ttft_s"].size
    frame = priced.to_dataframe()
    assert list(frame["label"]) == [r["label"] for r in records]


def test_layout_space() -> None:
    assert device_counts(12) == [1, 2, 4, 8, 12] and device_counts(1) == [1]
    layouts = candidate_layouts(rd.load_model("deepseek-v3"), 8)
    texts = {str(layout) for layout in layouts}
    assert {"tp8", "dp8 ep8", "tp4 pp2", "tp2 dp4 ep8"} <= texts
    assert all(256 % layout.ep == 0 and 128 % layout.tp == 0 for layout in layouts)
    dense = candidate_layouts(rd.load_model("llama-3.1-8b"), 8)
    assert all(layout.ep == 1 for layout in dense)


def test_nothing_fits_and_no_slo_met() -> None:
    none = deployments("deepseek-v3", "h100-sxm", 2, 1024, 1024, ttft=1.0)
    assert none.best is None and none.frontier() == [] and "no layout" in none.notes[0]
    assert "no deployment meets TTFT <= 1,000 ms" in none.answer()
    tight = deployments(gpus=8, ttft=1e-6, **SMALL)  # type: ignore[arg-type]
    assert tight.best is None and tight.frontier() and "even on floors" in tight.answer()


@pytest.mark.parametrize(("kwargs", "field"), [
    (dict(gpus=0), "gpus"), (dict(osl=1), "osl"), (dict(ttft=-1.0), "ttft"), (dict(modes=("both",)), "modes"),
    (dict(price_per_hour={"b200": 3.0}), "price_per_hour"), (dict(scheduler="ray"), "scheduler"),
    (dict(concurrency=[0]), "concurrency"), (dict(layouts=("tp16",)), "layouts"),
    (dict(layouts=("tp3",)), "parallel.tp"), (dict(chunk_size=0), "chunk_size"),
])
def test_bad_input_names_the_field(kwargs: dict[str, object], field: str) -> None:
    base = dict(model="qwen3-30b-a3b", device="h100-sxm", gpus=8, isl=1024, osl=128, layouts=("tp1",))
    with pytest.raises(InvalidValueError) as info:
        deployments(**{**base, **kwargs})  # type: ignore[arg-type]
    assert info.value.field == field
