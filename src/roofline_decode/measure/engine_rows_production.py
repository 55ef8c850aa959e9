"""The production-engine runs (TensorRT-LLM, vLLM, SGLang on H100 / H200 SXM) of
``shared/reference/measured/production/aic_silicon_hopper.csv`` as step-model terms.

Until ``serving_floor`` (the TTFT / TPOT floors of continuous batching) is on main, TPOT is
fitted on the **TP decode-step floor of the running batch** (stated here once; the profiles'
notes repeat it):

* devices n = the larger of TP x PP and MoE-TP x MoE-EP of the (decode) workers, their aggregate
  bandwidth and peak (attention weights replicated by attention DP are not counted: a lower
  bound); rows claiming more than 8 GPUs for one replica (an HGX node holds 8) are skipped, as
  the README's quirks say;
* the running batch: ``batch_size`` x attention-DP ranks, capped at the batch whose KV cache (at
  ISL + OSL tokens) fits beside the weights in the devices' usable memory (the README: some
  concurrencies exceed what fits, so fewer sequences ran);
* the mean context of a decode step: ISL + (OSL - 2) / 2 (the request convention of
  :mod:`roofline_decode.floors.request`);
* aggregated serving (``mode = agg``) interleaves prefills with decode steps: B / OSL new
  requests of ISL tokens per step, so the step carries (B / OSL) x the prefill floor of one
  ISL-token prompt (the profile's ``k_pf`` scales it); disaggregated rows use the decode
  workers' layout and carry no prefill (their batch: ``decode_batch_size`` x attention-DP ranks,
  or the client concurrency of ``silicon_data_source`` where the batch is not given);
* formats: ``gemm_quant_mode`` fp8 and fp8_block -> ``fp8`` (block scales: 0.01 % of the bytes), nvfp4 ->
  ``nvfp4``, int4_wo -> ``int4``, with an fp8 KV cache (the README: quantized runs use one);
  unquantized rows use the model's own formats;
* TTFT rows (agg only) pair the measured TTFT with the prefill floor of one ISL-token prompt.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import RooflineError
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .engine_profile import StepTerms, step_terms
from .engine_rows import EngineRows
from .rows import read_csv_records

__all__ = ["PRODUCTION_FILE", "PRODUCTION_ENGINES", "ProductionRun", "TtftRows", "production_runs", "production_rows"]

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


@dataclass
class TtftRows:
    """TTFT rows of one engine: measured TTFT [s], the prefill floor of one prompt [s], devices."""

    engine: str
    measured_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    prefill_floor_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    batch: np.ndarray = field(default_factory=lambda: np.zeros(0))
    device_ids: list[str] = field(default_factory=list)


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
        pre = "" if agg else "decode_"
        tp, pp = _int(rec[f"{pre}tp_size"]) or 1, _int(rec[f"{pre}pp_size"]) or 1
        dp = max(_int(rec[f"{pre}attention_dp_size"]), 1)
        moe = max(_int(rec[f"{pre}moe_tp_size"]), 1) * max(_int(rec[f"{pre}moe_ep_size"]), 1)
        n = max(tp * pp, moe)
        batch = _int(rec[f"{pre}batch_size"]) * dp
        concurrency = re.search(r"silicon_concurrency=(\d+)", rec.get("silicon_data_source", ""))
        if batch < 1 and concurrency:
            batch = int(concurrency[1])
        if n > _NODE_GPUS:
            skipped.append((where, f"{n} GPUs for one replica: more than an 8-GPU node (the parallelism fields disagree)"))
            continue
        if batch < 1:
            skipped.append((where, "no batch size and no concurrency"))
            continue
        fmt = _FORMATS.get(rec["gemm_quant_mode"].strip())
        try:
            model = load_model(model_id, weights=fmt, kv="fp8" if fmt else None)
            ttft, tpot = float(rec["silicon_ttft_ms"]) * 1e-3, float(rec["silicon_tpot_ms"]) * 1e-3
        except (RooflineError, ValueError) as exc:
            skipped.append((where, f"cannot place: {exc}"))
            continue
        runs.append(ProductionRun(engine, model, load_accelerator(device_id), n, float(batch), _int(rec["isl"]),
                                  _int(rec["osl"]), agg, ttft, tpot, where))
    return runs, skipped


def _running_batch(run: ProductionRun) -> float:
    from ..floors.capacity import kv_bytes_per_sequence, usable_memory

    room = usable_memory(run.device) * run.devices - run.model.weight_bytes
    per_sequence = float(kv_bytes_per_sequence(run.model, run.isl + run.osl))
    fitting = math.floor(room / per_sequence) if per_sequence > 0 else run.batch
    return float(min(run.batch, fitting))


_PREFILL_CACHE: dict[tuple[str, str, str, str, int], float] = {}


def _prefill_floor(run: ProductionRun) -> float:
    """The prefill floor [s] of one ISL-token prompt on the run's devices (aggregate peak)."""
    from ..floors.prefill import prefill_floor

    key = (run.model.name, run.model.weight_format.name, run.model.kv_format.name, run.device.id or run.device.name,
           run.isl)
    if key not in _PREFILL_CACHE:
        p = prefill_floor(run.model, run.device, prompt=run.isl)
        _PREFILL_CACHE[key] = max(float(p.memory_time_s), float(p.compute_time_s))
    return _PREFILL_CACHE[key] / run.devices


