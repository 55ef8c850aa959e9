"""Production serving runs: TensorRT-LLM, vLLM and SGLang on H100 / H200 SXM (issue 26, item 7).

:func:`load_production_runs` reads the measured runs of NVIDIA's aiconfigurator silicon
table (``shared/reference/measured/production/aic_silicon_hopper.csv``; the columns are
described in its README) into typed :class:`ProductionRun` rows.  Each row is mapped onto the
library's names (``docs/production_check.md`` states the mapping):

* **model** (``model_path``): the bundled model of the repository
  (:func:`~roofline_decode.catalog.bundled_id_of_repo`), plus the repositories it does not
  know: a quantized checkpoint is its base model served in the row's formats
  (``Qwen/Qwen3-235B-A22B-FP8`` -> ``qwen3-235b-a22b``, ``nvidia/Llama-3.1-8B-Instruct-FP8`` ->
  ``llama-3.1-8b``), ``zhipuai/GLM-5`` is ``glm-5`` (``zai-org/GLM-5``) and
  ``moonshotai/Kimi-K2.5`` is ``kimi-k2.5`` where the catalog bundles it;
* **device** (``system``): ``h100_sxm`` -> ``h100-sxm``, ``h200_sxm`` -> ``h200-sxm``;
* **weights** (``gemm_quant_mode`` for attention, dense MLP and shared experts,
  ``moe_quant_mode`` for routed experts; aiconfigurator's ``GEMMQuantMode`` / ``MoEQuantMode``):
  ``fp8`` -> ``fp8_e4m3`` (per-tensor scales), ``fp8_block`` -> FP8 E4M3 with one fp32 scale
  per 128 x 128 block (8 + 32/16384 bits), ``nvfp4`` -> ``nvfp4``, ``int4_wo`` -> int4 in
  groups of 32 with a 16-bit scale (4.5 bits), ``w4a16_mxfp4`` -> ``mxfp4``, empty -> ``bf16``.
  The embedding, lm_head, norms and router stay bf16 (no engine quantizes them in these
  recipes).  gpt-oss keeps its checkpoint's MXFP4 routed experts whatever the row says (``fp8``
  or ``nvfp4``), Kimi-K2.5 its INT4 experts (``int4_wo``); a 4-bit mode for their attention
  (``nvfp4`` is a Blackwell format Hopper cannot multiply) keeps it bf16, as they ship;
* **KV cache**: fp8 for a quantized run (any quant mode set), bf16 otherwise (the README);
* **layout**: aiconfigurator's convention, a worker spans ``tp x pp x attention_dp`` GPUs and
  its MoE layers ``moe_tp x moe_ep x pp`` (the two must agree); ``batch_size`` is the batch
  of one attention-DP rank; the client concurrency is ``silicon_concurrency`` in
  ``silicon_data_source``.

Fields that disagree are kept as they are and named in :attr:`ProductionRun.data_problems`;
a row the library cannot express (an unknown model, device or format) carries the reason in
:attr:`ProductionRun.unexpressible`.  A malformed file or cell raises
:class:`~roofline_decode.measure.MeasurementFileError` naming the file, the row and the column.

Examples
--------
>>> from pathlib import Path
>>> runs = load_production_runs(Path("tests/data/measured/production/aic_silicon_hopper.csv"))
>>> run = runs[0]
>>> run.engine, run.model_id, run.accelerator, run.mode, run.concurrency, run.layout.gpus
('sglang', 'deepseek-v3', 'h200-sxm', 'aggregated', 4, 8)
>>> run.weight_formats["experts"].name, run.kv_format.name, round(run.tpot_s * 1e3, 2)
('fp8_e4m3-b128x128', 'fp8_e4m3', 10.29)
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..formats import NumberFormat, get_format, group_quantized
from ..specs.model import Model
from .production_layouts import HGX_NODE_GPUS, Mode, WorkerLayout, id_gpus, layout_problems, likely_gpus
from .rows import MeasurementFileError

__all__ = [
    "ProductionRun", "WorkerLayout", "load_production_runs", "production_format", "id_gpus", "HGX_NODE_GPUS",
    "MAX_FILE_BYTES", "MAX_ROWS",
]

#: Largest file read [B] and most rows: the real file is 0.7 MB and 1,884 rows.
MAX_FILE_BYTES, MAX_ROWS = 64 * 2**20, 200_000

_REQUIRED = ("id", "backend", "model_path", "system", "mode", "isl", "osl", "gemm_quant_mode", "moe_quant_mode",
             "silicon_ttft_ms", "silicon_tpot_ms")
_LAYOUT_KEYS = ("tp_size", "pp_size", "attention_dp_size", "moe_tp_size", "moe_ep_size", "batch_size")
_DEVICES = {"h100_sxm": "h100-sxm", "h200_sxm": "h200-sxm"}
_MODES: dict[str, Mode] = {"agg": "aggregated", "disagg": "disaggregated"}
#: Repositories that :func:`bundled_id_of_repo` does not map (a quantized checkpoint of a
#: bundled model, or another organisation's name for it).
_REPOS = {
    "qwen/qwen3-235b-a22b-fp8": "qwen3-235b-a22b",
    "nvidia/llama-3.1-8b-instruct-fp8": "llama-3.1-8b",
    "zhipuai/glm-5": "glm-5",
    "moonshotai/kimi-k2.5": "kimi-k2.5",
}
#: Groups in the gemm format / in the MoE format / always bf16.
_GEMM_GROUPS = ("attention", "mlp", "shared_experts")
_WIDE_GROUPS = ("embedding", "lm_head", "norms", "router")
#: Checkpoints that ship 4-bit routed experts (and wide attention), and the quant modes of the
#: rows that serve them as they are: gpt-oss's MXFP4 experts whatever the row names (W4A16 or
#: W4A8 on Hopper), Kimi-K2.5's INT4 (group 32) experts for ``int4_wo``.
_CHECKPOINT_EXPERTS = {"gpt-oss-120b": None, "gpt-oss-20b": None, "kimi-k2.5": "int4_wo"}


def production_format(quant_mode: str) -> NumberFormat | None:
    """The storage format of an aiconfigurator GEMM / MoE quant mode, or None if unknown.

    >>> production_format("fp8_block").bits_per_element, production_format("int4_wo").name
    (8.001953125, 'int4-g32-sym')
    """
    mode = quant_mode.strip().lower()
    if mode in ("", "bfloat16"):
        return get_format("bf16")
    if mode in ("fp8", "fp8_static"):
        return get_format("fp8_e4m3")
    if mode == "fp8_block":  # one fp32 scale per 128 x 128 block (DeepSeek-V3's weight_scale_inv)
        return NumberFormat(name="fp8_e4m3-b128x128", bits_per_element=8 + 32 / (128 * 128), compute_precision="fp8",
                            description="FP8 E4M3 with one fp32 scale per 128x128 block")
    if mode == "nvfp4":
        return get_format("nvfp4")
    if mode in ("w4a16_mxfp4", "mxfp4"):
        return get_format("mxfp4")
    if mode == "int4_wo":  # W4A16, groups of 32 with a bf16 scale (Kimi-K2's INT4 QAT checkpoints)
        return group_quantized(4, 32, 16, 0, name="int4-g32-sym")
    if mode == "int8_wo":
        return get_format("int8")
    return None


@dataclass(frozen=True)
class ProductionRun:
    """One measured serving run (a row of the production table), in the library's names.

    ``ttft_s`` and ``tpot_s`` are the measured means [s]; ``layout`` is set for aggregated runs,
    ``prefill`` and ``decode`` for disaggregated ones; ``concurrency`` is the client
    concurrency (None where the row does not state it).  ``data_problems`` names fields that
    disagree (with each other, with the id, or with a twin row of the same measurement);
    ``duplicate_of`` is the source of the first row with the same (TTFT, TPOT, ISL, OSL): one
    run exported by several database dumps (count each measurement once when fitting);
    ``likely_gpus`` the decode worker's GPUs as the id, a twin row or the MoE grid state them
    where the fields give more (None where nothing disagrees).
    """

    run_id: str
    source: str
    engine: str
    engine_version: str
    model_repo: str
    model_id: str | None
    system: str
    accelerator: str | None
    gemm_quant: str
    moe_quant: str
    weight_formats: Mapping[str, NumberFormat]
    kv_format: NumberFormat
    mode: Mode
    input_length: int
    output_length: int
    concurrency: int | None
    ttft_s: float
    tpot_s: float
    layout: WorkerLayout | None = None
    prefill: WorkerLayout | None = None
    decode: WorkerLayout | None = None
    data_source: str = ""
    unexpressible: str | None = None
    data_problems: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    duplicate_of: str | None = None
    likely_gpus: int | None = None

    @property
    def expressible(self) -> bool:
        """True when the library can compute floors for the row."""
        return self.unexpressible is None

    @property
    def decode_layout(self) -> WorkerLayout | None:
        """The layout that decodes: ``layout`` (aggregated) or ``decode`` (disaggregated)."""
        return self.layout if self.mode == "aggregated" else self.decode

    @property
    def prefill_layout(self) -> WorkerLayout | None:
        """The layout that prefills: ``layout`` (aggregated) or ``prefill`` (disaggregated)."""
        return self.layout if self.mode == "aggregated" else self.prefill

    def served_model(self) -> Model:
        """The bundled model in the row's weight and KV formats.

        Raises
        ------
        InvalidValueError
            The row is not expressible (the message gives the reason).
        """
        from ..catalog import load_model
        from ..errors import InvalidValueError

        if self.unexpressible is not None or self.model_id is None:
            raise InvalidValueError("run", self.run_id, f"an expressible row (this one: {self.unexpressible})")
        formats = dict(self.weight_formats)
        model = load_model(self.model_id)
        return model.with_precision(weights={"default": formats["attention"], **formats}, kv=self.kv_format)


def _serves_checkpoint_experts(model_id: str | None, moe_quant: str) -> bool:
    return model_id in _CHECKPOINT_EXPERTS and _CHECKPOINT_EXPERTS[model_id] in (None, moe_quant)


def _formats(model_id: str, gemm: NumberFormat, moe: NumberFormat, moe_quant: str) -> dict[str, NumberFormat]:
    """Weight group -> its storage format."""
    from ..catalog import load_model

    bf16 = get_format("bf16")
    if _serves_checkpoint_experts(model_id, moe_quant):  # the checkpoint's 4-bit experts, as they ship
        moe = load_model(model_id).routed_expert_format
        gemm = bf16 if gemm.bits_per_element < 8 else gemm  # 4-bit attention: not in these checkpoints
    chosen = {**dict.fromkeys(_GEMM_GROUPS, gemm), "experts": moe, **dict.fromkeys(_WIDE_GROUPS, bf16)}
    return chosen


class _Row:
    """Typed access to one CSV record, every problem a MeasurementFileError."""

    def __init__(self, path: Path, line: int, record: dict[str, str | None]):
        self.path, self.line, self.record = path, line, record

    def error(self, column: str, problem: str) -> MeasurementFileError:
        return MeasurementFileError(str(self.path), self.line, column, problem)

    def text(self, column: str) -> str:
        value = self.record.get(column)
        if value is None:
            raise self.error(column, "cell missing (a short row, or the column is absent from the header)")
        return value.strip()

    def required(self, column: str) -> str:
        value = self.text(column)
        if not value:
            raise self.error(column, "empty; a value is required")
        return value

    def integer(self, column: str, minimum: int = 1, optional: bool = True) -> int | None:
        value = self.text(column) if column in self.record else ""
        if not value:
            if optional:
                return None
            raise self.error(column, "empty; a whole number is required")
        if not re.fullmatch(r"\d{1,9}", value):
            raise self.error(column, f"expected a whole number from {minimum} to 999,999,999, got {value[:40]!r}")
        number = int(value)
        if number < minimum:
            raise self.error(column, f"expected a whole number >= {minimum}, got {number}")
        return number

    def milliseconds(self, column: str) -> float:
        value = self.required(column)
        try:
            number = float(value)
        except ValueError:
            raise self.error(column, f"expected a time in ms, got {value[:40]!r}") from None
        if not 0 < number < 1e9:  # also refuses nan and inf
            raise self.error(column, f"expected a time in ms > 0 and < 1e9, got {value[:40]!r}")
        return number * 1e-3

    def layout(self, prefix: str, workers: bool = False) -> WorkerLayout | None:
        cells = {k: self.integer(prefix + k, minimum=0) for k in _LAYOUT_KEYS}
        if cells["tp_size"] is None or cells["tp_size"] == 0:
            return None
        return WorkerLayout(tp=cells["tp_size"], pp=cells["pp_size"] or 1, attention_dp=cells["attention_dp_size"] or 1,
                            moe_tp=cells["moe_tp_size"], moe_ep=cells["moe_ep_size"], batch=cells["batch_size"] or None,
                            workers=self.integer(prefix + "num_workers") if workers else None)


def _read_records(path: Path) -> list[dict[str, str | None]]:
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise MeasurementFileError(str(path), None, "(file)", f"{size:,} bytes is over the limit of "
                                                                  f"{MAX_FILE_BYTES:,} for a production table")
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    reader = csv.DictReader(io.StringIO(text, newline=""))
    records: list[dict[str, str | None]] = []
    try:
        header = reader.fieldnames or []
        missing = [c for c in _REQUIRED if c not in header]
        if missing:
            raise MeasurementFileError(str(path), None, missing[0], "column missing from the header: not a production "
                                       f"table (needs {', '.join(_REQUIRED)})")
        for record in reader:
            if len(records) >= MAX_ROWS:
                raise MeasurementFileError(str(path), None, "(file)", f"more than {MAX_ROWS:,} rows")
            if None in record:  # more cells than the header names
                raise MeasurementFileError(str(path), reader.line_num - 1, "(row)",
                                           f"{len(header) + len(record[None] or [])} cells for {len(header)} columns")
            records.append(dict(record))
    except csv.Error as exc:
        raise MeasurementFileError(str(path), reader.line_num - 1, "(csv)", f"malformed CSV: {exc}") from None
    return records


def load_production_runs(path: str | Path) -> list[ProductionRun]:
    """Read a production table (aiconfigurator's silicon CSV layout) into :class:`ProductionRun` rows.

    Parameters
    ----------
    path : str or Path
        The CSV file (at most :data:`MAX_FILE_BYTES` and :data:`MAX_ROWS` rows).

    Returns
    -------
    list of ProductionRun
        One per row, in file order; rows the library cannot express carry the reason in
        ``unexpressible``, rows whose fields disagree name it in ``data_problems``.

    Raises
    ------
    MeasurementFileError
        The file cannot be read, lacks a required column, or a cell is malformed (a row
        number counts data rows from 1; the column and the value are named).
    """
    path = Path(path)
    return _with_twins([_run(_Row(path, line, record)) for line, record in enumerate(_read_records(path), start=1)])


def _with_twins(runs: list[ProductionRun]) -> list[ProductionRun]:
    """Mark rows that repeat an earlier row's measurement (``duplicate_of``), and flag a row
    whose fields give a worker more GPUs than a twin of the same measurement states (in its
    fields or its id): one run cannot have used both."""
    groups: dict[tuple[float, float, int, int], list[int]] = {}
    for index, run in enumerate(runs):
        groups.setdefault((run.ttft_s, run.tpot_s, run.input_length, run.output_length), []).append(index)
    out = list(runs)
    for members in groups.values():
        if len(members) < 2:
            continue
        for part in ("prefill", "decode"):
            stated = [(g, j) for j in members for g in _stated_gpus(runs[j], part) if g is not None]
            if not stated:
                continue
            fewest, witness = min(stated)
            for i in members:
                layout = getattr(runs[i], f"{part}_layout")
                if layout is None or layout.gpus <= fewest:
                    continue
                other, name = runs[witness], "" if runs[i].mode == "aggregated" else f"{part} "
                problem = (f"the same measurement as {other.source} ({other.run_id}), which states {fewest} {name}GPUs; "
                           f"this row's fields give {layout.describe()}")
                if problem not in out[i].data_problems and not (part == "prefill" and runs[i].mode == "aggregated"):
                    likely = out[i].likely_gpus if part == "prefill" else min(fewest, out[i].likely_gpus or fewest)
                    out[i] = replace(out[i], data_problems=out[i].data_problems + (problem,), likely_gpus=likely)
        for i in members[1:]:
            out[i] = replace(out[i], duplicate_of=runs[members[0]].source)
    return out


def _stated_gpus(run: ProductionRun, part: str) -> tuple[int | None, ...]:
    """GPUs of the run's prefill or decode worker as its fields and its id state them."""
    layout = getattr(run, f"{part}_layout")
    named = id_gpus(run.run_id) if run.mode == "aggregated" else None
    return (None if layout is None else layout.gpus, named)


def _model_id(repo: str) -> str | None:
    from ..catalog import bundled_id_of_repo

    return _REPOS.get(repo.lower()) or bundled_id_of_repo(repo)


def _run(row: _Row) -> ProductionRun:
    from ..catalog import list_models

    run_id, repo, system = row.required("id"), row.required("model_path"), row.required("system")
    mode_text = row.required("mode")
    if mode_text not in _MODES:
        raise row.error("mode", f"expected 'agg' or 'disagg', got {mode_text[:40]!r}")
    mode = _MODES[mode_text]
    gemm_quant, moe_quant = row.text("gemm_quant_mode"), row.text("moe_quant_mode")
    source_text = row.text("silicon_data_source") if "silicon_data_source" in row.record else ""
    match = re.search(r"silicon_concurrency=([^;]*)", source_text)
    reasons: list[str] = []
    model_id = _model_id(repo)
    if model_id is None:
        reasons.append(f"model {repo!r} has no bundled config")
    elif model_id not in list_models():
        reasons.append(f"model {repo!r} maps to {model_id!r}, which this catalog does not bundle yet")
    accelerator = _DEVICES.get(system)
    if accelerator is None:
        reasons.append(f"system {system!r} is not one of {', '.join(_DEVICES)}")
    gemm, moe = production_format(gemm_quant), production_format(moe_quant or gemm_quant)
    for column, value, fmt in (("gemm_quant_mode", gemm_quant, gemm), ("moe_quant_mode", moe_quant, moe)):
        if fmt is None:
            reasons.append(f"{column} {value!r} is not a known quant mode")
    formats = _formats(model_id, gemm, moe, moe_quant or gemm_quant) if gemm is not None and moe is not None and model_id and not reasons else {}
    kv = get_format("fp8_e4m3" if (gemm_quant or moe_quant) else "bf16")
    layout = row.layout("") if mode == "aggregated" else None
    prefill = row.layout("prefill_", workers=True) if mode == "disaggregated" else None
    decode = row.layout("decode_", workers=True) if mode == "disaggregated" else None
    if mode == "aggregated" and layout is None:
        reasons.append("aggregated run without tp_size")
    if mode == "disaggregated" and (prefill is None or decode is None):
        reasons.append("disaggregated run without prefill_tp_size and decode_tp_size")
    concurrency = None
    if match and match[1].strip():  # "silicon_concurrency=" with nothing after it: not stated
        if not re.fullmatch(r"\d{1,9}", match[1].strip()) or int(match[1]) == 0:
            raise row.error("silicon_data_source", f"silicon_concurrency={match[1].strip()[:40]!r}: expected a whole "
                                                   "number of clients from 1 to 999,999,999")
        concurrency = int(match[1])
    notes = [f"{name}worker of {lay.gpus} GPUs spans {-(-lay.gpus // HGX_NODE_GPUS)} HGX nodes of {HGX_NODE_GPUS}"
             for name, lay in (("", layout), ("prefill ", prefill), ("decode ", decode))
             if lay is not None and lay.gpus > HGX_NODE_GPUS]
    if formats and _serves_checkpoint_experts(model_id, moe_quant):
        notes.append(f"the checkpoint's {formats['experts'].name} routed experts (the row says {moe_quant!r}), "
                     f"{formats['attention'].name} attention" + (" (nvfp4 is a Blackwell format)" * (gemm_quant == "nvfp4")))
    return ProductionRun(
        likely_gpus=likely_gpus(run_id, mode, layout), run_id=run_id, source=f"{row.path.name}:{row.line + 1}", engine=row.required("backend"),
        engine_version=row.text("backend_version") if "backend_version" in row.record else "", model_repo=repo,
        model_id=model_id, system=system, accelerator=accelerator, gemm_quant=gemm_quant, moe_quant=moe_quant,
        weight_formats=formats, kv_format=kv, mode=mode,
        input_length=row.integer("isl", optional=False) or 0, output_length=row.integer("osl", optional=False) or 0,
        concurrency=concurrency, ttft_s=row.milliseconds("silicon_ttft_ms"), tpot_s=row.milliseconds("silicon_tpot_ms"),
        layout=layout, prefill=prefill, decode=decode, data_source=source_text,
        unexpressible="; ".join(reasons) or None, data_problems=layout_problems(run_id, model_id, mode, layout, prefill, decode, concurrency),
        notes=tuple(notes),
    )
