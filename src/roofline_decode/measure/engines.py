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
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .._json_limits import JSONProblem, decode_utf8, loads, read_limited
from ..errors import RooflineError
from . import _engine_fields as f
from .published import PublishedRows, model_id_of
from .rows import MeasurementFileError, MeasurementRow

__all__ = ["ENGINE_LAYOUTS", "MAX_FILE_BYTES", "engine_layout", "load_engine_results", "mean_request_context"]


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
#: Shortest decode step accepted [s]: a picosecond, far below any real step, far enough above 0
#: that batch / step (the rate) stays a finite float.
MIN_STEP_S = 1e-12
#: Longest step a rate may give [s]: 1 / rate must be a finite float.
_MAX_STEP_S = 1e300
#: Largest engine output read [B]: a vLLM result saved with every request's latencies is a few
#: MB per thousand requests; the summaries this reader needs are a few hundred bytes each.
MAX_FILE_BYTES = 256 * 2**20


def _text(path: Path) -> str:
    try:
        return decode_utf8(read_limited(path, MAX_FILE_BYTES))
    except JSONProblem as exc:
        raise MeasurementFileError(str(path), None, exc.where, exc.problem) from None


def _json_records(text: str, source: str) -> list[dict[str, Any]] | None:
    """A JSON array/object, or JSON lines, as a list of dicts; None if it is not JSON.  JSON
    beyond the limits of :mod:`roofline_decode._json_limits` (nested too deeply, an integer too
    long) is a MeasurementFileError."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        try:
            data = loads(stripped)
        except JSONProblem as exc:
            if not exc.syntax:
                raise
            data = [loads(line) for line in stripped.splitlines() if line.strip()]
    except JSONProblem as exc:
        if exc.syntax:
            return None
        raise MeasurementFileError(source, None, exc.where, exc.problem) from None
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
    """(format name or None, note) from a llama.cpp type name such as 'q8_0' or 'f16'."""
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


def _ggml_file_type(text: str) -> tuple[str | None, str]:
    """(weights, note) from the file type llama-bench prints in ``model_type`` / ``type``.

    The strings are ``llama_model_ftype_name``'s (llama.cpp ``src/llama-model-loader.cpp``:
    "Q4_K - Medium", "MXFP4 MoE", "IQ2_XXS - 2.0625 bpw", "IQ3_S mix - 3.66 bpw", ...; a file
    without ``general.file_type`` prints "mostly " before it); each names a llama-quantize
    preset, read as that preset's tensor mixture
    (:data:`roofline_decode.formats.llama_presets.FTYPE_NAMES`).  "F16", "BF16" and "all F32"
    are the plain formats.
    """
    from ..formats.llama_presets import FTYPE_NAMES

    raw = re.sub(r"^(mostly|\(guessed\))\s+", "", text.strip(), flags=re.I)
    if raw in FTYPE_NAMES:
        return FTYPE_NAMES[raw], ""
    if raw == "all F32":
        return "fp32", ""
    return _ggml_format(raw)


_TOKENS = "a number of tokens"


def _bench_test(rec: dict[str, Any]) -> tuple[int, int, int] | str:
    """(n_prompt, n_gen, n_depth) of a llama-bench record (JSON/CSV fields or the md 'test')."""
    if "n_gen" in rec:
        return (f.count(rec, "n_prompt", _TOKENS), f.count(rec, "n_gen", _TOKENS),
                f.count(rec, "n_depth", _TOKENS, default=0))
    name = f.text(rec, "test", "a llama-bench test name such as 'tg128 @ d4096'")
    match = re.fullmatch(r"(pp|tg)(\d+)(?:@d(\d+))?|pp(\d+)\+tg(\d+)(?:@d(\d+))?", name.replace(" ", ""))
    if not match:
        return f"test {name!r} is not a llama-bench test name"
    n = [f.count_text("test", d or "0", _TOKENS) for d in match.groups()[1:]]
    if match[1] == "pp":
        return n[0], 0, n[1]
    if match[1] == "tg":
        return 0, n[0], n[1]
    return n[2], n[3], n[4]


_TYPE = "a llama.cpp type name such as 'f16' or 'q8_0'"


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
    if f.present(rec, "avg_ns"):
        row["step_time_s"] = _step(rec, "avg_ns", "the mean time of the test [ns]", n_gen, 1e9)
        std = f.number(rec, "stddev_ns", "its standard deviation [ns]", default=None)
        if std is not None:
            row["step_time_std_s"] = std / n_gen / 1e9
    else:
        key = "t/s" if "t/s" in rec else "avg_ts"
        if not f.present(rec, key):
            return f"no t/s in {rec.get(key)!r}"
        cell = rec[key].split("±")[0] if isinstance(rec[key], str) else rec[key]
        rate = f.number({key: cell}, key, "generated tokens per second", positive=True)
        if not MIN_STEP_S <= 1 / rate <= _MAX_STEP_S:  # the step time it gives
            raise f.BadField(key, rec[key], f"generated tokens per second: a number from {1 / _MAX_STEP_S:g} to "
                                            f"{1 / MIN_STEP_S:g}")
        row["tokens_per_s"] = rate
    notes = []
    described = "a llama.cpp model description such as 'qwen2 7B Q4_K - Medium'"
    model_type = f.text(rec, "model_type", described) if "model_type" in rec else f.text(rec, "model", described)
    parts = model_type.split(" ", 2)
    if len(parts) == 3:
        fmt, note = _ggml_file_type(parts[2])
        if fmt:
            row["weight_format"] = fmt
        if note:
            notes.append(note)
    type_k, type_v = f.text(rec, "type_k", _TYPE), f.text(rec, "type_v", _TYPE)
    if type_k and type_k == type_v:
        kv, _ = _ggml_format(type_k)
        if kv:
            row["kv_format"] = kv
    elif type_k:
        notes.append(f"K cache {type_k}, V cache {type_v}: give --kv")
    gpus = [g for g in f.text(rec, "gpu_info", "the GPU names, comma-separated").split(",") if g.strip()]
    layers = rec.get("n_gpu_layers", "99")
    if isinstance(layers, bool) or not isinstance(layers, (int, str)):
        raise f.BadField("n_gpu_layers", layers, "a whole number of layers offloaded to the GPUs")
    if len(gpus) > 1 and str(layers) != "0":
        split = f.text(rec, "split_mode", "'layer', 'row' or 'none'", "layer")
        if split == "row":
            row["num_devices"] = len(gpus)
        elif split == "layer":
            row["pipeline_parallel"] = len(gpus)
    test_name = f.text(rec, "test", "a llama-bench test name") or f"tg{n_gen}" + (f" @ d{depth}" if depth else "")
    row["label"] = f"llama-bench {model_type} {test_name}".strip()
    row["notes"] = "; ".join(notes)
    return row


def _step(rec: dict[str, Any], key: str, allowed: str, *divisors: float) -> float:
    """``rec[key]`` divided by each of ``divisors`` in turn: a step time [s] that must come out at
    least :data:`MIN_STEP_S` (a time of 5e-324 would give 0, or a rate beyond any float)."""
    step = float(f.number(rec, key, allowed, positive=True))
    for divisor in divisors:
        step /= divisor
    if not step >= MIN_STEP_S:
        raise f.BadField(key, rec[key], f"{allowed}, giving a step time of at least {MIN_STEP_S:g} s")
    return step


# ---------------------------------------------------------------- llama-batched-bench
def _batched_bench(rec: dict[str, Any], tg_separate: bool) -> dict[str, Any] | str:
    pp, tg = f.count(rec, "pp", "prompt tokens PP"), f.count(rec, "tg", "generated tokens TG")
    b = f.count(rec, "pl", "parallel sequences B", minimum=1, maximum=f.MAX_BATCH)
    if tg == 0:
        return "TG = 0: no decode steps"
    row: dict[str, Any] = {"context": pp + (tg - 1) / 2, "label": f"batched-bench PP={pp} TG={tg} B={b}",
                           "notes": "llama-batched-bench: random token per sequence (uniform routing)"}
    if tg_separate:
        row.update(batch=1, step_time_s=_step(rec, "t_tg", "the time of the TG steps [s]", b * tg),
                   notes=row["notes"] + "; is_tg_separate: sequences one after another")
    else:
        row.update(batch=b, step_time_s=_step(rec, "t_tg", "the time of the TG steps [s]", tg))
    if f.count(rec, "is_pp_shared", "0 or 1", maximum=1, default=0):
        row["notes"] += "; prompt shared (is_pp_shared): one prefix in the cache"
    return row


_BATCHED_MD = {"PP": "pp", "TG": "tg", "B": "pl", "N_KV": "n_kv", "T_TG s": "t_tg", "S_TG t/s": "speed_tg"}


# ---------------------------------------------------------------- serving benchmarks
_LATENCY_KEYS = ("mean_e2el_ms", "mean_e2e_latency_ms")


def _serving_batch(rec: dict[str, Any]) -> tuple[float, str] | None:
    """(batch, how it was found) of a serving run, or None when nothing tells it."""
    if f.present(rec, "max_concurrency"):
        return float(f.count(rec, "max_concurrency", "the client's concurrency", minimum=1,
                             maximum=f.MAX_BATCH)), "max_concurrency"
    concurrency = f.number(rec, "concurrency", "the measured mean concurrency", default=0.0)
    if concurrency:
        if concurrency > f.MAX_BATCH:
            raise f.BadField("concurrency", rec["concurrency"], f"the measured mean concurrency: at most {f.MAX_BATCH:,}")
        return concurrency, "measured mean concurrency"
    key = next((k for k in _LATENCY_KEYS if f.present(rec, k)), _LATENCY_KEYS[0])
    throughput = f.number(rec, "request_throughput", "requests per second", default=0.0)
    latency = f.number(rec, key, "the mean end-to-end latency [ms]", default=0.0)
    if not (throughput and latency):
        return None
    batch = throughput * latency / 1e3
    if not batch <= f.MAX_BATCH:
        raise f.BadField("request_throughput", rec["request_throughput"],
                         f"requests per second that, times {key} = {latency:g} ms, give at most {f.MAX_BATCH:,} "
                         "sequences in flight (Little's law)")
    return batch, "Little's law (throughput x latency)"


def _serving(rec: dict[str, Any]) -> dict[str, Any] | str:
    completed = f.count(rec, "completed", "the number of completed requests", maximum=f.MAX_REQUESTS, default=0)
    tpot = f.number(rec, "mean_tpot_ms", "the mean time per output token [ms]", default=0.0)
    if not completed or not tpot:
        return "no completed requests or no mean_tpot_ms"
    p = f.count(rec, "total_input_tokens", _TOKENS) / completed
    o = f.count(rec, "total_output_tokens", _TOKENS) / completed
    found = _serving_batch(rec)
    if found is None:
        return "no max_concurrency, concurrency or latency to tell the batch"
    batch, how = found
    backend = f.text(rec, "backend", "the name of the serving backend") or "serving"
    model_id = f.text(rec, "model_id", "a model name")
    model = model_id or f.text(rec, "model", "a model name")
    row: dict[str, Any] = {
        "batch": max(batch, 1.0), "context": mean_request_context(p, o),
        "step_time_s": _step(rec, "mean_tpot_ms", "the mean time per output token [ms]", 1e3),
        "label": " ".join(p for p in (backend, model_id.split("/")[-1], f"B={batch:g}") if p),
        "notes": f"batch from {how}; mean TPOT includes interleaved prefills (an upper estimate of the step)",
    }
    std = f.number(rec, "std_tpot_ms", "the standard deviation of the time per output token [ms]", default=None)
    if std is not None:
        row["step_time_std_s"] = std / 1e3
    if model and model_id_of(model):
        row["model"] = model_id_of(model)
    for key, field in (("tensor_parallel_size", "num_devices"), ("tp", "num_devices"),
                       ("pipeline_parallel_size", "pipeline_parallel"), ("pp", "pipeline_parallel")):
        if f.present(rec, key):
            row[field] = f.count(rec, key, "a number of devices", minimum=1, maximum=f.MAX_DEVICES)
    return row


def _one_batch(rec: dict[str, Any]) -> dict[str, Any] | str:
    if rec.get("median_decode_latency") is None:
        return "no decode steps (output_len <= 1)"
    il = f.count(rec, "input_len", "input tokens per sequence")
    ol = f.count(rec, "output_len", "output tokens per sequence (a decode latency needs 2 or more)", minimum=2)
    b = f.count(rec, "batch_size", "sequences in the batch", minimum=1, maximum=f.MAX_BATCH)
    step = _step(rec, "median_decode_latency", "the median decode step [s]", 1.0)
    name = f.text(rec, "run_name", "the name of the run")
    return {"batch": b, "context": mean_request_context(il, ol), "step_time_s": step,
            "label": f"sglang bench_one_batch {name} B={b:g} in={il:g} out={ol:g}".replace("  ", " "),
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


def _classify(text: str, source: str) -> tuple[str, list[dict[str, Any]], dict[str, Any]] | None:
    records = _json_records(text, source)
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
            return layout, batched, {"tg_separate": bool(separate and separate[1] == "1"),
                                     "columns": {v: k for k, v in _BATCHED_MD.items()}}
        return None if layout is None else (layout, md, {})
    rows = _csv_records(text)
    if rows and {"avg_ts", "n_gen", "model_type"} <= set(rows[0]):
        return "llama-bench", rows, {}
    return None


#: The layouts :func:`load_engine_results` recognises.
ENGINE_LAYOUTS = ("llama-bench", "llama-batched-bench", "serving-benchmark", "sglang-bench-one-batch")


def engine_layout(path: str | Path) -> str | None:
    """The engine layout of a file (one of :data:`ENGINE_LAYOUTS`), or None: also when the file
    cannot be read, is not UTF-8 text or is larger than :data:`MAX_FILE_BYTES` (no engine
    writes that much; the reader of generic measurement files takes it, or says why not).

    Raises
    ------
    MeasurementFileError
        The file holds JSON nested too deeply or an integer too long: whatever it is, no reader
        should go on.
    """
    path = Path(path)
    try:
        text = _text(path)
    except MeasurementFileError:
        return None
    found = _classify(text, str(path))
    return found[0] if found else None


def load_engine_results(path: str | Path, **defaults: Any) -> PublishedRows:
    """Decode rows from a llama-bench, llama-batched-bench, vLLM/SGLang serving or SGLang
    bench_one_batch output file; ``defaults`` (model, accelerator, weight_format, kv_format,
    num_devices, pipeline_parallel, routing) fill what the file does not state.

    Raises
    ------
    MeasurementFileError
        The file cannot be read, is larger than :data:`MAX_FILE_BYTES`, holds JSON nested too
        deeply, matches none of :data:`ENGINE_LAYOUTS`, or a field the reader needs holds a
        value it does not allow (a count that is negative, fractional, a boolean or beyond
        :mod:`~roofline_decode.measure._engine_fields`' limits; a number that is not finite; text
        where a number belongs or a number where text belongs): the message names the file,
        the row, the field, the value and what is allowed.  Bad fields are refused, never
        turned into rows; records that are not decode steps (``pp`` tests, ``TG = 0``) are
        listed in ``skipped``.

    Examples
    --------
    >>> import tempfile, os
    >>> text = ('{"n_prompt": 0, "n_gen": 128, "n_depth": 512, "avg_ns": 1067431600, '
    ...         '"avg_ts": 119.915, "model_type": "qwen2 7B Q4_K - Medium", "type_k": "f16", "type_v": "f16"}')
    >>> with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
    ...     _ = f.write(text + "\\n")
    >>> row = load_engine_results(f.name, model="qwen2.5-7b", accelerator="rtx-4090").rows[0]
    >>> row.batch, row.context, round(row.step_time * 1e3, 3), row.weight_format, row.kv_format
    (1.0, 575.5, 8.339, 'Q4_K_M', 'fp16')
    >>> os.unlink(f.name)
    """
    path = Path(path)
    found = _classify(_text(path), str(path))
    if found is None:
        raise MeasurementFileError(str(path), None, "(layout)", "not a known engine output: " + ", ".join(ENGINE_LAYOUTS))
    layout, records, options = found
    readers: dict[str, Callable[[dict[str, Any]], dict[str, Any] | str]] = {
        "llama-bench": _llama_bench, "serving-benchmark": _serving, "sglang-bench-one-batch": _one_batch,
        "llama-batched-bench": lambda r: _batched_bench(r, options.get("tg_separate", False))}
    reader, columns = readers[layout], options.get("columns", {})
    out = PublishedRows()
    base = {k: v for k, v in defaults.items() if v is not None}
    for number, rec in enumerate(records, start=1):
        where = f"{path.name}#{number}"
        try:
            mapped = reader(rec)
        except f.BadField as exc:
            raise MeasurementFileError(str(path), number, columns.get(exc.key, exc.key), exc.problem) from None
        except KeyError as exc:
            raise MeasurementFileError(str(path), number, columns.get(str(exc.args[0]), str(exc.args[0])),
                                       f"missing from this {layout} record") from None
        except (TypeError, ValueError, ArithmeticError) as exc:
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
