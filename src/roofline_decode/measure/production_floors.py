"""Strict floors of a production serving run (issue 26, item 7): TTFT and TPOT.

For a :class:`~roofline_decode.measure.production_runs.ProductionRun` on ``n`` GPUs:

* **TTFT floor** = the prefill floor of one prompt of ISL tokens at batch 1
  (:func:`~roofline_decode.prefill_floor`, identical MoE routing) on the aggregate of the ``n``
  GPUs that prefill it: ``max(bytes / (n·BW), FLOPs / (n·F))``.  The request's own prefill
  comes before its first token whatever else the engine does, so the floor holds for every
  schedule; it assumes no prefix-cache hit (the benchmarks send random prompts) and adds no
  queueing and no KV transfer (disaggregated runs).
* **TPOT floor, any batch** = the decode step at batch 1 and context ISL on the ``n`` decode GPUs
  (the smallest step any decode of the request can take).  A run faster than it is a data
  error or breaks a named assumption: no speculative decoding (MTP), the formats as stated.
* **TPOT floor of the running batch** = the decode step of ``B`` sequences at the mean decode
  context ISL + (OSL − 2)/2 (DESIGN.md §4b; the step is convex in the context, so the mean
  step is at least the step at the mean context), identical routing, on the ``n`` decode GPUs,
  with ``B = min(C x decode share, batch_size x attention_dp, the batch that fits)``: by
  Little's law the C clients of a decode worker keep C·(OSL − 1)·TPOT / E2E requests decoding
  on average (:func:`decode_share`; a step of more sequences is no faster, so the mean step is
  at least the step at the mean batch).  A run faster than it ran a smaller batch: a
  concurrency the KV cache could not hold (:attr:`RunFloors.batch_that_fits`, an upper
  bound: the whole memory of the GPUs minus the weights, over the KV of ISL + 1 tokens), or
  clients the row does not state.

The aggregate of ``n`` GPUs (perfect split, no communication, weights read once) is below any
real layout, so these floors hold for tensor, expert and attention-data parallelism alike,
and where the layout fields are wrong.  ``layout_ttft_s`` and ``layout_tpot_s`` are the same
prompt and running batch on the row's own layout (:func:`worker_parallel`: the busiest rank,
collectives at link speed), tighter.  ``naive_tpot_s`` is the first check's figure: the decode
step at batch = concurrency on ``tp_size`` GPUs with uniform routing.

Examples
--------
>>> from pathlib import Path
>>> from roofline_decode.measure.production_runs import load_production_runs
>>> run = load_production_runs(Path("tests/data/measured/production/aic_silicon_hopper.csv"))[0]
>>> f = run_floors(run)
>>> f.decode_gpus, round(f.running_batch, 2), round(f.tpot_s * 1e3, 3), round(run.tpot_s * 1e3, 2)
(8, 3.9, 0.986, 10.29)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from ..errors import InvalidValueError
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from ..specs.parallel import Parallel
from .production_layouts import batch_per_rank
from .production_runs import ProductionRun, WorkerLayout

__all__ = ["RunFloors", "all_run_floors", "decode_share", "diagnosis", "run_floors", "worker_parallel"]


@dataclass(frozen=True)
class RunFloors:
    """The strict floors of one run next to its measurement (times in [s])."""

    run: ProductionRun
    decode_gpus: int
    prefill_gpus: int
    running_batch: float
    clients: float
    batch_that_fits: float
    context: float
    ttft_s: float
    tpot_s: float
    tpot_any_batch_s: float
    naive_tpot_s: float
    weight_bytes: float
    memory_bytes: float
    assumptions: tuple[str, ...]
    layout_ttft_s: float = float("nan")
    layout_tpot_s: float = float("nan")
    layout_note: str = ""
    serving_ttft_s: float = float("nan")
    serving_tpot_s: float = float("nan")
    serving_batch: float = float("nan")
    serving_note: str = ""

    @property
    def ttft_ratio(self) -> float:
        """floor / measured TTFT (above 1: the run beats the floor)."""
        return self.ttft_s / self.run.ttft_s

    @property
    def tpot_ratio(self) -> float:
        """floor of the running batch / measured TPOT."""
        return self.tpot_s / self.run.tpot_s

    @property
    def naive_tpot_ratio(self) -> float:
        """The first check's floor (batch = concurrency, tp_size GPUs, uniform routing) / measured TPOT."""
        return self.naive_tpot_s / self.run.tpot_s

    @property
    def layout_tpot_ratio(self) -> float:
        """The running batch's decode step on the row's layout / measured TPOT (nan: no layout)."""
        return self.layout_tpot_s / self.run.tpot_s

    @property
    def layout_ttft_ratio(self) -> float:
        """One prompt's prefill on the prefill worker's layout / measured TTFT (nan: no layout)."""
        return self.layout_ttft_s / self.run.ttft_s

    @property
    def beats_layout(self) -> bool:
        """The run beats a floor on its layout (False where the layout has none)."""
        return bool(self.run.ttft_s < self.layout_ttft_s or self.run.tpot_s < self.layout_tpot_s)

    @property
    def serving_ttft_ratio(self) -> float:
        """:func:`~roofline_decode.serving_floor`'s TTFT / measured (nan: none for this row)."""
        return self.serving_ttft_s / self.run.ttft_s

    @property
    def serving_tpot_ratio(self) -> float:
        """:func:`~roofline_decode.serving_floor`'s TPOT / measured (nan: none for this row)."""
        return self.serving_tpot_s / self.run.tpot_s

    @property
    def beats_serving(self) -> bool:
        """The run beats its serving floor's TTFT or TPOT (False where the row has none)."""
        return bool(self.run.ttft_s < self.serving_ttft_s or self.run.tpot_s < self.serving_tpot_s)

    @property
    def beats_ttft(self) -> bool:
        return self.run.ttft_s < self.ttft_s

    @property
    def beats_tpot(self) -> bool:
        return self.run.tpot_s < self.tpot_s

    @property
    def beats_tpot_any_batch(self) -> bool:
        return self.run.tpot_s < self.tpot_any_batch_s

    @property
    def beats(self) -> bool:
        """The run beats its TTFT floor or its running-batch TPOT floor."""
        return self.beats_ttft or self.beats_tpot

    @property
    def weights_fit(self) -> bool:
        """The weights fit in the memory of the GPUs the fields state."""
        return self.weight_bytes <= self.memory_bytes


