"""The production-engine runs (TensorRT-LLM, vLLM, SGLang on H100 / H200 SXM) of
``shared/reference/measured/production/aic_silicon_hopper.csv`` as step-model terms, on
:func:`~roofline_decode.floors.serving.serving_floor`'s terms (stated here once; the profiles'
notes repeat it):

* each row is a closed-loop serving run: its client concurrency (``silicon_concurrency`` of
  ``silicon_data_source``; ``batch_size`` x attention-DP ranks where that is missing), ISL and
  OSL, and its layout (``tp_size``, ``pp_size``, ``moe_ep_size``, ``attention_dp_size``,
  ``moe_tp_size``; the ``decode_*`` and ``prefill_*`` columns of a disaggregated run, one
  worker of each, as many workers as ``prefill_num_workers`` / ``decode_num_workers``) go to
  ``serving_floor``, which gives the running batch the KV cache holds,
  the sequences a request's decode steps carry (``decode_batch``), their mean context and the
  prompt tokens riding along each step (aggregated mode);
* TPOT is fitted on the decode step of ``decode_batch`` sequences at that context on the
  (decode) layout's devices (:func:`~roofline_decode.measure.engine_profile.step_terms`: their
  aggregate bandwidth, 2 L all-reduces when they are more than one, the experts a device runs:
  MoE layers x distinct experts read / EP) plus the interleaved prefill, T_pf = (prompt tokens
  per step / ISL) x the prefill floor of one prompt (the profile's ``k_pf`` scales it; 0 for a
  disaggregated run, whose decode workers carry no prompt);
* TTFT is fitted on serving_floor's prefill floor of the request (plus the KV transfer of a
  disaggregated run), its queue floor, its TPOT floor (the step a new request waits on) and the
  prompt tokens (:mod:`.engine_ttft`);
* rows whose parallelism fields disagree (more GPUs than an 8-GPU node for one replica, a layout
  the floors refuse) are skipped with the reason, as the README's quirks say;
* formats: ``gemm_quant_mode`` fp8 and fp8_block -> ``fp8`` (block scales: 0.01 % of the bytes),
  nvfp4 -> ``nvfp4``, int4_wo -> ``int4``, with an fp8 KV cache (the README: quantized runs use
  one); unquantized rows use the model's own formats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import RooflineError
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from ..specs.parallel import Parallel
from .engine_fit import STEP_PRIOR, Prior
from .engine_profile import StepTerms, step_terms
from .engine_rows import EngineRows
from .rows import read_csv_records

__all__ = ["PRODUCTION_FILE", "PRODUCTION_ENGINES", "ProductionRun", "TtftRows", "production_runs", "production_rows",
           "serving_terms", "models_by_device", "dropped_counts", "DUPLICATE", "DATA_ERROR", "PRODUCTION_LOSS", "PRODUCTION_PRIOR",
           "TTFT_LOSS", "TTFT_TERMS"]

PRODUCTION_FILE = "production/aic_silicon_hopper.csv"
#: backend column -> engine profile name
PRODUCTION_ENGINES = {"trtllm": "tensorrt-llm", "vllm": "vllm", "sglang": "sglang"}
_MODELS = {"qwen/qwen3-32b": "qwen3-32b", "deepseek-ai/deepseek-r1": "deepseek-r1", "deepseek-ai/deepseek-v3": "deepseek-v3",
           "openai/gpt-oss-120b": "gpt-oss-120b", "meta-llama/llama-3.1-8b-instruct": "llama-3.1-8b",
           "nvidia/llama-3.1-8b-instruct-fp8": "llama-3.1-8b", "qwen/qwen3-235b-a22b-fp8": "qwen3-235b-a22b",
           "meta-llama/llama-3.1-70b": "llama-3.1-70b", "minimaxai/minimax-m2.5": "minimax-m2.5",
           "qwen/qwen3.5-397b-a17b": "qwen3.5-397b-a17b", "zhipuai/glm-5": "glm-5"}
_FORMATS = {"fp8": "fp8", "fp8_block": "fp8", "nvfp4": "nvfp4", "int4_wo": "int4"}
_DEVICES = {"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm"}
_NODE_GPUS = 8


@dataclass(frozen=True)
class ProductionRun:
    """One placed row: engine, model (in its formats), device, layout and measured TTFT / TPOT [s]."""

    engine: str
    model: Model
    device: Accelerator
    devices: int
    batch: float
    isl: int
    osl: int
    aggregated: bool
    ttft_s: float
    tpot_s: float
    source: str
    parallel: Parallel
    prefill_parallel: Parallel
    workers: tuple[int, int] = (1, 1)


@dataclass
class TtftRows:
    """TTFT rows of one engine: measured TTFT [s], serving_floor's prefill (+ KV transfer),
    queue and TPOT floors [s], client concurrency, prompt and output tokens, serving_floor's
    TTFT floor [s] (what no prediction goes below), devices and models."""

    engine: str
    measured_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prefill_floor_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    queue_floor_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    clients: np.ndarray = field(default_factory=lambda: np.zeros(0))
    step_floor_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prompt_tokens: np.ndarray = field(default_factory=lambda: np.zeros(0))
    output_tokens: np.ndarray = field(default_factory=lambda: np.zeros(0))
    floor_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    device_ids: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)


def _int(text: str) -> int:
    return int(float(text)) if text and text.strip() else 0


def production_runs(folder: str | Path) -> tuple[list[ProductionRun], list[tuple[str, str]]]:
    """Placed runs of the production CSV and the skipped rows with their reasons."""
    from ..catalog import load_accelerator, load_model

    path = Path(folder) / PRODUCTION_FILE
    runs: list[ProductionRun] = []
    skipped: list[tuple[str, str]] = []
    for line, rec in enumerate(read_csv_records(path), start=2):
        where = f"{path.name}:{line}"
        model_id = _MODELS.get(rec["model_path"].strip().lower())
        engine = PRODUCTION_ENGINES.get(rec["backend"].strip())
        device_id = _DEVICES.get(rec["system"].strip())
        if model_id is None or engine is None or device_id is None:
            skipped.append((where, f"{rec['model_path']} / {rec['backend']} / {rec['system']} not placed"))
            continue
        agg = rec["mode"].strip() == "agg"
        layouts = []
        for pre in ("", "decode_", "prefill_") if not agg else ("",):
            tp, pp = _int(rec[f"{pre}tp_size"]) or 1, _int(rec[f"{pre}pp_size"]) or 1
            dp = max(_int(rec[f"{pre}attention_dp_size"]), 1)
            ep, moe_tp = max(_int(rec[f"{pre}moe_ep_size"]), 1), max(_int(rec[f"{pre}moe_tp_size"]), 1)
            layouts.append((tp, pp, dp, ep, moe_tp, _int(rec[f"{pre}batch_size"]) * dp))
        decode = layouts[0] if agg else layouts[1]
        prefill = layouts[0] if agg else layouts[2]
        concurrency = re.search(r"silicon_concurrency=(\d+)", rec.get("silicon_data_source", ""))
        batch = int(concurrency[1]) if concurrency else decode[5]
        n = max(d[0] * d[1] * d[2] for d in (decode, prefill))
        if n > _NODE_GPUS:
            skipped.append((where, f"{n} GPUs for one worker: more than an 8-GPU node (the parallelism fields disagree)"))
            continue
        if batch < 1:
            skipped.append((where, "no concurrency and no batch size"))
            continue
        fmt = _FORMATS.get(rec["gemm_quant_mode"].strip())
        try:
            model = load_model(model_id, weights=fmt, kv="fp8" if fmt else None)
            ttft, tpot = float(rec["silicon_ttft_ms"]) * 1e-3, float(rec["silicon_tpot_ms"]) * 1e-3
            layout, prefill_layout = (_layout(d, model) for d in (decode, prefill))
        except (RooflineError, ValueError) as exc:
            skipped.append((where, f"cannot place: {str(exc).splitlines()[0]}"))
            continue
        workers = (1, 1) if agg else (max(_int(rec["prefill_num_workers"]), 1), max(_int(rec["decode_num_workers"]), 1))
        runs.append(ProductionRun(engine, model, load_accelerator(device_id), layout.num_devices, float(batch),
                                  _int(rec["isl"]), _int(rec["osl"]), agg, ttft, tpot, where, layout, prefill_layout,
                                  workers))
    return runs, skipped


def _decoding_share(run: ProductionRun) -> float:
    """(N_out - 1) TPOT / ((N_out - 1) TPOT + TTFT) of a run's measurements [1]."""
    decoding = (max(run.osl, 2) - 1) * run.tpot_s
    return decoding / (decoding + run.ttft_s)


