"""One serving worker (a model replica on its layout) in the steady state of continuous batching.

:func:`~roofline_decode.floors.serving.serving_floor` builds its metrics from the work a
worker does, seen from its busiest device (SI units, arrays over the grid):

* the **steady step**: D decode sequences at the mean decode context plus the prompts of
  ``r`` requests riding along (chunked prefill), the weights read once for the step;
* the **prefill of one request alone** on the worker (the time to first token without queue);
* the **prompt work** of one request when prompts share steps (no weight bytes but its
  embedding rows): a prefill worker's ceiling.

Each is one attention-DP group's share of a step (:class:`~roofline_decode.floors.layout_traffic.StepShare`),
timed on one device as :func:`~roofline_decode.floors.decode.decode_floor` times a step, or on
a :class:`~roofline_decode.Parallel` layout by :func:`~roofline_decode.floors.layout.layout_floor`
(tensor, expert, attention-DP and pipeline splits, collectives over the scale-up and scale-out
links, the strict floor).  A prompt's share is added term by term, which is exact because bytes,
FLOPs and link bytes are sums over tokens; the routed experts its tokens touch beyond the decode
batch's (MoE) are left out, so the step stays a lower bound.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np

from .. import formulas as f
from ..checks import positive
from ..errors import InvalidValueError
from ..formulas import prefill as fp
from .capacity import kv_bytes_per_sequence, usable_memory
from .layout import Options, check_layout, layout_floor, layout_of
from .layout_links import layout_links
from .layout_traffic import StepShare, decode_share, rank_traffic, step_share
from .prefill import Timing, prefill_traffic, routed_experts
from .routing import resolve_routing
from ..specs.parallel import Parallel
from .traffic import streamed_terms

__all__ = ["Times", "Worker", "resolve_layout", "sequences_that_fit", "kv_link_bandwidth", "ROUTINGS"]

#: MoE routing assumptions a serving floor takes (a measured count is decode_floor's alone).
ROUTINGS = ("uniform", "identical")


def resolve_layout(name: str, value: Any) -> Any:
    """A :class:`~roofline_decode.Parallel` from None (one device), a whole number (the
    tensor-parallel degree), a layout, its text ("tp4ep8") or a dict of degrees."""
    if value is None:
        return Parallel()
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        if value < 1:
            raise InvalidValueError(name, value, "a tensor-parallel degree >= 1 or a Parallel layout")
        return Parallel(tp=int(value))
    try:
        return layout_of(value)
    except InvalidValueError as error:
        raise InvalidValueError(name, value, error.allowed) from None
    except ValueError as error:  # pydantic: a degree out of range, a product rule broken
        raise InvalidValueError(name, value, f"a valid layout ({str(error).splitlines()[0]})") from None


def _combine(decode: StepShare, prompt: StepShare, requests: Any) -> StepShare:
    """The decode share with ``requests`` prompts riding along: their embedding rows, KV and
    FLOPs added, the weights (and the routed experts the decode batch reads) read once."""
    groups = {g: decode.group_flops.get(g, 0.0) + requests * prompt.group_flops.get(g, 0.0)
              for g in {*decode.group_flops, *prompt.group_flops}}
    return replace(
        decode, weight_bytes=decode.weight_bytes + requests * prompt.gathered_bytes,
        kv_read_bytes=decode.kv_read_bytes + requests * prompt.kv_read_bytes,
        kv_write_bytes=decode.kv_write_bytes + requests * prompt.kv_write_bytes,
        flops=decode.flops + requests * prompt.flops, group_flops=groups, tokens=decode.tokens + requests * prompt.tokens,
        expert_flops=decode.expert_flops + requests * prompt.expert_flops,
        global_expert_flops=decode.global_expert_flops + requests * prompt.global_expert_flops,
        gathered_bytes=decode.gathered_bytes + requests * prompt.gathered_bytes,
    )


class Times(NamedTuple):
    """Times [s] of a step on a worker's busiest device, and the layout's notes."""

    memory: np.ndarray
    compute: np.ndarray
    communication: np.ndarray
    step: np.ndarray
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Worker:
    """A worker's shares of work at several decode batches (stacked on a leading axis), the mean
    decode context and a prompt length (built by :meth:`build`); its methods give :class:`Times`."""

    model: Any
    accelerator: Any
    timing: Timing
    layout: Any
    options: Options
    batch: np.ndarray
    context: np.ndarray
    decode: StepShare
    prompt: StepShare
    prompt_length: np.ndarray

    @classmethod
    def build(cls, model: Any, accelerator: Any, timing: Timing, layout: Any, batches: tuple[np.ndarray, ...],
              context: np.ndarray, prompt: np.ndarray, chunk: np.ndarray | None, routing: str,
              options: Options = Options()) -> Worker:
        """The worker at each decode batch of ``batches`` (axis 0 of every result), one pass; with
        no batches, a prefill worker (its prompt work only)."""
        check_layout(model, layout)
        dp = layout.attention_dp
        chunk = prompt if chunk is None else np.minimum(chunk, prompt)
        t = prefill_traffic(model, 1.0, prompt, chunk, 0.0, routing)
        _, row, b_w = streamed_terms(model)
        experts: Any = 0.0
        if model.is_moe:
            experts = fp.prefill_weight_bytes(1.0, prompt, chunk, 0, 0, 0, model.vocab_size, b_w,
                                              *routed_experts(model, routing), model.expert_parameters,
                                              model.routed_expert_format.bytes_per_element)
        rows = fp.prefill_weight_bytes(1.0, prompt, chunk, 0, 0, row, model.vocab_size, b_w)
        prompt_share = step_share(t, tokens=prompt, kv_resident=kv_bytes_per_sequence(model, prompt),
                                  expert_bytes=experts, gathered_bytes=rows, dp=dp)
        stacked = np.maximum(np.stack(np.broadcast_arrays(*(batches or (np.ones(np.shape(context)),)), context))[:-1],
                             1e-9)
        contexts = np.broadcast_to(context, stacked.shape)
        decode = decode_share(model, stacked, contexts, resolve_routing(routing, model), dp) if batches else prompt_share
        return cls(model=model, accelerator=accelerator, timing=timing, layout=layout, options=options, batch=stacked,
                   context=contexts, decode=decode, prompt=prompt_share, prompt_length=prompt)

    def _time(self, share: StepShare, batch: np.ndarray, tokens: Any, logits: Any, needs_peak: Any) -> Times:
        shape = np.shape(batch)
        if self.layout.num_devices == 1:  # decode_floor's timing of one device
            memory = np.asarray(f.memory_time(share.weight_bytes + share.kv_read_bytes + share.kv_write_bytes,
                                              self.timing.bandwidth)) + np.zeros(shape)
            if self.timing.bounded:
                compute = np.asarray(self.timing.peaks.time_of(share.flops, share.group_flops)) + np.zeros(shape)
            else:
                compute = np.where(needs_peak, np.nan, 0.0) + np.zeros(shape)
            return Times(memory, compute, np.zeros(shape), np.maximum(memory, compute))
        r = layout_floor(self.model, self.accelerator, self.layout, share, batch=batch,
                         context=self.context[0] if np.ndim(batch) < self.batch.ndim else self.context, tokens=tokens, logits_tokens=logits, options=self.options,
                         needs_peak=needs_peak, step="serving")
        notes = tuple(n for n in r.notes if n not in self.timing.peaks.notes and not n.startswith("a step that carries"))
        return Times(np.asarray(r.memory_time_s), np.asarray(r.compute_time_s), np.asarray(r.communication_time_s),
                     np.asarray(r.step_time_s), notes)

    def step(self, requests: Any) -> Times:
        """Steps of the decode batches carrying the prompts of ``requests`` requests each
        (fractional: a mean over steps; broadcast against the stacked batches)."""
        requests = np.broadcast_to(np.asarray(requests, dtype=float), self.batch.shape)
        return self._time(_combine(self.decode, self.prompt, requests), self.batch,
                          self.batch + requests * self.prompt_length, self.batch + requests, requests > 0)

    def _alone(self, share: StepShare) -> Times:
        ones = np.ones(np.shape(self.batch)[1:])
        return self._time(share, ones, self.prompt_length + np.zeros(ones.shape), ones, ones > 0)

    def prefill_alone(self) -> Times:
        """One request's prefill alone on the worker (weights read once per chunk)."""
        return self._alone(self.prompt)

    def prompt_work(self) -> np.ndarray:
        """Least time [s] a worker spends on one request's prompt when prompts share steps: its
        KV bytes, embedding rows, FLOPs and link bytes, no weight bytes."""
        return self._alone(replace(self.prompt, weight_bytes=self.prompt.gathered_bytes, expert_bytes=0.0,
                                   global_expert_bytes=0.0)).step


