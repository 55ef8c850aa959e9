"""One decode step in numpy (float32), counting every byte it touches and every FLOP it does.

:class:`DecodeKernel` holds seeded random weights for a :class:`~roofline_decode.Model` and a
preallocated KV cache, and runs the step the floors are about: B sequences, each with T tokens
cached, produce one token each.  While it computes it tallies, in :class:`StepCounts`:

* the bytes of every weight array it multiplies or applies (matrices, biases, norm vectors,
  the full lm_head), the *distinct* embedding rows it gathers, and the routed experts it
  actually runs;
* the cached keys and values it reads, and the new ones it writes;
* the FLOPs of its matrix products (2 per multiply-add) and of attention over the cached
  positions; the new token's attention to itself is tallied apart
  (:attr:`StepCounts.self_attention_flops`), since the library's convention leaves it out
  (see :func:`roofline_decode.formulas.flops.attention_flops`, Notes).

Conventions of the kernel (shared with :mod:`~roofline_decode.kernel.reference`): RoPE in the
half-split ("neox") layout with base 10000; a sliding layer with window W lets the new token
attend to the W most recent cached positions and to itself, and keeps a ring buffer of
min(W, max_context + 1) positions (position t in slot t mod W), as serving engines do: its
allocated cache, like its reads, is what the formulas count; routed experts follow the
Mixtral recipe (softmax over the k largest router logits); shared experts are added
unweighted.

What the kernel does not cover (refused by name or not modelled): multi-head latent attention
(``kv_lora_rank``), learned position tables (``position_embedding_rows``), chunked, sparse and
recurrent layers (``layer_types``), norm layouts other than 2 or 4 norms per layer, odd head
widths; every array is float32, so the tallies are fp32
bytes: storage formats (bf16, fp8, block-quantised q4_0 ...) and their compute precisions are
not exercised, only the element counts they multiply.  Elementwise work (norms, softmax, RoPE,
activations) is done but not tallied, as in the library's convention.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from ..errors import InvalidValueError
from ..specs.model import Model
from .model_weights import KernelWeights, LayerWeights, Linear, MLPWeights, Norm, required_value, check_supported, init_weights

__all__ = ["StepCounts", "DecodeKernel", "OPERATIONS", "rope", "EPS", "ROPE_THETA", "MATMUL_STRATEGIES", "TILED_GEMV_MAX_BATCH", "tiled_gemv"]

#: Epsilon of every norm.
EPS = 1e-6
#: Base of the rotary frequencies.
ROPE_THETA = 10000.0
#: How a batch multiplies a weight matrix (see :class:`DecodeKernel`).
MATMUL_STRATEGIES = ("auto", "gemm", "tiled-gemv")
#: Largest batch that ``"auto"`` runs as tiled GEMVs (measured crossover, docs/validate.md).
TILED_GEMV_MAX_BATCH = 4
#: Bytes of one weight tile of the tiled-GEMV path: a few MiB, well inside a last-level cache.
TILE_BYTES = 4 * 2**20
#: What the kernel counts as one dependent operation (:attr:`StepCounts.operations`): each
#: waits for the one before it, as the kernels of a GPU step do.
OPERATIONS = (
    "embedding gather", "norm", "linear (with its bias)", "rotary embedding of q or k",
    "attention over the cache (scores, softmax, weighted sum)", "KV-cache write", "activation",
    "residual add", "router top-k and gates", "expert combine",
)


@dataclass
class StepCounts:
    """What one decode step touched: bytes [B] and FLOPs.

    Attributes
    ----------
    weight_bytes : int
        Weight bytes read: every matrix, bias and norm vector used, the full lm_head, the
        distinct embedding rows gathered and the routed experts run.
    embedding_rows : int
        Distinct embedding rows gathered (distinct tokens in the batch).
    expert_bytes : int
        Part of ``weight_bytes`` spent on routed experts.
    experts_touched : list of int
        Distinct routed experts run, one entry per MoE layer.
    kv_read_bytes, kv_write_bytes : int
        Cached keys and values read; new keys and values written.
    matmul_flops : int
        FLOPs of the weight matrix products (router and lm_head included).
    attention_flops : int
        FLOPs of q·k and p·v over the cached positions.
    self_attention_flops : int
        FLOPs of the new token's attention to itself (left out of :attr:`flops`, as in the
        library's convention).
    operations : int
        Dependent operations the step ran one after another (see :data:`OPERATIONS`): the
        length of its serial chain, which
        :func:`~roofline_decode.formulas.serial_chain_time` multiplies by a minimum time.
    """

    weight_bytes: int = 0
    embedding_rows: int = 0
    expert_bytes: int = 0
    experts_touched: list[int] = field(default_factory=list)
    kv_read_bytes: int = 0
    kv_write_bytes: int = 0
    matmul_flops: int = 0
    attention_flops: int = 0
    self_attention_flops: int = 0
    operations: int = 0

    @property
    def flops(self) -> int:
        """Matrix products plus attention over cached positions (the library's convention)."""
        return self.matmul_flops + self.attention_flops

    @property
    def bytes_total(self) -> int:
        return self.weight_bytes + self.kv_read_bytes + self.kv_write_bytes


def rope(x: np.ndarray, position: ArrayLike, theta: float = ROPE_THETA) -> np.ndarray:
    """Rotate the last axis of ``x`` (even width) by ``position`` (half-split layout).

    ``position`` broadcasts against ``x[..., 0]`` (an int for a decode step, an array of
    positions for the reference).
    """
    half = x.shape[-1] // 2
    inv_freq = theta ** (-np.arange(half, dtype=np.float64) * 2.0 / x.shape[-1])
    angle = np.asarray(position, dtype=np.float64)[..., None] * inv_freq
    cos, sin = np.cos(angle).astype(x.dtype), np.sin(angle).astype(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    rotated: np.ndarray = np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], axis=-1)
    return rotated


