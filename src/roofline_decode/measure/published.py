"""Readers for the published decode timings collected in ``shared/reference/measured/``.

Each reader maps the publication's names to catalog ids and formats and returns the rows it
can place plus, for every other row, the reason it was skipped.  The mapping (documented in
``docs/measurements.md``):

* models: LLaMA-1 7B / 13B (and Koala 13B, a LLaMA-13B fine-tune) have the architecture of
  ``llama-2-7b`` / ``llama-2-13b``; models absent from the catalog are skipped;
* formats: gpt-fast ``int8`` weight-only → ``int8``; int4 group 32 (bf16 scale and zero) →
  ``int4-g32`` (5 bits); GPTQ 4-bit group g → :func:`gptq_format` (fp16 scale + packed 4-bit
  zero point per group: 4 + 20/g bits); EXL2 x bpw → :func:`exl2_format` (x bits, metadata
  included); 16-bit checkpoints → ``bf16``; knlp's KV "quantisation" is simulated (16-bit storage);
* devices: A100-SXM4-80GB → ``a100-80gb-sxm`` (gpt-fast's is power-limited to 330 W: the
  nominal bandwidth stays a valid floor); one GCD of an MI250X → :func:`mi250x_gcd` (half the
  package); RTX 3090 Ti → :func:`rtx_3090_ti` (1008 GB/s); rows split over two different GPUs
  are skipped;
* context: gpt-fast generates 200 tokens after a 5-token prompt; by the request convention
  (:mod:`roofline_decode.floors.request`: the prefill yields the first token, then 199 decode
  steps at contexts 5 … 203) its rows use the mean decode context 5 + 198 / 2 = 104 (tok/s there
  also includes the short prefill); ExLlama's "first /
  last 128 tokens" ranges use their midpoint; a context not stated is taken as 0 (the
  weights-only floor, still a lower bound).
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import RooflineError
from ..floors.request import mean_decode_context
from ..formats import NumberFormat, group_quantized
from ..specs.accelerator import Accelerator, Figure, Source
from ..specs.model import Model
from .rows import MeasurementFileError, MeasurementRow, read_csv_records

__all__ = ["PublishedRows", "load_published", "gptq_format", "exl2_format", "mi250x_gcd", "rtx_3090_ti",
           "kv_read_layer_model", "GPT_FAST_MEAN_CONTEXT", "published_layout"]

#: gpt-fast: 5-token prompt + 200 generated tokens; the mean context of its 199 decode steps.
GPT_FAST_MEAN_CONTEXT = mean_decode_context(5, 200)

_MODELS = {
    "llama-2-7b": "llama-2-7b", "llama-7b": "llama-2-7b", "llama2-7b": "llama-2-7b",
    "llama-13b": "llama-2-13b", "koala-13b": "llama-2-13b", "llama-2-13b": "llama-2-13b",
    "llama-2-70b": "llama-2-70b", "llama2-70b": "llama-2-70b",
    "llama-3.1-8b": "llama-3.1-8b", "llama-3.1-70b": "llama-3.1-70b", "llama-3.1-405b": "llama-3.1-405b",
    "mixtral-8x7b": "mixtral-8x7b", "qwen2.5-7b": "qwen2.5-7b", "qwen2.5-72b": "qwen2.5-72b",
    "gemma-2-27b": "gemma-2-27b",
}


def model_id_of(name: str) -> str | None:
    key = re.sub(r"\(.*?\)", "", name).strip().lower().split("/")[-1]
    key = re.sub(r"-(instruct(-v0\.1)?|it|chat)$", "", key)
    key = re.sub(r"\s+", "-", key)
    return _MODELS.get(key)


def gptq_format(group_size: int) -> NumberFormat:
    """GPTQ 4-bit: per group an fp16 scale and a 4-bit zero point (packed): 4 + 20/g bits."""
    return group_quantized(4, group_size, scale_bits=16, zero_point_bits=4, name=f"gptq-4bit-g{group_size}")


def exl2_format(bits_per_weight: float) -> NumberFormat:
    """EXL2 at an average of ``bits_per_weight`` (quantisation metadata included); fp16 compute."""
    return NumberFormat(name=f"exl2-{bits_per_weight:g}bpw", bits_per_element=bits_per_weight, compute_precision="fp16",
                        description="ExLlamaV2 EXL2: mixed 2-8 bit groups, stated average bits per weight")


def mi250x_gcd() -> Accelerator:
    """One GCD of an MI250X: half the package's memory, bandwidth and peaks (software sees a GCD
    as one device; see the ``mi250x`` spec notes)."""
    from ..catalog import load_accelerator

    package = load_accelerator("mi250x")
    return Accelerator(
        id="mi250x-gcd", name="AMD Instinct MI250X (one GCD)", vendor="AMD",
        memory_capacity=package.memory_capacity / 2, memory_bandwidth=package.memory_bandwidth / 2,
        peak_flops={k: v / 2 for k, v in package.peak_flops.items()},
        notes="half of the mi250x package figures (two GCDs per package)",
    )


def rtx_3090_ti() -> Accelerator:
    """NVIDIA GeForce RTX 3090 Ti (not in the catalog): 24 GB GDDR6X at 21 Gbps on 384 bits.

    Only memory figures are sourced, so the floor is the memory time alone (a valid bound).
    """
    source = Source(title="TweakTown: NVIDIA GeForce RTX 3090 Ti full specs (24GB GDDR6X at 21Gbps, 384-bit, "
                          "1008GB/sec, 450W)",
                    url="https://www.tweaktown.com/news/84164/nvidia-geforce-rtx-3090-ti-full-specs-price-performance-details/index.html",
                    retrieved="2026-11-30")
    return Accelerator(
        id="rtx-3090-ti", name="NVIDIA GeForce RTX 3090 Ti", vendor="NVIDIA", memory_type="GDDR6X",
        memory_capacity=24e9, memory_bandwidth=1008e9, tdp_w=450.0,
        figures={
            "memory_capacity": Figure(value=24, unit="GB", kind="datasheet", source="tweaktown", si_value=24e9),
            "memory_bandwidth": Figure(value=1008, unit="GB/s", kind="derived", source="tweaktown", si_value=1008e9,
                                       derivation="21 Gbps per pin x 384-bit bus / 8 = 1008 GB/s (as stated)"),
        },
        sources={"tweaktown": source},
    )


def kv_read_layer_model(kv_bits: float = 16.0) -> Model:
    """One attention layer with 8 KV heads of 128 (4096 B per token at 16 bits), as in knlp's
    attention microbenchmarks; for ``scope="kv_read"`` rows."""
    from ..catalog import load_model

    fmt = NumberFormat(name=f"kv-{kv_bits:g}bit", bits_per_element=kv_bits, compute_precision="bf16")
    return load_model("llama-3.1-8b").replace(num_layers=1, name="one attention layer (8 KV heads x 128)",
                                                kv_format=fmt)


@dataclass
class PublishedRows:
    """Rows placed on catalog models and devices, and the rows skipped with their reasons."""

    rows: list[MeasurementRow] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _number(text: str) -> float | None:
    match = re.match(r"\s*([0-9][0-9,]*\.?[0-9]*)", text or "")
    return float(match[1].replace(",", "")) if match else None


def _scaled(text: str, factor: float) -> float:
    """The number in ``text`` times ``factor``; a TypeError (a record the reader cannot read) when
    there is none, as multiplying the missing number would raise."""
    number = _number(text)
    if number is None:
        raise TypeError(f"no number in {text!r}")
    return number * factor


def _check_model(model_id: str) -> str | None:
    """None if the catalog can load the model, else why not."""
    from ..catalog import load_model

    try:
        load_model(model_id)
    except RooflineError as exc:
        return f"load_model({model_id!r}) failed: {exc}"
    return None


def _accelerator(hardware: str) -> Accelerator | str | None:
    h = hardware.lower()
    if len(set(re.findall(r"rtx \d+(?: ti)?|a100|h100|h200|b200|mi250x", h))) > 1:
        return None  # layers split over two different GPUs
    for needle, device in (("a100", "a100-80gb-sxm"), ("h100", "h100-sxm"), ("h200", "h200-sxm"),
                           ("b200", "b200"), ("w7900", "radeon-pro-w7900"), ("rtx 4090", "rtx-4090")):
        if needle in h:
            return device
    if "mi250x" in h and "gcd" in h:
        return mi250x_gcd()
    if "3090 ti" in h:
        return rtx_3090_ti()
    return None


def _gpt_fast(rec: dict[str, str]) -> dict[str, Any] | str:
    formats = {"bf16": "bf16", "int8 weight-only": "int8", "int4 weight-only, group size 32": "int4-g32"}
    if rec["weight_precision"] not in formats:
        return f"unknown weight precision {rec['weight_precision']!r}"
    tps = _number(rec["tokens_per_s"])
    if tps is None:
        return f"no timing ({rec['tokens_per_s']}: did not fit)"
    return {"model": rec["model"], "weight_format": formats[rec["weight_precision"]], "kv_format": "bf16",
            "hardware": rec["hardware"], "batch": 1, "context": GPT_FAST_MEAN_CONTEXT, "tokens_per_s": tps,
            "num_devices": int(_number(rec["num_gpus"]) or 1),
            "label": f"gpt-fast {rec['model']} {formats[rec['weight_precision']]} x{rec['num_gpus']}"}


def _exllama(rec: dict[str, str]) -> dict[str, Any] | str:
    text = rec["weight_format"]
    gptq = re.search(r"GPTQ 4-bit.*groupsize (\d+|-)", text)
    exl2 = re.search(r"EXL2 ([0-9.]+) bpw", text)
    if gptq:
        fmt = gptq_format(int(gptq[1])) if gptq[1] != "-" else NumberFormat(
            name="gptq-4bit", bits_per_element=4.0, compute_precision="fp16", description="GPTQ 4-bit, no grouping")
    elif exl2:
        fmt = exl2_format(float(exl2[1]))
    else:
        return f"unknown weight format {text!r}"
    span = re.match(r"\s*(\d+)-(\d+)", rec["context_len"] or "")
    context = (int(span[1]) + int(span[2])) / 2 if span else 0.0
    return {"model": rec["model"], "weight_format": fmt, "kv_format": "fp16", "hardware": rec["hardware"],
            "batch": 1, "context": context, "tokens_per_s": _number(rec["tokens_per_s"]),
            "label": f"{rec['repo'].split('/')[-1].split()[0]} {rec['model']} {fmt.name} T~{context:g}"}


def _knlp_full(rec: dict[str, str]) -> dict[str, Any] | str:
    ms = _number(rec["latency_ms_per_step"])
    std = _number(rec["latency_std_ms"])
    return {"model": rec["model"], "weight_format": "bf16", "kv_format": "fp16", "hardware": rec["hardware"],
            "batch": _number(rec["batch_size"]), "context": _number(rec["context_len"]),
            "step_time_s": ms * 1e-3 if ms else None, "step_time_std_s": std * 1e-3 if std is not None else None,
            "tokens_per_s": _number(rec["tokens_per_s_aggregate"]),
            "label": f"{rec['dataset']} {re.sub(r'[(].*', '', rec['model']).split('/')[-1].strip()} KV {rec['kv_precision'].split()[0]}"}


def _knlp_micro(rec: dict[str, str]) -> dict[str, Any] | str:
    bits = {"fp16_fp16": 16.0, "kfp16_vint4": 10.0, "kint8_vint4": 6.0}
    if rec["kv_config"] not in bits:
        return f"unknown kv_config {rec['kv_config']!r}"
    return {"model": kv_read_layer_model(bits[rec["kv_config"]]), "hardware": rec["hardware"], "scope": "kv_read",
            "batch": _number(rec["batch_size"]), "context": _number(rec["context_len"]),
            "step_time_s": _scaled(rec["mean_ms"], 1e-3), "step_time_std_s": _scaled(rec["std_ms"], 1e-3),
            "tokens_per_s": _number(rec["tokens_per_s_as_published"]),
            "kv_bytes": _scaled(rec["kv_bytes_MB_as_published"], 1e6),
            "bandwidth": _scaled(rec["bw_GBs_as_published"], 1e9),
            "label": f"{rec['dataset']} {rec['kv_config']}"}


_LAYOUTS = {
    "gpt_fast": ({"prompt_tokens", "gen_tokens", "weight_precision"}, _gpt_fast),
    "exllama": ({"decode_condition", "prompt_tokens_per_s", "vram_MB"}, _exllama),
    "knlp_full": ({"latency_ms_per_step", "tokens_per_s_aggregate"}, _knlp_full),
    "knlp_micro": ({"kv_config", "mean_ms", "bw_GBs_as_published"}, _knlp_micro),
}


def published_layout(path: str | Path) -> str | None:
    """The name of the published layout a CSV file's header matches, or None."""
    try:
        with Path(path).open(newline="", encoding="utf-8") as handle:
            header = set(next(csv.reader(handle), []))
    except (OSError, UnicodeDecodeError, csv.Error):
        return None  # not a published CSV; the generic loader reports what is wrong with it
    return next((name for name, (needed, _) in _LAYOUTS.items() if needed <= header), None)


