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

    from ..floors.sweeps import SweepResult

__all__ = ["sweep_to_xarray"]


#: Fields of a DecodeFloor that become variables of the Dataset (all over the whole grid).
_VARIABLES = (
    "weight_bytes", "kv_read_bytes", "kv_write_bytes", "bytes_total", "flops", "memory_time_s", "compute_time_s",
    "step_time_s", "tokens_per_s", "per_sequence_tokens_per_s", "arithmetic_intensity", "critical_batch",
    "chain_time_s",
)


def sweep_to_xarray(result: SweepResult) -> xr.Dataset:
    """A :class:`xarray.Dataset` of a :class:`~roofline_decode.floors.decode.SweepResult`.

    Dimensions ``model``, ``accelerator``, ``batch``, ``context``; variables: the numeric fields
    of the floor (bytes [B], FLOPs, seconds [s], tokens per second, FLOP/B), ``bound`` (str),
    ``fits`` (where the result has it), and ``ridge_point`` over (model, accelerator).
    """
    try:
        import xarray as xr
    except ImportError:
        raise MissingExtraError("xarray", "frames", "to_xarray()") from None
    floors = list(result)
    if not floors:
        return xr.Dataset()
    models = list(dict.fromkeys(f.model for f in floors))
    devices = list(dict.fromkeys(f.accelerator for f in floors))
    first = floors[0]
    batch, context = first.batch[:, 0], first.context[0, :]
    shape = (len(models), len(devices), batch.size, context.size)
    position = {(f.model, f.accelerator): f for f in floors}
    names = [*_VARIABLES, "bound"] + (["fits"] if hasattr(first, "fits") else [])
    data: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
    for name in names:
        cells = [[np.broadcast_to(getattr(position[m, d], name), first.shape) for d in devices] for m in models]
        data[name] = (("model", "accelerator", "batch", "context"), np.asarray(cells).reshape(shape))
    ridge = [[position[m, d].ridge_point for d in devices] for m in models]
    data["ridge_point"] = (("model", "accelerator"), np.asarray(ridge, dtype=float))
    return xr.Dataset(data, coords={"model": models, "accelerator": devices, "batch": batch, "context": context},
                      attrs={"units": "SI: bytes [B], seconds [s], FLOPs, tokens/s, FLOP/B"})
