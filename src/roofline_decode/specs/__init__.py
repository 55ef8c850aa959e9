"""Layer 2: pydantic specs (frozen, unknown fields rejected) that validate and feed the formulas."""

from ._base import Spec
from .accelerator import Accelerator, Figure, Interconnect, MemoryTier, Source
from .model import Model

__all__ = ["Accelerator", "Figure", "Interconnect", "MemoryTier", "Model", "Source", "Spec"]
