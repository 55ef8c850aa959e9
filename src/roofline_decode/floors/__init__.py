"""The floors: every estimator of the library, and the parts they are made of.

The estimators, each a module of its own:

* :mod:`~roofline_decode.floors.decode`: one decode step (:func:`decode_floor`) and
  :mod:`~roofline_decode.floors.sweeps` (many models x devices over a grid, :func:`sweep`);
* :mod:`~roofline_decode.floors.prefill`: time to first token;
* :mod:`~roofline_decode.floors.mixed_step`: a continuous-batching step of decode tokens and a prefill chunk;
* :mod:`~roofline_decode.floors.request`: a whole request (prefill, then its decode steps);
* :mod:`~roofline_decode.floors.speculative`: draft-and-verify rounds (the verify step's bytes
  and FLOPs in :mod:`~roofline_decode.floors.verify`);
* :mod:`~roofline_decode.floors.parallel`: tensor- and pipeline-parallel decode;
* :mod:`~roofline_decode.floors.layout`: every step floor under a :class:`~roofline_decode.Parallel`
  layout (``parallel=``: TP, PP, EP, attention DP, MoE TP), the busiest device's view
  (:mod:`~roofline_decode.floors.layout_traffic`, :mod:`~roofline_decode.floors.layout_links`,
  :mod:`~roofline_decode.floors.layout_result`);
* :mod:`~roofline_decode.floors.serving`: serving-benchmark metrics of closed-loop clients,
  aggregated or disaggregated (one worker's steady step in :mod:`~roofline_decode.floors.serving_worker`),
  and :mod:`~roofline_decode.floors.disaggregation` (the prefill:decode worker ratio).

Their parts, private to the floors (other layers use the estimators and results above):
:mod:`~roofline_decode.floors.traffic` (bytes and FLOPs of a step),
:mod:`~roofline_decode.floors.peaks` (compute peak per weight group),
:mod:`~roofline_decode.floors.critical_batch`, :mod:`~roofline_decode.floors.step_timing`,
:mod:`~roofline_decode.floors.fast_path` (one point on Python floats),
:mod:`~roofline_decode.floors.routing` (MoE routing assumptions),
:mod:`~roofline_decode.floors.limits` (fit notes), :mod:`~roofline_decode.floors.grid` (the input rule);
and what the results carry: :mod:`~roofline_decode.floors.results`,
:mod:`~roofline_decode.floors.terms`, :mod:`~roofline_decode.floors.grid_result`,
:mod:`~roofline_decode.floors.records`, :mod:`~roofline_decode.floors.energy`.
:mod:`~roofline_decode.floors.capacity` (usable memory, bytes per sequence, max batch) is the
capacity arithmetic the floors' fit notes and the planners share.

The names below load on first use (PEP 562), as at the top level.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: public name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["DecodeFloor", "decode_floor"], "decode"),
    **dict.fromkeys(["RECORD_KEYS"], "results"),
    **dict.fromkeys(["NO_COMPUTE_PEAK"], "peaks"),
    **dict.fromkeys(["SweepResult", "sweep"], "sweeps"),
    **dict.fromkeys(["PrefillFloor", "prefill_floor"], "prefill"),
    **dict.fromkeys(["MixedStepFloor", "mixed_step_floor"], "mixed_step"),
    **dict.fromkeys(["RequestFloor", "request_floor"], "request"),
    **dict.fromkeys(["SpeculativeFloor", "speculative_floor"], "speculative"),
    **dict.fromkeys(["ServingFloor", "serving_floor"], "serving"),
    **dict.fromkeys(["BalancedWorkers", "balanced_workers"], "disaggregation"),
    **dict.fromkeys(["ParallelFloor", "pipeline_parallel_floor", "tensor_parallel_floor"], "parallel"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this hook
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


if TYPE_CHECKING:  # static analysers and IDEs see the eager imports (``as``: re-exported)
    from .decode import DecodeFloor as DecodeFloor
    from .decode import decode_floor as decode_floor
    from .peaks import NO_COMPUTE_PEAK as NO_COMPUTE_PEAK
    from .parallel import ParallelFloor as ParallelFloor
    from .parallel import pipeline_parallel_floor as pipeline_parallel_floor
    from .parallel import tensor_parallel_floor as tensor_parallel_floor
    from .mixed_step import MixedStepFloor as MixedStepFloor
    from .mixed_step import mixed_step_floor as mixed_step_floor
    from .prefill import PrefillFloor as PrefillFloor
    from .prefill import prefill_floor as prefill_floor
    from .request import RequestFloor as RequestFloor
    from .request import request_floor as request_floor
    from .results import RECORD_KEYS as RECORD_KEYS
    from .speculative import SpeculativeFloor as SpeculativeFloor
    from .speculative import speculative_floor as speculative_floor
    from .serving import ServingFloor as ServingFloor
    from .disaggregation import BalancedWorkers as BalancedWorkers
    from .disaggregation import balanced_workers as balanced_workers
    from .serving import serving_floor as serving_floor
    from .sweeps import SweepResult as SweepResult
    from .sweeps import sweep as sweep
