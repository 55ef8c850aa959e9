"""A sweep as an xarray Dataset (``[frames]`` extra).

A sweep gets :func:`sweep_to_xarray`: every numeric field as a variable over the dimensions
``model``, ``accelerator``, ``batch`` and ``context``.  xarray is imported on first use.
(``to_dataframe()`` of every result is :class:`roofline_decode.floors.records.ToDataFrame`.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..errors import MissingExtraError

if TYPE_CHECKING:  # optional extra ``[frames]``: imported on first use at run time
    import xarray as xr

    from ..floors.results import DecodeFloor
    from ..floors.sweeps import SweepResult

__all__ = ["sweep_to_xarray"]


#: Fields of a DecodeFloor that become variables of the Dataset (all over the whole grid).
_VARIABLES = (
    "weight_bytes", "kv_read_bytes", "kv_write_bytes", "bytes_total", "flops", "memory_time_s", "compute_time_s",
    "step_time_s", "tokens_per_s", "per_sequence_tokens_per_s", "arithmetic_intensity", "critical_batch",
    "chain_time_s",
)


def sweep_to_xarray(result: SweepResult) -> xr.Dataset:
    """A :class:`xarray.Dataset` of a :class:`~roofline_decode.floors.sweeps.SweepResult`.

    Dimensions ``model``, ``accelerator``, ``batch``, ``context``; variables: the numeric fields
    of the floor (bytes [B], FLOPs, seconds [s], tokens per second, FLOP/B), ``bound`` (str),
    ``fits`` (where the result has it), and ``ridge_point`` over (model, accelerator), or over
    the whole grid where a model's FLOP groups run at several precisions.  A model swept in
    several formats is one ``model`` label per format ("Llama-3.1-8B (int4 weights, bf16 KV)").
    """
    try:
        import xarray as xr
    except ImportError:
        raise MissingExtraError("xarray", "frames", "to_xarray()") from None
    floors = list(result)
    if not floors:
        return xr.Dataset()
    labels = _model_labels(floors)
    models = list(dict.fromkeys(labels))
    devices = list(dict.fromkeys(f.accelerator for f in floors))
    first = floors[0]
    batch, context = first.batch[:, 0], first.context[0, :]
    shape = (len(models), len(devices), batch.size, context.size)
    position = {(label, f.accelerator): f for label, f in zip(labels, floors)}  # a repeated pair: the same floor
    names = [*_VARIABLES, "bound"] + (["fits"] if hasattr(first, "fits") else [])
    grid_dims = ("model", "accelerator", "batch", "context")
    data: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
    for name in names:
        cells = [[np.broadcast_to(getattr(position[m, d], name), first.shape) for d in devices] for m in models]
        data[name] = (grid_dims, np.asarray(cells).reshape(shape))
    # one ridge per (model, device), or over the grid where FLOP groups of several precisions
    # make the effective peak depend on the context (DeepSeek-V3's fp8 matmuls, bf16 attention)
    ridges = [[position[m, d].ridge_point for d in devices] for m in models]
    if all(np.ndim(r) == 0 for row in ridges for r in row):
        data["ridge_point"] = (("model", "accelerator"), np.asarray(ridges, dtype=float))
    else:
        cells = [[np.broadcast_to(r, first.shape) for r in row] for row in ridges]
        data["ridge_point"] = (grid_dims, np.asarray(cells, dtype=float).reshape(shape))
    return xr.Dataset(data, coords={"model": models, "accelerator": devices, "batch": batch, "context": context},
                      attrs={"units": "SI: bytes [B], seconds [s], FLOPs, tokens/s, FLOP/B"})


def _model_labels(floors: list[DecodeFloor]) -> list[str]:
    """The ``model`` coordinate of each floor: the model's name, with its weight and KV formats
    where one sweep holds the same model in several formats (two variants stay two cells)."""
    variants: dict[str, set[tuple[str, str]]] = {}
    for f in floors:
        variants.setdefault(f.model, set()).add((f.weight_format, f.kv_format))
    return [f"{f.model} ({f.weight_format} weights, {f.kv_format} KV)" if len(variants[f.model]) > 1 else f.model
            for f in floors]