def load_published(path: str | Path) -> PublishedRows:
    """Read one of the published CSVs (gpt-fast, ExLlama, knlp full-model or microbenchmark).

    Raises
    ------
    MeasurementFileError
        The header matches none of the four layouts, or a placed row is invalid.
    """
    path = Path(path)
    records = read_csv_records(path)
    header = set(records[0]) if records else set()
    layout = next((name for name, (needed, _) in _LAYOUTS.items() if needed <= header), None)
    if layout is None:
        raise MeasurementFileError(str(path), None, "(header)", "not a known published layout: " + ", ".join(_LAYOUTS))
    reader = _LAYOUTS[layout][1]
    out = PublishedRows()
    for line, rec in enumerate(records, start=2):
        where = f"{path.name}:{line}"
        try:
            mapped = reader(rec)
        except KeyError as exc:  # a column the layout reads is absent from the header
            raise MeasurementFileError(str(path), line - 1, str(exc.args[0]), f"column missing from this {layout} file") from None
        except (TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as exc:
            # an empty, short or non-numeric cell where the layout expects a value
            raise MeasurementFileError(str(path), line - 1, "(row)", f"cannot read this {layout} row: "
                                       f"{type(exc).__name__}: {exc} (an empty or malformed cell?)") from None
        if isinstance(mapped, str):
            out.skipped.append((where, mapped))
            continue
        device = _accelerator(mapped.pop("hardware") or "")  # a short row has no hardware cell
        if device is None:
            out.skipped.append((where, f"hardware {rec.get('hardware')!r}: split over two different GPUs or not in the catalog"))
            continue
        model = mapped["model"]
        if isinstance(model, str):
            model_id = model_id_of(model)
            if model_id is None:
                out.skipped.append((where, f"model {model!r} is not in the catalog"))
                continue
            problem = _check_model(model_id)
            if problem:
                out.skipped.append((where, problem))
                continue
            mapped["model"] = model_id
        values = {k: v for k, v in mapped.items() if v is not None}
        try:
            out.rows.append(MeasurementRow(accelerator=device, source=where, notes=rec.get("notes", ""), **values))
        except RooflineError as exc:
            raise MeasurementFileError(str(path), line - 1, "(row)", str(exc)) from None
    return out