def _layout(degrees: tuple[int, int, int, int, int, int], model: Model) -> Parallel:
    """The Parallel of (tp, pp, attention DP, EP, MoE TP) as the row states it.  A dense model
    has no experts to split (its EP and MoE TP are dropped); a MoE row whose MoE TP x EP is not
    TP x attention DP keeps its EP and takes the MoE TP that completes the stage, where one does."""
    tp, pp, dp, ep, moe_tp, _ = degrees
    if not model.is_moe:
        return Parallel(tp=tp, pp=pp, dp=dp)
    stage = tp * dp
    if moe_tp * ep != stage:
        moe_tp = stage // ep if ep <= stage and stage % ep == 0 else moe_tp
    return Parallel(tp=tp, pp=pp, ep=ep, dp=dp, moe_tp=moe_tp)


def _serving(run: ProductionRun) -> Any:
    from ..floors.serving import serving_floor

    if run.aggregated:
        return serving_floor(run.model, run.device, concurrency=int(run.batch), input_length=run.isl,
                             output_length=max(run.osl, 2), parallel=run.parallel)
    return serving_floor(run.model, run.device, concurrency=int(run.batch), input_length=run.isl,
                         output_length=max(run.osl, 2), mode="disaggregated", decode_parallel=run.parallel,
                         prefill_parallel=run.prefill_parallel, prefill_workers=run.workers[0],
                         decode_workers=run.workers[1])


