"""Capacity planning: usable memory, the largest batch and the longest context that fit.

The usable-memory rule
----------------------
1. **Capacity as printed, read as binary.**  A vendor's memory "GB" is physically GiB (DRAM
   dies have power-of-two densities: an H100's "80 GB" is 5 × 16 GiB stacks).  The catalog
   keeps the printed unit in
   ``accelerator.figures["memory_capacity"].unit``; with ``binary_units=True`` (default) a
   printed ``GB``/``MB``/``TB`` is read as GiB/MiB/TiB and a printed ``GiB`` is taken as is.
   An Accelerator built from plain numbers (no figures) keeps ``memory_capacity`` in bytes.
2. **The device's share.**  What the accelerator itself can fill, by device kind
   (:func:`device_memory`):

   * a sourced ``usable_memory`` figure where the runtime exposes less than the capacity, one
     rule for every device and kind of memory (nvidia-smi ``memory.total``): NVIDIA's GDDR
     data-center cards run with ECC on and give up 1/16 of it (T4 15,360 MiB of 16 GiB, L4
     23,034 MiB and A10/A10G 23,028 MiB of 24 GiB, L40S and A40 46,068 MiB of 48 GiB); HBM parts
     carry ECC beside the data but the driver and firmware keep a few hundred MiB (H100 SXM
     81,559 of 81,920 MiB).  A device without a measured figure keeps its whole capacity;
   * unified memory on Apple silicon: macOS lets the GPU wire only part of the RAM by default
     (Metal's ``recommendedMaxWorkingSetSize``): 2/3 of it up to 32 GiB, 3/4 above
     (:data:`APPLE_GPU_SHARE_SMALL`, :data:`APPLE_GPU_SHARE_LARGE`); ``sudo sysctl
     iogpu.wired_limit_mb=N`` raises it;
   * otherwise all of it.

   Override with ``accelerator.replace(gpu_memory_share=0.9)`` (a raised wired limit, or the
   share of a Strix Halo, DGX Spark or Jetson that the OS leaves free) or
   ``accelerator.replace(usable_memory_capacity=None)`` (a card run with ECC off).
3. **Minus a runtime reserve.**  ``reserve`` bytes (default :data:`DEFAULT_RESERVE` = 2 GiB:
   CUDA context, allocator slack, communication buffers, activation workspace) plus
   ``reserve_fraction`` of the capacity (default 0; vLLM's ``gpu_memory_utilization=0.9`` is
   ``reserve_fraction=0.1, reserve=0``).

Resident bytes are the weights (:attr:`Model.weight_bytes`, every expert included) plus the
KV cache of every sequence at the planned context (sliding-window layers hold min(T, W)).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from .. import formulas as f
from .._typing import Broadcastable, FloatArray
from .grid import MAX_GRID_VALUE, checked_array
from ..units import GiB, MiB, TiB
from ..checks import fraction, non_negative
from ..errors import InvalidValueError

if TYPE_CHECKING:
    from ..specs.accelerator import Accelerator
    from ..specs.model import Model

__all__ = [
    "DEFAULT_RESERVE",
    "APPLE_GPU_SHARE_SMALL",
    "APPLE_GPU_SHARE_LARGE",
    "APPLE_SMALL_MEMORY",
    "capacity_bytes",
    "gpu_memory_share",
    "device_memory",
    "usable_memory",
    "kv_bytes_per_sequence",
    "resident_bytes",
    "max_batch",
    "fitting_batch",
    "max_context",
    "onchip_cache_bytes",
    "onchip_cache_note",
]

#: Default runtime reserve per device [B]: 2 GiB (SPECS_NOTES §2: "often 1-3 GiB per GPU").
DEFAULT_RESERVE = 2 * GiB

_BINARY = {"GB": GiB, "MB": MiB, "TB": TiB}

#: Share of an Apple silicon Mac's RAM the GPU may wire by default, up to
#: :data:`APPLE_SMALL_MEMORY`: Metal's ``recommendedMaxWorkingSetSize`` as llama.cpp logs it,
#: 10,922.67 MB on 16 GiB (abetlen/llama-cpp-python#687) and 21,845.34 MB on 32 GiB
#: (ollama/ollama#434) are 2/3 of the RAM.
APPLE_GPU_SHARE_SMALL = 2 / 3
#: Share above :data:`APPLE_SMALL_MEMORY`: 73,728 MB on 96 GiB (ggml-org/llama.cpp#3213) and
#: about 48 GiB on 64 GiB (ggml-org/llama.cpp#1870) are 3/4.  macOS 26 reports more on 128 GiB
#: hosts (107.52 GiB, antirez/ds4#893); the older, smaller share is kept as the default.
APPLE_GPU_SHARE_LARGE = 3 / 4
#: Largest RAM [B] that gets the small share (32 GiB).
APPLE_SMALL_MEMORY = 32 * GiB


def _load(model: Model | str, accelerator: Accelerator | str) -> tuple[Model, Accelerator]:
    from ..catalog import load_accelerator, load_model

    return load_model(model), load_accelerator(accelerator)


def _load_model(model: Model | str) -> Model:
    from ..catalog import load_model

    return load_model(model)


def capacity_bytes(accelerator: Accelerator | str, binary_units: bool = True) -> float:
    """Physical memory of an accelerator [B] under the usable-memory rule (step 1).

    Examples
    --------
    >>> capacity_bytes("h100-sxm") / 2**30, capacity_bytes("h100-sxm", binary_units=False) / 1e9
    (80.0, 80.0)
    """
    from ..catalog import load_accelerator

    accelerator = load_accelerator(accelerator)
    figure = accelerator.figures.get("memory_capacity")
    # the printed figure is read only while it still describes the field (a copy made with
    # .replace(memory_capacity=...) drops it; one built by hand with figures may not)
    current = figure is not None and math.isclose(figure.si_value, accelerator.memory_capacity, rel_tol=1e-9)
    if binary_units and current and figure is not None and figure.unit in _BINARY:
        return float(figure.value * _BINARY[figure.unit])
    return float(accelerator.memory_capacity)


def gpu_memory_share(accelerator: Accelerator | str) -> float:
    """Fraction of the capacity the accelerator may use [1], by the rule of its kind (step 2).

    The accelerator's own ``gpu_memory_share`` if set; on Apple silicon (unified memory, vendor
    Apple) macOS's default GPU wired limit, 2/3 of the RAM up to 32 GiB and 3/4 above; else 1.

    Examples
    --------
    >>> from roofline_decode import load_accelerator
    >>> gpu_memory_share("m1-max"), gpu_memory_share("h100-sxm")
    (0.75, 1.0)
    >>> round(gpu_memory_share(load_accelerator("m1-max").replace(memory_capacity=32 * 2**30)), 4)
    0.6667
    """
    from ..catalog import load_accelerator

    accelerator = load_accelerator(accelerator)
    if accelerator.gpu_memory_share is not None:
        return float(accelerator.gpu_memory_share)
    if accelerator.unified_memory and (accelerator.vendor or "").casefold() == "apple":
        small = capacity_bytes(accelerator) <= APPLE_SMALL_MEMORY
        return APPLE_GPU_SHARE_SMALL if small else APPLE_GPU_SHARE_LARGE
    return 1.0


def device_memory(accelerator: Accelerator | str, binary_units: bool = True) -> float:
    """Memory the accelerator itself can fill [B], before the runtime reserve (steps 1-2).

    The capacity (step 1) cut to the runtime's exposed total where a source gives one (ECC on
    GDDR data-center cards), times :func:`gpu_memory_share` (unified memory).  ``compare()``'s
    "weights exceed memory" check and every planning function use it.

    Examples
    --------
    >>> device_memory("l40s") / 2**20        # nvidia-smi with ECC on: 46,068 MiB of 48 GiB
    46068.0
    >>> device_memory("m1-max") / 2**30      # 3/4 of 64 GiB
    48.0
    >>> device_memory("h100-sxm") / 2**20    # nvidia-smi: 81,559 MiB of 80 GiB of HBM3
    81559.0
    """
    from ..catalog import load_accelerator

    accelerator = load_accelerator(accelerator)
    physical = capacity_bytes(accelerator, binary_units)
    if accelerator.usable_memory_capacity is not None:
        exposed = accelerator.usable_memory_capacity / capacity_bytes(accelerator, True)
        physical *= min(exposed, 1.0)
    return float(physical * gpu_memory_share(accelerator))


def usable_memory(accelerator: Accelerator | str, reserve: float = DEFAULT_RESERVE, reserve_fraction: float = 0.0,
                  binary_units: bool = True) -> float:
    """Bytes one device can fill with weights and KV cache [B] (the usable-memory rule).

    Parameters
    ----------
    accelerator : Accelerator or str
        Device or catalog id.
    reserve : float
        Runtime reserve [B] (default 2 GiB).
    reserve_fraction : float
        Additional reserve as a fraction of capacity [1].
    binary_units : bool
        Read a printed "GB" as GiB (default; see the module docstring).

    Returns
    -------
    float
        M (1 - f) - R, or 0 where the reserves take the whole device.

    Examples
    --------
    >>> round(usable_memory("h100-sxm") / 2**30, 2)   # 81,559 MiB - 2 GiB
    77.65
    >>> round(usable_memory("h100-sxm", reserve=0, reserve_fraction=0.1) / 2**30, 2)
    71.68
    """
    reserve = non_negative("reserve", reserve, "a finite number of bytes >= 0")
    reserve_fraction = fraction("reserve_fraction", reserve_fraction, closed=False)
    # reserves larger than the device leave nothing to fill (the formula itself goes negative)
    return max(float(f.usable_memory(device_memory(accelerator, binary_units), reserve, reserve_fraction)), 0.0)


def kv_bytes_per_sequence(model: Model | str, context: Broadcastable) -> FloatArray:
    """Resident KV cache of one sequence holding ``context`` tokens [B] (broadcasts).

    Examples
    --------
    >>> from roofline_decode import load_model
    >>> float(kv_bytes_per_sequence(load_model("llama-3.1-70b"), 8192)) / 2**30
    2.5
    """
    return resident_kv_bytes(_load_model(model), checked_array("context", context, 0, inclusive=True))


def resident_kv_bytes(model: Model, context: FloatArray | float) -> FloatArray:
    """:func:`kv_bytes_per_sequence` of a loaded model at contexts already checked (the floors'
    per-context limits call it once per context)."""
    growing, windowed, window, fixed = model.cache_residency  # sparse, chunked, recurrent layers
    return np.asarray(f.kv_cache_bytes(
        1, context, model.kv_bytes_per_token_per_layer, growing, windowed, window,
    ), dtype=np.float64) + fixed


def resident_bytes(model: Model | str, batch: Broadcastable, context: Broadcastable) -> FloatArray:
    """Weights plus the KV cache of ``batch`` sequences at ``context`` tokens [B] (one device)."""
    model = _load_model(model)
    batch = checked_array("batch", batch, 0, inclusive=True)  # 0 sequences: the weights alone
    return model.weight_bytes + batch * kv_bytes_per_sequence(model, context)


def max_batch(model: Model | str, accelerator: Accelerator | str, context: Broadcastable,
              reserve: float = DEFAULT_RESERVE, reserve_fraction: float = 0.0,
              binary_units: bool = True) -> NDArray[np.int64]:
    """Largest number of sequences whose KV caches fit beside the weights on one device.

    ``weights + B·kv(T) <= usable < weights + (B+1)·kv(T)``: the batch fills capacity to within
    one sequence.  0 when the weights alone do not fit.

    Parameters
    ----------
    model : Model or str
    accelerator : Accelerator or str
    context : array_like
        Tokens each sequence holds T [1], >= 1 (broadcasts; an int array comes back).
    reserve, reserve_fraction, binary_units
        The usable-memory rule (see :func:`usable_memory`).

    Examples
    --------
    Llama-3.1-8B in bf16 on one H100 SXM at 32K tokens: 15 sequences (4 GiB of KV each).

    >>> int(max_batch("llama-3.1-8b", "h100-sxm", 32768))
    15
    """
    model, accelerator = _load(model, accelerator)
    context = checked_array("context", context, 1, inclusive=True)
    usable = usable_memory(accelerator, reserve, reserve_fraction, binary_units)
    return fitting_batch(usable, model.weight_bytes, kv_bytes_per_sequence(model, context)).astype(np.int64)


def fitting_batch(usable: float, weight_bytes: float, per_sequence: Broadcastable) -> FloatArray:
    """Largest whole number of sequences of ``per_sequence`` bytes each that fit beside
    ``weight_bytes`` in ``usable`` bytes (:func:`max_batch`'s rule; a float array).

    ``weights + B·q <= usable < weights + (B+1)·q`` (:func:`~roofline_decode.formulas.batch_capacity`
    rounded down, guarded at an exact boundary), 0 when the weights alone do not fit, capped at
    the largest batch accepted (2**53); a sequence of 0 bytes fits without bound (the cap).

    Examples
    --------
    A recurrent model holds its fixed state at every context, 0 included: Mamba-Codestral-7B's
    138,149,888 B per sequence beside its 14.6 GB of weights on an A100 80GB (78 GiB usable).

    >>> from roofline_decode import load_model
    >>> m = load_model("mamba-codestral-7b")
    >>> float(fitting_batch(usable_memory("a100-80gb-sxm"), m.weight_bytes, m.recurrent_state_bytes_per_sequence))
    500.0
    """
    usable = non_negative("usable", usable, "a finite number of bytes >= 0")
    weight_bytes = non_negative("weight_bytes", weight_bytes, "a finite number of bytes >= 0")
    return batch_that_fits(usable, weight_bytes, _byte_counts("per_sequence", per_sequence))


def batch_that_fits(usable: float, weight_bytes: float, per_sequence: FloatArray) -> FloatArray:
    """:func:`fitting_batch`'s rule on arguments already checked (floats, a float array of byte
    counts): the floors' per-context limits call it once per context."""
    empty = per_sequence <= 0  # 0 bytes per sequence: unbounded (the cap)
    q = np.where(empty, 1.0, per_sequence)
    with np.errstate(over="ignore"):  # a tiny sequence beside a large room: +inf, capped below
        real: FloatArray = f.batch_capacity(usable, weight_bytes, q)
    batch = np.floor(np.maximum(real, 0))
    # guard the floor against rounding at an exact boundary: B must fit, B + 1 must not
    batch = np.where(weight_bytes + batch * q > usable, np.maximum(batch - 1, 0), batch)
    batch = np.where(weight_bytes + (batch + 1) * q <= usable, batch + 1, batch)
    batch = np.where(weight_bytes > usable, 0.0, np.where(empty, np.inf, batch))
    return np.minimum(batch, MAX_GRID_VALUE)  # capped at the largest batch accepted


