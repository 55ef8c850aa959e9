"""The bytes, FLOPs and roofline times every step-like floor reports (one set of fields).

:class:`~roofline_decode.floors.decode.DecodeFloor`,
:class:`~roofline_decode.floors.prefill.PrefillFloor` and
:class:`~roofline_decode.floors.mixed_step.MixedStepFloor` each time bytes at the memory
bandwidth and FLOPs at the compute peaks (DESIGN.md §4); they inherit these fields, and the
roofline verdict on them, from :class:`RooflineTerms`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RooflineTerms", "BOUND_NOT_DEFINED"]

#: ``bound`` where the compute time is not defined (NaN: a prefill on a device that publishes no
#: compute peak): neither "compute" nor "memory" can be told.
BOUND_NOT_DEFINED = "n/a"


@dataclass(frozen=True)
class RooflineTerms:
    """Bytes and FLOPs of a step (or a prefill) and the two times of its roofline.

    ``model`` and ``accelerator`` name the pair, ``compute_precision`` the precision (or each
    precision with its FLOP groups) the FLOPs were timed at.  SI units, arrays broadcast over
    the result's grid: ``weight_bytes``, ``kv_read_bytes``, ``kv_write_bytes`` and their sum
    ``bytes_total`` [B]; ``flops`` [FLOP]; ``memory_time_s`` = bytes / bandwidth and
    ``compute_time_s`` = FLOPs at the compute peaks [s].
    """

    model: str
    accelerator: str
    compute_precision: str
    weight_bytes: np.ndarray
    kv_read_bytes: np.ndarray
    kv_write_bytes: np.ndarray
    bytes_total: np.ndarray
    flops: np.ndarray
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray

    @property
    def bound(self) -> np.ndarray:
        """``"compute"`` where T_comp >= T_mem, else ``"memory"`` (array of str);
        :data:`BOUND_NOT_DEFINED` where T_comp is NaN (needed, but no compute peak published)."""
        roof = np.where(self.compute_time_s >= self.memory_time_s, "compute", "memory")
        return np.where(np.isnan(self.compute_time_s), BOUND_NOT_DEFINED, roof)