#: The single-device prefill of one prompt and batch-1 step [s] by (model, quant modes, device, ISL).
_SINGLE: dict[tuple[str, str, str, str | None, int], tuple[float, float]] = {}
#: One prompt's prefill on a layout [s] by (model, quant modes, device, ISL, layout).
_FIRST: dict[tuple[str, str, str, str | None, int, str], float] = {}
#: Served models by (model id, gemm quant, MoE quant): one load per kind of row.
_MODELS: dict[tuple[str, str, str], Model] = {}


def _model(run: ProductionRun) -> Model:
    key = (str(run.model_id), run.gemm_quant, run.moe_quant)
    if key not in _MODELS:
        if len(_MODELS) > 256:
            _MODELS.clear()
        _MODELS[key] = run.served_model()
    return _MODELS[key]


@lru_cache(maxsize=8)
def _device(device_id: str) -> Accelerator:
    from ..catalog import load_accelerator

    return load_accelerator(device_id)


def _served(run: ProductionRun) -> tuple[Model, Accelerator]:
    if not run.expressible or run.model_id is None or run.accelerator is None:
        raise InvalidValueError("run", run.run_id, f"an expressible row (this one: {run.unexpressible})")
    return _model(run), _device(run.accelerator)


def _layouts(run: ProductionRun) -> tuple[WorkerLayout, WorkerLayout]:
    decode, prefill = run.decode_layout, run.prefill_layout
    assert decode is not None and prefill is not None  # an expressible row has them
    return decode, prefill


def worker_parallel(layout: WorkerLayout, model: Model) -> Parallel | str:
    """The :class:`~roofline_decode.Parallel` of a worker's fields, or why they make none
    (degrees that disagree, or a split the model cannot take)."""
    from ..errors import RooflineError
    from ..floors.layout import check_layout
    from ..specs.parallel import Parallel

    ep = layout.moe_ep or 1 if model.is_moe else 1
    try:
        parallel = Parallel(tp=layout.tp, pp=layout.pp, attention_dp=layout.attention_dp, ep=ep,
                            **({"moe_tp": layout.moe_tp} if model.is_moe and layout.moe_tp else {}))
        check_layout(model, parallel)
    except RooflineError as exc:
        return f"no layout: {exc}"
    return parallel