def max_context(model: Model | str, accelerator: Accelerator | str, batch: Broadcastable = 1,
                reserve: float = DEFAULT_RESERVE, reserve_fraction: float = 0.0,
                binary_units: bool = True) -> NDArray[np.int64] | FloatArray:
    """Longest context (tokens per sequence) that ``batch`` sequences can all hold on one device.

    Sliding-window layers stop growing at the window W, so the answer comes from the exact
    inverse of the KV size (:func:`roofline_decode.formulas.context_capacity`).  A model whose
    every layer slides needs at most W tokens per layer: its context is unbounded (a float
    ``inf``) once those fit.  The result ignores ``max_position_embeddings``; compare it
    yourself.  0 when not even one token fits.

    Examples
    --------
    >>> int(max_context("llama-3.1-8b", "h100-sxm", batch=16))
    32097
    """
    model, accelerator = _load(model, accelerator)
    batch = checked_array("batch", batch, 1, inclusive=True)
    usable = usable_memory(accelerator, reserve, reserve_fraction, binary_units)
    growing, windowed, window, fixed = model.cache_residency
    free = np.maximum(usable - model.weight_bytes, 0) / batch - fixed
    m_kv = model.kv_bytes_per_token_per_layer
    if growing == 0:  # every layer slides (or is recurrent): bounded by the window
        if windowed == 0:
            return np.where(free >= 0, np.inf, 0.0)
        positions = free / m_kv
        window_positions = windowed * window
        tokens = np.where(positions >= window_positions, np.inf, np.floor(np.maximum(positions, 0) / windowed))
        return tokens
    real = f.context_capacity(np.maximum(free, 0), m_kv, growing, windowed, window)
    # capped at the largest context accepted (2**53, see estimate.checked_array)
    tokens = np.minimum(np.floor(np.asarray(real, dtype=np.float64)), MAX_GRID_VALUE)
    # guard the floor against rounding at an exact boundary: T must fit, T + 1 must not
    tokens = np.where(resident_bytes(model, batch, tokens) > usable, np.maximum(tokens - 1, 0), tokens)
    up = np.minimum(tokens + 1, MAX_GRID_VALUE)
    tokens = np.where(resident_bytes(model, batch, up) <= usable, up, tokens)
    return tokens.astype(np.int64)


