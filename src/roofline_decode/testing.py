"""Hypothesis strategies for property-testing code that uses roofline_decode (``[testing]`` extra).

Every strategy draws *valid* specs by construction (the pydantic specs validate each draw), with
bounds you can narrow:

* :func:`models` — decoder configurations of the kinds ``"dense"`` (MHA/GQA/MQA, gated or
  plain MLP, biases, tied lm_head, learned positions), ``"moe"`` (routed and shared experts,
  leading dense layers, their own expert format), ``"sliding"`` (a window on some or all
  layers), ``"mla"`` (multi-head latent attention with routed experts, as DeepSeek) and
  ``"hybrid"`` (recurrent Mamba/DeltaNet-style layers between full-attention ones);
* :func:`accelerators` — devices from a small CPU to a rack-scale GPU;
* :func:`number_formats` — storage formats by name, from the registry;
* :func:`grids` — a batch axis and a context axis to broadcast against each other.

Examples
--------
A law checked on random models and devices: however the batch grows, a step never takes
less time than streaming the weights it reads once.

>>> from hypothesis import given, settings
>>> import roofline_decode as rd
>>> from roofline_decode.testing import accelerators, grids, models
>>> @settings(max_examples=25, deadline=None, derandomize=True)
... @given(models(kinds=("dense", "moe", "hybrid")), accelerators(), grids(max_points=4))
... def test_a_step_streams_its_weights(model, device, grid):
...     floor = rd.decode_floor(model, device, batch=grid[0], context=grid[1])
...     assert (floor.step_time_s >= floor.weight_bytes / device.memory_bandwidth).all()
>>> test_a_step_streams_its_weights()
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .checks import flag, non_negative, whole_number
from .errors import InvalidValueError, MissingExtraError

try:
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - exercised where hypothesis is absent
    raise MissingExtraError("hypothesis", "testing", "roofline_decode.testing") from None

import numpy as np

from ._typing import FloatArray
from .formats import ComputePrecision, NumberFormat, list_formats
from .specs.accelerator import Accelerator
from .specs.model import Model

#: The public names: the strategies and the constants that bound them, nothing the module
#: imports for its own use (numpy, hypothesis, the specs, typing); ``dir()`` lists these alone.
__all__ = ["KINDS", "WEIGHT_FORMATS", "KV_FORMATS", "PRECISIONS", "models", "dense_models", "moe_models",
           "accelerators", "number_formats", "grids"]


def __dir__() -> list[str]:
    return sorted(__all__)

#: Model kinds :func:`models` draws from.
KINDS = ("dense", "moe", "sliding", "mla", "hybrid")
#: Storage formats of weights (0.53 to 4 bytes per element).
WEIGHT_FORMATS = ("fp32", "bf16", "fp16", "fp8_e4m3", "int8", "int4", "q8_0", "q4_0", "mxfp4", "nvfp4")
#: Storage formats of the KV cache.
KV_FORMATS = ("fp32", "bf16", "fp16", "fp8_e4m3", "int8")
#: Compute precisions :func:`accelerators` gives a peak for.
PRECISIONS: tuple[ComputePrecision, ...] = ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "fp4")


def _check_kinds(kinds: Sequence[str]) -> tuple[str, ...]:
    kinds = tuple(kinds)
    unknown = [k for k in kinds if k not in KINDS]
    if not kinds or unknown:
        raise InvalidValueError("kinds", list(kinds), f"a non-empty selection of {', '.join(KINDS)}")
    return kinds


def _range(name: str, value: Any, floor: float = 0.0) -> tuple[float, float]:
    """A (low, high) pair of finite real numbers with floor <= low <= high."""
    allowed = f"a range (low, high) of finite numbers, low <= high, low >= {floor:g}"
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 2:
        raise InvalidValueError(name, value, allowed)
    low, high = (non_negative(name, v, allowed) for v in value)
    if not floor <= low <= high:
        raise InvalidValueError(name, value, allowed)
    return low, high


def models(kinds: Sequence[str] = KINDS, *, max_layers: int = 40,
           hidden_sizes: Sequence[int] = (256, 512, 768, 1024, 2048, 4096),
           weight_formats: Sequence[str] = WEIGHT_FORMATS, kv_formats: Sequence[str] = KV_FORMATS,
           max_vocab: int = 160_000) -> st.SearchStrategy[Model]:
    """A strategy of random valid :class:`~roofline_decode.Model` s of one of ``kinds``.

    The arguments are checked when the strategy is made (an InvalidValueError naming the
    argument), not when hypothesis first draws from it.

    Parameters
    ----------
    kinds : sequence of {"dense", "moe", "sliding", "mla", "hybrid"}
        Architectures to draw from.
    max_layers : int
        Largest number of layers (>= 2: a hybrid needs a recurrent and an attention layer).
    hidden_sizes : sequence of int
        Model widths to draw from.
    weight_formats, kv_formats : sequence of str
        Storage formats to draw from (names of :func:`roofline_decode.list_formats`).
    max_vocab : int
        Largest vocabulary (>= 1000).
    """
    kinds = _check_kinds(kinds)
    max_layers = whole_number("max_layers", max_layers, 2)  # a hybrid needs a recurrent and an attention layer
    max_vocab = whole_number("max_vocab", max_vocab, 1000)
    sizes = tuple(whole_number("hidden_sizes", size, 1) for size in _listed("hidden_sizes", hidden_sizes))
    weights = _format_names("weight_formats", weight_formats)
    kvs = _format_names("kv_formats", kv_formats)
    return _models(kinds, max_layers, sizes, weights, kvs, max_vocab)


def _listed(name: str, values: Any) -> tuple[Any, ...]:
    """A non-empty sequence (not a string) as a tuple."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise InvalidValueError(name, values, "a non-empty sequence")
    return tuple(values)