def decode_share(run: ProductionRun) -> float:
    """The share of a request's time spent decoding, (OSL − 1)·TPOT / E2E, from its measured means.

    In a closed loop of C clients each request takes E2E = TTFT + (OSL − 1)·TPOT (the benchmark
    tools' TPOT definition), so by Little's law C·share requests decode at any moment on average.

    >>> from types import SimpleNamespace
    >>> decode_share(SimpleNamespace(output_length=101, tpot_s=0.01, ttft_s=1.0))
    0.5
    """
    decoding = (run.output_length - 1) * run.tpot_s
    return float(decoding / (run.ttft_s + decoding))


def run_floors(run: ProductionRun, *, serving: tuple[float, float, float, str] | None = None) -> RunFloors:
    """The strict TTFT and TPOT floors of an expressible run (see the module docstring).

    ``serving`` passes the run's serving floor (TTFT [s], TPOT [s], running batch, note) where
    :func:`all_run_floors` computed it for many runs at once; None computes it here.

    Raises
    ------
    InvalidValueError
        The run is not expressible (the message gives the reason).
    """
    from ..floors.capacity import capacity_bytes, kv_bytes_per_sequence
    from ..floors.decode import decode_floor
    from ..floors.prefill import prefill_floor
    from ..floors.request import mean_decode_context

    model, device = _served(run)
    decode, prefill = _layouts(run)
    n_decode, n_prefill = decode.gpus, prefill.gpus
    assumptions = ["no speculative decoding", "no prefix-cache hit", "weights and KV in the row's formats"]
    workers = 1 if run.mode == "aggregated" else (decode.workers or 1)
    if run.mode == "disaggregated" and decode.workers is None:
        assumptions.append("one decode worker (the row states none)")
    if run.concurrency is not None:
        clients = run.concurrency / workers
    elif decode.running_batch_limit is not None:
        clients = float(decode.running_batch_limit)
        assumptions.append("concurrency = batch_size x attention_dp (the row states none)")
    else:
        clients = 1.0
        assumptions.append("concurrency 1 (the row states neither concurrency nor batch)")
    decoding = decode_share(run)
    memory = n_decode * capacity_bytes(device)
    per_sequence = float(kv_bytes_per_sequence(model, run.input_length + 1))
    fits = max((memory - model.weight_bytes) / per_sequence, 0.0)
    limit = _limit(run)
    batch = max(1.0, min(clients * decoding, float(limit) if limit is not None else clients, fits))
    context = mean_decode_context(run.input_length, run.output_length)
    step = decode_floor(model, device, batch=batch, context=context, routing="identical")
    key = (str(run.model_id), run.gemm_quant, run.moe_quant, device.id, run.input_length)
    if key not in _SINGLE:  # one prompt's prefill and the batch-1 step: the same for many rows
        if len(_SINGLE) > 4096:
            _SINGLE.clear()
        _SINGLE[key] = (
            float(prefill_floor(model, device, prompt=run.input_length, batch=1, routing="identical").ttft_s),
            float(decode_floor(model, device, batch=1, context=run.input_length, routing="identical").step_time_s))
    ttft, any_batch = _SINGLE[key]
    layout_ttft, layout_tpot, layout_note = _on_layout(run, model, device, batch, float(context))
    serving_ttft, serving_tpot, serving_batch, serving_note = serving or _serving([run], [(model, device, limit)])[0]
    naive_batch = run.concurrency if run.concurrency is not None else (limit or 1)
    naive = decode_floor(model, device, batch=naive_batch, context=context, routing="uniform")
    return RunFloors(
        run=run, decode_gpus=n_decode, prefill_gpus=n_prefill, running_batch=batch, clients=clients, batch_that_fits=fits,
        context=float(context), ttft_s=ttft / n_prefill, tpot_s=float(step.step_time_s) / n_decode,
        tpot_any_batch_s=any_batch / n_decode, naive_tpot_s=float(naive.step_time_s) / decode.tp,
        weight_bytes=model.weight_bytes, memory_bytes=memory, assumptions=tuple(assumptions),
        layout_ttft_s=layout_ttft, layout_tpot_s=layout_tpot, layout_note=layout_note,
        serving_ttft_s=serving_ttft, serving_tpot_s=serving_tpot, serving_batch=serving_batch,
        serving_note=serving_note,
    )


def all_run_floors(runs: Sequence[ProductionRun]) -> list[RunFloors]:
    """:func:`run_floors` of every expressible run, in order; the serving floors of runs with the
    same model, device, layouts and limit in one broadcast :func:`~roofline_decode.serving_floor`
    call (the same numbers, several times faster on a whole table)."""
    chosen = [r for r in runs if r.expressible]
    served = _serving(chosen, [(*_served(r), _limit(r)) for r in chosen])
    return [run_floors(r, serving=s) for r, s in zip(chosen, served)]


