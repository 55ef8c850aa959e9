"""Read a calibration saved with :meth:`~roofline_decode.measure.Calibration.save` (JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import numpy as np

from ..errors import InvalidValueError
from ..specs.accelerator import Accelerator
from .calibration_models import FIXED_COSTS, FixedCost
from .calibration_result import CALIBRATION_FORMAT, Calibration

#: Formats this reader accepts, oldest first ("calibration 1": before the per-layer fixed cost).
_FORMATS = ("roofline-decode calibration 1", CALIBRATION_FORMAT)

__all__ = ["load_calibration"]


def load_calibration(path: str | Path) -> Calibration:
    """A :class:`Calibration` saved with :meth:`Calibration.save`.

    Raises
    ------
    InvalidValueError
        The file cannot be read or is not a saved calibration (the message names the file and,
        for an unknown version, the format found).  Files of format 1 (saved before the fixed
        cost could be per layer) load with a per-step fixed cost, as they were fitted.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidValueError("calibration", str(path), f"a readable calibration JSON file ({exc})") from None
    version = data.get("format") if isinstance(data, dict) else None
    if version not in _FORMATS:
        found = f"format {version!r}" if isinstance(version, str) else "no 'format' key"
        raise InvalidValueError("calibration", f"{path} ({found})", "a file written by `calibrate --save` (format "
                                + " or ".join(repr(f) for f in _FORMATS) + ")")
    # version 1 predates the per-layer fixed cost: its t0 is per step
    fixed_cost = "step" if version == _FORMATS[0] else data.get("fixed_cost")
    if fixed_cost not in FIXED_COSTS:
        raise InvalidValueError("calibration", str(path), f"'fixed_cost' one of {', '.join(FIXED_COSTS)} "
                                f"(found {fixed_cost!r})")
    try:
        fit = data["fit"]
        covariance = None if fit["covariance"] is None else np.array(fit["covariance"], dtype=float)
        residual_std = data["residual_std"]
        return Calibration(
            accelerator=Accelerator(**data["accelerator_spec"]), model_name=data["model"], reason=data["reason"],
            candidates=dict(data["candidates"]), parameter_names=tuple(fit["parameter_names"]),
            beta=np.array(fit["beta"], dtype=float), full=np.array(fit["full"], dtype=float),
            free=tuple(fit["free"]), identified=tuple(fit["identified"]),
            residuals_s=np.array(data["residuals_s"], dtype=float), measured_s=np.array(data["measured_s"], dtype=float),
            calibrated_s=np.array(data["calibrated_s"], dtype=float), dof=int(data["dof"]),
            residual_std=float("nan") if residual_std is None else float(residual_std), level=float(data["level"]),
            weighting=data["weighting"], band_method=data["band_method"],
            excluded=tuple((int(e["row"]), str(e["reason"])) for e in data["excluded"]),
            _covariance=covariance, warnings=tuple(data["warnings"]),
            residual_standard_error=float("nan") if data.get("residual_standard_error") is None
            else float(data["residual_standard_error"]),
            fixed_cost=cast(FixedCost, fixed_cost), layers=tuple(int(d) for d in data.get("layers", ())),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise InvalidValueError("calibration", str(path), f"a complete saved calibration (problem: {exc!r})") from None
