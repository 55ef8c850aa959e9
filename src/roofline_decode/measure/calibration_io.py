"""Read a calibration saved with :meth:`~roofline_decode.measure.Calibration.save` (JSON).

A saved calibration is a file like any other: it may have been edited, cut short or written
by something else.  Every value is checked before it is used, against the file and against
what :func:`~roofline_decode.measure.calibrate.calibrate` can write: the file is at most
:data:`MAX_FILE_BYTES`, nests at most :data:`~roofline_decode._json_limits.MAX_DEPTH` deep,
every number is finite and no boolean stands for a number; parameters are >= 0 and at most
:data:`MAX_PARAMETER`, the arrays of the fit agree in length with its parameter names, the
confidence level lies in (0, 1) and the degrees of freedom in [0, rows].  Each failure is a
:class:`CalibrationFileError` naming the file, the key, the value and what is allowed.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import numpy as np

from .._json_limits import JSONProblem, first_non_finite, load_file, shown
from ..errors import InvalidValueError, RooflineError
from ..specs.accelerator import Accelerator
from .calibration_models import FIXED_COSTS, PARAMETERS, FixedCost
from .calibration_result import CALIBRATION_FORMAT, Calibration

#: Formats this reader accepts, oldest first ("calibration 1": before the per-layer fixed cost).
_FORMATS = ("roofline-decode calibration 1", CALIBRATION_FORMAT)
#: Largest calibration file read [B]; a fit on a million rows is about 70 MB.
MAX_FILE_BYTES = 256 * 2**20
#: Largest parameter (times [s], excess factors u = 1/η - 1 [1]), residual and measured time
#: accepted: far beyond any fit of real runs, small enough that a prediction cannot overflow.
MAX_PARAMETER = 1e30
#: Deepest model a fitted row may have (the Model's own limit; readers loop over the layers).
MAX_LAYERS = 2**16
#: Parameters a fit may name: the full vector's and the tied byte efficiency.
_NAMES = (*PARAMETERS, "u_bytes")

__all__ = ["load_calibration", "CalibrationFileError", "MAX_FILE_BYTES", "MAX_PARAMETER"]


class CalibrationFileError(InvalidValueError):
    """A saved calibration is unreadable or holds a value :func:`load_calibration` does not
    allow; names the file, the key, the value and what is allowed (an InvalidValueError, as
    before this class existed)."""

    def __init__(self, path: str | Path, key: str, value: Any, allowed: str):
        self.path, self.key = str(path), key
        super().__init__(f"{path}: {key}", value, allowed)

    def __str__(self) -> str:
        if self.key in ("(file)", "(json)"):  # the value is the problem with the file as a whole
            return f"{self.path}: {self.key}: {self.value}; expected {self.allowed}"
        return f"{self.path}: {self.key}={shown(self.value)} is invalid: expected {self.allowed}"


class _Reader:
    """Checked access to the keys of one saved calibration."""

    def __init__(self, data: dict[str, Any], path: Path):
        self.data, self.path = data, path

    def error(self, key: str, value: Any, allowed: str) -> CalibrationFileError:
        return CalibrationFileError(self.path, key, value, allowed)

    def get(self, key: str, default: Any = KeyError) -> tuple[str, Any]:
        """(key path, value) of a dotted key such as ``fit.beta``."""
        value: Any = self.data
        for part in key.split("."):
            if not isinstance(value, dict) or part not in value:
                if default is not KeyError:
                    return key, default
                raise self.error(key, None, "a value: the key is missing (not a complete saved calibration)")
            value = value[part]
        return key, value

    def real(self, key: str, low: float = 0.0, high: float = MAX_PARAMETER, nullable: bool = False) -> float:
        """A number in [low, high]; null reads as NaN where ``nullable`` (a quantity not estimated)."""
        key, value = self.get(key)
        if value is None and nullable:
            return math.nan
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise self.error(key, value, f"a number from {low:g} to {high:g}" + (" or null" if nullable else ""))
        return float(value)

    def whole(self, key: str, value: Any, low: int, high: int) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            raise self.error(key, value, f"a whole number from {low:,} to {high:,}")
        return value

    def text(self, key: str, choices: tuple[str, ...] = ()) -> str:
        key, value = self.get(key)
        if not isinstance(value, str) or (choices and value not in choices):
            raise self.error(key, value, "one of " + ", ".join(map(repr, choices)) if choices else "text")
        return value

    def texts(self, key: str, choices: tuple[str, ...] = (), default: Any = KeyError) -> tuple[str, ...]:
        key, value = self.get(key, default)
        allowed = "a list of " + ("distinct names among " + ", ".join(choices) if choices else "strings")
        if not isinstance(value, list) or not all(isinstance(v, str) and (not choices or v in choices) for v in value):
            raise self.error(key, value, allowed)
        if choices and len(set(value)) != len(value):
            raise self.error(key, value, allowed)
        return tuple(value)

    def vector(self, key: str, length: int | None = None, low: float = 0.0, positive: bool = False) -> np.ndarray:
        """A list of numbers in [low, MAX_PARAMETER] (> 0 with ``positive``), of ``length`` when given."""
        key, value = self.get(key)
        what = (f"a list of {'' if length is None else f'{length} '}numbers "
                f"{'> 0' if positive else f'from {low:g}'} up to {MAX_PARAMETER:g}")
        if not isinstance(value, list) or (length is not None and len(value) != length):
            raise self.error(key, value, what)
        for i, item in enumerate(value):
            if (isinstance(item, bool) or not isinstance(item, (int, float)) or not low <= item <= MAX_PARAMETER
                    or (positive and item <= 0)):
                raise self.error(f"{key}[{i}]", item, what)
        return np.array(value, dtype=float)


#: Shortest measured step time a saved calibration may hold [s]: no decode step of any device is
#: shorter than a nanosecond.
MIN_MEASURED_S = 1e-9


def _read(path: Path) -> dict[str, Any]:
    """The JSON object of a saved calibration of a known format."""
    try:
        data = load_file(path, max_bytes=MAX_FILE_BYTES)
    except JSONProblem as exc:  # the message keeps naming a "readable calibration JSON file"
        raise CalibrationFileError(path, exc.where, exc.problem, "a readable calibration JSON file") from None
    version = data.get("format") if isinstance(data, dict) else None
    if version not in _FORMATS:
        found = f"format {version!r}" if isinstance(version, str) else "no 'format' key"
        raise InvalidValueError("calibration", f"{path} ({found})", "a file written by `calibrate --save` (format "
                                + " or ".join(repr(f) for f in _FORMATS) + ")")
    assert isinstance(data, dict)
    found_non_finite = first_non_finite(data)
    if found_non_finite is not None:  # save() writes none (allow_nan=False)
        raise CalibrationFileError(path, found_non_finite[0], found_non_finite[1], "a finite number")
    return data


def _fit(r: _Reader) -> dict[str, Any]:
    """The fit's arrays, checked against each other and against the rows."""
    names = r.texts("fit.parameter_names", _NAMES)
    if not names:
        raise r.error("fit.parameter_names", [], "at least one parameter name")
    free = r.texts("fit.free", names)
    identified = r.texts("fit.identified", names)
    beta = r.vector("fit.beta", len(names))
    full = r.vector("fit.full", len(PARAMETERS))
    # a step shorter than a nanosecond is no measurement (and 5e-324 overflows the relative residuals)
    measured = r.vector("measured_s", low=MIN_MEASURED_S)
    n = len(measured)
    if n < 2:
        raise r.error("measured_s", r.get("measured_s")[1], "the step times of the 2 or more rows fitted")
    residuals = r.vector("residuals_s", n, low=-MAX_PARAMETER)
    calibrated = r.vector("calibrated_s", n)
    key, raw = r.get("fit.covariance")
    covariance = None
    if raw is not None:
        k, limit = len(free), MAX_PARAMETER**2
        what = (f"null or a {k} x {k} matrix (one row and column per free parameter) of numbers up to {limit:g}, "
                "variances >= 0 on its diagonal")
        if not (isinstance(raw, list) and len(raw) == k and all(isinstance(row, list) and len(row) == k for row in raw)
                and all(is_number(v) and abs(v) <= limit for row in raw for v in row)
                and all(raw[i][i] >= 0 for i in range(k))):
            raise r.error(key, raw, what)
        covariance = np.array(raw, dtype=float).reshape(k, k)
    return {"parameter_names": names, "free": free, "identified": identified, "beta": beta, "full": full,
            "residuals_s": residuals, "measured_s": measured, "calibrated_s": calibrated, "_covariance": covariance}


