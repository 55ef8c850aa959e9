"""Readers for the benchmark output of inference engines: the runs users already have.

Each reader turns a tool's documented output into :class:`MeasurementRow` objects of *decode*
operating points (batch B, mean context T, step time), and lists what it skipped and why:

``llama-bench`` (ggml-org/llama.cpp ``tools/llama-bench``; ``-o json|jsonl|csv|md``)
    A text-generation test ``tg N`` (optionally ``@ dD``: the cache prefilled with D tokens)
    decodes N tokens one at a time at batch 1 after D cached tokens, so the step time is
    ``avg_ns / n_gen`` (or ``n_gen / avg_ts``) and the mean context ``D + (N - 1) / 2``.
    ``pp`` (prompt processing) and ``pg`` (prompt + generation) tests are not decode steps and
    are skipped.  The weight format is read from ``model_type`` (``"qwen2 7B Q4_K - Medium"`` ->
    ``q4_k``: the K-quant mixes count at their base type, a lower bound on their bytes); the KV
    format from ``type_k``/``type_v``; several GPUs (``gpu_info``, comma-separated) split by
    ``layer`` are a pipeline (PP), by ``row`` a tensor split (TP).  The markdown table holds only
    the default columns (model, size, params, backend, ngl, test, t/s).
``llama-batched-bench`` (``tools/batched-bench``: its table, or ``--output-format jsonl``)
    Each row decodes TG tokens for B sequences after a PP-token prompt: step time
    ``T_TG / TG`` at batch B and mean context ``PP + (TG - 1) / 2``.  With ``is_tg_separate``
    (stated in the table's header line) the sequences decode one after another: batch 1, step
    time ``T_TG / (B * TG)``.
vLLM ``vllm bench serve`` / ``benchmark_serving.py --save-result`` and SGLang ``bench_serving``
    One JSON object per run (SGLang appends one per line).  The decode step time is the mean
    time per output token ``mean_tpot_ms``; the batch is ``max_concurrency`` when set, else
    SGLang's measured mean ``concurrency``, else Little's law (request throughput x mean
    end-to-end latency).  The mean context follows the request convention of DESIGN.md §4b:
    prefill of P tokens yields the first token, then O - 1 decode steps at contexts P .. P+O-2,
    mean ``P + (O - 2) / 2`` with P and O the mean input and output lengths.  Continuous
    batching interleaves other requests' prefills with the decode steps, so TPOT is an upper
    estimate of the pure decode step (noted on every row).
SGLang ``bench_one_batch`` (its ``--result-filename`` JSON lines)
    A static batch: prefill, then ``output_len - 1`` timed decode steps at contexts
    ``input_len .. input_len + output_len - 2``; step time ``median_decode_latency``.

Device counts (TP, PP) that a file does not state come from the caller (``defaults``); models
given by Hugging Face name are mapped to catalog ids where the name matches one.

Sources of the formats (retrieved 2026-11-30): ggml-org/llama.cpp ``tools/llama-bench/README.md``
("Output formats") and ``tools/batched-bench/batched-bench.cpp`` (table header and JSONL
record); vllm-project/vllm ``vllm/benchmarks/serve.py`` (``result_json`` and
``benchmark_result``); sgl-project/sglang ``python/sglang/bench_one_batch.py``
(``measurement_results``) and ``python/sglang/bench_serving.py`` (result record).
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..errors import RooflineError
from .published import PublishedRows, model_id_of
from .rows import MeasurementFileError, MeasurementRow

__all__ = ["ENGINE_LAYOUTS", "engine_layout", "load_engine_results", "mean_request_context"]


def mean_request_context(input_tokens: float, output_tokens: float) -> float:
    """Mean context of a request's decode steps [1]: P + (O - 2) / 2 (DESIGN.md §4b), the one
    convention of :func:`roofline_decode.floors.request.mean_decode_context` (O >= 2).

    Prefill of P tokens yields the first output token; the other O - 1 tokens are decode steps
    at contexts P, P + 1, ..., P + O - 2.

    >>> mean_request_context(1024, 129)
    1087.5
    """
    from ..floors.request import mean_decode_context

    return float(mean_decode_context(input_tokens, max(output_tokens, 2.0)))


# ---------------------------------------------------------------- reading the file
def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None


def _json_records(text: str) -> list[dict[str, Any]] | None:
    """A JSON array/object, or JSON lines, as a list of dicts; None if it is not JSON."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        data = json.loads(stripped)
    except json.JSONDecodeError:
        try:
            data = [json.loads(line) for line in stripped.splitlines() if line.strip()]
        except json.JSONDecodeError:
            return None
    data = data if isinstance(data, list) else [data]
    return data if data and all(isinstance(d, dict) for d in data) else None


