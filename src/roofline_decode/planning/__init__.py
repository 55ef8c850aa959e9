"""Planning: capacity vs bandwidth, memory tiers, multi-device decode and serving rate.

Capacity planning (does it fit?) and bandwidth planning (is it fast enough?) are separate
questions; :func:`plan` answers both for a model on several accelerators.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

from .. import _moved

#: public name -> module that defines it (the capacity rule and the parallel floors live with the
#: floors, below planning: ``..floors.capacity``); each is imported on first use (PEP 562), so a
#: floor that needs only the capacity rule (``decode_floor``'s fit and max_batch) does not
#: import the planners, the serving model and the prefill and request floors they use
_EXPORTS: dict[str, str] = {
    **dict.fromkeys(["DEFAULT_RESERVE", "capacity_bytes", "device_memory", "gpu_memory_share", "kv_bytes_per_sequence",
                     "max_batch", "max_context", "usable_memory"], "..floors.capacity"),
    **dict.fromkeys(["Frontier", "FrontierPoint", "frontier"], "frontier"),
    **dict.fromkeys(["DeploymentPoint", "Deployments", "deployments"], "deployments"),
    **dict.fromkeys(["DEFAULT_COLLECTIVE_LATENCY", "ParallelFloor", "pipeline_parallel_floor", "tensor_parallel_floor"],
                    "..floors.parallel"),
    **dict.fromkeys(["PlanResult", "PlanRow", "plan"], "plan"),
    **dict.fromkeys(["ServingRate", "serving_rate"], "serving"),
    **dict.fromkeys(["OffloadFloor", "TierAnswer", "can_tier_feed", "offload_floor", "required_tier_bandwidth"],
                    "tiers"),
}

_SUBMODULES = {"serving", "tiers"}  # plan and frontier name functions


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = _EXPORTS[name]
        value = getattr(importlib.import_module(module if module.startswith(".") else f".{module}", __name__), name)
        globals()[name] = value  # later look-ups skip this hook
        return value
    if name in _SUBMODULES or f"{__name__}.{name}" in _moved.MOVED:  # planning.tiers etc., as the eager
        # imports made them attributes; planning.capacity and planning.parallel moved (a warning)
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """``planning.plan``, ``planning.frontier`` and ``planning.deployments`` stay the functions, as the eager imports bound
    them, when their submodules of the same name are first imported (the import system sets
    each new submodule as an attribute of its package)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("plan", "frontier", "deployments") and isinstance(value, types.ModuleType):
            value = getattr(value, name)
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package


if TYPE_CHECKING:  # static analysers and IDEs see the eager imports
    from ..floors.capacity import DEFAULT_RESERVE, capacity_bytes, device_memory, gpu_memory_share, kv_bytes_per_sequence, max_batch, max_context, usable_memory
    from .frontier import Frontier, FrontierPoint, frontier
    from .deployments import DeploymentPoint, Deployments, deployments
    from ..floors.parallel import DEFAULT_COLLECTIVE_LATENCY, ParallelFloor, pipeline_parallel_floor, tensor_parallel_floor
    from .plan import PlanResult, PlanRow, plan
    from .serving import ServingRate, serving_rate
    from .tiers import OffloadFloor, TierAnswer, can_tier_feed, offload_floor, required_tier_bandwidth

__all__ = [
    "DEFAULT_COLLECTIVE_LATENCY",
    "DEFAULT_RESERVE",
    "DeploymentPoint",
    "Deployments",
    "Frontier",
    "FrontierPoint",
    "OffloadFloor",
    "ParallelFloor",
    "PlanResult",
    "PlanRow",
    "ServingRate",
    "TierAnswer",
    "can_tier_feed",
    "capacity_bytes",
    "deployments",
    "device_memory",
    "frontier",
    "gpu_memory_share",
    "kv_bytes_per_sequence",
    "max_batch",
    "max_context",
    "offload_floor",
    "pipeline_parallel_floor",
    "plan",
    "required_tier_bandwidth",
    "serving_rate",
    "tensor_parallel_floor",
    "usable_memory",
]