def is_number(value: Any) -> bool:
    """A JSON number: an int or a float, not a boolean."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def load_calibration(path: str | Path) -> Calibration:
    """A :class:`Calibration` saved with :meth:`Calibration.save`.

    Raises
    ------
    CalibrationFileError
        An :class:`~roofline_decode.errors.InvalidValueError`: the file cannot be read, is not a
        saved calibration (the message names the file and, for an unknown version, the format
        found), or holds a value out of place (the message names the file, the key, the value
        and what is allowed).  Files of format 1 (saved before the fixed cost could be per
        layer) load with a per-step fixed cost, as they were fitted.
    """
    path = Path(path)
    data = _read(path)
    r = _Reader(data, path)
    # version 1 predates the per-layer fixed cost: its t0 is per step
    fixed_cost = "step" if data["format"] == _FORMATS[0] else data.get("fixed_cost")
    if fixed_cost not in FIXED_COSTS:
        raise r.error("fixed_cost", fixed_cost, "one of " + ", ".join(FIXED_COSTS))
    fit = _fit(r)
    n = len(fit["measured_s"])
    dof = r.whole("dof", r.get("dof")[1], 0, n)
    key, level = r.get("level")
    # the band's t quantile needs (1 + level) / 2 < 1 in floats, too
    if not (is_number(level) and 0 < level < 1 and 0.5 + level / 2 < 1):
        raise r.error(key, level, "a coverage in (0, 1): the nominal coverage of the band")
    key, excluded_raw = r.get("excluded")
    if not isinstance(excluded_raw, list):
        raise r.error(key, excluded_raw, "a list of {'row': index, 'reason': text}")
    excluded = []
    for i, entry in enumerate(excluded_raw):
        if not (isinstance(entry, dict) and isinstance(entry.get("reason"), str)):
            raise r.error(f"{key}[{i}]", entry, "{'row': index, 'reason': text}")
        excluded.append((r.whole(f"{key}[{i}].row", entry.get("row"), 0, n + len(excluded_raw) - 1), entry["reason"]))
    key, candidates = r.get("candidates")
    if not (isinstance(candidates, dict) and all(is_number(v) and 0 <= v <= MAX_PARAMETER for v in candidates.values())):
        raise r.error(key, candidates, f"an object of cross-validated errors (numbers from 0 to {MAX_PARAMETER:g}) "
                                       "by candidate")
    key, layers = r.get("layers", [])
    if not isinstance(layers, list):
        raise r.error(key, layers, f"a list of model depths from 1 to {MAX_LAYERS:,}")
    depths = tuple(r.whole(f"{key}[{i}]", d, 1, MAX_LAYERS) for i, d in enumerate(layers))
    key, spec = r.get("accelerator_spec")
    if not isinstance(spec, dict):
        raise r.error(key, spec, "the accelerator's fields (an object)")
    try:
        accelerator = Accelerator(**spec)
    except (RooflineError, TypeError) as exc:  # TypeError: a field named like an argument ("self")
        raise r.error(key, spec.get("id"), f"a valid accelerator ({exc})") from None
    return Calibration(
        accelerator=accelerator, model_name=r.text("model"), reason=r.text("reason"),
        candidates={str(k): float(v) for k, v in candidates.items()}, dof=dof, level=float(level),
        residual_std=r.real("residual_std", nullable=True),
        residual_standard_error=r.real("residual_standard_error", nullable=True) if "residual_standard_error" in data
        else math.nan,
        weighting=r.text("weighting", ("relative", "absolute")), band_method=r.text("band_method"),
        excluded=tuple(excluded), warnings=r.texts("warnings"),
        fixed_cost=cast(FixedCost, fixed_cost), layers=depths, **fit,
    )
