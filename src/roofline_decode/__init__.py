"""roofline_decode: how fast can an LLM possibly decode on a given accelerator, and why.

Closed-form, property-tested decode floors: ``T_step >= bytes / bandwidth`` and
``T_step >= FLOPs / peak``, with every term explained.

>>> import roofline_decode as rd
>>> floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=[1, 64], context=4096)
>>> [str(b) for b in floor.bound]
['memory', 'memory']
"""

from . import formulas, units
from .catalog import (
    add_spec_directory,
    list_accelerators,
    list_memory_tiers,
    list_models,
    load_accelerator,
    load_memory_tier,
    load_model,
    model_metadata,
)
from .errors import (
    ConfigError,
    InvalidValueError,
    MissingExtraError,
    RooflineError,
    SpecFileError,
    UnknownFormatError,
    UnknownIdError,
)
from .estimate import RECORD_KEYS, DecodeFloor, SweepResult, decode_floor, sweep
from .formats import NumberFormat, get_format, group_quantized, list_formats
from .specs import Accelerator, MemoryTier, Model

__version__ = "0.1.0"

__all__ = [
    "Accelerator",
    "ConfigError",
    "DecodeFloor",
    "InvalidValueError",
    "MemoryTier",
    "MissingExtraError",
    "Model",
    "NumberFormat",
    "RECORD_KEYS",
    "RooflineError",
    "SpecFileError",
    "SweepResult",
    "UnknownFormatError",
    "UnknownIdError",
    "add_spec_directory",
    "decode_floor",
    "formulas",
    "get_format",
    "group_quantized",
    "list_accelerators",
    "list_formats",
    "list_memory_tiers",
    "list_models",
    "load_accelerator",
    "load_memory_tier",
    "load_model",
    "model_metadata",
    "sweep",
    "units",
    "__version__",
]