def _limit(run: ProductionRun) -> int | None:
    """The running-batch limit of the run's decode worker (None: none stated, or batch_size is per GPU)."""
    decode = _layouts(run)[0]
    return None if batch_per_rank(decode, run.concurrency) else decode.running_batch_limit


def _serving(runs: Sequence[ProductionRun],
             served: Sequence[tuple[Model, Accelerator, int | None]]) -> list[tuple[float, float, float, str]]:
    """:func:`~roofline_decode.serving_floor` of each run (strict: identical routing, sharded MLA
    latents, the row's layouts and worker counts, its running-batch limit as ``max_batch``) as
    (TTFT [s], TPOT [s], running batch of a decode worker, note); nan and the reason where the
    row has no concurrency or its fields make no layout.  Runs that share a model, device,
    layouts and limit are computed in one broadcast call."""
    from ..floors.serving import serving_floor

    out: list[tuple[float, float, float, str]] = [(float("nan"),) * 3 + ("",)] * len(runs)
    groups: dict[tuple[object, ...], list[int]] = {}
    settings: dict[tuple[object, ...], dict[str, object]] = {}
    for i, (run, (model, device, limit)) in enumerate(zip(runs, served)):
        if run.concurrency is None:
            out[i] = (float("nan"),) * 3 + ("no serving floor: the row states no concurrency",)
            continue
        decode, prefill = _layouts(run)
        decode_parallel, prefill_parallel = worker_parallel(decode, model), worker_parallel(prefill, model)
        if isinstance(decode_parallel, str) or isinstance(prefill_parallel, str):
            reason = decode_parallel if isinstance(decode_parallel, str) else prefill_parallel
            out[i] = (float("nan"),) * 3 + (f"no serving floor: {reason}",)
            continue
        if run.mode == "aggregated":
            kwargs: dict[str, object] = {"parallel": decode_parallel,
                                         "max_batch": None if limit is not None and limit >= run.concurrency else limit}
        else:
            kwargs = {"mode": "disaggregated", "prefill_parallel": prefill_parallel, "decode_parallel": decode_parallel,
                      "prefill_workers": prefill.workers or 1, "decode_workers": decode.workers or 1, "max_batch": limit}
        key: tuple[object, ...] = (id(model), id(device), *(str(v) for v in kwargs.values()), run.mode)
        groups.setdefault(key, []).append(i)
        settings[key] = {"model": model, "accelerator": device, **kwargs}
    for group, members in groups.items():
        given = settings[group]
        result = serving_floor(
            given.pop("model"), given.pop("accelerator"), [runs[i].concurrency for i in members],  # type: ignore[arg-type]
            [runs[i].input_length for i in members], [runs[i].output_length for i in members], routing="identical",
            **given)  # type: ignore[arg-type]
        for j, i in enumerate(members):
            tpot = float(result.tpot_s[j])
            note = f"limited by {result.limited_by[j]}" + ("" if math.isfinite(tpot) else
                                                           "; weights and one sequence do not fit")
            out[i] = (float(result.ttft_s[j]), tpot, float(result.running_batch[j]), note)
    return out


def _on_layout(run: ProductionRun, model: Model, device: Accelerator, batch: float,
               context: float) -> tuple[float, float, str]:
    """One prompt's prefill on the prefill worker's layout and the running batch's decode step on
    the decode worker's (strict: identical routing, sharded MLA latents, communication at link
    speed overlapped); nan and the reason where the fields make no layout."""
    from ..floors.decode import decode_floor
    from ..floors.prefill import prefill_floor

    decode, prefill = _layouts(run)
    decode_parallel, prefill_parallel = worker_parallel(decode, model), worker_parallel(prefill, model)
    for parallel in (decode_parallel, prefill_parallel):
        if isinstance(parallel, str):
            return float("nan"), float("nan"), parallel
    assert not isinstance(decode_parallel, str) and not isinstance(prefill_parallel, str)
    step = decode_floor(model, device, batch=batch, context=context, routing="identical", parallel=decode_parallel)
    key = (str(run.model_id), run.gemm_quant, run.moe_quant, device.id, run.input_length, str(prefill_parallel))
    if key not in _FIRST:
        if len(_FIRST) > 4096:
            _FIRST.clear()
        _FIRST[key] = float(prefill_floor(model, device, prompt=run.input_length, batch=1, routing="identical",
                                          parallel=prefill_parallel).ttft_s)
    return _FIRST[key], float(step.step_time_s), f"layouts {prefill_parallel} / {decode_parallel}"


