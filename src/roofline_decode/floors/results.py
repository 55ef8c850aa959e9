"""The result of :func:`~roofline_decode.floors.decode.decode_floor`: :class:`DecodeFloor` and its record keys.

The class holds every term of the floor broadcast over the batch × context grid, with the
records, breakdown and table views of it; the timing that fills it lives in
:mod:`roofline_decode.floors.step_timing`.  Separate so that the views (tables, frames, limits) and the
fast path can name the result without the orchestration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .energy import EnergyAndCost
from .limits import point_notes
from .terms import RooflineTerms
from .routing import UNIFORM, Routing
from ..specs.accelerator import Accelerator
from ..specs.model import Model
from .traffic import traffic_breakdown
from .records import ToDataFrame

if TYPE_CHECKING:
    from .layers import LayerTable

__all__ = ["DecodeFloor", "RECORD_KEYS", "EXTRA_RECORD_KEYS"]

#: Keys of :meth:`DecodeFloor.to_records` (and of the CLI's JSON output), all in SI units.
RECORD_KEYS = (
    "model", "accelerator", "batch", "context", "weight_format", "kv_format", "weight_bytes",
    "kv_read_bytes", "kv_write_bytes", "bytes_total", "flops", "memory_time_s", "compute_time_s",
    "step_time_s", "tokens_per_s", "arithmetic_intensity", "ridge_point", "bound", "critical_batch",
)
#: Keys that follow :data:`RECORD_KEYS` in every record: whether the point fits in memory, the
#: notes that hold at the grid point (its own limits, then fallbacks and routing), and
#: ``chain_time_s``: the serial chain under the latency profile (0 without one).
EXTRA_RECORD_KEYS = ("fits", "notes", "chain_time_s")


@dataclass(frozen=True)
class DecodeFloor(RooflineTerms, ToDataFrame, EnergyAndCost):
    """The decode step floor of a model on an accelerator, broadcast over batch and context.

    All quantities in SI units: bytes [B], FLOPs, seconds [s], tokens per second [1/s],
    intensities [FLOP/B].  ``tokens_per_s`` is generated tokens aggregated over the batch;
    ``per_sequence_tokens_per_s`` is what one sequence sees (1 / step time).
    ``chain_time_s`` is the serial chain of the step under ``latency_profile`` (zero, and
    ``latency_profile`` None, when no profile was given: the strict floor).

    Each FLOP group (:data:`COMPUTE_GROUPS`) is timed at its own precision and the times add:
    ``compute_precisions`` and ``group_peak_flops`` say which precision and peak each group
    used, ``group_flops`` how many FLOPs it had.  ``peak_flops`` is the **effective** peak
    FLOPs / compute time (the FLOP-weighted harmonic mean of the group peaks), ``ridge_point``
    = peak_flops / bandwidth, so a step is compute-bound exactly when its intensity reaches
    ``ridge_point``.  When every group runs at one precision both are that precision's plain
    peak and ridge (floats); otherwise they are arrays over the grid that depend on the
    context only (every group's FLOPs grow linearly with the batch).  ``compute_precision``
    names the one precision, or each precision with its groups ("fp8 (matmuls and routed
    experts), bf16 (attention scores)").

    ``critical_batch`` is +inf where the step is memory-bound at any batch (the intensity
    saturates below the ridge).  On a device with no compute peak for any group's precision
    (:data:`NO_COMPUTE_PEAK`) ``peak_flops``, ``ridge_point`` and ``critical_batch`` are NaN
    and ``compute_time_s`` is 0; a group without a peak where others have one adds no time.
    ``notes`` says which assumptions and fallbacks the numbers rest on.  ``routing`` is the MoE
    routing assumption (``"uniform"``, ``"identical"`` or ``"measured"``,
    :mod:`roofline_decode.floors.routing`) and ``experts_read`` the distinct routed experts per MoE
    layer it gives at each grid point (0 for a dense model).

    Fit and limits (:mod:`roofline_decode.floors.limits`, one device, the planning module's usable
    memory): ``fits`` (bool array: the weights plus the KV cache of B sequences at that context
    fit in ``usable_memory``), ``resident_bytes`` (those bytes; ``kv_bytes_per_sequence`` on the
    context axis), ``max_batch`` (the largest whole batch that fits at each context; +inf at
    context 0 when the weights fit), and ``beyond_positions`` (context >= the model's
    ``max_position_embeddings``).  ``notes`` says where a point does not fit or is beyond the
    positions, after ``assumptions`` (sparse or precision fallback, MoE routing).
    """

    weight_format: str
    kv_format: str
    batch: np.ndarray
    context: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s: np.ndarray
    per_sequence_tokens_per_s: np.ndarray
    arithmetic_intensity: np.ndarray
    ridge_point: float | np.ndarray
    critical_batch: np.ndarray
    memory_bandwidth: float
    peak_flops: float | np.ndarray
    spec: Model = field(repr=False)
    compute_precisions: dict[str, str] = field(default_factory=dict)
    group_peak_flops: dict[str, float] = field(default_factory=dict)
    group_flops: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)

    @property
    def compute_bounded(self) -> bool:
        """Whether some FLOP group has a published peak (else the floor is the memory time)."""
        return bool(np.any(~np.isnan(np.asarray(self.peak_flops))))
    notes: tuple[str, ...] = ()
    routing: str = "uniform"
    experts_read: np.ndarray | float = 0.0
    _routing: Routing = field(default=UNIFORM, repr=False)
    fits: np.ndarray | bool = True
    max_batch: np.ndarray | float = np.inf
    kv_bytes_per_sequence: np.ndarray | float = field(default=0.0, repr=False)
    usable_memory: float = field(default=np.inf, repr=False)
    beyond_positions: np.ndarray | bool = field(default=False, repr=False)
    assumptions: tuple[str, ...] = field(default=(), repr=False)
    chain_time_s: np.ndarray | float = 0.0
    latency_profile: str | None = None
    device: Accelerator | None = field(default=None, repr=False, compare=False)

    @property
    def bound(self) -> np.ndarray:
        """The constraint that sets the step (array of str): ``"latency"`` where the serial
        chain exceeds both other times, else ``"compute"`` where T_comp >= T_mem, else
        ``"memory"``."""
        roof = super().bound
        chain_binds = self.chain_time_s > np.maximum(self.memory_time_s, self.compute_time_s)
        return np.where(chain_binds, "latency", roof)

    @property
    def resident_bytes(self) -> np.ndarray:
        """Weights plus the KV cache of ``batch`` sequences at ``context`` [B] (one device)."""
        return np.broadcast_to(self.spec.weight_bytes + self.batch * self.kv_bytes_per_sequence, self.shape)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.step_time_s.shape

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per grid point with the keys of :data:`RECORD_KEYS` (SI units, plain floats),
        then :data:`EXTRA_RECORD_KEYS` (``fits``: a bool; ``notes``: a list of str; ``chain_time_s``)."""
        shape = self.shape
        columns = {
            key: np.broadcast_to(getattr(self, key), shape).ravel()
            for key in RECORD_KEYS + ("chain_time_s",)
            if key not in ("model", "accelerator", "weight_format", "kv_format")
        }
        records = []
        notes = point_notes(self)
        for i in range(int(np.prod(shape))):
            record: dict[str, Any] = {
                "model": self.model, "accelerator": self.accelerator,
                "weight_format": self.weight_format, "kv_format": self.kv_format,
            }
            for key, column in columns.items():
                value = column[i]
                record[key] = str(value) if key == "bound" else float(value)
            for key in ("batch", "context"):
                if float(record[key]).is_integer():
                    record[key] = int(record[key])
            record["fits"] = bool(np.ravel(self.fits)[i])
            record["notes"] = notes[i]
            records.append({key: record[key] for key in RECORD_KEYS + EXTRA_RECORD_KEYS})
        return records

    def breakdown(self) -> dict[str, dict[str, np.ndarray]]:
        """Bytes [B] and FLOPs per component, to see what dominates the step.

        ``bytes``: attention_weights, mlp_weights (dense MLPs, shared and routed experts,
        routers), norms_and_biases, embedding (gathered rows), lm_head, kv_read, kv_write;
        ``flops``: attention_projections, attention_scores, mlp, lm_head.  Each part has the
        shape of the grid and the parts add up to ``bytes_total`` and ``flops``.

        Examples
        --------
        >>> from roofline_decode import decode_floor
        >>> r = decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=4096)
        >>> parts = r.breakdown()["bytes"]
        >>> max(parts, key=lambda k: parts[k])
        'mlp_weights'
        """
        return traffic_breakdown(self.spec, self.batch, self.context, self._routing)

    def layers(self) -> LayerTable:
        """The step split by layer kind (attention full / sliding / MLA / chunked / sparse,
        recurrent mixer, norms, dense MLP, MoE router / shared / routed experts, embedding,
        lm_head): each row's bytes, FLOPs, intensity, times and bound on this device; the rows
        add up to the step's bytes and FLOPs (:mod:`roofline_decode.floors.layers`).

        Examples
        --------
        >>> from roofline_decode import decode_floor
        >>> rows = decode_floor("deepseek-v3", "h200-sxm", batch=256, context=8192).layers()
        >>> [(row.kind, str(row.bound)) for row in rows][:1]
        [('attention (MLA)', 'compute')]
        """
        from .layers import layer_table

        return layer_table(self, self._routing)

    def _table_rows(self) -> list[list[str]]:
        from ..views.table import floor_rows

        return floor_rows(self)

    def __str__(self) -> str:
        from ..views.table import render_text

        return render_text(self)

    def _repr_html_(self) -> str:
        from ..views.table import render_html

        return render_html(self)