def tiled_gemv(x: np.ndarray, weight: np.ndarray, tile_bytes: int = TILE_BYTES) -> np.ndarray:
    """``x @ weight`` as B GEMVs per contiguous row block (tile) of a C-contiguous ``weight``.

    Each tile of about ``tile_bytes`` is read from memory by the first sequence and from the
    cache by the others, so the weights stream from memory once per step, as in a GEMM, but
    through BLAS's matrix-vector kernel, which streams faster than its matrix-matrix kernel
    when the batch has only a few rows.
    """
    x = np.ascontiguousarray(x)
    rows = max(1, tile_bytes // (weight.shape[1] * weight.itemsize))
    y = np.zeros((x.shape[0], weight.shape[1]), dtype=np.result_type(x, weight))
    part = np.empty(weight.shape[1], dtype=y.dtype)
    for start in range(0, weight.shape[0], rows):
        tile = weight[start:start + rows]  # contiguous: read from memory once ...
        for i in range(x.shape[0]):  # ... then from cache by every other sequence
            np.matmul(x[i, start:start + rows], tile, out=part)
            y[i] += part
    return y


def apply_norm(x: np.ndarray, norm: Norm) -> np.ndarray:
    """RMSNorm (no bias) or LayerNorm over the last axis."""
    if norm.bias is None:
        scale = 1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + EPS)
        rms: np.ndarray = x * scale * norm.weight
        return rms
    centred = x - x.mean(axis=-1, keepdims=True)
    scale = 1.0 / np.sqrt(np.mean(centred * centred, axis=-1, keepdims=True) + EPS)
    layer: np.ndarray = centred * scale * norm.weight + norm.bias
    return layer


def activation(x: np.ndarray, gated: bool) -> np.ndarray:
    """SiLU for gated MLPs (SwiGLU), tanh-GELU for plain ones."""
    out: np.ndarray
    if gated:
        out = x / (1.0 + np.exp(-x))
    else:
        out = 0.5 * x * (1.0 + np.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)))
    return out


