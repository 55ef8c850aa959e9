"""``ParallelFloor``: the result of a floor on several devices (the busiest device's view).

Filled by :func:`roofline_decode.floors.layout.layout_floor`, the one path of every parallel
floor (``decode_floor``, ``prefill_floor`` and ``mixed_step_floor`` with ``parallel=``, and the
:func:`~roofline_decode.floors.parallel.tensor_parallel_floor` and
:func:`~roofline_decode.floors.parallel.pipeline_parallel_floor` wrappers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from .energy import EnergyAndCost

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model
    from .layers import LayerTable
    from ..specs.parallel import Parallel

__all__ = ["ParallelFloor", "PARALLEL_RECORD_KEYS"]

#: Keys of :meth:`ParallelFloor.to_records` (and of the CLI's JSON output for a layout), SI units.
PARALLEL_RECORD_KEYS = (
    "model", "accelerator", "parallel", "num_devices", "step", "batch", "context", "prefill_tokens", "prefill_context",
    "weight_bytes_per_device", "kv_bytes_per_device", "weight_read_bytes_per_device", "expert_read_bytes_per_device",
    "kv_read_bytes_per_device", "kv_write_bytes_per_device", "bytes_read_per_device", "flops_per_device",
    "memory_time_s", "compute_time_s", "communication_time_s", "step_time_s", "tokens_per_s", "bound", "notes",
)


@dataclass(frozen=True)
class ParallelFloor(EnergyAndCost):
    """A floor of a model on several devices (arrays broadcast over the grid, SI units).

    Per-device fields are for the busiest device (a lower bound of it: the even share where a
    real split may be uneven); ``tokens_per_s`` is aggregate over all devices: generated
    tokens (``batch``) per step for a decode step, the step's tokens (decode tokens plus the
    prefill chunk) for a mixed step, prompt tokens for a prefill.  ``strategy`` is
    ``"tensor"``, ``"pipeline"`` (the wrappers) or ``"layout"`` (a :class:`~roofline_decode.Parallel`
    given to a step floor, recorded in ``parallel``); ``step`` says which step it is
    (``"decode"``, ``"prefill"``, ``"mixed"``).  ``communication_time_s`` is the busiest device's
    link time per step (all collectives, all stages); ``expert_read_bytes_per_device`` the routed
    experts inside ``weight_read_bytes_per_device``; ``group_flops_per_device`` splits
    ``flops_per_device`` by compute group (each timed at its own precision).  Energy and cost
    (:class:`~roofline_decode.floors.energy.EnergyAndCost`) count all ``num_devices`` devices:
    bytes moved = ``bytes_read_per_device`` x devices, board power and price x devices.
    """

    model: str
    accelerator: str
    strategy: str
    num_devices: int
    batch: np.ndarray
    context: np.ndarray
    weight_bytes_per_device: float
    kv_bytes_per_device: np.ndarray
    bytes_read_per_device: np.ndarray
    memory_time_s: np.ndarray
    compute_time_s: np.ndarray
    communication_time_s: np.ndarray
    step_time_s: np.ndarray
    tokens_per_s: np.ndarray
    kv_replication: float
    link_bandwidth: float
    collective_latency: float
    notes: tuple[str, ...] = field(default=())
    chain_time_s: np.ndarray | float = 0.0
    latency_profile: str | None = None
    device: Accelerator | None = field(default=None, repr=False, compare=False)
    mla_layout: str | None = None  # an MLA model's layout under tensor parallelism (MLA_LAYOUTS)
    parallel: Parallel | None = None
    step: str = "decode"
    weight_read_bytes_per_device: np.ndarray | float = 0.0
    expert_read_bytes_per_device: np.ndarray | float = 0.0
    kv_read_bytes_per_device: np.ndarray | float = 0.0
    kv_write_bytes_per_device: np.ndarray | float = 0.0
    flops_per_device: np.ndarray | float = 0.0
    prefill_tokens: np.ndarray | float = 0.0
    prefill_context: np.ndarray | float = 0.0
    routing: str | None = None
    scale_up_domain: int | None = None  # devices per scale-up domain (None: unknown, all on one)
    scale_out_bandwidth: float | None = None  # per-device bandwidth across domains [B/s] (None: unknown)
    tokens_per_step: np.ndarray | float = 0.0  # tokens counted by tokens_per_s
    group_flops_per_device: Mapping[str, np.ndarray] = field(default_factory=dict, repr=False)  # per COMPUTE_GROUPS
    spec: Model | None = field(default=None, repr=False, compare=False)  # the model, for layers()

    def layers(self) -> LayerTable:
        """The busiest device's decode step split by layer kind, plus a ``communication`` row:
        the rows add up to its bytes and FLOPs (:mod:`roofline_decode.floors.layout_layers`)."""
        from .layout_layers import layout_layer_table

        return layout_layer_table(self)

    @property
    def _energy_tokens(self) -> np.ndarray:
        return np.asarray(self.batch if self.step == "decode" else self.tokens_per_step, dtype=float)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.shape(self.step_time_s)

    def to_records(self) -> list[dict[str, Any]]:
        """One dict per grid point with the keys of :data:`PARALLEL_RECORD_KEYS` (SI units, plain
        floats; ``parallel`` the layout's text, ``notes`` a list of str)."""
        shape = self.shape
        layout = str(self.parallel) if self.parallel is not None else f"{self.strategy}{self.num_devices}"
        fixed: dict[str, Any] = {"model": self.model, "accelerator": self.accelerator, "parallel": layout,
                                 "num_devices": self.num_devices, "step": self.step, "notes": None}
        columns = {key: np.broadcast_to(np.asarray(getattr(self, key)), shape).ravel()
                   for key in PARALLEL_RECORD_KEYS if key not in fixed}
        records = []
        for i in range(int(np.prod(shape))):
            record: dict[str, Any] = {}
            for key in PARALLEL_RECORD_KEYS:
                if key in fixed:
                    record[key] = list(self.notes) if key == "notes" else fixed[key]
                    continue
                value = columns[key][i]
                record[key] = str(value) if key == "bound" else float(value)
                if key in ("batch", "context", "prefill_tokens", "prefill_context") and record[key].is_integer():
                    record[key] = int(record[key])
            records.append(record)
        return records

    @property
    def _energy_bytes(self) -> np.ndarray:
        return np.asarray(self.bytes_read_per_device) * self.num_devices

    @property
    def _energy_devices(self) -> int:
        return self.num_devices

    @property
    def resident_bytes_per_device(self) -> np.ndarray:
        """Weights plus KV cache one device holds [B]."""
        return self.weight_bytes_per_device + self.kv_bytes_per_device

    @property
    def fits(self) -> np.ndarray:
        """Whether what the busiest device holds (weights plus KV cache) fits its usable memory
        (the planning rule with its defaults, :func:`~roofline_decode.floors.capacity.usable_memory`),
        over the grid (bool array; True everywhere for a result built without its device)."""
        resident = np.asarray(self.resident_bytes_per_device)
        if self.device is None:
            return np.ones(np.shape(resident), dtype=bool)
        from .capacity import usable_memory

        held: np.ndarray = resident <= usable_memory(self.device)
        return held

    @property
    def ttft_s(self) -> np.ndarray:
        """The step time of a prefill, its time to first token [s] (the step time of any step)."""
        return self.step_time_s

    @property
    def bound(self) -> np.ndarray:
        """What sets the step at each point: ``"communication"`` where the link time exceeds
        both other times (overlapped), else ``"compute"`` where T_comp >= T_mem, else
        ``"memory"`` (array of str)."""
        memory, compute = np.asarray(self.memory_time_s), np.asarray(self.compute_time_s)
        roof = np.where(compute >= memory, "compute", "memory")
        return np.where(np.asarray(self.communication_time_s) > np.maximum(memory, compute), "communication", roof)
