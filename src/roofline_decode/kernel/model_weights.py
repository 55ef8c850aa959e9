"""Seeded random weights for the numpy decode kernel, laid out for batched products.

Every matrix is stored as ``(in, out)``, C-contiguous, so a batch multiplies it as
``X @ W`` with ``X`` of shape ``(B, in)``: one pass over ``W`` serves every sequence of the
batch (the BLAS kernel reuses each weight tile it loads for all B rows).  The embedding table
is ``(V, d)`` so a token's row is contiguous; an untied lm_head is ``(d, V)``, a tied one is
the transposed view of the embedding table.

The kernel covers standard (GQA/MQA/MHA) attention with RoPE, RMSNorm or LayerNorm, gated or
plain MLPs, biases, per-head q/k norms, sliding-window layers and routed experts (with shared
experts and leading dense layers).  It refuses, with an error naming the field, what it does
not implement: multi-head latent attention, learned position tables, chunked, sparse and
recurrent layers, and norm layouts other than 2 (pre-attention, pre-MLP) or 4 (Gemma 2: plus
post-attention, post-MLP) per layer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import DTypeLike

from ..errors import InvalidValueError
from ..specs.model import Model

__all__ = ["Norm", "Linear", "MLPWeights", "LayerWeights", "KernelWeights", "init_weights", "check_supported"]

_T = TypeVar("_T")


@dataclass
class Norm:
    """RMSNorm (``bias is None``) or LayerNorm weights of width n."""

    weight: np.ndarray
    bias: np.ndarray | None = None


@dataclass
class Linear:
    """A matrix ``(in, out)`` and an optional bias ``(out,)``."""

    weight: np.ndarray
    bias: np.ndarray | None = None


@dataclass
class MLPWeights:
    """A feed-forward block (or one expert): ``gate`` is ``None`` for a plain MLP."""

    up: Linear
    down: Linear
    gate: Linear | None = None


@dataclass
class LayerWeights:
    """One decoder layer; ``kind`` is ``"full"`` or ``"sliding"``."""

    kind: str
    norms: list[Norm]
    q: Linear
    k: Linear
    v: Linear
    o: Linear
    q_norm: Norm | None = None
    k_norm: Norm | None = None
    mlp: MLPWeights | None = None
    router: Linear | None = None
    experts: list[MLPWeights] = field(default_factory=list)
    shared: MLPWeights | None = None


@dataclass
class KernelWeights:
    """All weights of a model, in one dtype (float32 for the kernel, float64 for the reference)."""

    model: Model
    embedding: np.ndarray
    layers: list[LayerWeights]
    final_norm: Norm
    lm_head: np.ndarray

    def astype(self, dtype: DTypeLike) -> KernelWeights:
        """A copy in another dtype (the reference casts to float64); ties are kept."""

        def cast(obj: _T) -> _T:  # the same structure, every array in ``dtype``
            if obj is None:
                return obj
            if isinstance(obj, np.ndarray):
                return obj.astype(dtype)  # type: ignore[return-value]  # an ndarray again
            if isinstance(obj, list):
                return [cast(o) for o in obj]  # type: ignore[return-value]  # a list again
            if isinstance(obj, (Norm, Linear, MLPWeights, LayerWeights)):
                return type(obj)(**{k: cast(v) if k != "kind" else v for k, v in vars(obj).items()})
            return obj

        embedding = self.embedding.astype(dtype)
        tied = self.lm_head.base is self.embedding or np.shares_memory(self.lm_head, self.embedding)
        return KernelWeights(
            model=self.model, embedding=embedding, layers=cast(self.layers), final_norm=cast(self.final_norm),
            lm_head=embedding.T if tied else self.lm_head.astype(dtype),
        )

    @property
    def nbytes(self) -> int:
        """Bytes the weights occupy (embedding and untied lm_head included, tied once)."""
        arrays = _arrays(self)
        seen: dict[int, int] = {}
        for a in arrays:
            base = a.base if a.base is not None else a
            seen[id(base)] = base.nbytes
        return sum(seen.values())


def _arrays(obj: object) -> list[np.ndarray]:
    if obj is None:
        return []
    if isinstance(obj, np.ndarray):
        return [obj]
    if isinstance(obj, list):
        return [a for o in obj for a in _arrays(o)]
    if isinstance(obj, (Norm, Linear, MLPWeights, LayerWeights, KernelWeights)):
        return [a for k, v in vars(obj).items() if k != "model" for a in _arrays(v)]
    return []


def required_value(value: _T | None, name: str, allowed: str) -> _T:
    """``value``, which :func:`init_weights` sets where the kernel and the reference read it."""
    if value is None:  # pragma: no cover - unreachable for weights made by init_weights
        raise InvalidValueError(name, None, allowed)
    return value


def check_supported(model: Model) -> None:
    """Raise :class:`~roofline_decode.errors.InvalidValueError` for what the kernel cannot run."""
    if model.is_mla:
        raise InvalidValueError(
            "kv_lora_rank", model.kv_lora_rank,
            "0: the numpy kernel implements standard (GQA/MQA/MHA) attention, not multi-head latent attention",
        )
    if model.position_embedding_rows:
        raise InvalidValueError(
            "position_embedding_rows", model.position_embedding_rows,
            "0: the numpy kernel uses rotary positions, not a learned position table",
        )
    if model.norms_per_layer not in (2, 4):
        raise InvalidValueError(
            "norms_per_layer", model.norms_per_layer,
            "2 (pre-attention and pre-MLP) or 4 (plus post-attention and post-MLP, as Gemma 2)",
        )
    if model.head_dim % 2:
        raise InvalidValueError("head_dim", model.head_dim, "an even number (rotary embedding pairs)")
    mixers = sorted(set(model.layer_types or ()) - {"full", "sliding"})
    if mixers:  # a chunked layer is not a sliding one: refused rather than run with the wrong cache
        raise InvalidValueError(
            "layer_types", mixers,
            "'full' and 'sliding' layers only: the numpy kernel implements no chunked, sparse or recurrent mixer",
        )
    if model.mlp_free_layers:
        raise InvalidValueError("mlp_free_layers", model.mlp_free_layers,
                                "0: the numpy kernel runs an MLP in every layer")


def init_weights(model: Model, seed: int = 0, dtype: DTypeLike = np.float32) -> KernelWeights:
    """Random weights for ``model``, reproducible from ``seed``.

    Matrices are drawn with standard deviation ``1/sqrt(in)`` so activations stay of order
    one through the layers; norm weights are ``1 + 0.1·N(0, 1)``; biases ``0.1·N(0, 1)``.

    Parameters
    ----------
    model : Model
        The architecture; its number formats are ignored (the kernel stores ``dtype``).
    seed : int
        Seed (>= 0) of the numpy generator.
    dtype : numpy dtype
        Storage dtype (float32 for the kernel).

    Returns
    -------
    KernelWeights

    Examples
    --------
    >>> from roofline_decode import Model
    >>> m = Model(name="tiny", num_layers=2, hidden_size=16, num_heads=4, num_kv_heads=2,
    ...           head_dim=4, intermediate_size=32, vocab_size=50)
    >>> w = init_weights(m)
    >>> w.layers[0].q.weight.shape, w.lm_head.shape, w.embedding.shape
    ((16, 16), (16, 50), (50, 16))
    """
    check_supported(model)
    if int(seed) != seed or seed < 0:
        raise InvalidValueError("seed", seed, "an integer >= 0")
    rng = np.random.default_rng(int(seed))
    d, d_h = model.hidden_size, model.head_dim
    layer_norm = model.norm_type == "layer"

    def matrix(n_in: int, n_out: int) -> np.ndarray:
        values: np.ndarray = (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(dtype)
        return values

    def vector(n: int) -> np.ndarray:
        return (0.1 * rng.standard_normal(n)).astype(dtype)

    def linear(n_in: int, n_out: int, bias: bool) -> Linear:
        return Linear(matrix(n_in, n_out), vector(n_out) if bias else None)

    def norm(n: int, allow_bias: bool = True) -> Norm:
        return Norm((1 + 0.1 * rng.standard_normal(n)).astype(dtype), vector(n) if layer_norm and allow_bias else None)

    def mlp(width: int) -> MLPWeights:
        bias = model.mlp_bias
        return MLPWeights(
            up=linear(d, width, bias), down=linear(width, d, bias),
            gate=linear(d, width, bias) if model.mlp_gated else None,
        )

    if model.layer_types is not None:
        kinds = list(model.layer_types)
    else:
        kinds = ["sliding" if model.sliding_window is not None else "full"] * model.num_layers
    layers = []
    for index, kind in enumerate(kinds):
        moe = model.is_moe and index >= model.first_dense_layers
        layer = LayerWeights(
            kind=kind,
            norms=[norm(d) for _ in range(model.norms_per_layer)],
            q=linear(d, model.num_heads * d_h, model.qkv_bias),
            k=linear(d, model.num_kv_heads * d_h, model.qkv_bias),
            v=linear(d, model.num_kv_heads * d_h, model.qkv_bias),
            o=linear(model.num_heads * d_h, d, model.o_bias),
        )
        if model.qk_norm:  # per-head norms are RMSNorms (Qwen3, Gemma 3): weight only
            layer.q_norm, layer.k_norm = Norm(norm(d_h).weight), Norm(norm(d_h).weight)
        if moe:
            layer.router = linear(d, model.num_experts, model.mlp_bias)
            layer.experts = [mlp(model.moe_intermediate_size) for _ in range(model.num_experts)]
            if model.shared_expert_intermediate_size:
                layer.shared = mlp(model.shared_expert_intermediate_size)
        else:
            layer.mlp = mlp(model.intermediate_size)
        layers.append(layer)
    embedding = rng.standard_normal((model.vocab_size, d)).astype(dtype)
    lm_head = embedding.T if model.tie_word_embeddings else matrix(d, model.vocab_size)
    return KernelWeights(model=model, embedding=embedding, layers=layers, final_norm=norm(d), lm_head=lm_head)
