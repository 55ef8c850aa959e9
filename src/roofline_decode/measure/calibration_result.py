"""The result of :func:`~roofline_decode.measure.calibrate.calibrate`: :class:`Calibration` (the
chosen model, its parameters with their errors and status, the rows it used), its predictions
with a band (:class:`CalibratedPrediction`) and its JSON form (:meth:`Calibration.to_dict`,
read back by :func:`~roofline_decode.measure.calibration_io.load_calibration`).

The model, its fit and the band are described in :mod:`~roofline_decode.measure.calibrate`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import PositiveFloat

from .._typing import Broadcastable
from ..errors import InvalidValueError
from ..floors.grid import DEFAULT_CONTEXT
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from . import calibration_models as cm
from ._stats import student_t_quantile
from .calibration_models import FixedCost

__all__ = ["CALIBRATION_FORMAT", "Calibration", "CalibratedPrediction", "Parameter", "Routing"]

#: MoE routing of a run (:class:`~roofline_decode.measure.calibrate.Measurement`): a mode or a
#: measured mean number of distinct experts per MoE layer.
Routing = Literal["uniform", "identical"] | PositiveFloat


@dataclass(frozen=True)
class CalibratedPrediction:
    """Calibrated step time [s] with its band, broadcast like :func:`decode_floor`; ``fits``:
    the weights and the KV cache of the batch fit the devices' usable memory (where False, no
    such run exists: the step time is what it would take, not a prediction of a run)."""

    step_time_s: np.ndarray
    lower_s: np.ndarray
    upper_s: np.ndarray
    floor_step_time_s: np.ndarray
    bound: np.ndarray
    batch: np.ndarray
    fits: np.ndarray

    @property
    def tokens_per_s(self) -> np.ndarray:
        """Aggregate generated tokens per second at the calibrated step time [1/s]."""
        rate: np.ndarray = self.batch / self.step_time_s
        return rate


@dataclass(frozen=True)
class Parameter:
    """A fitted parameter: value, standard error (0 at a bound), and where it stands."""

    name: str
    value: float
    std: float
    unit: str
    status: str  # "fitted", "at bound", "not identifiable", "tied", "not fitted"

    def __str__(self) -> str:
        value = f"{self.value * 1e3:.4g} ms" if self.unit == "s" else f"{self.value:.4g}"
        std = "" if not self.std or math.isnan(self.std) else (
            f" ± {self.std * 1e3:.2g} ms" if self.unit == "s" else f" ± {self.std:.2g}")
        note = "" if self.status == "fitted" else f"  ({self.status})"
        return f"{self.name:24s}{value}{std}{note}"


_LABELS = {"t0": ("step overhead t0", "s"), "u_w": ("weight-stream eff. η_w", ""),
           "u_kv": ("KV-stream eff. η_kv", ""), "q": ("per-sequence cost q", "s"),
           "u_c": ("compute eff. η_c", ""), "t_h": ("host time t_h", "s"),
           "t_layer": ("per-layer cost t_layer", "s")}
#: ``format`` of a saved calibration; version 1 (no ``fixed_cost``: always per step) still loads.
CALIBRATION_FORMAT = "roofline-decode calibration 2"


@dataclass(frozen=True)
class Calibration:
    """A fitted step-time model: which candidate, why, its parameters and the rows it used.

    Attributes
    ----------
    model_name : str
        The chosen candidate (a key of
        :data:`~roofline_decode.measure.calibration_models.MODELS`).
    fixed_cost : {"layer", "step"}
        Unit of the fixed cost t0: per layer of the model predicted (t_layer; the default) or
        per step.  Calibrations saved before this choice existed load as ``"step"``.
    layers : tuple of int
        Depths L of the models of the fitted rows.
    reason : str
        Why it was chosen (leave-one-out errors of the candidates, or too few rows to compare).
    candidates : dict
        Leave-one-out RMS error of each candidate that could be scored (relative or [s]).
    bandwidth_efficiency : float
        η_w, the weight-stream efficiency (= η_kv for the ``bandwidth`` candidates).
    kv_efficiency : float
        η_kv.
    step_overhead_s : float
        The fixed cost of one step [s] of the fitted model (t_layer · L with ``"layer"``; NaN
        when the fitted rows mix depths: use :meth:`fixed_cost_s`).
    layer_overhead_s : float
        t_layer [s per layer] (NaN with ``fixed_cost="step"``).
    per_sequence_s : float
        q [s].
    compute_efficiency : float or None
        η_c, or None when no row is compute-bound (predictions then use the compute floor).
    residuals_s, measured_s, calibrated_s : ndarray
        Of the rows fitted (rows below their strict floor are not among them).
    excluded : tuple of (int, str)
        Input rows left out (0-based index) and why.
    dof : int
        Residual degrees of freedom (rows − free parameters).
    residual_std : float
        s of the band (relative with ``weighting="relative"``): the larger of the residual
        standard error and the cross-validated error; NaN if dof = 0.
    residual_standard_error : float
        sqrt(Σ w r² / dof) of the fitted rows alone; NaN if dof = 0.
    level : float
        Nominal coverage of the band for a new measurement.
    """

    accelerator: Accelerator
    model_name: str
    reason: str
    candidates: dict[str, float]
    parameter_names: tuple[str, ...]
    beta: np.ndarray
    full: np.ndarray
    free: tuple[str, ...]
    identified: tuple[str, ...]
    residuals_s: np.ndarray
    measured_s: np.ndarray
    calibrated_s: np.ndarray
    dof: int
    residual_std: float
    level: float
    weighting: str
    band_method: str
    excluded: tuple[tuple[int, str], ...] = ()
    _covariance: np.ndarray | None = field(repr=False, default=None)
    warnings: tuple[str, ...] = ()
    residual_standard_error: float = float("nan")
    fixed_cost: FixedCost = "step"
    layers: tuple[int, ...] = ()

    @property
    def step_overhead_s(self) -> float:
        if self.fixed_cost == "step":
            return float(self.full[0])
        return float(self.full[0]) * self.layers[0] if len(self.layers) == 1 else float("nan")

    @property
    def layer_overhead_s(self) -> float:
        return float(self.full[0]) if self.fixed_cost == "layer" else float("nan")

    def fixed_cost_s(self, model: Model | str) -> float:
        """The fixed cost of one step of ``model`` [s]: t_layer · L, or t0 whatever the depth.

        Examples
        --------
        >>> from roofline_decode.measure import Measurement, calibrate
        >>> rows = [Measurement(model="llama-2-7b", batch=b, context=128, step_time_s=t)
        ...         for b, t in ((1, 0.0160), (8, 0.0165), (16, 0.0171))]
        >>> cal = calibrate(rows, "a100-80gb-sxm", models=("bandwidth",))
        >>> cal.fixed_cost, round(cal.fixed_cost_s("llama-2-70b") / cal.fixed_cost_s("llama-2-7b"), 3)
        ('layer', 2.5)
        """
        from ..catalog import load_model

        units = load_model(model).num_layers if self.fixed_cost == "layer" else 1
        return float(self.full[0]) * units

    @property
    def bandwidth_efficiency(self) -> float:
        return 1.0 / (1.0 + float(self.full[1]))

    @property
    def kv_efficiency(self) -> float:
        return 1.0 / (1.0 + float(self.full[2]))

    @property
    def per_sequence_s(self) -> float:
        return float(self.full[3])

    @property
    def compute_efficiency(self) -> float | None:
        return 1.0 / (1.0 + float(self.full[4])) if "u_c" in self.parameter_names else None

    @property
    def sustained_bandwidth(self) -> float:
        """η_w · BW [B/s]: the bandwidth the weight stream sustains (one device)."""
        return self.bandwidth_efficiency * self.accelerator.memory_bandwidth

    @property
    def relative_residuals(self) -> np.ndarray:
        relative: np.ndarray = self.residuals_s / self.measured_s
        return relative

    @property
    def parameters(self) -> dict[str, Parameter]:
        """Each parameter of the full model with its standard error and status."""
        stds = dict.fromkeys(cm.PARAMETERS, 0.0)
        if self._covariance is not None:
            for i, name in enumerate(self.free):
                std = math.sqrt(max(float(self._covariance[i, i]), 0.0))
                for target in (("u_w", "u_kv") if name == "u_bytes" else (name,)):
                    stds[target] = std
        out = {}
        for i, key in enumerate(cm.PARAMETERS):
            label, unit = _LABELS["t_layer" if key == "t0" and self.fixed_cost == "layer" else key]
            source = "u_bytes" if key in ("u_w", "u_kv") and "u_bytes" in self.parameter_names else key
            if source not in self.parameter_names:
                status = "not fitted" if key == "u_c" else "not in this model"
            elif source not in self.identified:
                status = "not identifiable: held at its bound"
            elif source not in self.free:
                status = "at bound"
            else:
                status = "fitted" if source == key else "tied: one efficiency for all bytes"
            u, std = float(self.full[i]), stds[key] if source in self.free else 0.0
            if key.startswith("u_"):  # efficiency 1 / (1 + u); delta method for its error
                value, std = 1.0 / (1.0 + u), std / (1.0 + u) ** 2
            else:
                value = u
            if key == "u_c" and source not in self.parameter_names:
                value = float("nan")
            out[key] = Parameter(label, value, std if self.dof > 0 else float("nan"), unit, status)
        return out

    def predict(self, model: Model | str, batch: Broadcastable = 1, context: Broadcastable = DEFAULT_CONTEXT, *,
                tensor_parallel: int = 1, pipeline_parallel: int = 1,
                routing: Routing = "uniform") -> CalibratedPrediction:
        """Calibrated step time and its band for ``model`` (broadcasting like ``decode_floor``).

        Examples
        --------
        >>> from roofline_decode import load_model
        >>> from roofline_decode.measure import Measurement, calibrate
        >>> rows = [Measurement(model=load_model("llama-2-7b", weights=w), batch=1, context=104,
        ...                     step_time_s=1 / tps) for w, tps in (("bf16", 104.9), ("int8", 155.58))]
        >>> cal = calibrate(rows, "a100-80gb-sxm")
        >>> p = cal.predict(load_model("llama-2-7b", weights="int4-g32"), batch=1, context=104)
        >>> round(float(p.tokens_per_s), 1)  # measured: 196.8
        193.4

        Points whose weights and KV cache do not fit the devices' usable memory are flagged:

        >>> cal.predict("llama-2-7b", batch=[1, 512], context=4096).fits.tolist()
        [True, False]
        """
        from ..catalog import load_model
        from ..floors.capacity import resident_bytes, usable_memory

        model = load_model(model)
        for name, value in (("tensor_parallel", tensor_parallel), ("pipeline_parallel", pipeline_parallel)):
            if not (isinstance(value, (int, np.integer)) and value >= 1):
                raise InvalidValueError(name, value, "a whole number of devices >= 1")
        terms = cm.floor_terms(model, self.accelerator, batch, context, tensor_parallel * pipeline_parallel, routing,
                               self.fixed_cost)
        shape = np.shape(terms.weights_s)
        flat = terms.ravel()
        compute, host = cm.sides(flat, self.full)
        design, base = cm.columns(flat, self.free, compute, host)
        beta = np.array([self.beta[self.parameter_names.index(n)] for n in self.free])
        step = base + design @ beta
        if self._covariance is None or self.dof == 0:
            lower = upper = np.full_like(step, np.nan)
        else:
            spread = np.einsum("...i,ij,...j->...", design, self._covariance, design)
            noise = self.residual_std**2 * (step**2 if self.weighting == "relative" else np.ones_like(step))
            # a covariance read from a file may be a rounding away from positive semi-definite
            half = student_t_quantile(0.5 + self.level / 2, self.dof) * np.sqrt(np.maximum(spread + noise, 0.0))
            lower, upper = np.maximum(step - half, flat.strict_floor_s), step + half
        floor = np.maximum(flat.weights_s + flat.kv_s, flat.compute_s)
        room = usable_memory(self.accelerator) * tensor_parallel * pipeline_parallel
        fits = resident_bytes(model, np.asarray(batch, dtype=float), np.asarray(context, dtype=float)) <= room
        return CalibratedPrediction(
            step_time_s=step.reshape(shape), lower_s=lower.reshape(shape), upper_s=upper.reshape(shape),
            floor_step_time_s=floor.reshape(shape), bound=np.where(host, "host", np.where(compute, "compute", "memory")).reshape(shape),
            batch=flat.batch.reshape(shape), fits=np.broadcast_to(fits, shape).copy(),
        )

    def to_dict(self) -> dict[str, Any]:
        """Everything needed to predict again (:func:`load_calibration`), as JSON-ready values."""
        params = self.parameters
        return {
            "format": CALIBRATION_FORMAT, "fixed_cost": self.fixed_cost, "layers": list(self.layers),
            "accelerator": self.accelerator.id or self.accelerator.name,
            "accelerator_spec": self.accelerator.model_dump(mode="json"),
            "model": self.model_name, "reason": self.reason, "candidates": self.candidates,
            "parameters": {k: {"name": p.name, "value": _num(p.value), "std": _num(p.std), "unit": p.unit,
                               "status": p.status} for k, p in params.items()},
            "bandwidth_efficiency": self.bandwidth_efficiency, "kv_efficiency": self.kv_efficiency,
            "step_overhead_s": _num(self.step_overhead_s), "layer_overhead_s": _num(self.layer_overhead_s),
            "per_sequence_s": self.per_sequence_s,
            "compute_efficiency": self.compute_efficiency, "sustained_bandwidth": self.sustained_bandwidth,
            "dof": self.dof, "residual_std": _num(self.residual_std),
            "residual_standard_error": _num(self.residual_standard_error), "level": self.level,
            "weighting": self.weighting, "band_method": self.band_method,
            "residuals_s": [float(r) for r in self.residuals_s], "measured_s": [float(v) for v in self.measured_s],
            "calibrated_s": [float(v) for v in self.calibrated_s],
            "excluded": [{"row": i, "reason": why} for i, why in self.excluded], "warnings": list(self.warnings),
            "fit": {"parameter_names": list(self.parameter_names), "beta": [float(b) for b in self.beta],
                    "full": [float(v) for v in self.full], "free": list(self.free), "identified": list(self.identified),
                    "covariance": None if self._covariance is None else self._covariance.tolist()},
        }

    def save(self, path: str | Path) -> None:
        """Write :meth:`to_dict` as JSON (read back with
        :func:`~roofline_decode.measure.calibration_io.load_calibration`)."""
        Path(path).write_text(json.dumps(self.to_dict(), indent=2, allow_nan=False) + "\n", encoding="utf-8")

    def __str__(self) -> str:
        depths = ", ".join(str(d) for d in self.layers)
        unit = (f"per layer (t0 x L; fitted on L = {depths})" if self.fixed_cost == "layer"
                else "per step (the same for every depth)")
        lines = [f"calibration on {self.accelerator.id or self.accelerator.name} ({len(self.measured_s)} rows, "
                 f"{self.weighting} least squares): model {self.model_name}",
                 f"  fixed cost              {unit}",
                 f"  why                     {self.reason}"]
        lines += [f"  {p}" for k, p in self.parameters.items()
                  if p.status != "not in this model" and not (k == "u_c" and p.status == "not fitted")]
        if self.compute_efficiency is None:
            lines.append("  compute efficiency      not fitted (no compute-bound rows)")
        lines += [f"  sustained bandwidth     {self.sustained_bandwidth / 1e9:.4g} GB/s (weight stream)",
                  f"  residuals               max |r| {np.max(np.abs(self.relative_residuals)):.2%} of measured",
                  f"  band                    {self.band_method}"]
        lines += [f"  excluded row {i + 1}: {why}" for i, why in self.excluded]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _num(value: float) -> float | None:
    return None if value is None or (isinstance(value, float) and not math.isfinite(value)) else value