def diagnosis(floors: RunFloors) -> str | None:
    """Why a run beats a floor, aggregate or on its layout (a data error, missing data, or the
    named assumption it breaks); None if it beats none."""
    run = floors.run
    slow_tpot = run.tpot_s < floors.tpot_s or run.tpot_s < floors.layout_tpot_s
    if not (floors.beats or floors.beats_layout or floors.beats_serving):
        return None
    reasons: list[str] = []
    if run.data_problems:
        reasons.append("data error: " + "; ".join(run.data_problems))
    if not floors.weights_fit:
        reasons.append(f"data error: {floors.weight_bytes / 1e9:.0f} GB of weights do not fit in the "
                       f"{floors.memory_bytes / 1e9:.0f} GB of the {floors.decode_gpus} GPUs the fields state")
    if floors.beats_ttft or run.ttft_s < floors.layout_ttft_s:
        reasons.append(f"TTFT {run.ttft_s * 1e3:.4g} ms < the prefill of one prompt ({floors.ttft_s * 1e3:.4g} ms, "
                       f"{floors.layout_ttft_s * 1e3:.4g} ms on the layout): breaks 'no prefix-cache hit' or the "
                       "stated GPUs")
    decode = run.decode_layout
    if floors.beats_tpot_any_batch:
        reasons.append(f"TPOT {run.tpot_s * 1e3:.4g} ms < the batch-1 step {floors.tpot_any_batch_s * 1e3:.4g} ms: "
                       "breaks 'no speculative decoding' (MTP) or the stated formats and GPUs")
    elif (slow_tpot or run.tpot_s < floors.serving_tpot_s) and run.concurrency is None:
        reasons.append(f"data incomplete: the row states no concurrency, and its batch_size x attention_dp "
                       f"({floors.clients:g} per decode worker) is the engine's limit, not the running batch")
    elif (slow_tpot or run.tpot_s < floors.serving_tpot_s) and run.mode == "disaggregated" and decode is not None \
            and decode.workers is None:
        reasons.append(f"data incomplete: the row states no decode worker count, so all {run.concurrency} clients "
                       f"were put on one worker ({floors.running_batch:.0f} sequences decoding); with more decode "
                       "workers each runs fewer")
    elif slow_tpot and run.concurrency is not None and run.concurrency > floors.batch_that_fits:
        reasons.append(f"the concurrency {run.concurrency} exceeds the {floors.batch_that_fits:.0f} sequences of "
                       f"{run.input_length + 1} tokens that fit: the running batch was smaller")
    elif slow_tpot:
        reasons.append(f"TPOT {run.tpot_s * 1e3:.4g} ms < the step of {floors.running_batch:g} sequences "
                       f"({floors.tpot_s * 1e3:.4g} ms, {floors.layout_tpot_s * 1e3:.4g} ms on the layout): the "
                       "running batch was smaller than the concurrency")
    elif run.tpot_s < floors.serving_tpot_s:
        reasons.append(_serving_diagnosis(floors))
    if run.ttft_s < floors.serving_ttft_s and not (floors.beats_ttft or run.ttft_s < floors.layout_ttft_s):
        reasons.append(f"TTFT {run.ttft_s * 1e3:.4g} ms < the serving floor's {floors.serving_ttft_s * 1e3:.4g} ms "
                       f"({floors.serving_note}): requests did not queue as the clients and the running-batch limit "
                       "imply")
    return "; ".join(reasons)


def _serving_diagnosis(floors: RunFloors) -> str:
    """Why a run decodes faster than its serving floor's steady step (docs/serving.md A1-A3)."""
    run = floors.run
    decoding = floors.clients * decode_share(run)
    text = (f"TPOT {run.tpot_s * 1e3:.4g} ms < the serving floor's {floors.serving_tpot_s * 1e3:.4g} ms "
            f"({floors.serving_note}, {floors.serving_batch:.0f} sequences running)")
    if decoding < 0.5 * floors.serving_batch:
        return (f"{text}: breaks A3 (every client that fits runs): its TTFT is {1 - decode_share(run):.0%} of its "
                f"end-to-end latency, so about {decoding:.0f} requests decoded at a time (Little's law); a cap on "
                "running requests the row does not state")
    return (f"{text}, {1 - run.tpot_s / floors.serving_tpot_s:.1%} faster: at the floor's compute ceiling; breaks A2 "
            "(prompts riding along every decode step evenly) or a stated format (the lm_head and attention FLOPs "
            "at their own peaks)")
