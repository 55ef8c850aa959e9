"""The measured runs of ``shared/reference/measured/`` grouped by engine, as step-model terms.

Engines and their files (the only data engine profiles are fitted on):

* ``llama.cpp-cuda``, ``llama.cpp-metal`` — ``llamacpp/xiongjiedai_llamacpp_gpu_benchmarks.csv``
  (:mod:`.published_llamacpp`);
* ``gpt-fast`` — ``gpt_fast.csv``; ``exllama`` — ``exllama.csv`` (ExLlama v1 and ExLlamaV2
  together: one profile); ``hf-eager`` — ``knlp_full_model_decode.csv`` (HF transformers eager
  ``model.forward`` loop).

Each row becomes the terms of :func:`~roofline_decode.measure.engine_profile.step_terms` on its
layout (TP from the row's device count; a llama.cpp layer split as a pipeline of PP stages);
rows faster than their strict floor are dropped with the reason (they break an assumption of
the row, not of the floor), and so are rows whose weights and KV cache exceed the devices'
memory (the run offloaded to the host).  llama.cpp's December-2023 multi-GPU rows (layer split,
``./main``) are not fitted: the README warns that some are faster than any layer split of the
stated model (13 of them are below the one-device-bandwidth floor of a split), and the rest scatter
by a factor of 3 at one model and device count; the May-2024 ``llama-bench`` rows on 4 GPUs are,
and give the hand-off cost ``t_hop``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..errors import RooflineError
from ..floors.capacity import resident_bytes, usable_memory
from ..specs.accelerator import Accelerator
from .engine_profile import StepTerms, step_terms
from .published import load_published
from .published_llamacpp import load_llamacpp_published
from .rows import MeasurementRow

__all__ = ["ENGINE_FILES", "ENGINE_DESCRIPTIONS", "EngineRows", "engine_of_row", "engine_rows", "rows_to_terms"]

#: engine -> files (relative to the measured folder) its rows come from
ENGINE_FILES: dict[str, tuple[str, ...]] = {
    "llama.cpp-cuda": ("llamacpp/xiongjiedai_llamacpp_gpu_benchmarks.csv",),
    "llama.cpp-metal": ("llamacpp/xiongjiedai_llamacpp_gpu_benchmarks.csv",),
    "gpt-fast": ("gpt_fast.csv",),
    "exllama": ("exllama.csv",),
    "hf-eager": ("knlp_full_model_decode.csv",),
}
ENGINE_DESCRIPTIONS = {
    "llama.cpp-cuda": "llama.cpp, CUDA backend (llama-bench tg / ./main eval rate, batch 1, GGUF Q4_K_M, Q4_0, F16)",
    "llama.cpp-metal": "llama.cpp, Metal backend on Apple silicon (llama-bench tg / ./main eval rate, batch 1)",
    "gpt-fast": "pytorch-labs gpt-fast (torch.compile reduce-overhead; bf16, int8, int4 weight-only; TP 1-8)",
    "exllama": "turboderp ExLlama v1 and ExLlamaV2 (GPTQ 4-bit, EXL2; batch 1)",
    "hf-eager": "Hugging Face transformers eager model.forward loop with past_key_values (knlp campaign)",
}


@dataclass
class EngineRows:
    """Rows of one engine as terms, with their measured times, devices and the rows left out."""

    engine: str
    rows: list[MeasurementRow] = field(default_factory=list)
    terms: StepTerms | None = None
    measured_s: np.ndarray = field(default_factory=lambda: np.zeros(0))
    device_ids: list[str] = field(default_factory=list)
    bandwidths: dict[str, float] = field(default_factory=dict)
    dropped: list[tuple[str, str]] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)


def engine_of_row(row: MeasurementRow, default: str) -> str:
    """The engine a published row belongs to (its label starts with it for llama.cpp)."""
    for name in ("llama.cpp-metal", "llama.cpp-cuda"):
        if row.label.startswith(name):
            return name
    return default


def _device(row: MeasurementRow) -> Accelerator:
    from ..catalog import load_accelerator

    return load_accelerator(row.accelerator) if row.accelerator is not None else load_accelerator("")


def _model(row: MeasurementRow) -> object:
    from ..catalog import load_model

    assert row.model is not None
    return load_model(row.model, weights=row.weight_format, kv=row.kv_format)


def rows_to_terms(engine: str, rows: list[MeasurementRow]) -> EngineRows:
    """Terms of ``rows`` (each on its own model, formats, device and layout); rows faster than
    their strict floor are dropped."""
    out = EngineRows(engine=engine)
    parts: list[StepTerms] = []
    times = []
    for row in rows:
        device = _device(row)
        model = _model(row)
        terms = step_terms(model, device, row.batch, row.context, tensor_parallel=row.num_devices,  # type: ignore[arg-type]
                           pipeline_parallel=row.pipeline_parallel, routing=row.routing)
        measured = row.step_time
        resident = float(resident_bytes(model, row.batch, row.context))  # type: ignore[arg-type]
        room = usable_memory(device) * row.num_devices * row.pipeline_parallel
        if resident > room:
            out.dropped.append((row.source, f"weights and KV ({resident / 1e9:.4g} GB) exceed the devices' usable memory "
                                            f"({room / 1e9:.4g} GB): the run offloaded, which the step model leaves out"))
            continue
        if measured < float(terms.floor_s):
            out.dropped.append((row.source, f"measured {measured * 1e3:.4g} ms is below its strict floor "
                                            f"{float(terms.floor_s) * 1e3:.4g} ms on this layout"))
            continue
        device_id = device.id or device.name
        out.rows.append(row)
        out.models.append(model.name)  # type: ignore[attr-defined]
        out.device_ids.append(device_id)
        out.bandwidths[device_id] = float(device.memory_bandwidth)
        parts.append(StepTerms(*(np.ravel(getattr(terms, f)) for f in StepTerms.FIELDS)))
        times.append(measured)
    if parts:
        out.terms = StepTerms.stack(parts)
    out.measured_s = np.array(times)
    return out


def engine_rows(folder: str | Path, engines: tuple[str, ...] | None = None) -> dict[str, EngineRows]:
    """The single-device-engine rows of the measured folder (``shared/reference/measured``), by engine."""
    folder = Path(folder)
    wanted = tuple(ENGINE_FILES) if engines is None else engines
    grouped: dict[str, list[MeasurementRow]] = {e: [] for e in wanted}
    llama = load_llamacpp_published(folder / ENGINE_FILES["llama.cpp-cuda"][0])
    for row in llama.rows:
        engine = engine_of_row(row, "llama.cpp-cuda")
        if row.pipeline_parallel > 1 and row.notes.startswith("Dec 2023"):  # see the module docstring
            continue
        if engine in grouped:
            grouped[engine].append(row)
    for engine in ("gpt-fast", "exllama", "hf-eager"):
        if engine in grouped:
            try:
                grouped[engine] += load_published(folder / ENGINE_FILES[engine][0]).rows
            except RooflineError:
                raise
    return {e: rows_to_terms(e, rows) for e, rows in grouped.items()}