def _markdown_records(text: str) -> list[dict[str, Any]] | None:
    """Rows of the first pipe table in ``text`` (header, separator, rows) as dicts."""
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and re.fullmatch(r"\|[\s:|-]+\|?", lines[i + 1] or "x"):
            header = [c.strip() for c in line.strip("|").split("|")]
            rows = []
            for body in lines[i + 2:]:
                if not body.startswith("|"):
                    break
                cells = [c.strip() for c in body.strip("|").split("|")]
                rows.append(dict(zip(header, cells)))
            return rows or None
    return None


def _csv_records(text: str) -> list[dict[str, Any]] | None:
    try:
        rows = list(csv.DictReader(io.StringIO(text)))
    except csv.Error:
        return None
    return rows or None


# ---------------------------------------------------------------- llama-bench
_GGML = {"f16": "fp16", "bf16": "bf16", "f32": "fp32"}


def _ggml_format(text: str) -> tuple[str | None, str]:
    """(format name or None, note) from a llama.cpp type string such as 'Q4_K - Medium'."""
    from ..formats import get_format

    raw = re.sub(r"^mostly\s+", "", text.strip(), flags=re.I)
    base = raw.split(" - ")[0].strip().lower()
    name = _GGML.get(base, base)
    try:
        get_format(name)
    except RooflineError:
        return None, f"llama.cpp type {text!r} is not a known format: give --weights"
    note = f"{raw} read as {name} (mixes count at their base type: a lower bound on bytes)" if " - " in raw else ""
    return name, note


def _bench_test(rec: dict[str, Any]) -> tuple[int, int, int] | str:
    """(n_prompt, n_gen, n_depth) of a llama-bench record (JSON/CSV fields or the md 'test')."""
    if "n_gen" in rec:
        return int(float(rec["n_prompt"])), int(float(rec["n_gen"])), int(float(rec.get("n_depth") or 0))
    test = str(rec.get("test", "")).replace(" ", "")
    match = re.fullmatch(r"(pp|tg)(\d+)(?:@d(\d+))?|pp(\d+)\+tg(\d+)(?:@d(\d+))?", test)
    if not match:
        return f"test {rec.get('test')!r} is not a llama-bench test name"
    if match[1] == "pp":
        return int(match[2]), 0, int(match[3] or 0)
    if match[1] == "tg":
        return 0, int(match[2]), int(match[3] or 0)
    return int(match[4]), int(match[5]), int(match[6] or 0)


def _llama_bench(rec: dict[str, Any]) -> dict[str, Any] | str:
    test = _bench_test(rec)
    if isinstance(test, str):
        return test
    n_prompt, n_gen, depth = test
    if n_gen == 0:
        return "prompt processing (pp) test: not a decode step"
    if n_prompt > 0:
        return "prompt + generation (pg) test: prefill and decode mixed"
    row: dict[str, Any] = {"batch": 1, "context": depth + (n_gen - 1) / 2}
    if "avg_ns" in rec and rec["avg_ns"] not in ("", None):
        row["step_time_s"] = float(rec["avg_ns"]) / n_gen / 1e9
        if rec.get("stddev_ns") not in ("", None):
            row["step_time_std_s"] = float(rec["stddev_ns"]) / n_gen / 1e9
    else:
        match = re.match(r"\s*([0-9.]+)", str(rec.get("t/s", rec.get("avg_ts", ""))))
        if not match:
            return f"no t/s in {rec.get('t/s')!r}"
        row["tokens_per_s"] = float(match[1])
    notes = []
    model_type = rec.get("model_type", rec.get("model", ""))
    parts = str(model_type).split(" ", 2)
    if len(parts) == 3:
        fmt, note = _ggml_format(parts[2])
        if fmt:
            row["weight_format"] = fmt
        if note:
            notes.append(note)
    type_k, type_v = rec.get("type_k"), rec.get("type_v")
    if type_k and type_k == type_v:
        kv, _ = _ggml_format(type_k)
        if kv:
            row["kv_format"] = kv
    elif type_k:
        notes.append(f"K cache {type_k}, V cache {type_v}: give --kv")
    gpus = [g for g in str(rec.get("gpu_info", "")).split(",") if g.strip()]
    if len(gpus) > 1 and str(rec.get("n_gpu_layers", "99")) != "0":
        split = str(rec.get("split_mode", "layer"))
        if split == "row":
            row["num_devices"] = len(gpus)
        elif split == "layer":
            row["pipeline_parallel"] = len(gpus)
    test_name = rec.get("test") or f"tg{n_gen}" + (f" @ d{depth}" if depth else "")
    row["label"] = f"llama-bench {model_type} {test_name}".strip()
    row["notes"] = "; ".join(notes)
    return row