def _format_names(name: str, values: Any) -> tuple[str, ...]:
    """Names of number formats, each one :func:`~roofline_decode.get_format` knows."""
    from .formats import get_format

    names = _listed(name, values)
    for value in names:
        get_format(value, field=name)
    return names


@st.composite
def _models(draw: st.DrawFn, kinds: tuple[str, ...], max_layers: int, hidden_sizes: tuple[int, ...],
            weight_formats: tuple[str, ...], kv_formats: tuple[str, ...], max_vocab: int) -> Model:
    """The strategy behind :func:`models` (its arguments checked)."""
    kind = draw(st.sampled_from(kinds))
    num_layers = draw(st.integers(2 if kind == "hybrid" else 1, max_layers))
    kv_heads = draw(st.sampled_from([1, 2, 4, 8]))
    heads = kv_heads * draw(st.sampled_from([1, 2, 4, 8]))
    hidden = draw(st.sampled_from(list(hidden_sizes)))
    fields: dict[str, Any] = dict(
        name=f"random-{kind}", num_layers=num_layers, hidden_size=hidden, num_heads=heads, num_kv_heads=kv_heads,
        head_dim=draw(st.sampled_from([32, 64, 80, 128, 256])), intermediate_size=hidden * draw(st.integers(1, 8)),
        vocab_size=draw(st.integers(1000, max_vocab)), mlp_gated=draw(st.booleans()), qkv_bias=draw(st.booleans()),
        o_bias=draw(st.booleans()), mlp_bias=draw(st.booleans()), tie_word_embeddings=draw(st.booleans()),
        norm_type=draw(st.sampled_from(["rms", "layer"])), norms_per_layer=draw(st.integers(0, 4)),
        qk_norm=draw(st.booleans()), position_embedding_rows=draw(st.sampled_from([0, 0, 1024, 2048])),
        weight_format=draw(st.sampled_from(list(weight_formats))), kv_format=draw(st.sampled_from(list(kv_formats))),
    )
    if kind == "sliding":
        fields["sliding_window"] = draw(st.integers(16, 16_384))
        pattern = draw(st.one_of(st.none(), st.lists(st.sampled_from(["full", "sliding"]),
                                                     min_size=num_layers, max_size=num_layers)))
        fields["layer_types"] = None if pattern is None else tuple(pattern)  # None: every layer slides
    if kind == "hybrid":  # recurrent mixers between attention layers, a fixed state per sequence
        every = draw(st.integers(2, max(2, num_layers)))
        fields["layer_types"] = tuple("full" if (i + 1) % every == 0 else "recurrent" for i in range(num_layers))
        inner = hidden * draw(st.sampled_from([1, 2]))
        fields.update(
            recurrent_matrix_parameters=hidden * inner * draw(st.integers(2, 4)),
            recurrent_vector_parameters=inner * draw(st.integers(1, 8)),
            recurrent_state_elements=inner * draw(st.sampled_from([16, 64, 128])),
            recurrent_flops_per_token=inner * draw(st.integers(8, 512)),
        )
    if kind in ("moe", "mla"):
        experts = draw(st.integers(2, 64))
        fields.update(
            num_experts=experts, num_experts_per_token=draw(st.integers(1, experts)),
            moe_intermediate_size=hidden // draw(st.sampled_from([1, 2, 4])),
            shared_expert_intermediate_size=draw(st.sampled_from([0, 0, hidden])),
            first_dense_layers=draw(st.integers(0, num_layers - 1)),
        )
        if fields["first_dense_layers"] == 0 and draw(st.booleans()):
            fields["intermediate_size"] = 0  # every MLP is routed
        if draw(st.booleans()):
            fields["expert_weight_format"] = draw(st.sampled_from(list(weight_formats)))
    if kind == "mla":
        fields.update(
            num_kv_heads=heads, kv_lora_rank=draw(st.sampled_from([64, 128, 256, 512])),
            q_lora_rank=draw(st.sampled_from([0, 192, 768, 1536])), qk_rope_head_dim=draw(st.sampled_from([32, 64])),
            qk_nope_head_dim=draw(st.sampled_from([64, 128])), v_head_dim=draw(st.sampled_from([64, 128])),
        )
    return Model(**fields)


