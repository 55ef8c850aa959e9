"""roofline_decode: how fast can an LLM possibly decode on a given accelerator, and why.

Closed-form, property-tested decode floors: ``T_step >= bytes / bandwidth`` and
``T_step >= FLOPs / peak``, with every term explained.

The public names below are loaded on first use (PEP 562 module ``__getattr__``, as in
scientific-python SPEC 1), so ``import roofline_decode`` stays fast: numpy alone takes about
0.2 s to import on a small machine, and a CLI call or a notebook pays only for what it uses.

>>> import roofline_decode as rd
>>> floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 64], context=4096)
>>> [str(b) for b in floor.bound]
['memory', 'memory']
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from . import _moved

__version__ = "0.1.0"

#: public name -> submodule that defines it
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(
        ["add_spec_directory", "list_accelerators", "list_memory_tiers", "list_models", "load_accelerator",
         "load_memory_tier", "load_model", "model_metadata"], "catalog"),
    **dict.fromkeys(
        ["ConfigError", "InvalidValueError", "MissingExtraError", "RooflineError", "SpecFileError",
         "UnknownFormatError", "UnknownIdError"], "errors"),
    **dict.fromkeys(["DecodeFloor", "decode_floor"], "floors.decode"),
    **dict.fromkeys(["Expected", "UserRun", "expected"], "measure.expected"),
    **dict.fromkeys(["EngineProfile", "list_engine_profiles", "load_engine_profile"], "measure.engine_profile"),
    **dict.fromkeys(["RECORD_KEYS"], "floors.results"),
    **dict.fromkeys(["SweepResult", "sweep"], "floors.sweeps"),
    **dict.fromkeys(["PrefillFloor", "prefill_floor"], "floors.prefill"),
    **dict.fromkeys(["MixedStepFloor", "mixed_step_floor"], "floors.mixed_step"),
    **dict.fromkeys(["RequestFloor", "request_floor"], "floors.request"),
    **dict.fromkeys(["SpeculativeFloor", "speculative_floor"], "floors.speculative"),
    **dict.fromkeys(["ServingFloor", "serving_floor"], "floors.serving"),
    **dict.fromkeys(["BalancedWorkers", "balanced_workers"], "floors.disaggregation"),
    **dict.fromkeys(["NumberFormat", "get_format", "group_quantized", "list_formats"], "formats"),
    **dict.fromkeys(["Accelerator", "MemoryTier", "Model"], "specs"),
    **dict.fromkeys(["Parallel"], "specs.parallel"),
    **dict.fromkeys(["ParallelFloor"], "floors.layout_result"),
    **dict.fromkeys(["LatencyProfile", "list_latency_profiles", "load_latency_profile"], "specs.latency"),
    # the report package's function (the package itself is callable too: roofline_decode.report)
    "report": "report",
}
# Views and tools are submodules too (``rd.planning.max_batch``); each imports its heavy
# dependencies (sympy, matplotlib) only when used.
_SUBMODULES = {
    "formulas", "units", "formats", "errors", "catalog", "floors", "specs",
    "planning", "symbolic", "plotting", "measure", "kernel", "views",
}
# ``rd.estimate`` and the other paths that moved (a DeprecationWarning, for one release)
_moved.install()

__all__ = sorted([*_EXPORTS, *_SUBMODULES, "__version__"])


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value  # later look-ups skip this hook
        return value
    if name in _SUBMODULES or f"{__name__}.{name}" in _moved.MOVED:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from . import catalog, errors, floors, formats, formulas, specs, units
    from .catalog import (
        add_spec_directory, list_accelerators, list_memory_tiers, list_models, load_accelerator,
        load_memory_tier, load_model, model_metadata,
    )
    from .errors import (
        ConfigError, InvalidValueError, MissingExtraError, RooflineError, SpecFileError, UnknownFormatError,
        UnknownIdError,
    )
    from .floors.decode import DecodeFloor, decode_floor
    from .measure.engine_profile import EngineProfile, list_engine_profiles, load_engine_profile
    from .measure.expected import Expected, UserRun, expected
    from .floors.results import RECORD_KEYS
    from .floors.mixed_step import MixedStepFloor, mixed_step_floor
    from .floors.prefill import PrefillFloor, prefill_floor
    from .floors.request import RequestFloor, request_floor
    from .floors.speculative import SpeculativeFloor, speculative_floor
    from .floors.serving import ServingFloor, serving_floor
    from .floors.disaggregation import BalancedWorkers, balanced_workers
    from .floors.sweeps import SweepResult, sweep
    from .formats import NumberFormat, get_format, group_quantized, list_formats
    from .specs import Accelerator, MemoryTier, Model
    from .specs.parallel import Parallel
    from .floors.layout_result import ParallelFloor
    from .specs.latency import LatencyProfile, list_latency_profiles, load_latency_profile
    from .report import report