def production_rows(folder: str | Path) -> tuple[dict[str, EngineRows], dict[str, TtftRows]]:
    """TPOT rows as step terms and TTFT rows, by engine (``tensorrt-llm``, ``vllm``, ``sglang``)."""
    runs, skipped = production_runs(folder)
    tpot = {e: EngineRows(engine=e) for e in PRODUCTION_ENGINES.values()}
    ttft = {e: TtftRows(engine=e) for e in PRODUCTION_ENGINES.values()}
    parts: dict[str, list[StepTerms]] = {e: [] for e in tpot}
    times: dict[str, list[float]] = {e: [] for e in tpot}
    ttft_lists: dict[str, tuple[list[float], list[float], list[float]]] = {e: ([], [], []) for e in tpot}
    for run in runs:
        out = tpot[run.engine]
        batch = _running_batch(run)
        if batch < 1:
            out.dropped.append((run.source, "weights leave no room for one sequence's KV cache"))
            continue
        prefill = _prefill_floor(run)
        context = run.isl + (run.osl - 2) / 2
        terms = step_terms(run.model, run.device, batch, context, tensor_parallel=run.devices,
                           prefill_s=batch / run.osl * prefill if run.aggregated else 0.0)
        device_id = run.device.id or run.device.name
        if run.aggregated and run.ttft_s >= prefill:
            ttft_lists[run.engine][0].append(run.ttft_s)
            ttft_lists[run.engine][1].append(prefill)
            ttft_lists[run.engine][2].append(batch)
            ttft[run.engine].device_ids.append(device_id)
        if run.tpot_s < float(terms.floor_s):
            out.dropped.append((run.source, f"TPOT {run.tpot_s * 1e3:.4g} ms is below the decode-step floor "
                                            f"{float(terms.floor_s) * 1e3:.4g} ms of this layout"))
            continue
        out.device_ids.append(device_id)
        out.bandwidths[device_id] = float(run.device.memory_bandwidth)
        parts[run.engine].append(StepTerms(*(np.ravel(getattr(terms, f)) for f in StepTerms.FIELDS)))
        times[run.engine].append(run.tpot_s)
    for e in tpot:
        if parts[e]:
            tpot[e].terms = StepTerms.stack(parts[e])
        tpot[e].measured_s = np.array(times[e])
        ttft[e].measured_s, ttft[e].prefill_floor_s, ttft[e].batch = (np.array(v) for v in ttft_lists[e])
    del skipped
    return tpot, ttft


def engine_of_backend(backend: str) -> str | None:
    """The profile name of a production CSV ``backend`` value (``trtllm`` -> ``tensorrt-llm``)."""
    return PRODUCTION_ENGINES.get(re.sub(r"\s+", "", backend))