def production_rows(folder: str | Path, decoding_clients: bool = False
                    ) -> tuple[dict[str, EngineRows], dict[str, TtftRows]]:
    """TPOT rows as step terms and TTFT rows, by engine (``tensorrt-llm``, ``vllm``, ``sglang``).

    ``decoding_clients`` (a diagnostic, ``benchmarks/sglang_rows.py``): each run's clients are
    first scaled by the share of its closed-loop cycle spent decoding, (N_out - 1) TPOT /
    ((N_out - 1) TPOT + TTFT) from its *measured* TTFT and TPOT (Little's law: the clients that are
    decoding at a time), so the rows say how much of a TPOT error a queue before the first token
    explains; no profile is fitted with it (it needs the measurement it would predict)."""
    runs, _ = production_runs(folder)
    if decoding_clients:
        runs = [replace(run, batch=float(max(1, round(run.batch * _decoding_share(run))))) for run in runs]
    flagged, served = _flagged(folder)
    tpot = {e: EngineRows(engine=e) for e in PRODUCTION_ENGINES.values()}
    ttft = {e: TtftRows(engine=e) for e in PRODUCTION_ENGINES.values()}
    parts: dict[str, list[StepTerms]] = {e: [] for e in tpot}
    times: dict[str, list[float]] = {e: [] for e in tpot}
    ttft_lists: dict[str, tuple[list[float], ...]] = {e: ([], [], [], [], [], [], [], []) for e in tpot}
    for run in runs:
        out = tpot[run.engine]
        if run.source in flagged:
            out.dropped.append((run.source, flagged[run.source]))
            continue
        if run.source in served:
            run = replace(run, model=served[run.source])
        try:
            sf = _serving(run)
        except RooflineError as exc:
            out.dropped.append((run.source, f"serving_floor refuses the row: {str(exc).splitlines()[0]}"))
            continue
        serving = serving_terms(run.model, run.device, sf, run.isl, run.devices, run.parallel.ep)
        if serving is None:
            out.dropped.append((run.source, "the KV cache holds no sequence beside the weights"))
            continue
        terms, prefill, queue = serving
        device_id = run.device.id or run.device.name
        if run.ttft_s >= prefill + queue:
            ttft_lists[run.engine][0].append(run.ttft_s)
            ttft_lists[run.engine][1].append(prefill)
            ttft_lists[run.engine][2].append(queue)
            ttft_lists[run.engine][3].append(run.batch)
            ttft_lists[run.engine][4].append(float(np.ravel(sf.tpot_s)[0]))
            ttft_lists[run.engine][5].append(float(run.isl))
            ttft_lists[run.engine][6].append(max(float(np.ravel(sf.ttft_s)[0]), prefill + queue))
            ttft_lists[run.engine][7].append(float(max(run.osl, 2)))
            ttft[run.engine].device_ids.append(device_id)
            ttft[run.engine].models.append(run.model.name)
        if run.tpot_s < float(terms.floor_s):
            out.dropped.append((run.source, f"TPOT {run.tpot_s * 1e3:.4g} ms is below the decode-step floor "
                                            f"{float(terms.floor_s) * 1e3:.4g} ms of this layout"))
            continue
        out.device_ids.append(device_id)
        out.models.append(run.model.name)
        out.sources.append(run.source)
        out.bandwidths[device_id] = float(run.device.memory_bandwidth)
        parts[run.engine].append(StepTerms(*(np.ravel(getattr(terms, f)) for f in StepTerms.FIELDS)))
        times[run.engine].append(run.tpot_s)
    for e in tpot:
        if parts[e]:
            tpot[e].terms = StepTerms.stack(parts[e])
        tpot[e].measured_s = np.array(times[e])
        (ttft[e].measured_s, ttft[e].prefill_floor_s, ttft[e].queue_floor_s, ttft[e].clients, ttft[e].step_floor_s,
         ttft[e].prompt_tokens, ttft[e].floor_s, ttft[e].output_tokens) = (np.array(v) for v in ttft_lists[e])
    return tpot, ttft