def sequences_that_fit(model: Any, accelerator: Any, layout: Any, contexts: np.ndarray, reserve: float,
                       reserve_fraction: float, routing: str = "uniform") -> np.ndarray:
    """Sequences whose KV cache at each of ``contexts`` fits beside the weights on every device of
    the layout, over all its attention-DP groups (whole numbers; inf where a sequence holds no KV)."""
    usable = usable_memory(accelerator, reserve, reserve_fraction)
    if layout.num_devices == 1:  # the whole model and a whole sequence's cache on one device
        room, per_sequence = usable - model.weight_bytes, np.asarray(kv_bytes_per_sequence(model, contexts), dtype=float)
    else:
        share = decode_share(model, np.ones(np.shape(contexts)), contexts, resolve_routing(routing, model),
                             layout.attention_dp)
        traffic = rank_traffic(model, share, layout)
        room = usable - traffic.weight_bytes / layout.pp
        per_sequence = np.asarray(traffic.kv_bytes, dtype=float) / layout.pp
    with np.errstate(divide="ignore", invalid="ignore"):
        fit: np.ndarray = np.where(per_sequence > 0,
                                   np.floor(max(room, 0.0) / np.where(per_sequence > 0, per_sequence, 1.0)),
                                   np.inf if room >= 0 else 0.0)
    return fit


