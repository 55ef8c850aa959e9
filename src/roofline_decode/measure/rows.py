"""Measured decode timings: the row type and its CSV / JSON loaders.

A :class:`MeasurementRow` is one published or measured operating point: which accelerator and
model (with formats), batch B, context T, and the step time (mean and std) and/or the
aggregate tokens/s.  Loaders accept our own column names and those of the decode-bandwidth
studies (``B, T, mean_ms, std_ms, tokens_per_sec, kv_bytes, bw_GBs``); every problem is a
:class:`MeasurementFileError` naming the file, the row and the column.

Examples
--------
>>> rows = rows_from_records([{"B": 8, "T": 2048, "mean_ms": 8.941, "tokens_per_sec": 894.8}],
...                          model="qwen2.5-7b", accelerator="b200")
>>> round(rows[0].step_time * 1e3, 3), rows[0].batch
(8.941, 8.0)
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, model_validator

from .._parse import ParseProblem, parse_json
from ..errors import InvalidValueError, RooflineError
from ..formats import NumberFormat
from ..specs import Spec
from ..specs.accelerator import Accelerator
from ..specs.model import Model

__all__ = [
    "MeasurementRow",
    "MeasurementFileError",
    "COLUMNS",
    "TOKENS_PER_S_RTOL",
    "rows_from_records",
    "load_csv",
    "load_json",
    "load_measurements",
]

#: Largest relative gap allowed between a row's tokens/s and batch / step time.  Published
#: tables round both (``16.568 ms`` and ``60.4 tok/s`` differ by 0.07 %); 2 % leaves room
#: for that rounding and still catches per-sequence vs aggregate mix-ups (factor B).
TOKENS_PER_S_RTOL = 0.02

Scope = Literal["decode_step", "kv_read"]


class MeasurementFileError(RooflineError, ValueError):
    """A measurement file or record list is malformed; names the source, row and column."""

    def __init__(self, source: str, row: int | None, column: str, problem: str):
        self.source, self.row, self.column, self.problem = source, row, column, problem
        where = f"row {row}, " if row is not None else ""
        super().__init__(f"{source}: {where}column {column!r}: {problem}")


class MeasurementRow(Spec):
    """One measured decode operating point.

    Parameters
    ----------
    batch : float
        Sequences decoded together B [1], > 0.
    context : float
        Tokens cached per sequence T [1], >= 0 (a mean where it varied during the run).
    step_time_s : float, optional
        Mean time of one decode step [s], > 0.
    step_time_std_s : float, optional
        Its standard deviation [s], >= 0.
    tokens_per_s : float, optional
        Generated tokens per second aggregated over the batch [1/s]; must agree with
        ``batch / step_time_s`` within :data:`TOKENS_PER_S_RTOL` when both are given.
    model, accelerator : str, Model or Accelerator, optional
        Catalog ids or objects (a comparison may supply them instead).
    weight_format, kv_format : str or NumberFormat, optional
        Formats the model was served in (default: the model's own).
    num_devices : int
        Devices the step ran on (tensor parallel); the floor then uses their aggregate.
    pipeline_parallel : int
        Pipeline stages (PP), each on its own device(s); 1 unless stated.
    routing : {"uniform", "identical"} or float
        MoE routing of the run (:mod:`roofline_decode.floors.routing`); dense models ignore it.
    scope : {"decode_step", "kv_read"}
        A full decode step, or a kernel that only reads the KV cache (attention microbenchmark).
    kv_bytes, bandwidth : float, optional
        KV bytes [B] and achieved bandwidth [B/s] as the source published them (kept for reference).
    label, notes, source : str
        Short name for tables; free notes; where the row comes from (file and row).
    """

    batch: float = Field(ge=1, le=2**53, allow_inf_nan=False)  # the rule of estimate.checked_array
    context: NonNegativeFloat = Field(le=2**53, allow_inf_nan=False)
    step_time_s: PositiveFloat | None = Field(default=None, allow_inf_nan=False)
    step_time_std_s: NonNegativeFloat | None = Field(default=None, allow_inf_nan=False)
    tokens_per_s: PositiveFloat | None = Field(default=None, allow_inf_nan=False)
    model: str | Model | None = None
    accelerator: str | Accelerator | None = None
    weight_format: str | NumberFormat | None = None
    kv_format: str | NumberFormat | None = None
    num_devices: PositiveInt = 1
    pipeline_parallel: PositiveInt = 1
    routing: Literal["uniform", "identical"] | PositiveFloat = "uniform"
    scope: Scope = "decode_step"
    kv_bytes: NonNegativeFloat | None = Field(default=None, allow_inf_nan=False)
    bandwidth: PositiveFloat | None = Field(default=None, allow_inf_nan=False)
    label: str = ""
    notes: str = ""
    source: str = ""

    @model_validator(mode="after")
    def _time_given_and_consistent(self) -> MeasurementRow:
        if self.step_time_s is None and self.tokens_per_s is None:
            raise ValueError("give step_time_s or tokens_per_s (neither is set)")
        for name, given in (("step_time_s", self.step_time_s), ("tokens_per_s", self.tokens_per_s)):
            if given is not None and not math.isfinite(self.batch / given):  # 5e-324: the other one is infinite
                raise ValueError(f"{name}={given:g} is too small: batch / {name} = {self.batch:g} / {given:g} is "
                                 "beyond any float")
        if self.step_time_s is not None and self.tokens_per_s is not None:
            implied = self.batch / self.step_time_s
            if abs(self.tokens_per_s - implied) > TOKENS_PER_S_RTOL * implied:
                raise ValueError(
                    f"tokens_per_s={self.tokens_per_s:g} disagrees with batch / step_time_s = "
                    f"{self.batch:g} / {self.step_time_s:g} s = {implied:.6g} by more than "
                    f"{TOKENS_PER_S_RTOL:.0%} (per-sequence vs aggregate rate, or wrong units?)"
                )
        return self

    def _given_or_batch_over(self, given: float | None, other: float | None) -> float:
        """``given`` where measured, else batch / ``other``: step time and aggregate rate imply
        each other, and the validator requires one of the two."""
        if given is not None:
            return given
        assert other is not None
        return self.batch / other

    @property
    def step_time(self) -> float:
        """Mean step time [s]: as measured, else batch / tokens_per_s."""
        return self._given_or_batch_over(self.step_time_s, self.tokens_per_s)

    @property
    def aggregate_tokens_per_s(self) -> float:
        """Generated tokens per second over the batch [1/s]: as measured, else batch / step_time_s."""
        return self._given_or_batch_over(self.tokens_per_s, self.step_time_s)

    def describe(self) -> str:
        """A short label: the given one, else model, formats, B and T."""
        if self.label:
            return self.label
        name = getattr(self.model, "name", self.model) or "?"
        weights = self.weight_format.name if isinstance(self.weight_format, NumberFormat) else self.weight_format
        return f"{name}{' ' + weights if weights else ''} B={self.batch:g} T={self.context:g}"


# canonical field -> accepted column names (lower case) with the factor to SI
_NUMERIC: dict[str, dict[str, float]] = {
    "batch": {"batch": 1, "b": 1, "batch_size": 1},
    "context": {"context": 1, "t": 1, "context_len": 1, "seq_len": 1, "context_tokens": 1},
    "step_time_s": {
        "step_time_s": 1, "step_time_ms": 1e-3, "step_time_us": 1e-6, "latency_s": 1, "latency_ms": 1e-3,
        "mean_s": 1, "mean_ms": 1e-3, "mean_us": 1e-6, "mean_latency_ms": 1e-3, "latency_ms_per_step": 1e-3,
    },
    "step_time_std_s": {
        "step_time_std_s": 1, "step_time_std_ms": 1e-3, "std_s": 1, "std_ms": 1e-3, "std_us": 1e-6,
        "latency_std_ms": 1e-3,
    },
    "tokens_per_s": {
        "tokens_per_s": 1, "tokens_per_sec": 1, "tok_s": 1, "tokens_per_s_aggregate": 1,
        "tokens_per_s_as_published": 1,
    },
    "kv_bytes": {"kv_bytes": 1, "kv_bytes_mb": 1e6, "kv_bytes_gb": 1e9, "kv_bytes_mb_as_published": 1e6},
    "bandwidth": {"bandwidth_bps": 1, "bw_gbs": 1e9, "bw_gb_s": 1e9, "bw_gbs_as_published": 1e9},
    "num_devices": {"num_devices": 1, "num_gpus": 1, "tensor_parallel": 1, "tp": 1},
    "pipeline_parallel": {"pipeline_parallel": 1, "pp": 1},
}
_TEXT: dict[str, tuple[str, ...]] = {
    "model": ("model",),
    "accelerator": ("accelerator", "gpu", "hardware"),
    "weight_format": ("weight_format", "weights"),
    "kv_format": ("kv_format", "kv"),
    "scope": ("scope",),
    "routing": ("routing",),
    "label": ("label",),
    "notes": ("notes",),
}
#: Every accepted column name, by the field it fills.
COLUMNS = {**{k: tuple(v) for k, v in _NUMERIC.items()}, **_TEXT}
_TIMES = ("step_time_s", "tokens_per_s")


def _parse_number(text: Any) -> float | None:
    if text is None:
        return None
    if isinstance(text, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(text, (int, float)):
        try:
            value = float(text)
        except OverflowError:  # a Python int beyond any float
            raise ValueError(f"an integer of {len(str(abs(text)))} digits is beyond any float") from None
    else:
        stripped = str(text).strip().replace(",", "").replace("_", "")
        if not stripped:
            return None
        value = float(stripped)
    if not math.isfinite(value):
        raise ValueError("not a finite number")
    return value


def _resolve_columns(names: list[str], source: str) -> dict[str, tuple[str, float]]:
    """field -> (column as written, factor to SI); one column per field."""
    lowered = {name.strip().lower(): name for name in names}
    found: dict[str, tuple[str, float]] = {}
    for field, aliases in _NUMERIC.items():
        hits = [(lowered[a], f) for a, f in aliases.items() if a in lowered]
        if len(hits) > 1:
            raise MeasurementFileError(source, None, hits[1][0], f"duplicates {hits[0][0]!r} (both give {field})")
        if hits:
            found[field] = hits[0]
    for field, names_of_field in _TEXT.items():
        given = [lowered[a] for a in names_of_field if a in lowered]
        if given:
            found[field] = (given[0], 1.0)
    for field in ("batch", "context"):
        if field not in found:
            raise MeasurementFileError(
                source, None, field, f"required column is missing (accepted names: {', '.join(_NUMERIC[field])})"
            )
    if not any(field in found for field in _TIMES):
        raise MeasurementFileError(
            source, None, "step_time_s",
            "no timing column: give a step time (" + ", ".join(_NUMERIC["step_time_s"])
            + ") or tokens/s (" + ", ".join(_NUMERIC["tokens_per_s"]) + ")",
        )
    return found


def rows_from_records(records: Sequence[Mapping[Any, Any]], source: str = "<records>", **defaults: Any) -> list[MeasurementRow]:
    """Build rows from dicts (CSV rows, JSON objects); ``defaults`` fill fields the records lack.

    Raises
    ------
    MeasurementFileError
        A required column is missing, a value is not a number, a time is zero or negative,
        or tokens/s disagrees with batch / step time; the message names the row and column.
    """
    if not records:
        raise MeasurementFileError(source, None, "(rows)", "no measurement rows")
    for number, record in enumerate(records, start=1):
        if None in record:  # csv.DictReader files cells beyond the header under None
            raise MeasurementFileError(source, number, "(row)", f"more cells than the header has columns: {record[None]!r}")
    names = list(dict.fromkeys(str(key) for record in records for key in record))
    columns = _resolve_columns(names, source)
    rows = []
    for number, record in enumerate(records, start=1):
        values: dict[str, Any] = {k: v for k, v in defaults.items() if v is not None}
        for field, (column, factor) in columns.items():
            raw = record.get(column)
            if field in _TEXT:
                if raw is not None and not (isinstance(raw, str) and raw == ""):  # an array has no truth value
                    values[field] = str(raw)
                continue
            try:
                value = _parse_number(raw)
            except ValueError as exc:
                raise MeasurementFileError(source, number, column, f"{raw!r} is not a number ({exc})") from None
            if value is None:
                continue
            if field in ("step_time_s", "tokens_per_s") and value <= 0:
                raise MeasurementFileError(source, number, column, f"{raw!r} must be > 0")
            if field == "batch" and value < 1:
                raise MeasurementFileError(source, number, column, f"{raw!r} must be >= 1 (at least one sequence)")
            if value < 0:
                raise MeasurementFileError(source, number, column, f"{raw!r} must be >= 0")
            whole = field in ("num_devices", "pipeline_parallel")
            if whole and (value < 1 or not value.is_integer()):
                raise MeasurementFileError(source, number, column, f"{raw!r} must be a whole number >= 1")
            values[field] = int(value) if whole else value * factor
        for field in ("batch", "context"):
            if field not in values:
                raise MeasurementFileError(source, number, columns[field][0], "value is missing")
        if not any(field in values for field in _TIMES):
            given = " or ".join(columns[f][0] for f in _TIMES if f in columns)
            raise MeasurementFileError(source, number, given, "no step time or tokens/s in this row")
        values.setdefault("source", f"{source}#{number}")
        try:
            rows.append(MeasurementRow(**values))
        except InvalidValueError as exc:
            field = str(exc.field).removeprefix(f"{MeasurementRow.__name__}.").split(".")[0]
            if field == "(root)":  # the check of tokens/s against batch / step time
                field, problem = "tokens_per_s", str(exc.allowed).removeprefix("Value error, ")
            else:
                problem = f"{exc.value!r}: {exc.allowed}"
            column = columns.get(field, (field,))[0]
            raise MeasurementFileError(source, number, column, problem) from None
    return rows


def read_csv_records(path: Path) -> list[dict[str, Any]]:
    """The records of a CSV file with a header line; unreadable files raise MeasurementFileError."""
    try:
        with path.open(newline="", encoding="utf-8") as handle:
            return list(csv.DictReader(handle))
    except OSError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    except csv.Error as exc:
        raise MeasurementFileError(str(path), None, "(csv)", f"malformed CSV: {exc}") from None


def load_csv(path: str | Path, **defaults: Any) -> list[MeasurementRow]:
    """Rows from a CSV file with a header line (see :data:`COLUMNS` for accepted names)."""
    path = Path(path)
    return rows_from_records(read_csv_records(path), str(path), **defaults)


def load_json(path: str | Path, **defaults: Any) -> list[MeasurementRow]:
    """Rows from a JSON file: a list of objects, or an object with a ``rows`` list."""
    path = Path(path)
    try:
        data = parse_json(path.read_bytes())
    except OSError as exc:
        raise MeasurementFileError(str(path), None, "(file)", f"cannot read: {exc.strerror or exc}") from None
    except ParseProblem as exc:
        raise MeasurementFileError(str(path), None, exc.where, str(exc)) from None
    if isinstance(data, dict):
        data = data.get("rows")
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise MeasurementFileError(str(path), None, "(json)", "expected a list of objects (or {'rows': [...]})")
    return rows_from_records(data, str(path), **defaults)


def load_measurements(path: str | Path, **defaults: Any) -> list[MeasurementRow]:
    """Rows from a ``.json`` file, else from CSV."""
    return (load_json if str(path).lower().endswith(".json") else load_csv)(path, **defaults)
