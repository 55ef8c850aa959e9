"""One serving worker (a model replica on its layout) in the steady state of continuous batching.

:func:`~roofline_decode.floors.serving.serving_floor` builds its metrics from two kinds of
work a worker does, both per device of the busiest rank (SI units, arrays over the grid):

* the **steady step**: D decode sequences at the mean decode context plus the prompts of
  ``r`` requests riding along (chunked prefill), the weights read once for the step;
* the **prefill of one request alone** on the worker (the time to first token without queue).

Time of a step = max(memory, compute, communication): bytes at the device bandwidth, each FLOP
group at its own peak (as :func:`~roofline_decode.floors.decode.decode_floor` times them),
tensor-parallel collectives of every token of the step over the scale-up link, overlapped
(the strict floor, as :func:`~roofline_decode.floors.parallel.tensor_parallel_floor`).
The prompts' share is added term by term, which is exact because bytes, FLOPs and link bytes
are sums over tokens; the routed experts their prompt tokens touch beyond the decode batch's
(MoE) and their embedding rows are left out, so the step stays a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import formulas as f
from ..checks import positive
from ..errors import InvalidValueError
from .capacity import usable_memory
from .parallel import device_traffic, link_bandwidth_of
from .prefill import Timing, Traffic, prefill_traffic

__all__ = ["Layout", "Worker", "resolve_layout", "sequences_that_fit", "kv_link_bandwidth", "step_time_of", "ROUTINGS"]

#: MoE routing assumptions a serving floor takes (a measured count is decode_floor's alone).
ROUTINGS = ("uniform", "identical")


@dataclass(frozen=True)
class Layout:
    """The layout of one worker: tensor-parallel degree ``tp`` (one device: 1)."""

    tp: int = 1

    @property
    def num_devices(self) -> int:
        return self.tp

    def __str__(self) -> str:
        return "1 device" if self.tp == 1 else f"tp{self.tp}"


def resolve_layout(name: str, value: Any) -> Layout:
    """A layout from None (one device), a whole number (the tensor-parallel degree) or an object
    with ``tp``, ``pp``, ``ep`` and ``attention_dp`` fields (``roofline_decode.Parallel``)."""
    if value is None:
        return Layout()
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        if value < 1:
            raise InvalidValueError(name, value, "a tensor-parallel degree >= 1 or a Parallel layout")
        return Layout(int(value))
    if hasattr(value, "tp"):
        others = {k: getattr(value, k, 1) for k in ("pp", "ep", "attention_dp")}
        if any(v != 1 for v in others.values()):
            raise InvalidValueError(name, str(value), "a tensor-parallel layout (pp, ep and attention_dp of 1): the "
                                    "serving floors split steps over tensor parallelism only")
        return resolve_layout(name, int(value.tp))
    raise InvalidValueError(name, value, "None (one device), a tensor-parallel degree >= 1 or a Parallel layout")


def _add_groups(a: dict[str, Any], b: dict[str, Any], scale: Any) -> dict[str, Any]:
    """a + scale·b, group by group (a group missing on one side counts 0)."""
    return {g: a.get(g, 0.0) + scale * b.get(g, 0.0) for g in {*a, *b}}


@dataclass(frozen=True)
class Worker:
    """A worker's per-device work at a decode batch, a mean decode context and a prompt length.

    ``decode_*``: the decode part of a step (weights, the KV of ``batch`` sequences);
    ``prompt_*``: one request's prefill on the worker, per device (``prompt_kv_bytes`` without
    weights: what rides along in a shared step).  Built by :meth:`build`."""

    model: Any
    timing: Timing
    layout: Layout
    link: float
    batch: np.ndarray
    decode_bytes: np.ndarray
    decode_flops: np.ndarray
    decode_groups: dict[str, Any]
    prompt: np.ndarray
    prompt_weight_bytes: np.ndarray
    prompt_kv_bytes: np.ndarray
    prompt_flops: np.ndarray
    prompt_groups: dict[str, Any]
    notes: tuple[str, ...]

    @classmethod
    def build(cls, model: Any, accelerator: Any, timing: Timing, layout: Layout, batches: tuple[np.ndarray, ...],
              context: np.ndarray, prompt: np.ndarray, chunk: np.ndarray | None, routing: str) -> tuple[Worker, ...]:
        """One worker per decode batch of ``batches`` (evaluated in one pass), sharing the prompt's parts."""
        n = layout.tp
        link, notes = link_bandwidth_of(accelerator, None, n)
        stacked = np.stack(np.broadcast_arrays(*batches, context))
        dec = device_traffic(model, np.maximum(stacked[:-1], 1.0), stacked[-1:], n, routing)
        pre: Traffic = prefill_traffic(model, 1.0, prompt, prompt if chunk is None else np.minimum(chunk, prompt), 0.0,
                                       routing)
        moved = np.broadcast_to(dec.weight_read_bytes + dec.kv_read_bytes + dec.kv_write_bytes, dec.flops.shape)
        shape = np.shape(batches[0])
        prompt_parts = dict(
            prompt=prompt, prompt_weight_bytes=np.asarray(pre.weight_bytes) / n,
            prompt_kv_bytes=(pre.kv_read_bytes + pre.kv_write_bytes) * dec.kv_share, prompt_flops=pre.flops / n,
            prompt_groups={g: v / n for g, v in pre.group_flops.items()}, notes=tuple(notes))
        return tuple(cls(model=model, timing=timing, layout=layout, link=link, batch=stacked[i],
                         decode_bytes=np.reshape(moved[i], shape), decode_flops=np.reshape(dec.flops[i], shape),
                         decode_groups={g: np.broadcast_to(v, dec.flops.shape)[i] for g, v in dec.group_flops.items()},
                         **prompt_parts)
                     for i in range(len(batches)))

    def _communication(self, tokens: Any, rows: Any) -> np.ndarray:
        """Tensor-parallel collectives of a step of ``tokens`` tokens and ``rows`` logits rows (strict: no latency)."""
        n = self.layout.tp
        if n == 1:
            return np.zeros(np.shape(self.decode_bytes))
        m = self.model
        b_act = m.activation_format.bytes_per_element
        time: np.ndarray = np.asarray(
            f.tensor_parallel_communication_time(tokens, m.hidden_size, b_act, m.num_layers, n, self.link)
            + f.ring_all_reduce_time(tokens * m.hidden_size * b_act, n, self.link)
            + f.ring_all_gather_time(rows * m.vocab_size * b_act, n, self.link))
        return time

    def step(self, requests: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(memory, compute, communication) [s] of a step of the decode batch carrying the prompts
        of ``requests`` requests (fractional: a mean over steps)."""
        has_prompts = np.asarray(requests) > 0
        memory = f.memory_time(self.decode_bytes + requests * self.prompt_kv_bytes, self.timing.bandwidth)
        compute = self._compute(self.decode_flops + requests * self.prompt_flops,
                                _add_groups(self.decode_groups, self.prompt_groups, requests), has_prompts)
        comm = self._communication(self.batch + requests * self.prompt, self.batch + requests)
        return np.asarray(memory), compute, comm

    def prefill_alone(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(memory, compute, communication) [s] of one request's prefill alone on the worker."""
        memory = f.memory_time(self.prompt_weight_bytes + self.prompt_kv_bytes, self.timing.bandwidth)
        compute = self._compute(self.prompt_flops, self.prompt_groups, np.ones(np.shape(memory), dtype=bool))
        return np.asarray(memory), compute, self._communication(self.prompt, 1.0)

    def prompt_work(self) -> np.ndarray:
        """Least time [s] a worker spends on one request's prompt when prompts share steps
        (weights shared): max(KV bytes, FLOPs, link bytes) of the prompt alone."""
        memory = f.memory_time(self.prompt_kv_bytes, self.timing.bandwidth)
        compute = self._compute(self.prompt_flops, self.prompt_groups, np.ones(np.shape(memory), dtype=bool))
        return np.asarray(np.maximum(np.maximum(memory, compute), self._communication(self.prompt, 1.0)))

    def _compute(self, flops: Any, groups: dict[str, Any], needs_peak: np.ndarray) -> np.ndarray:
        """FLOPs at the peaks; NaN where prompt tokens need a peak the device does not publish."""
        if not self.timing.bounded:
            return np.where(needs_peak, np.nan, 0.0) + np.zeros(np.shape(self.decode_bytes))
        time: np.ndarray = np.asarray(self.timing.peaks.time_of(flops, groups)) + np.zeros(np.shape(self.decode_bytes))
        return time


def sequences_that_fit(model: Any, accelerator: Any, layout: Layout, contexts: np.ndarray, reserve: float,
                       reserve_fraction: float) -> np.ndarray:
    """Sequences whose KV cache at each of ``contexts`` fits beside the weights on every device of
    the layout (whole numbers; inf where a sequence holds no KV cache)."""
    one = device_traffic(model, np.ones(np.shape(contexts)), contexts, layout.tp)
    room = usable_memory(accelerator, reserve, reserve_fraction) - one.weight_bytes
    per_sequence = np.asarray(one.kv_bytes, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        fit: np.ndarray = np.where(per_sequence > 0,
                                   np.floor(max(room, 0.0) / np.where(per_sequence > 0, per_sequence, 1.0)),
                                   np.inf if room >= 0 else 0.0)
    return fit


def kv_link_bandwidth(accelerator: Any, link_bandwidth: float | None) -> tuple[float, tuple[str, ...]]:
    """Per-direction bandwidth [B/s] of the link a prompt's KV crosses from a prefill to a decode
    worker, and a note: ``link_bandwidth`` when given, else the device's scale-out link
    (``accelerator.scale_out``, the NIC), else its scale-up interconnect (workers in one
    NVLink domain), which a note states."""
    if link_bandwidth is not None:
        return positive("link_bandwidth", link_bandwidth, "a finite bandwidth > 0 in B/s"), ()
    scale_out = getattr(accelerator, "scale_out", None)
    if scale_out is not None:
        return float(scale_out.per_direction_bandwidth), ()
    link = accelerator.interconnect
    if link is None:
        raise InvalidValueError("link_bandwidth", None, f"a per-direction bandwidth in B/s for the KV transfer: "
                                f"{accelerator.name} has neither a scale-out nor an interconnect figure")
    return float(link.per_direction_bandwidth), (
        f"KV transfer over the scale-up link ({link.name}, {link.per_direction_bandwidth / 1e9:.4g} GB/s per "
        "direction): no scale-out figure for the device, so the prefill and decode workers are taken to share an "
        "NVLink domain; pass link_bandwidth= for workers in different nodes",)


def step_time_of(parts: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    memory, compute, comm = parts
    return np.asarray(np.maximum(np.maximum(memory, compute), comm))