class DecodeKernel:
    """A float32 decoder with a preallocated KV cache that counts what each step touches.

    Parameters
    ----------
    model : Model
        Architecture (its number formats are replaced by fp32: the kernel stores float32).
    batch : int
        Sequences B decoded together.
    max_context : int
        Largest number of cached tokens a step may start from.
    seed : int
        Seed of the random weights (ignored when ``weights`` is given).
    weights : KernelWeights, optional
        Weights to use, e.g. shared between kernels of different batch sizes.
    matmul : {"auto", "gemm", "tiled-gemv"}
        How the batch multiplies each ``(in, out)`` weight matrix.  ``"gemm"``: one BLAS
        product ``X @ W`` (BLAS tiles W and reuses each tile for all B rows).  ``"tiled-gemv"``:
        W is cut into contiguous row blocks of ``tile_bytes``; each block is read from memory
        once and multiplied by every sequence's slice of x (B GEMVs on a cache-resident tile).
        ``"auto"``: tiled GEMVs for 2 <= B <= :data:`TILED_GEMV_MAX_BATCH`, where BLAS GEMM
        with few rows streams the weights slowly on the machines measured, else GEMM.  The
        byte counts do not depend on it: every weight byte is read from memory once.
    tile_bytes : int
        Tile size of the tiled-GEMV path [B].

    Examples
    --------
    >>> from roofline_decode import Model
    >>> m = Model(name="tiny", num_layers=2, hidden_size=16, num_heads=4, num_kv_heads=2,
    ...           head_dim=4, intermediate_size=32, vocab_size=50)
    >>> kernel = DecodeKernel(m, batch=2, max_context=8)
    >>> kernel.fill_cache(5)
    >>> logits, counts = kernel.step([3, 7])
    >>> logits.shape, kernel.length, counts.kv_read_bytes   # 2 seq x 5 pos x 2 layers x (2 x 2 x 4) x 4 B
    ((2, 50), 6, 1280)
    """

    def __init__(self, model: Model, batch: int, max_context: int, seed: int = 0,
                 weights: KernelWeights | None = None, matmul: str = "auto", tile_bytes: int = TILE_BYTES) -> None:
        check_supported(model)
        if matmul not in MATMUL_STRATEGIES:
            raise InvalidValueError("matmul", matmul, f"one of {', '.join(MATMUL_STRATEGIES)}")
        if int(tile_bytes) != tile_bytes or tile_bytes < 4:
            raise InvalidValueError("tile_bytes", tile_bytes, "an integer >= 4")
        self.matmul, self.tile_bytes = matmul, int(tile_bytes)
        if int(batch) != batch or batch < 1:
            raise InvalidValueError("batch", batch, "an integer >= 1")
        if int(max_context) != max_context or max_context < 0:
            raise InvalidValueError("max_context", max_context, "an integer >= 0")
        self.model = model.with_precision(weights="fp32", kv="fp32", activations="fp32", experts="fp32")
        self.weights = weights if weights is not None else init_weights(model, seed)
        self.batch, self.max_context = int(batch), int(max_context)
        # a global layer caches every position 0..max_context; a sliding one a ring of W slots
        # (W: the Model refuses sliding layers without one; unread when every layer is global)
        self._window = model.sliding_window or 0
        slots = [self.max_context + 1 if layer.kind == "full" else min(self._window, self.max_context + 1)
                 for layer in self.weights.layers]
        self.k_cache = [np.empty((self.batch, model.num_kv_heads, n, model.head_dim), np.float32) for n in slots]
        self.v_cache = [np.empty((self.batch, model.num_kv_heads, n, model.head_dim), np.float32) for n in slots]
        self.length = 0
        self._counts = StepCounts()

    # -- cache ---------------------------------------------------------------------------------
    @property
    def kv_cache_bytes(self) -> int:
        """Bytes of the KV cache the kernel allocated [B]: B·(max_context + 1) positions per global
        layer, B·min(W, max_context + 1) per sliding layer (``formulas.kv_cache_bytes`` at
        max_context + 1 cached tokens, in float32)."""
        return sum(cache.nbytes for cache in (*self.k_cache, *self.v_cache))

    def _slots(self, index: int, first: int, count: int) -> list[slice]:
        """Cache slots of positions ``[first, first + count)`` in layer ``index`` (one slice, or
        two where a sliding layer's ring wraps)."""
        capacity = self.k_cache[index].shape[2]
        start = first % capacity
        if start + count <= capacity:
            return [slice(start, start + count)]
        return [slice(start, capacity), slice(0, start + count - capacity)]

    def fill_cache(self, context: int, seed: int = 1) -> None:
        """Write random keys and values for positions ``[0, context)`` and set the length.

        For timing and accounting: every cached page a step at ``context`` reads is written,
        so a step reads real memory (a sliding layer holds the last min(context, W) of them).
        """
        if int(context) != context or not 0 <= context <= self.max_context:
            raise InvalidValueError("context", context, f"an integer in [0, max_context={self.max_context}]")
        rng = np.random.default_rng(seed)
        for cache in (*self.k_cache, *self.v_cache):
            held = min(int(context), cache.shape[2])
            for b in range(self.batch):  # one sequence at a time: a small temporary
                cache[b, :, :held] = rng.random(cache[b, :, :held].shape, dtype=np.float32) - 0.5
        self.length = int(context)

    # -- counted primitives ----------------------------------------------------------------------
    def _linear(self, x: np.ndarray, layer: Linear) -> np.ndarray:
        c = self._counts
        c.operations += 1
        c.weight_bytes += layer.weight.nbytes
        c.matmul_flops += 2 * x.shape[0] * layer.weight.size
        y = self._product(x, layer.weight)
        if layer.bias is not None:
            c.weight_bytes += layer.bias.nbytes
            y += layer.bias
        return y

    def _product(self, x: np.ndarray, weight: np.ndarray) -> np.ndarray:
        batch = x.shape[0]
        tiled = self.matmul == "tiled-gemv" or (self.matmul == "auto" and 2 <= batch <= TILED_GEMV_MAX_BATCH)
        product: np.ndarray
        if batch == 1:  # a 1-D operand: BLAS's matrix-vector kernel, measured faster than GEMM with one row
            product = (x[0] @ weight)[None]
        elif not tiled or not weight.flags.c_contiguous:  # a tied lm_head is a transposed view
            product = x @ weight
        else:
            product = tiled_gemv(x, weight, self.tile_bytes)
        return product

    def _norm(self, x: np.ndarray, norm: Norm) -> np.ndarray:
        self._counts.operations += 1
        self._counts.weight_bytes += norm.weight.nbytes + (norm.bias.nbytes if norm.bias is not None else 0)
        return apply_norm(x, norm)

    def _mlp(self, x: np.ndarray, mlp: MLPWeights) -> np.ndarray:
        up = self._linear(x, mlp.up)
        self._counts.operations += 1  # the activation (times up, when gated)
        hidden = activation(self._linear(x, mlp.gate), True) * up if mlp.gate is not None else activation(up, False)
        return self._linear(hidden, mlp.down)

    def _moe(self, x: np.ndarray, layer: LayerWeights, router: Linear) -> np.ndarray:
        m, c = self.model, self._counts
        router_logits = self._linear(x, router)
        c.operations += 2  # top-k with gates, and the combine of the expert outputs
        top = np.argsort(-router_logits, axis=-1, kind="stable")[:, : m.num_experts_per_token]
        chosen = np.take_along_axis(router_logits, top, axis=-1)
        gate = np.exp(chosen - chosen.max(axis=-1, keepdims=True))
        gate /= gate.sum(axis=-1, keepdims=True)
        out = np.zeros_like(x)
        before = c.weight_bytes
        experts = np.unique(top)
        for expert in experts:
            rows, slot = np.nonzero(top == expert)
            out[rows] += gate[rows, slot, None] * self._mlp(x[rows], layer.experts[expert])
        c.expert_bytes += c.weight_bytes - before
        c.experts_touched.append(int(experts.size))
        if layer.shared is not None:
            out += self._mlp(x, layer.shared)
        return out

    def _attention(self, index: int, h: np.ndarray, position: int) -> np.ndarray:
        m, c, layer = self.model, self._counts, self.weights.layers[index]
        B, H_kv, d_h = h.shape[0], m.num_kv_heads, m.head_dim
        group = m.num_heads // H_kv
        q = self._linear(h, layer.q).reshape(B, H_kv, group, d_h)
        k = self._linear(h, layer.k).reshape(B, H_kv, d_h)
        v = self._linear(h, layer.v).reshape(B, H_kv, d_h)
        if layer.q_norm is not None:  # per-head q and k norms come together
            k_norm = required_value(layer.k_norm, "k_norm", "a k norm with the q norm")
            q, k = self._norm(q, layer.q_norm), self._norm(k, k_norm)
        q, k = rope(q, position), rope(k, position)
        c.operations += 3  # rotary q, rotary k, attention over the cache (the cache write below)

        cached = position if layer.kind == "full" else min(position, self._window)
        slots = self._slots(index, position - cached, cached)
        if len(slots) == 1:  # a view: the bytes read are the slice's
            keys, values = self.k_cache[index][:, :, slots[0]], self.v_cache[index][:, :, slots[0]]
        else:  # a wrapped ring: the two parts (order does not matter, RoPE was applied before caching)
            keys = np.concatenate([self.k_cache[index][:, :, s] for s in slots], axis=2)
            values = np.concatenate([self.v_cache[index][:, :, s] for s in slots], axis=2)
        c.kv_read_bytes += keys.nbytes + values.nbytes
        scale = np.float32(1.0 / np.sqrt(d_h))
        scores = (q @ keys.swapaxes(-1, -2)) * scale  # (B, H_kv, group, cached)
        self_score = np.sum(q * k[:, :, None, :], axis=-1, keepdims=True) * scale
        peak = np.maximum(scores.max(axis=-1, keepdims=True, initial=-np.inf), self_score)
        p, p_self = np.exp(scores - peak), np.exp(self_score - peak)
        total = p.sum(axis=-1, keepdims=True) + p_self
        out = (p @ values + p_self * v[:, :, None, :]) / total
        # 2 FLOPs per multiply-add of q·k (over the cached keys) and of p·v (over their values)
        c.attention_flops += 2 * q.size * keys.shape[-2] + 2 * p.size * values.shape[-1]
        c.self_attention_flops += 2 * q.size + 2 * p_self.size * v.shape[-1]

        slot = position % self.k_cache[index].shape[2]  # a sliding layer overwrites the position W back
        self.k_cache[index][:, :, slot] = k
        self.v_cache[index][:, :, slot] = v
        c.kv_write_bytes += k.nbytes + v.nbytes
        c.operations += 1
        return self._linear(out.reshape(B, m.num_heads * d_h), layer.o)

    # -- the step ----------------------------------------------------------------------------------
    def step(self, tokens: ArrayLike, position: int | None = None) -> tuple[np.ndarray, StepCounts]:
        """Decode one token for each sequence.

        Parameters
        ----------
        tokens : array_like of int, shape (batch,)
            The newest token of each sequence (its key and value are not cached yet).
        position : int, optional
            Cached tokens T the step starts from (default: :attr:`length`); the step writes
            the new keys and values at position T (slot T mod W of a sliding layer) and sets
            :attr:`length` to T + 1.  Repeating a step at the same T (the timing runner does)
            does the same work; on a sliding layer past its window it reads the slot the
            previous repeat wrote, so only the first repeat's logits are exact.

        Returns
        -------
        logits : ndarray, shape (batch, vocab_size), float32
        counts : StepCounts
        """
        m, w = self.model, self.weights
        ids = np.asarray(tokens)
        if ids.shape != (self.batch,) or not np.issubdtype(ids.dtype, np.integer):
            raise InvalidValueError("tokens", ids.tolist(), f"{self.batch} integer token ids (one per sequence)")
        if ids.min() < 0 or ids.max() >= m.vocab_size:
            raise InvalidValueError("tokens", ids.tolist(), f"ids in [0, vocab_size={m.vocab_size})")
        position = self.length if position is None else position
        if int(position) != position or not 0 <= position <= self.max_context:
            raise InvalidValueError("position", position, f"an integer in [0, max_context={self.max_context}]")
        position = int(position)
        self._counts = c = StepCounts()

        rows = np.unique(ids)
        c.embedding_rows = int(rows.size)
        c.weight_bytes += rows.size * w.embedding.shape[1] * w.embedding.itemsize
        x = w.embedding[ids]
        c.operations += 1
        post_norms = m.norms_per_layer == 4
        for index, layer in enumerate(w.layers):
            attn = self._attention(index, self._norm(x, layer.norms[0]), position)
            if post_norms:
                attn = self._norm(attn, layer.norms[1])
            x = x + attn
            c.operations += 1
            h = self._norm(x, layer.norms[2 if post_norms else 1])
            if layer.router is not None:
                ff = self._moe(h, layer, layer.router)
            else:
                ff = self._mlp(h, required_value(layer.mlp, "mlp", "an MLP in a layer without a router"))
            if post_norms:
                ff = self._norm(ff, layer.norms[3])
            x = x + ff
            c.operations += 1
        logits = self._linear(self._norm(x, w.final_norm), Linear(w.lm_head))
        self.length = position + 1
        return logits, c

    def greedy(self, tokens: ArrayLike, position: int | None = None) -> np.ndarray:
        """The next token of each sequence (argmax of the step's logits)."""
        logits, _ = self.step(tokens, position)
        next_tokens: np.ndarray = logits.argmax(axis=-1)
        return next_tokens

