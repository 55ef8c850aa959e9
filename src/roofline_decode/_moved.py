"""Module paths that moved when the floors got a package of their own (0.2): the old paths still
import, with a :class:`DeprecationWarning`, for one release.

``import roofline_decode.estimate`` (or ``from roofline_decode.estimate import decode_floor``)
gives a small module that hands every attribute on to the new home
(``roofline_decode.floors.decode``), in the manner of PEP 562; ``rd.estimate`` does the same.
Nothing here is imported by the library itself (a test turns the warning into an error inside
it), and the table is the whole record of what moved where.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import types
import warnings
from collections.abc import Sequence
from typing import Any

__all__ = ["MOVED", "NAMES_MOVED", "install"]

_OLD_PREFIX = "roofline_decode."

#: old module path -> new module path
MOVED: dict[str, str] = {
    _OLD_PREFIX + old: _OLD_PREFIX + new
    for old, new in {
        "estimate": "floors.decode",
        "estimate_prefill": "floors.prefill",
        "estimate_request": "floors.request",
        "estimate_speculative": "floors.speculative",
        "sweeps": "floors.sweeps",
        "traffic": "floors.traffic",
        "peaks": "floors.peaks",
        "critical_batch": "floors.critical_batch",
        "step_timing": "floors.step_timing",
        "limits": "floors.limits",
        "routing": "floors.routing",
        "energy": "floors.energy",
        "grid": "floors.grid",
        "floor_result": "floors.results",
        "roofline_terms": "floors.terms",
        "views_grid": "floors.grid_result",
        "views_frame": "views.frame",
        "views_table": "views.table",
        "planning.capacity": "floors.capacity",
        "planning.parallel": "floors.parallel",
        "files.ggml_types": "formats.ggml_types",
        "files.llama_quant": "formats.llama_quant",
    }.items()
}

#: names that left their module for another one: (old module, name) -> new module
NAMES_MOVED: dict[tuple[str, str], str] = {
    (_OLD_PREFIX + "views_table", "format_table"): _OLD_PREFIX + "units",
    (_OLD_PREFIX + "views_frame", "ToDataFrame"): _OLD_PREFIX + "floors.records",
    (_OLD_PREFIX + "views_frame", "records_to_dataframe"): _OLD_PREFIX + "floors.records",
    (_OLD_PREFIX + "files.ggml_types", "format_of_type"): _OLD_PREFIX + "formats.registry",
    # the mixed step left the prefill module for floors.mixed_step
    **{(_OLD_PREFIX + "estimate_prefill", name): _OLD_PREFIX + "floors.mixed_step"
       for name in ("MixedStepFloor", "mixed_step_floor", "mixed_traffic")},
    # estimate.py was also the hub that re-exported the parts of the decode floor
    **{(_OLD_PREFIX + "estimate", name): _OLD_PREFIX + "floors." + home for name, home in {
        "SweepResult": "sweeps", "sweep": "sweeps", "AcceleratorRef": "sweeps", "ModelRef": "sweeps",
        "RECORD_KEYS": "results", "EXTRA_RECORD_KEYS": "results", "NO_COMPUTE_PEAK": "peaks",
        "compute_peak": "peaks", "COMPUTE_GROUPS": "traffic", "compute_formats": "traffic",
        "chain_time": "step_timing", "checked_array": "grid", "broadcast_grid": "grid",
        "MAX_GRID_VALUE": "grid"}.items()},
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of :data:`MOVED` (and only those) and loads each as a forwarding module."""

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None,
                  ) -> importlib.machinery.ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if fullname in MOVED else None

    def exec_module(self, module: types.ModuleType) -> None:
        old, new = module.__name__, MOVED[module.__name__]
        warnings.warn(f"{old} moved to {new}; import it from there (the old path goes in the next release)",
                      DeprecationWarning, stacklevel=2)
        home = importlib.import_module(new)

        def forward(name: str) -> Any:
            elsewhere = NAMES_MOVED.get((old, name))
            return getattr(importlib.import_module(elsewhere) if elsewhere else home, name)

        module.__getattr__ = forward  # type: ignore[method-assign]  # PEP 562 module attribute hook
        module.__doc__ = f"Deprecated: moved to :mod:`{new}`."
        elsewhere = [name for (path, name) in NAMES_MOVED if path == old]
        setattr(module, "__all__", list(dict.fromkeys([*getattr(home, "__all__", ()), *elsewhere])))


def install() -> None:
    """Put the finder on ``sys.meta_path`` once (after the ordinary finders: only paths that no
    longer exist reach it)."""
    import sys

    if not any(isinstance(finder, _MovedModules) for finder in sys.meta_path):
        sys.meta_path.append(_MovedModules())