def _byte_counts(name: str, value: Broadcastable) -> FloatArray:
    """``value`` as a float array of byte counts: real numbers, finite and >= 0 (no 2**53 cap:
    the bytes of a long context may pass it)."""
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError, OverflowError):  # ragged lists, ...
        raw = np.asarray(None)
    if raw.dtype.kind not in "iuf" or raw.size == 0:
        raise InvalidValueError(name, value, "a number of bytes or an array of them (no booleans or strings)")
    array = raw.astype(np.float64)
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InvalidValueError(name, value, "finite numbers of bytes >= 0")
    return array


def onchip_cache_bytes(accelerator: Accelerator | str) -> float:
    """On-chip cache of an accelerator [B] (its ``onchip_cache`` figure: L2, Infinity Cache,
    SRAM, as printed), 0 where the spec gives none.

    Examples
    --------
    >>> onchip_cache_bytes("h100-sxm") / 1e6, onchip_cache_bytes("mi300x") / 1e6
    (50.0, 256.0)
    """
    from ..catalog import load_accelerator

    figure = load_accelerator(accelerator).figures.get("onchip_cache")
    return 0.0 if figure is None else float(figure.si_value)


def onchip_cache_note(resident: Broadcastable, accelerator: Accelerator | str, per_device: bool = False) -> str | None:
    """The note of a floor whose resident bytes fit in the device's on-chip cache, or None.

    Once the weights and the KV cache fit in the on-chip cache, the steps after the first may
    read them from there, faster than the memory bandwidth the floor divides by: a run may beat
    a memory-bound floor (its compute bound still holds).

    Parameters
    ----------
    resident : array_like
        Resident bytes at each grid point [B] (weights plus KV cache, of one device).
    accelerator : Accelerator or str
    per_device : bool
        Say "per device" (a tensor- or pipeline-parallel floor).

    Examples
    --------
    GPT-2 in bf16 (248.9 MB of weights) on an MI300X (256 MB Infinity Cache) at context 0:

    >>> from roofline_decode import load_model
    >>> onchip_cache_note(load_model("gpt2").weight_bytes, "mi300x")[:60]
    '248.9 MB resident fit in the 256 MB on-chip cache of mi300x '
    """
    from ..catalog import load_accelerator

    accelerator = load_accelerator(accelerator)
    cache = onchip_cache_bytes(accelerator)
    resident = _byte_counts("resident", resident)
    inside = resident <= cache
    if cache <= 0 or not inside.any():
        return None
    figure = accelerator.figures["onchip_cache"]
    where = "" if resident.size == 1 else f" at {int(inside.sum())} of {resident.size} grid points"
    return (f"{float(resident[inside].min()) / 1e6:.4g} MB resident{' per device' if per_device else ''} fit in the "
            f"{cache / 1e6:.4g} MB on-chip cache of {accelerator.id or accelerator.name}"
            f"{f' ({figure.structure})' if figure.structure else ''}{where}: steps may read the weights and KV cache "
            "from the cache, faster than the memory bandwidth, and beat this memory-bound floor")
