"""Calibrate the floor against measurements: efficiencies, a fixed (per-layer or per-step) and a
per-sequence cost.

The models fitted (:mod:`~roofline_decode.measure.calibration_models`) are nested forms of

.. math:: T = t_0\\,n + q\\,B + \\max\\left(\\frac{W}{\\eta_w BW} + \\frac{K}{\\eta_{kv} BW},\\;
          \\frac{F}{\\eta_c P}\\right)

with the weight bytes W, KV bytes K and FLOPs F of :func:`~roofline_decode.decode_floor`
(DESIGN.md §4) on TP x PP devices: ``t0 >= 0`` the fixed cost (launches, synchronisation, host
work) per unit n, which is one per layer of the model (n = L, the default) or one per step
(n = 1; see :attr:`Calibration.fixed_cost`), ``q >= 0`` a cost per sequence (sampling, per-sequence kernels,
work the floor does not count), ``η_w, η_kv`` the efficiencies of the weight and KV streams and
``η_c`` the compute efficiency (fitted only where rows are compute-bound), all in (0, 1].  The
fit is bounded least squares (exact NNLS, numpy only), so the parameters stay physical; the
model is the candidate with the smallest leave-one-out error (ties within 1 % go to the simpler
one), so two rows fit the two-parameter model and a batch x context grid earns more.  Rows
faster than their strict floor (the floor with MoE ``routing="identical"``) cannot be fitted by
any admissible model: they are left out and listed in :attr:`Calibration.excluded`.

Per layer or per step: rows of one depth fit both alike (t0 = L · t_layer); the units differ
only for another depth, where the truth lies between the two predictions.  There per layer is
used, on the protocol's size splits (docs/how_close_is_the_floor.md); rows that mix depths
choose by cross-validation.  The host time t_h takes the same unit as t0.

Uncertainty band: the least-squares *prediction interval* for a new measurement,
``ŷ ± t_{ν,(1+level)/2} · sqrt(x0ᵀ Cov x0 + s² / w0)`` over the free parameters (those not at
a bound), with s² the larger of the weighted residual variance and the leave-one-out mean
squared error (so that model error the in-sample residuals hide still widens the band) and
ν = rows − free parameters.  With ν = 0 (two rows, two parameters) no band can be estimated:
the band is NaN and :attr:`Calibration.band_method` says so.  How often the band covers
held-out rows is measured by :mod:`~roofline_decode.measure.extrapolation`.

The result, :class:`Calibration`, with its parameters, predictions and saved form lives in
:mod:`~roofline_decode.measure.calibration_result` (re-exported here).
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat, PositiveInt, field_validator

from ..errors import InvalidValueError, is_real
from ..specs import Spec
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from . import calibration_models as cm
from .calibration_models import FixedCost
# the result of calibrate(), re-exported: this was its home before it got its own module
from .calibration_result import CALIBRATION_FORMAT as CALIBRATION_FORMAT
from .calibration_result import CalibratedPrediction, Calibration, Parameter
from .calibration_result import Routing as Routing

__all__ = ["Measurement", "CalibratedPrediction", "Parameter", "Calibration", "calibrate"]

Weighting = Literal["relative", "absolute"]
FixedCostChoice = Literal["auto", "layer", "step"]


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
    tensor_parallel, pipeline_parallel : int
        Devices the step ran on: TP x PP of them (default 1 each); the floor uses their aggregate
        bandwidth and peak (perfect split, communication not counted: still a lower bound).
    routing : {"uniform", "identical"} or float
        MoE routing the run had (:mod:`roofline_decode.floors.routing`): ``"uniform"`` (the default:
        the expected distinct experts U(B) of independent uniform routing), ``"identical"``
        (every sequence routed alike: k experts per MoE layer, as in llama-batched-bench) or a
        measured mean number of distinct experts per MoE layer.  Dense models ignore it.
    """

    model: Model
    batch: PositiveFloat = Field(allow_inf_nan=False)
    context: NonNegativeFloat = Field(allow_inf_nan=False)
    step_time_s: PositiveFloat = Field(allow_inf_nan=False)
    tensor_parallel: PositiveInt = 1
    pipeline_parallel: PositiveInt = 1
    routing: Routing = "uniform"

    @property
    def num_devices(self) -> int:
        """TP x PP [1]."""
        return self.tensor_parallel * self.pipeline_parallel

    @field_validator("model", mode="before")
    @classmethod
    def _load(cls, value: Any) -> Any:
        if isinstance(value, str):
            from ..catalog import load_model

            return load_model(value)
        return value