# ---------------------------------------------------------------- llama-batched-bench
def _batched_bench(rec: dict[str, Any], tg_separate: bool) -> dict[str, Any] | str:
    pp, tg, b = (int(float(rec[k])) for k in ("pp", "tg", "pl"))
    t_tg = float(rec["t_tg"])
    if tg == 0:
        return "TG = 0: no decode steps"
    row: dict[str, Any] = {"context": pp + (tg - 1) / 2, "label": f"batched-bench PP={pp} TG={tg} B={b}",
           "notes": "llama-batched-bench: random token per sequence (uniform routing)"}
    if tg_separate:
        row.update(batch=1, step_time_s=t_tg / (b * tg), notes=row["notes"] + "; is_tg_separate: sequences one after another")
    else:
        row.update(batch=b, step_time_s=t_tg / tg)
    if int(float(rec.get("is_pp_shared", 0) or 0)):
        row["notes"] += "; prompt shared (is_pp_shared): one prefix in the cache"
    return row


_BATCHED_MD = {"PP": "pp", "TG": "tg", "B": "pl", "N_KV": "n_kv", "T_TG s": "t_tg", "S_TG t/s": "speed_tg"}


# ---------------------------------------------------------------- serving benchmarks
def _serving(rec: dict[str, Any]) -> dict[str, Any] | str:
    completed = float(rec.get("completed") or 0)
    tpot = rec.get("mean_tpot_ms")
    if not completed or tpot in (None, 0):
        return "no completed requests or no mean_tpot_ms"
    p = float(rec["total_input_tokens"]) / completed
    o = float(rec["total_output_tokens"]) / completed
    if rec.get("max_concurrency"):
        batch, how = float(rec["max_concurrency"]), "max_concurrency"
    elif rec.get("concurrency"):
        batch, how = float(rec["concurrency"]), "measured mean concurrency"
    elif rec.get("request_throughput") and rec.get("mean_e2el_ms", rec.get("mean_e2e_latency_ms")):
        latency: Any = rec.get("mean_e2el_ms", rec.get("mean_e2e_latency_ms"))  # one of them is set (checked above)
        e2e = float(latency)
        batch, how = float(rec["request_throughput"]) * e2e / 1e3, "Little's law (throughput x latency)"
    else:
        return "no max_concurrency, concurrency or latency to tell the batch"
    row: dict[str, Any] = {
        "batch": max(batch, 1.0), "context": mean_request_context(p, o), "step_time_s": float(tpot) / 1e3,
        "label": " ".join(p for p in (str(rec.get("backend") or "serving"), str(rec.get("model_id") or "").split("/")[-1],
                                      f"B={batch:g}") if p),
        "notes": f"batch from {how}; mean TPOT includes interleaved prefills (an upper estimate of the step)",
    }
    if rec.get("std_tpot_ms") is not None:
        row["step_time_std_s"] = float(rec["std_tpot_ms"]) / 1e3
    model = rec.get("model_id") or rec.get("model")
    if model and model_id_of(str(model)):
        row["model"] = model_id_of(str(model))
    for key, field in (("tensor_parallel_size", "num_devices"), ("tp", "num_devices"),
                       ("pipeline_parallel_size", "pipeline_parallel"), ("pp", "pipeline_parallel")):
        if rec.get(key) not in (None, ""):
            row[field] = int(float(rec[key]))
    return row


def _one_batch(rec: dict[str, Any]) -> dict[str, Any] | str:
    if rec.get("median_decode_latency") is None:
        return "no decode steps (output_len <= 1)"
    il, ol, b = (float(rec[k]) for k in ("input_len", "output_len", "batch_size"))
    return {"batch": b, "context": mean_request_context(il, ol), "step_time_s": float(rec["median_decode_latency"]),
            "label": f"sglang bench_one_batch {rec.get('run_name', '')} B={b:g} in={il:g} out={ol:g}".replace("  ", " "),
            "notes": "median decode step of a static batch"}


# ---------------------------------------------------------------- dispatch
#: (keys the first record has, layout) per kind of file, tried in order.
_JSON_LAYOUTS = (
    ({"avg_ts", "n_gen"}, "llama-bench"),
    ({"pp", "tg", "pl", "t_tg"}, "llama-batched-bench"),
    ({"median_decode_latency"}, "sglang-bench-one-batch"),
    ({"batch_size", "input_len", "prefill_latency"}, "sglang-bench-one-batch"),
    ({"mean_tpot_ms"}, "serving-benchmark"),
)
_MARKDOWN_LAYOUTS = (({"test", "t/s"}, "llama-bench"), ({"PP", "TG", "B", "T_TG s"}, "llama-batched-bench"))