#: The loss the production TPOT models are fitted with (:mod:`.engine_fit`): their rows span
#: models from 8B dense to 671B MoE; the log loss predicted unseen devices better than the
#: relative one (benchmarks/expected_accuracy.py).
PRODUCTION_LOSS = "log"
#: The production TPOT models are MAP fits toward these physical values (:data:`~.engine_fit.STEP_PRIOR`,
#: which states each one's reason): one efficiency or overhead per engine for models from 8B dense to
#: 671B MoE, where a bare fit let one parameter absorb one model's structure (e.g. SGLang fitted on
#: H200: 64 µs per all-reduce, 1.3 ms per step).
PRODUCTION_PRIOR: Prior = STEP_PRIOR
#: The loss of each engine's TTFT fit (:data:`~roofline_decode.measure.engine_ttft.TTFT_LOSSES`)
#: and the optional TTFT terms (:data:`~roofline_decode.measure.engine_ttft.TTFT_OPTIONAL`) it
#: fits: those that predicted its unseen devices (both ways) and unseen models better
#: (benchmarks/expected_accuracy.py; median error fit H100 / fit H200 / by model; before: the
#: relative loss and w_clients).  vLLM: the exact Huber loss of the log error, w_clients and the
#: host time per token of its own prompt and of the others' (40.2 / 38.6 / 43.5 % -> 22.6 /
#: 17.0 / 25.5 %; relative loss with the step wait and t_token: 29.6 / 34.6 / 37.7 %);
#: TensorRT-LLM: the relative loss, w_clients, the step wait and the others' prompt tokens (46.7 /
#: 30.7 / 32.9 % -> 42.8 / 27.7 / 32.0 %; with the exact log loss no set of terms kept the first
#: split below 45 %); SGLang: the exact log loss and the others' arrivals in place of w_clients
#: (49.8 / 62.1 / 40.8 % -> 39.8 / 30.1 / 32.0 %; with w_clients as well: 47.0 / 45.5 / 43.7 %;
#: the arrivals spread over a disaggregated run's prefill workers: 46.7 / 33.0 / 34.1 %).
TTFT_LOSS: dict[str, str] = {"vllm": "log-exact", "tensorrt-llm": "relative", "sglang": "log-exact"}
TTFT_TERMS: dict[str, tuple[str, ...]] = {"vllm": ("w_clients", "t_token", "t_others"),
                                          "tensorrt-llm": ("w_clients", "k_step", "t_others"), "sglang": ("k_arrive",)}