def kv_link_bandwidth(accelerator: Any, kv_link: float | None, pair_devices: int,
                      options: Options = Options()) -> tuple[float, tuple[str, ...]]:
    """Per-direction bandwidth [B/s] of the link a prompt's KV crosses from a prefill to a decode
    worker, and a note.  ``kv_link`` when given; else the scale-up link when a prefill and a
    decode worker (``pair_devices`` together) fit in one scale-up domain (they can share a node:
    the floor takes the faster link), else the scale-out link (the NIC), else the scale-up link
    with a note that it is optimistic.  ``options`` override the device's figures."""
    if kv_link is not None:
        return positive("kv_link_bandwidth", kv_link, "a finite bandwidth > 0 in B/s"), ()
    links = layout_links(accelerator, Parallel(tp=2) if accelerator.interconnect or options.link_bandwidth else Parallel(),
                         options.link_bandwidth, options.node_size, options.scale_out_bandwidth, domain_notes=False)
    up, domain, out = links.scale_up, links.domain, links.scale_out
    if np.isfinite(up) and domain is not None and pair_devices <= domain:
        return up, (f"KV transfer over the scale-up link ({up / 1e9:.4g} GB/s per direction): a prefill and a decode "
                    f"worker ({pair_devices} devices) fit in one scale-up domain of {domain}; pass kv_link_bandwidth= "
                    "for workers in different nodes",)
    if out is not None:
        return out, (f"KV transfer over the scale-out link ({out / 1e9:.4g} GB/s per direction per device)",)
    if not np.isfinite(up):
        raise InvalidValueError("kv_link_bandwidth", None, f"a per-direction bandwidth in B/s for the KV transfer: "
                                f"{accelerator.name} has neither a scale-out nor an interconnect figure")
    return up, (f"KV transfer over the scale-up link ({up / 1e9:.4g} GB/s per direction): the scale-out link is "
                "unknown (optimistic for workers in different nodes; pass kv_link_bandwidth= or "
                "scale_out_bandwidth=)",)
