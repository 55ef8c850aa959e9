"""A float64 full-recompute forward pass, without a KV cache: the kernel's ground truth.

:func:`reference_logits` runs every position of every sequence through the model at once, with
an explicit causal (and sliding-window) mask, in float64; the logits of the last position must
equal those of a cached float32 decode step (:class:`~roofline_decode.kernel.DecodeKernel`)
within 1e-4 relative.  It is written for clarity, not speed: one sequence at a time, one
attention matrix per head, one token at a time through the experts.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .decode import activation, apply_norm, rope
from .model_weights import KernelWeights, LayerWeights, Linear, MLPWeights, required_value

__all__ = ["reference_logits", "attention_mask"]


def attention_mask(length: int, sliding_window: int | None) -> np.ndarray:
    """Boolean ``(length, length)`` mask: position i may attend to j.

    Causal (j <= i) and, for a sliding layer, within the window: j >= i - W, i.e. the W most
    recent earlier positions and i itself.

    Examples
    --------
    >>> attention_mask(4, 2).astype(int)
    array([[1, 0, 0, 0],
           [1, 1, 0, 0],
           [1, 1, 1, 0],
           [0, 1, 1, 1]])
    """
    i, j = np.arange(length)[:, None], np.arange(length)[None, :]
    mask = j <= i
    if sliding_window is not None:
        mask &= j >= i - sliding_window
    return mask


def _mlp(x: np.ndarray, mlp: MLPWeights) -> np.ndarray:
    def linear(v: np.ndarray, layer: Linear) -> np.ndarray:
        y: np.ndarray = v @ layer.weight + (layer.bias if layer.bias is not None else 0.0)
        return y

    up = linear(x, mlp.up)
    hidden = activation(linear(x, mlp.gate), True) * up if mlp.gate is not None else activation(up, False)
    return linear(hidden, mlp.down)


def _moe(x: np.ndarray, layer: LayerWeights, gates: Linear, experts_per_token: int) -> np.ndarray:
    router = x @ gates.weight + (gates.bias if gates.bias is not None else 0.0)
    out = np.zeros_like(x)
    for t in range(x.shape[0]):  # token by token, each through its own k experts
        top = np.argsort(-router[t], kind="stable")[:experts_per_token]
        gate = np.exp(router[t, top] - router[t, top].max())
        gate /= gate.sum()
        for g, expert in zip(gate, top):
            out[t] += g * _mlp(x[t:t + 1], layer.experts[expert])[0]
    if layer.shared is not None:
        out += _mlp(x, layer.shared)
    return out


def _sequence_logits(weights: KernelWeights, tokens: np.ndarray) -> np.ndarray:
    m = weights.model
    n, d_h, H_q, H_kv = tokens.size, m.head_dim, m.num_heads, m.num_kv_heads
    positions = np.arange(n)
    x = weights.embedding[tokens]
    for layer in weights.layers:
        h = apply_norm(x, layer.norms[0])

        def project(linear: Linear, heads: int) -> np.ndarray:
            y = h @ linear.weight + (linear.bias if linear.bias is not None else 0.0)
            by_head: np.ndarray = y.reshape(n, heads, d_h).transpose(1, 0, 2)  # (heads, n, d_h)
            return by_head

        q, k, v = project(layer.q, H_q), project(layer.k, H_kv), project(layer.v, H_kv)
        if layer.q_norm is not None:
            q, k = apply_norm(q, layer.q_norm), apply_norm(k, required_value(layer.k_norm, "k_norm", "a k norm with the q norm"))
        q, k = rope(q, positions), rope(k, positions)
        mask = attention_mask(n, m.sliding_window if layer.kind == "sliding" else None)
        heads = []
        for head in range(H_q):
            kv_head = head // (H_q // H_kv)
            scores = q[head] @ k[kv_head].T / np.sqrt(d_h)
            scores = np.where(mask, scores, -np.inf)
            p = np.exp(scores - scores.max(axis=-1, keepdims=True))
            heads.append((p / p.sum(axis=-1, keepdims=True)) @ v[kv_head])
        attn = np.concatenate(heads, axis=-1) @ layer.o.weight
        if layer.o.bias is not None:
            attn = attn + layer.o.bias
        post = m.norms_per_layer == 4
        if post:
            attn = apply_norm(attn, layer.norms[1])
        x = x + attn
        h = apply_norm(x, layer.norms[2 if post else 1])
        if layer.router is not None:
            ff = _moe(h, layer, layer.router, m.num_experts_per_token)
        else:
            ff = _mlp(h, required_value(layer.mlp, "mlp", "an MLP in a layer without a router"))
        if post:
            ff = apply_norm(ff, layer.norms[3])
        x = x + ff
    logits: np.ndarray = apply_norm(x[-1:], weights.final_norm)[0] @ weights.lm_head
    return logits


def reference_logits(weights: KernelWeights, tokens: ArrayLike) -> np.ndarray:
    """Logits of the last position of each sequence, recomputed from scratch in float64.

    Parameters
    ----------
    weights : KernelWeights
        The kernel's weights (cast to float64 here; the float32 originals are untouched).
    tokens : array_like of int, shape (batch, length)
        Whole sequences: the T cached tokens followed by the token being decoded.

    Returns
    -------
    ndarray, shape (batch, vocab_size), float64

    Examples
    --------
    >>> from roofline_decode import Model
    >>> from roofline_decode.kernel import DecodeKernel
    >>> m = Model(name="tiny", num_layers=2, hidden_size=16, num_heads=4, num_kv_heads=2,
    ...           head_dim=4, intermediate_size=32, vocab_size=50, sliding_window=2)
    >>> kernel = DecodeKernel(m, batch=1, max_context=4)
    >>> for t in [5, 9, 2, 7]:
    ...     logits, _ = kernel.step([t])
    >>> ref = reference_logits(kernel.weights, [[5, 9, 2, 7]])
    >>> bool(np.abs(logits - ref).max() <= 1e-4 * np.abs(ref).max())
    True
    """
    tokens = np.atleast_2d(np.asarray(tokens))
    weights64 = weights.astype(np.float64)
    return np.stack([_sequence_logits(weights64, row) for row in tokens])