#: Reason prefixes of the rows :func:`production_rows` leaves out as data errors or repeats.
DUPLICATE, DATA_ERROR = "duplicate", "data error"


def _flagged(folder: str | Path) -> tuple[dict[str, str], dict[str, Model]]:
    """(source -> why the row is not fitted, source -> the served model) from
    :func:`~roofline_decode.measure.production_runs.load_production_runs`: a row repeating an
    earlier row's measurement (``duplicate_of``: one run exported by several dumps, counted once)
    or whose fields disagree (``data_problems``: the layout it states is not the one that ran) is
    not fitted; the others take ``served_model()`` (per-component weight formats: fp8 block
    scales, checkpoint MXFP4 experts, a bf16 embedding and lm_head)."""
    from .production_runs import load_production_runs

    out: dict[str, str] = {}
    served: dict[str, Model] = {}
    cache: dict[tuple[str, str, str], Model] = {}
    for run in load_production_runs(Path(folder) / PRODUCTION_FILE):
        if run.duplicate_of is not None:
            out[run.source] = f"{DUPLICATE}: the same measurement as {run.duplicate_of}"
        elif run.data_problems:
            out[run.source] = f"{DATA_ERROR}: " + "; ".join(run.data_problems)
        elif run.expressible:
            key = (str(run.model_id), run.gemm_quant, run.moe_quant)
            if key not in cache:
                cache[key] = run.served_model()
            served[run.source] = cache[key]
    return out, served


def dropped_counts(rows: EngineRows) -> dict[str, int]:
    """How many rows of ``rows`` were left out, by reason: duplicate, data error, other (below
    the decode-step floor, no room for the KV cache, refused by serving_floor)."""
    counts = {DUPLICATE: 0, DATA_ERROR: 0, "other": 0}
    for _, reason in rows.dropped:
        key = reason.split(":")[0]
        counts[key if key in counts else "other"] += 1
    return counts


def serving_terms(model: Model, device: Accelerator, sf: Any, input_length: float, devices: int,
                  expert_parallel: int = 1) -> tuple[StepTerms, float, float] | None:
    """(step terms of the steady step, TTFT's prefill floor [s], its queue floor [s]) of one
    serving floor (scalars) on ``devices`` devices, the experts spread over ``expert_parallel``;
    None when no sequence fits."""
    decode_batch = float(np.ravel(sf.decode_batch)[0])
    if not decode_batch >= 1:
        return None
    prompt = float(np.ravel(sf.prefill_s)[0])
    per_step = float(np.ravel(sf.prefill_tokens_per_step)[0]) / input_length * prompt
    terms = step_terms(model, device, decode_batch, float(np.ravel(sf.mean_context)[0]), tensor_parallel=devices,
                       prefill_s=per_step, comm_s=float(np.ravel(sf.communication_time_s)[0]),
                       expert_parallel=expert_parallel)
    transfer = float(np.ravel(sf.kv_transfer_s)[0])
    return terms, prompt + transfer, float(np.ravel(sf.queue_time_s)[0])


def models_by_device(folder: str | Path) -> dict[str, dict[str, set[str]]]:
    """engine -> device id -> the models of its placed runs that are fitted (not a duplicate or a
    data error): which models a device split shares."""
    out: dict[str, dict[str, set[str]]] = {}
    flagged = _flagged(folder)[0]
    for run in production_runs(folder)[0]:
        if run.source in flagged:
            continue
        out.setdefault(run.engine, {}).setdefault(run.device.id or run.device.name, set()).add(run.model.name)
    return out


def engine_of_backend(backend: str) -> str | None:
    """The profile name of a production CSV ``backend`` value (``trtllm`` -> ``tensorrt-llm``)."""
    return PRODUCTION_ENGINES.get(re.sub(r"\s+", "", backend))
