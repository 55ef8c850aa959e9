"""Measurements: compare real decode timings with the floor, and calibrate it.

* :class:`MeasurementRow` and its loaders (:func:`load_csv`, :func:`load_json`,
  :func:`rows_from_records`), including the decode-bandwidth-study columns;
* :func:`compare` — per row: floor, efficiency, achieved bandwidth, utilisation, flags;
* :func:`calibrate` — fit nested step-time models (t0, separate weight / KV efficiencies, a
  per-sequence cost, a host-time floor, a compute efficiency) by bounded least squares to
  :class:`Measurement` rows, choose one by cross-validation and predict with a band;
  :func:`load_calibration` reads one back;
* :mod:`~roofline_decode.measure.extrapolation` — the protocol that scores how calibrations
  extrapolate in batch, context and weight format on the published rows;
* :mod:`~roofline_decode.measure.fits` — step time vs context, saturation onset, sustained bandwidth;
* :func:`load_published` — the published timings of ``shared/reference/measured/``;
* :func:`load_production_runs` — TensorRT-LLM / vLLM / SGLang serving runs (TTFT, TPOT, layout)
  as :class:`ProductionRun` rows; :func:`run_floors` / :func:`all_run_floors` their strict TTFT
  and TPOT floors (aggregate, on the row's layout, and ``serving_floor``) and :func:`diagnosis`;
* :func:`expected` — expected step time with a 90 % band beside the floor, from an engine
  profile (:func:`load_engine_profile`, fitted across devices by ``tools/fit_engine_profiles.py``)
  and optionally your own runs (:class:`UserRun`);
* :func:`load_engine_results` — llama-bench, llama-batched-bench, vLLM / SGLang serving and
  SGLang bench_one_batch output as decode rows.

Importing this package does not import matplotlib or sympy.
"""

from .calibrate import CalibratedPrediction, Calibration, Measurement, Parameter, calibrate
from .calibration_io import CalibrationFileError, load_calibration
from .compare import EXCEEDS_MEMORY, IMPOSSIBLE, Comparison, RowComparison, compare
from .fits import ContextFit, SaturationFit, fit_context, saturation_onset, sustained_bandwidth
from .engines import engine_layout, load_engine_results
from .engine_profile import EngineProfile, list_engine_profiles, load_engine_profile
from .expected import Expected, UserRun, expected
from .published import PublishedRows, load_published
from .production_runs import ProductionRun, WorkerLayout, load_production_runs
from .production_floors import RunFloors, all_run_floors, diagnosis, run_floors
from .rows import (
    COLUMNS,
    TOKENS_PER_S_RTOL,
    MeasurementFileError,
    MeasurementRow,
    load_csv,
    load_json,
    load_measurements,
    rows_from_records,
)

__all__ = [
    "COLUMNS", "CalibratedPrediction", "Calibration", "CalibrationFileError", "Comparison", "ContextFit", "EXCEEDS_MEMORY",
    "IMPOSSIBLE", "Measurement", "Parameter", "load_calibration", "MeasurementFileError", "MeasurementRow", "PublishedRows",
    "RowComparison", "SaturationFit", "TOKENS_PER_S_RTOL", "calibrate", "compare", "fit_context",
    "engine_layout", "load_csv", "load_engine_results", "load_json", "load_measurements", "load_published", "rows_from_records",
    "saturation_onset", "sustained_bandwidth", "ProductionRun", "WorkerLayout", "load_production_runs", "RunFloors",
    "all_run_floors", "diagnosis", "run_floors", "EngineProfile", "Expected", "UserRun", "expected",
    "list_engine_profiles", "load_engine_profile",
]
