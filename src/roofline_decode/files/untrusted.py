"""Limits shared by the model-file readers: a file is untrusted input (DESIGN.md §4c).

Every count, length, depth and integer a GGUF or safetensors header states is checked against
the bytes left in the file and against the limits below *before* anything is allocated, so a
reader holds at most a small multiple of its file's size; each failure is one
:class:`~roofline_decode.errors.ConfigError` naming the file, the key or tensor, the value and
what is allowed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = ["MAX_ELEMENTS", "MAX_LAYERS", "MAX_SIZE", "SkippedArray", "shown", "checked_elements"]

#: The Model's own bounds (``specs/_limits.py``): most layers, and the largest width or count.
MAX_LAYERS, MAX_SIZE = 2**16, 2**53

#: Most elements one tensor may hold: 2**53, the largest whole number a float holds exactly (as
#: for every Model count).  The largest real tensors hold a few 2**32 (a 256k x 16k embedding).
MAX_ELEMENTS = 2**53


class SkippedArray(list[Any]):
    """A long array (a tokenizer's vocabulary) of which only the length is kept."""

    def __init__(self, count: int):
        super().__init__()
        self.length = count

    def __len__(self) -> int:
        return self.length


def shown(value: Any) -> str:
    """A value as an error message shows it: arrays by their length, long text cut short."""
    if isinstance(value, (list, tuple)):
        return f"an array of {len(value):,} items"
    if isinstance(value, dict):
        return f"an object of {len(value):,} keys"
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**30:
        return f"an integer of about {int(value.bit_length() * 0.30103) + 1:,} digits"  # str() refuses 4,300+
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def checked_elements(path: str | Path, name: str, shape: tuple[int, ...], order: str) -> int:
    """The element count of a tensor of ``shape``, refusing one beyond :data:`MAX_ELEMENTS`.

    ``order`` says how the file lists the dimensions (``"ne0 first"`` in GGUF, ``"rows first"``
    in safetensors) for the message.
    """
    elements = 1
    for dim in shape:
        if dim > MAX_ELEMENTS:
            raise ConfigError(path, name, f"dimension {dim:,} of shape {list(shape)} ({order}) is over the limit of "
                                          f"{MAX_ELEMENTS:,} (2**53) elements")
        elements *= dim
        if elements > MAX_ELEMENTS:
            raise ConfigError(path, name, f"shape {list(shape)} ({order}) holds more than {MAX_ELEMENTS:,} (2**53) "
                                          f"elements: not a real tensor")
    return elements