def _layout(record: dict[str, Any], layouts: tuple[tuple[set[str], str], ...]) -> str | None:
    return next((layout for keys, layout in layouts if keys <= set(record)), None)


def _classify(text: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]] | None:
    records = _json_records(text)
    if records:
        layout = _layout(records[0], _JSON_LAYOUTS)
        return None if layout is None else (layout, records, {})
    md = _markdown_records(text)
    if md:
        layout = _layout(md[0], _MARKDOWN_LAYOUTS)
        if layout == "llama-batched-bench":
            separate = re.search(r"is_tg_separate\s*=\s*(\d)", text)
            shared = re.search(r"is_pp_shared\s*=\s*(\d)", text)
            batched = [{_BATCHED_MD.get(k, k): v for k, v in r.items()} | {"is_pp_shared": shared[1] if shared else 0}
                       for r in md]
            return layout, batched, {"tg_separate": bool(separate and separate[1] == "1")}
        return None if layout is None else (layout, md, {})
    rows = _csv_records(text)
    if rows and {"avg_ts", "n_gen", "model_type"} <= set(rows[0]):
        return "llama-bench", rows, {}
    return None


#: The layouts :func:`load_engine_results` recognises.
ENGINE_LAYOUTS = ("llama-bench", "llama-batched-bench", "serving-benchmark", "sglang-bench-one-batch")


def engine_layout(path: str | Path) -> str | None:
    """The engine layout of a file (one of :data:`ENGINE_LAYOUTS`), or None."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    found = _classify(text)
    return found[0] if found else None


def load_engine_results(path: str | Path, **defaults: Any) -> PublishedRows:
    """Decode rows from a llama-bench, llama-batched-bench, vLLM/SGLang serving or SGLang
    bench_one_batch output file; ``defaults`` (model, accelerator, weight_format, kv_format,
    num_devices, pipeline_parallel, routing) fill what the file does not state.

    Raises
    ------
    MeasurementFileError
        The file cannot be read, matches none of :data:`ENGINE_LAYOUTS`, or a row is invalid.

    Examples
    --------
    >>> import tempfile, os
    >>> text = ('{"n_prompt": 0, "n_gen": 128, "n_depth": 512, "avg_ns": 1067431600, '
    ...         '"avg_ts": 119.915, "model_type": "qwen2 7B Q4_K - Medium", "type_k": "f16", "type_v": "f16"}')
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(text + "\\n")
    >>> row = load_engine_results(f.name, model="qwen2.5-7b", accelerator="rtx-4090").rows[0]
    >>> row.batch, row.context, round(row.step_time * 1e3, 3), row.weight_format, row.kv_format
    (1.0, 575.5, 8.339, 'q4_k', 'fp16')
    >>> os.unlink(f.name)
    """
    path = Path(path)
    found = _classify(_text(path))
    if found is None:
        raise MeasurementFileError(str(path), None, "(layout)", "not a known engine output: " + ", ".join(ENGINE_LAYOUTS))
    layout, records, options = found
    readers: dict[str, Callable[[dict[str, Any]], dict[str, Any] | str]] = {
        "llama-bench": _llama_bench, "serving-benchmark": _serving, "sglang-bench-one-batch": _one_batch,
        "llama-batched-bench": lambda r: _batched_bench(r, options.get("tg_separate", False))}
    reader = readers[layout]
    out = PublishedRows()
    base = {k: v for k, v in defaults.items() if v is not None}
    for number, rec in enumerate(records, start=1):
        where = f"{path.name}#{number}"
        try:
            mapped = reader(rec)
        except (KeyError, TypeError, ValueError) as exc:
            raise MeasurementFileError(str(path), number, "(row)", f"cannot read this {layout} record: {exc!r}") from None
        if isinstance(mapped, str):
            out.skipped.append((where, mapped))
            continue
        values = {**base, **{k: v for k, v in mapped.items() if v not in (None, "")}}  # the file's own win
        try:
            out.rows.append(MeasurementRow(source=where, **values))
        except RooflineError as exc:
            raise MeasurementFileError(str(path), number, "(row)", str(exc)) from None
    if not out.rows and not out.skipped:
        raise MeasurementFileError(str(path), None, "(rows)", "no measurement rows")
    return out
