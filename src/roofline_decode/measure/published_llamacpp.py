"""Reader for the published llama.cpp GPU runs of ``shared/reference/measured/llamacpp/``
(XiongjieDai/GPU-Benchmarks-on-LLM-Inference, transcribed).

The mapping (stated once; ``docs/how_close_is_the_floor.md`` repeats it):

* models: Meta-Llama-3-8B / 70B have the architecture (and bytes per token) of the catalog's
  ``llama-3.1-8b`` / ``llama-3.1-70b`` (only RoPE scaling and the trained context differ);
  LLaMA-1 7B / 13B that of ``llama-2-7b`` / ``llama-2-13b``; LLaMA-1 30B / 65B are not in the
  catalog and are skipped;
* formats: the GGUF presets ``Q4_K_M`` and ``Q4_0`` as llama-quantize writes them
  (:mod:`roofline_decode.formats.llama_quant`: per-tensor types), ``F16`` as ``f16``; KV f16
  (llama.cpp's default);
* context: ``llama-bench tgN`` generates N tokens from an empty cache, so the mean context of
  its steps is (N - 1) / 2; the Dec-2023 ``./main -n 1024`` runs follow a prose prompt of "a few
  hundred" tokens (count not stated), taken as :data:`MAIN_PROMPT_TOKENS`;
* devices: the names map to catalog ids (:data:`DEVICES`); vague names ("A100 80GB") and
  devices not in the catalog are skipped, and so are rows marked "(CPU)" and out-of-memory rows;
* engine: ``llama.cpp-metal`` on Apple devices, ``llama.cpp-cuda`` elsewhere;
* multi-GPU rows are llama.cpp's layer split: the layers run one after another, so the step
  reads every weight once at one device's bandwidth; they carry ``pipeline_parallel = n``.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import RooflineError
from .published import PublishedRows
from .rows import MeasurementFileError, MeasurementRow, read_csv_records

__all__ = ["DEVICES", "MAIN_PROMPT_TOKENS", "engine_of_device", "load_llamacpp_published", "is_llamacpp_published"]

#: Prompt tokens assumed for the Dec-2023 ``./main`` rows ("a few hundred", not stated).
MAIN_PROMPT_TOKENS = 300

#: hardware name as published -> catalog id
DEVICES: dict[str, str] = {
    "3070 8GB": "rtx-3070", "3080 10GB": "rtx-3080", "3090 24GB": "rtx-3090", "4070 Ti 12GB": "rtx-4070-ti",
    "4080 16GB": "rtx-4080", "4090 24GB": "rtx-4090", "A100 PCIe 80GB": "a100-80gb-pcie",
    "A100 SXM 80GB": "a100-80gb-sxm", "A40 48GB": "a40", "H100 PCIe 80GB": "h100-pcie", "L40S 48GB": "l40s",
    "RTX 4000 Ada 20GB": "rtx-4000-ada", "RTX 5000 Ada 32GB": "rtx-5000-ada", "RTX 6000 Ada 48GB": "rtx-6000-ada",
    "RTX A6000 48GB": "rtx-a6000", "M1 7-Core GPU 8GB": "m1", "M1 Max 24-Core GPU 32GB": "m1-max",
    "M1 Max 32-Core GPU 64GB": "m1-max", "M2 Ultra 76-Core GPU 192GB": "m2-ultra", "M3 10-Core GPU 16GB": "m3",
    "M3 Max 40-Core GPU 48GB": "m3-max", "M3 Max 40-Core GPU 64GB": "m3-max",
}
_MODELS = {"meta-llama-3-8b": "llama-3.1-8b", "meta-llama-3-70b": "llama-3.1-70b", "llama-1 7b": "llama-2-7b",
           "llama-1 13b": "llama-2-13b", "llama-2-7b": "llama-2-7b", "llama-2-13b": "llama-2-13b",
           "llama-2-70b": "llama-2-70b"}
_FORMATS = {"q4_k_m": "Q4_K_M", "q4_0": "Q4_0", "f16": "f16"}
_NEEDED = {"hardware", "num_gpus", "model", "weight_format", "decode_test", "tokens_per_s", "gen_tokens"}


def engine_of_device(device_id: str) -> str:
    """``llama.cpp-metal`` for an Apple device id (m1, m2-ultra, ...), else ``llama.cpp-cuda``.

    >>> engine_of_device("m2-ultra"), engine_of_device("rtx-4090")
    ('llama.cpp-metal', 'llama.cpp-cuda')
    """
    return "llama.cpp-metal" if re.fullmatch(r"m\d+(-\w+)*", device_id) else "llama.cpp-cuda"


def is_llamacpp_published(header: set[str]) -> bool:
    """True when a CSV header is the llama.cpp transcription's."""
    return _NEEDED <= header and "section" in header


def _context(rec: dict[str, str]) -> float | None:
    test = rec["decode_test"]
    bench = re.fullmatch(r"llama-bench tg(\d+)", test.strip())
    if bench:
        return (int(bench[1]) - 1) / 2
    if test.startswith("./main"):
        generated = re.match(r"\s*(\d+)", rec["gen_tokens"])
        return MAIN_PROMPT_TOKENS + (int(generated[1]) - 1) / 2 if generated else None
    return None


def load_llamacpp_published(path: str | Path) -> PublishedRows:
    """Rows of the llama.cpp transcription placed on catalog models and devices (and the skipped
    ones with their reasons); each row's label starts with its engine.

    Raises
    ------
    MeasurementFileError
        The header lacks the transcription's columns, or a placed row is invalid.
    """
    path = Path(path)
    records = read_csv_records(path)
    if not records or not is_llamacpp_published(set(records[0])):
        raise MeasurementFileError(str(path), None, "(header)", "not the llama.cpp transcription: needs "
                                   + ", ".join(sorted(_NEEDED | {"section"})))
    out = PublishedRows()
    for line, rec in enumerate(records, start=2):
        where = f"{path.name}:{line}"
        fmt_text = rec["weight_format"]
        device = DEVICES.get(rec["hardware"].strip())
        model = _MODELS.get(rec["model"].strip().lower())
        fmt = _FORMATS.get(fmt_text.split("(")[0].strip().lower())
        context = _context(rec)
        reason = ("run on CPU (marked in the source)" if "(CPU)" in fmt_text else
                  f"no timing ({rec['tokens_per_s']})" if not re.match(r"\s*[0-9]", rec["tokens_per_s"]) else
                  f"hardware {rec['hardware']!r} is vague or not in the catalog" if device is None else
                  f"model {rec['model']!r} is not in the catalog" if model is None else
                  f"weight format {fmt_text!r} unknown" if fmt is None else
                  f"decode test {rec['decode_test']!r} unknown" if context is None else None)
        if reason or device is None or model is None or fmt is None or context is None:
            out.skipped.append((where, reason or "unreadable"))
            continue
        gpus = int(rec["num_gpus"]) if rec["num_gpus"].strip().isdigit() else 1
        engine = engine_of_device(device)
        try:
            out.rows.append(MeasurementRow(
                model=model, accelerator=device, weight_format=fmt, kv_format="f16", batch=1, context=context,
                tokens_per_s=float(rec["tokens_per_s"]), pipeline_parallel=gpus, source=where,
                label=f"{engine} {rec['model']} {fmt} x{gpus} {device} {rec['decode_test']}",
                notes=f"{rec['snapshot']}; {rec['software']}"))
        except (RooflineError, ValueError) as exc:
            raise MeasurementFileError(str(path), line - 1, "(row)", str(exc)) from None
    return out