def calibrate(measurements: list[Measurement], accelerator: Accelerator | str, *,
              weighting: Weighting = "relative", level: float = 0.9, fit_compute: bool | None = None,
              models: tuple[str, ...] | None = None, fixed_cost: FixedCostChoice = "auto") -> Calibration:
    """Fit the nested step-time models to measured steps and keep the one that predicts best.

    Parameters
    ----------
    measurements : list of Measurement
        Rows of one device type; each carries its own model, formats, TP x PP and routing.
    accelerator : Accelerator or str
        The device they ran on (one of the TP x PP devices).
    weighting : {"relative", "absolute"}
        Minimise relative residuals (w = 1/T², the default: rows of small and large models
        count alike) or absolute ones (ordinary least squares).
    level : float
        Nominal coverage of the prediction band, in (0, 1).
    fit_compute : bool, optional
        Fit η_c; default: only when some row is compute-bound (by the floor, or once calibrated).
    models : tuple of str, optional
        Candidates to choose from (default: all of
        :data:`~roofline_decode.measure.calibration_models.MODELS`).
    fixed_cost : {"auto", "layer", "step"}
        Unit of the fixed cost t0: per layer of the model (a prediction for a deeper model
        carries a proportionally larger fixed cost) or per step.  ``"auto"`` (the default):
        per layer when the rows share one depth (both units fit them identically; the
        cross-size evidence in the module docstring favours per layer), otherwise both enter
        the cross-validated choice and ties within 1 % go to per layer.

    Raises
    ------
    InvalidValueError
        Fewer than two rows at or above their strict floor, rows that do not separate the
        fixed cost from the bytes term, or every row compute-bound.

    Examples
    --------
    Qwen2.5-7B on a B200 (knlp, HF eager decode), batch 1-16 at contexts 1024 and 2048 [ms]:

    >>> steps = {(1, 1024): 8.142, (1, 2048): 8.096, (8, 1024): 8.687, (8, 2048): 8.988,
    ...          (2, 2048): 8.306, (4, 2048): 8.461, (16, 1024): 9.212, (16, 2048): 9.709}
    >>> rows = [Measurement(model="qwen2.5-7b", batch=b, context=t, step_time_s=ms / 1e3)
    ...         for (b, t), ms in steps.items()]
    >>> cal = calibrate(rows, "b200")
    >>> cal.model_name, round(cal.kv_efficiency, 3), round(cal.per_sequence_s * 1e6, 1)
    ('bandwidth+batch', 0.228, 41.0)

    Batch 8 at a 4x longer context (measured: 10.345 ms):

    >>> p = cal.predict("qwen2.5-7b", batch=8, context=8192)
    >>> [round(float(v) * 1e3, 2) for v in (p.lower_s, p.step_time_s, p.upper_s)]
    [8.97, 10.45, 11.93]
    """
    from ..catalog import load_accelerator

    if weighting not in ("relative", "absolute"):
        raise InvalidValueError("weighting", weighting, "'relative' or 'absolute'")
    if not is_real(level) or not 0 < level < 1 or not 0.5 + level / 2 < 1:  # 1 - 2**-53: (1 + level) / 2 is 1.0
        raise InvalidValueError("level", level, "a coverage in (0, 1)")
    if fixed_cost not in ("auto", *cm.FIXED_COSTS):
        raise InvalidValueError("fixed_cost", fixed_cost, "'auto', 'layer' or 'step'")
    names = tuple(cm.MODELS) if models is None else tuple(models)
    unknown = [n for n in names if n not in cm.MODELS]
    if unknown or not names:
        raise InvalidValueError("models", unknown or names, "candidates among " + ", ".join(cm.MODELS))
    measurements = [m if isinstance(m, Measurement) else Measurement(**m) for m in measurements]
    device = load_accelerator(accelerator)
    parts = [cm.floor_terms(m.model, device, m.batch, m.context, m.num_devices, m.routing) for m in measurements]
    every = cm.Terms(*(np.array([float(getattr(p, f)) for p in parts]) for f in cm.Terms.FIELDS))
    y_all = np.array([m.step_time_s for m in measurements])
    below = y_all < every.strict_floor_s
    excluded = tuple((int(i), f"measured {y_all[i] * 1e3:.4g} ms is below its strict floor "
                      f"{every.strict_floor_s[i] * 1e3:.4g} ms (check units, early stop, caching, or device count)")
                     for i in np.flatnonzero(below))
    rows, y = every.take(~below), y_all[~below]
    depths = tuple(sorted({int(d) for d in rows.layers}))
    units: tuple[FixedCost, ...] = (("layer",) if len(depths) == 1 else cm.FIXED_COSTS) \
        if fixed_cost == "auto" else (fixed_cost,)
    terms = rows.with_fixed_cost(units[0])
    weights = 1.0 / y**2 if weighting == "relative" else np.ones_like(y)
    n = len(y)

    def refuse(why: str) -> InvalidValueError:
        return InvalidValueError("measurements", f"{n} rows at or above their strict floor"
                                 + (f" ({len(excluded)} below it left out)" if excluded else ""), why)

    if n < 2:
        raise refuse("at least 2 rows with distinct bytes moved to fit 2 parameters (t0, η)")
    if np.all(terms.compute_s > terms.weights_s + terms.kv_s) and fit_compute is not False:
        raise refuse("some memory-bound rows: every row is compute-bound, so the bandwidth term is undetermined")
    base_design, _ = cm.columns(terms, ("t0", "u_bytes"), np.zeros(n, dtype=bool))
    if np.linalg.matrix_rank(base_design / np.max(np.abs(base_design), axis=0), tol=1e-9) < 2:
        raise refuse("at least 2 rows with distinct bytes moved: the rows do not separate the fixed cost from the bytes term")

    chosen, fit, scores, cv_error, reason = cm.choose(names, units, rows, y, weights, fit_compute, weighting)
    if len(depths) == 1 and fixed_cost == "auto":
        reason += (f"; fixed cost per layer: every row has L = {depths[0]}, which cannot tell per layer from "
                   "per step; per layer is the default, on the size rows of docs/how_close_is_the_floor.md")
    residuals = y - fit.fitted_s
    free = len(fit.free)
    dof = n - free
    if dof > 0 and fit.unscaled_covariance is not None:
        s2 = float(np.sum(weights * residuals**2) / dof)
        standard_error = math.sqrt(s2)
        source = "the residual standard error"
        if cv_error is not None and cv_error**2 > s2:
            s2, source = cv_error**2, "the cross-validated error (larger than the residual one)"
        s = math.sqrt(s2)
        covariance = s2 * fit.unscaled_covariance
        method = (f"prediction interval, t-quantile (dof {dof}) x s = {s:.3g}{'' if weighting == 'relative' else ' s'} "
                  f"({source}); nominal coverage {level:.0%}")
    elif dof > 0 and not fit.free:
        s = standard_error = math.sqrt(float(np.sum(weights * residuals**2) / dof))
        covariance = np.zeros((0, 0))
        method = f"prediction interval, t-quantile (dof {dof}) x residual s = {s:.3g}; nominal coverage {level:.0%}"
    else:
        s, standard_error, covariance = float("nan"), float("nan"), None
        method = "none: the fit is exactly determined (0 residual degrees of freedom); add rows for a band"
    warnings = []
    for key in fit.names:
        if key not in fit.identified:
            what = {"u_w": "the weight-stream efficiency (every row reads the same weight bytes: t0 holds "
                           "its excess, so predictions for other models or formats are uncertain)",
                    "q": "the per-sequence cost (every row has the same batch)",
                    "u_kv": "the KV-stream efficiency (KV bytes do not vary apart from the other terms)",
                    "u_bytes": "the bandwidth efficiency (the bytes moved vary only as the fixed and per-sequence "
                               "costs do: those fit the rows)",
                    "t0": "the fixed cost (the other terms fit the rows with it at 0)"}.get(key, key)
            warnings.append(f"not identifiable from these rows, held at its bound: {what}")
    return Calibration(
        accelerator=device, model_name=chosen[0], reason=reason, candidates=scores,
        parameter_names=fit.names, fixed_cost=chosen[1], layers=depths,
        beta=fit.beta, full=fit.full, free=fit.free, identified=fit.identified, residuals_s=residuals,
        measured_s=y, calibrated_s=fit.fitted_s, dof=dof, residual_std=s, level=level, weighting=weighting,
        band_method=method, excluded=excluded, _covariance=covariance, warnings=tuple(warnings),
        residual_standard_error=standard_error,
    )
