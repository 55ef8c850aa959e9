"""Planning: capacity vs bandwidth, memory tiers, multi-device decode and serving rate.

Capacity planning (does it fit?) and bandwidth planning (is it fast enough?) are separate
questions; :func:`plan` answers both for a model on several accelerators.
"""

from .capacity import (
    DEFAULT_RESERVE,
    capacity_bytes,
    device_memory,
    gpu_memory_share,
    kv_bytes_per_sequence,
    max_batch,
    max_context,
    usable_memory,
)
from .frontier import Frontier, FrontierPoint, frontier
from .parallel import DEFAULT_COLLECTIVE_LATENCY, ParallelFloor, pipeline_parallel_floor, tensor_parallel_floor
from .plan import PlanResult, PlanRow, plan
from .serving import ServingRate, serving_rate
from .tiers import OffloadFloor, TierAnswer, can_tier_feed, offload_floor, required_tier_bandwidth

__all__ = [
    "DEFAULT_COLLECTIVE_LATENCY",
    "DEFAULT_RESERVE",
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
