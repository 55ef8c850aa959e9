"""Calibrate the floor against measurements: a sustained-bandwidth factor and a per-step cost.

The model fitted is

.. math:: T = t_0 + \\max\\left(\\frac{\\text{bytes}}{\\eta \\, BW},\\; \\frac{\\text{FLOPs}}{\\eta_c \\, F}\\right)

with the bytes and FLOPs of :func:`~roofline_decode.decode_floor` (DESIGN.md §4): ``η`` is
the bandwidth efficiency (η·BW the sustained bandwidth), ``t0`` the fixed cost of a step
(launches, synchronisation, host work) and ``η_c`` the compute efficiency, fitted only when
some rows are compute-bound.  Given which rows are compute-bound the model is linear in
(t0, 1/η, 1/η_c) and is solved by weighted least squares; the assignment is iterated until
it no longer changes.

Uncertainty band: the classical least-squares *prediction interval* for a new measurement,
``ŷ ± t_{ν,(1+level)/2} · s · sqrt(1/w0 + x0ᵀ (XᵀWX)⁻¹ x0)``, with s² the weighted residual
variance and ν = rows − parameters.  Under independent normal errors (relative errors with
``weighting="relative"``, w = 1/T²) a new measurement falls inside it with probability
``level`` (default 90 %).  With ν = 0 (e.g. two rows, two parameters) the fit is exact and no
band can be estimated: the band is NaN and :attr:`Calibration.band_method` says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat, field_validator

from ..errors import InvalidValueError
from ..specs._base import Spec
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from ._stats import student_t_quantile, weighted_least_squares

__all__ = ["Measurement", "Calibration", "CalibratedPrediction", "calibrate"]

Weighting = Literal["relative", "absolute"]


class Measurement(Spec):
    """A measured step time of a model (with its formats) at one batch and context.

    Parameters
    ----------
    model : Model or str
        The model as served (its weight and KV formats count), or a catalog id.
    batch : float
        B [1], > 0.
    context : float
        T [1], >= 0.
    step_time_s : float
        Measured mean step time [s], > 0.
    """

    model: Model
    batch: PositiveFloat = Field(allow_inf_nan=False)
    context: NonNegativeFloat = Field(allow_inf_nan=False)
    step_time_s: PositiveFloat = Field(allow_inf_nan=False)

    @field_validator("model", mode="before")
    @classmethod
    def _load(cls, value: Any) -> Any:
        if isinstance(value, str):
            from ..catalog import load_model

            return load_model(value)
        return value


@dataclass(frozen=True)
class CalibratedPrediction:
    """Calibrated step time [s] with its band, broadcast like :func:`decode_floor`."""

    step_time_s: np.ndarray
    lower_s: np.ndarray
    upper_s: np.ndarray
    floor_step_time_s: np.ndarray
    bound: np.ndarray
    batch: np.ndarray

    @property
    def tokens_per_s(self) -> np.ndarray:
        """Aggregate generated tokens per second at the calibrated step time [1/s]."""
        return self.batch / self.step_time_s


@dataclass(frozen=True)
class Calibration:
    """A fitted sustained-bandwidth factor, per-step overhead and (maybe) compute efficiency.

    Attributes
    ----------
    bandwidth_efficiency : float
        η: sustained bandwidth / peak bandwidth.
    step_overhead_s : float
        t0 [s], the fixed cost of one step.
    compute_efficiency : float or None
        η_c, or None when no row is compute-bound (predictions then use the compute floor).
    residuals_s : ndarray
        Measured − calibrated step time of each row [s].
    dof : int
        Residual degrees of freedom (rows − fitted parameters).
    residual_std : float
        s: weighted residual standard error (relative with ``weighting="relative"``); NaN if dof = 0.
    level : float
        Nominal coverage of the band for a new measurement.
    """

    accelerator: Accelerator
    bandwidth_efficiency: float
    step_overhead_s: float
    compute_efficiency: float | None
    residuals_s: np.ndarray
    measured_s: np.ndarray
    calibrated_s: np.ndarray
    dof: int
    residual_std: float
    level: float
    weighting: str
    band_method: str
    _covariance: np.ndarray | None = field(repr=False, default=None)
    warnings: tuple[str, ...] = ()

    @property
    def sustained_bandwidth(self) -> float:
        """η · BW [B/s]."""
        return self.bandwidth_efficiency * self.accelerator.memory_bandwidth

    @property
    def relative_residuals(self) -> np.ndarray:
        return self.residuals_s / self.measured_s

    def _design(self, memory: np.ndarray, compute: np.ndarray):
        a = 1.0 / self.bandwidth_efficiency
        c = 1.0 / self.compute_efficiency if self.compute_efficiency else 1.0
        on_compute = c * compute > a * memory
        columns = [np.ones_like(memory), np.where(on_compute, 0.0, memory)]
        if self.compute_efficiency is not None:
            columns.append(np.where(on_compute, compute, 0.0))
        fixed = np.where(on_compute & (self.compute_efficiency is None), compute, 0.0)
        return np.stack(columns, axis=-1), fixed, on_compute

    def predict(self, model: Model | str, batch: Any = 1, context: Any = 0) -> CalibratedPrediction:
        """Calibrated step time and its band for ``model`` (broadcasting like ``decode_floor``).

        Examples
        --------
        >>> from roofline_decode import load_model
        >>> rows = [Measurement(model=load_model("llama-2-7b", weights=w), batch=1, context=105,
        ...                     step_time_s=1 / tps) for w, tps in (("bf16", 104.9), ("int8", 155.58))]
        >>> cal = calibrate(rows, "a100-80gb-sxm")
        >>> p = cal.predict(load_model("llama-2-7b", weights="int4-g32"), batch=1, context=105)
        >>> round(float(p.tokens_per_s), 1)
        190.0
        """
        from ..estimate import decode_floor

        floor = decode_floor(model, self.accelerator, batch=batch, context=context)
        memory, compute = floor.memory_time_s, floor.compute_time_s
        design, fixed, on_compute = self._design(memory, compute)
        beta = self._beta()
        step = design @ beta + fixed
        if self._covariance is None or self.dof == 0:
            lower = upper = np.full_like(step, np.nan)
        else:
            spread = np.einsum("...i,ij,...j->...", design, self._covariance, design)
            noise = self.residual_std**2 * (step**2 if self.weighting == "relative" else np.ones_like(step))
            half = student_t_quantile(0.5 + self.level / 2, self.dof) * np.sqrt(spread + noise)
            lower, upper = step - half, step + half
        return CalibratedPrediction(
            step_time_s=step, lower_s=lower, upper_s=upper, floor_step_time_s=floor.step_time_s,
            bound=np.where(on_compute, "compute", "memory"), batch=floor.batch,
        )

    def _beta(self) -> np.ndarray:
        beta = [self.step_overhead_s, 1.0 / self.bandwidth_efficiency]
        if self.compute_efficiency is not None:
            beta.append(1.0 / self.compute_efficiency)
        return np.array(beta)

    def to_dict(self) -> dict[str, Any]:
        return {
            "accelerator": self.accelerator.id or self.accelerator.name,
            "bandwidth_efficiency": self.bandwidth_efficiency, "step_overhead_s": self.step_overhead_s,
            "compute_efficiency": self.compute_efficiency, "sustained_bandwidth": self.sustained_bandwidth,
            "dof": self.dof, "residual_std": None if np.isnan(self.residual_std) else self.residual_std,
            "level": self.level, "weighting": self.weighting, "band_method": self.band_method,
            "residuals_s": [float(r) for r in self.residuals_s], "warnings": list(self.warnings),
        }

    def __str__(self) -> str:
        comp = "not fitted (no compute-bound rows)" if self.compute_efficiency is None else f"{self.compute_efficiency:.4g}"
        lines = [
            f"calibration on {self.accelerator.id or self.accelerator.name} ({len(self.measured_s)} rows, {self.weighting} least squares)",
            f"  bandwidth efficiency  {self.bandwidth_efficiency:.4g}  (sustained {self.sustained_bandwidth / 1e9:.4g} GB/s)",
            f"  step overhead         {self.step_overhead_s * 1e3:.4g} ms",
            f"  compute efficiency    {comp}",
            f"  residuals             max |r| {np.max(np.abs(self.relative_residuals)):.2%} of measured",
            f"  band                  {self.band_method}",
        ]
        lines += [f"  warning: {w}" for w in self.warnings]
        return "\n".join(lines)


def _fit(design: np.ndarray, y: np.ndarray, weights: np.ndarray):
    beta, rank, unscaled = weighted_least_squares(design, y, weights)
    if rank < design.shape[1]:
        return None
    return beta, unscaled


def calibrate(measurements: list[Measurement], accelerator: Accelerator | str, *,
              weighting: Weighting = "relative", level: float = 0.9, fit_compute: bool | None = None) -> Calibration:
    """Fit T = t0 + max(bytes / (η·BW), FLOPs / (η_c·F)) to measured step times.

    Parameters
    ----------
    measurements : list of Measurement
        Rows of one device; each carries its own model and formats.
    accelerator : Accelerator or str
        The device they ran on.
    weighting : {"relative", "absolute"}
        Minimise relative residuals (w = 1/T², the default: rows of small and large models
        count alike) or absolute ones (ordinary least squares).
    level : float
        Nominal coverage of the prediction band, in (0, 1).
    fit_compute : bool, optional
        Fit η_c; default: only when some row is compute-bound (by the floor, or once
        calibrated).

    Raises
    ------
    InvalidValueError
        Fewer rows (with distinct bytes) than parameters: the fit is underdetermined; or the
        fitted bandwidth term is not positive.
    """
    from ..catalog import load_accelerator
    from ..estimate import decode_floor

    if weighting not in ("relative", "absolute"):
        raise InvalidValueError("weighting", weighting, "'relative' or 'absolute'")
    if not 0 < level < 1:
        raise InvalidValueError("level", level, "a coverage in (0, 1)")
    measurements = [m if isinstance(m, Measurement) else Measurement(**m) for m in measurements]
    device = load_accelerator(accelerator)
    floors = [decode_floor(m.model, device, batch=m.batch, context=m.context) for m in measurements]
    memory = np.array([float(f.memory_time_s) for f in floors])
    compute = np.array([float(f.compute_time_s) for f in floors])
    y = np.array([m.step_time_s for m in measurements])
    weights = 1.0 / y**2 if weighting == "relative" else np.ones_like(y)

    def underdetermined(p: int, why: str) -> InvalidValueError:
        return InvalidValueError(
            "measurements", f"{len(y)} rows",
            f"at least {p} rows with distinct bytes moved to fit {p} parameters ({why})",
        )

    on_compute = compute > memory
    use_compute = bool(on_compute.any()) if fit_compute is None else fit_compute
    beta = unscaled = None
    for _ in range(50):
        if use_compute and on_compute.all():
            raise underdetermined(3, "every row is compute-bound, so the bandwidth term is undetermined")
        columns = [np.ones_like(y), np.where(on_compute, 0.0, memory)]
        fixed = np.zeros_like(y)
        if use_compute:
            columns.append(np.where(on_compute, compute, 0.0))
        else:
            fixed = np.where(on_compute, compute, 0.0)
        design = np.stack(columns, axis=1)
        if len(y) < design.shape[1]:
            raise underdetermined(design.shape[1], "t0, η" + (", η_c" if use_compute else ""))
        solved = _fit(design, y - fixed, weights)
        if solved is None:
            raise underdetermined(design.shape[1], "the rows do not separate the fixed cost from the bytes term")
        beta, unscaled = solved
        if beta[1] <= 0:
            raise InvalidValueError(
                "measurements", f"{len(y)} rows",
                f"step times that grow with bytes moved (fitted 1/η = {beta[1]:.3g} <= 0)",
            )
        c = beta[2] if use_compute else 1.0
        if use_compute and c <= 0:
            raise InvalidValueError("measurements", f"{len(y)} rows", f"a positive compute term (fitted 1/η_c = {c:.3g})")
        new = c * compute > beta[1] * memory
        if fit_compute is None and not use_compute and new.any():
            use_compute, on_compute = True, new
            continue
        if np.array_equal(new, on_compute):
            break
        on_compute = new
    calibrated = design @ beta + fixed
    residuals = y - calibrated
    p = design.shape[1]
    dof = len(y) - p
    if dof > 0:
        s = float(np.sqrt(np.sum(weights * residuals**2) / dof))
        covariance = s**2 * unscaled
        method = (f"prediction interval, residual standard error x t-quantile (dof {dof}); "
                  f"nominal coverage {level:.0%} of new measurements")
    else:
        s, covariance = float("nan"), None
        method = "none: the fit is exactly determined (0 residual degrees of freedom); add rows for a band"
    eta = 1.0 / beta[1]
    warnings = []
    if eta > 1:
        warnings.append(
            f"bandwidth efficiency {eta:.3g} > 1: the marginal time per byte is below 1/BW, so the step "
            "overhead absorbs costs that scale with the model (dequantisation, launches per layer); "
            "extrapolate to other model sizes with care"
        )
    if beta[0] < 0:
        warnings.append(f"negative step overhead {beta[0]:.3g} s: the bytes term is over-fitted")
    return Calibration(
        accelerator=device, bandwidth_efficiency=float(eta), step_overhead_s=float(beta[0]),
        compute_efficiency=float(1.0 / beta[2]) if use_compute else None, residuals_s=residuals,
        measured_s=y, calibrated_s=calibrated, dof=dof, residual_std=s, level=level,
        weighting=weighting, band_method=method, _covariance=covariance, warnings=tuple(warnings),
    )