#: Models without routed experts or latent attention.
dense_models = models(kinds=("dense", "sliding"))
#: Models with routed experts (MoE and MLA).
moe_models = models(kinds=("moe", "mla"))


def accelerators(*, bandwidth: tuple[float, float] = (5e10, 2e13), peak: tuple[float, float] = (1e13, 5e15),
                 capacity: tuple[float, float] = (8e9, 3e11), precisions: Sequence[ComputePrecision] = PRECISIONS,
                 uniform_peaks: bool = False) -> st.SearchStrategy[Accelerator]:
    """A strategy of random :class:`~roofline_decode.Accelerator` s (SI units); the arguments are
    checked when it is made.

    Parameters
    ----------
    bandwidth, peak, capacity : (low, high)
        Ranges of the memory bandwidth [B/s], the dense peak of each precision [FLOP/s] and the
        memory capacity [B].  The defaults span a desktop CPU to a rack-scale GPU.
    precisions : sequence of str
        Compute precisions that get a peak.
    uniform_peaks : bool
        Every precision gets the same peak, so changing a number format changes bytes only.

    Notes
    -----
    The peaks are drawn independently (a lower precision may be slower): laws of the floor
    hold for any peaks, so the device is built with ``plausibility_checks=False``.
    """
    chosen = _listed("precisions", precisions)
    if any(p not in PRECISIONS for p in chosen):
        raise InvalidValueError("precisions", list(chosen), f"a selection of {', '.join(PRECISIONS)}")
    return _accelerators(_range("bandwidth", bandwidth, floor=1.0), _range("peak", peak, floor=1.0),
                         _range("capacity", capacity, floor=1.0), chosen, flag("uniform_peaks", uniform_peaks))


@st.composite
def _accelerators(draw: st.DrawFn, bandwidth: tuple[float, float], peak: tuple[float, float],
                  capacity: tuple[float, float], precisions: tuple[ComputePrecision, ...],
                  uniform_peaks: bool) -> Accelerator:
    """The strategy behind :func:`accelerators` (its arguments checked)."""
    bw = draw(st.floats(*bandwidth))
    peaks: dict[ComputePrecision, float]
    if uniform_peaks:
        one = draw(st.floats(*peak))
        peaks = {p: one for p in precisions}
    else:
        peaks = {p: draw(st.floats(*peak)) for p in precisions}
    return Accelerator(name="random-device", memory_bandwidth=bw, memory_capacity=draw(st.floats(*capacity)),
                       peak_flops=peaks, plausibility_checks=False)


def number_formats(names: Sequence[str] | None = None) -> st.SearchStrategy[NumberFormat]:
    """Storage formats (:class:`~roofline_decode.NumberFormat`) by name; default: every format
    in the registry."""
    from .formats import get_format

    names = list(names) if names is not None else list_formats()
    if not names:
        raise InvalidValueError("names", names, "at least one format name")
    return st.sampled_from([get_format(n) for n in names])


@st.composite
def grids(draw: st.DrawFn, *, max_batch: int = 4096, max_context: int = 262_144,
          max_points: int = 8) -> tuple[FloatArray, FloatArray]:
    """A (batch, context) pair of 1-D float arrays, shaped (n, 1) and (1, m), to broadcast into a
    grid: batches whole numbers in [1, max_batch], contexts in [0, max_context]."""
    if max_batch < 1 or max_context < 0 or max_points < 1:
        raise InvalidValueError("max_batch/max_context/max_points", (max_batch, max_context, max_points),
                                "max_batch >= 1, max_context >= 0, max_points >= 1")
    batch = draw(st.lists(st.integers(1, max_batch), min_size=1, max_size=max_points, unique=True))
    context = draw(st.lists(st.integers(0, max_context), min_size=1, max_size=max_points, unique=True))
    return np.array(sorted(batch), dtype=float)[:, None], np.array(sorted(context), dtype=float)[None, :]
