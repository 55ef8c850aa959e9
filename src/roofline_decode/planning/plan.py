"""``plan()``: does it fit, is it fast enough, and how many devices would make it both.

Capacity and bandwidth are answered separately, then combined in a verdict:

======================  ======  =================  =============================================
verdict                 fits    meets the target   meaning
======================  ======  =================  =============================================
``ok``                  yes     yes (or no target)
``bandwidth-limited``   yes     no                 more HBM would not help; more bandwidth would
``capacity-limited``    no      yes                fast enough on paper, but it does not fit
``both``                no      no
======================  ======  =================  =============================================
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..floors.records import ToDataFrame
from ..errors import InvalidValueError
from ..units import GB, format_number
from ..units import format_table
from ..checks import check_slo_ms, flag, renamed, whole_number
from ..floors.capacity import DEFAULT_RESERVE, usable_memory
from ..floors.parallel import DEFAULT_COLLECTIVE_LATENCY
from .layouts import layout_capacity, planned_layout
from .tiers import OffloadFloor, offload_floor

if TYPE_CHECKING:
    from ..floors.routing import Routing
    from ..specs.accelerator import Accelerator, MemoryTier
    from ..specs.model import Model
    from ..specs.parallel import Parallel

__all__ = ["PlanRow", "PlanResult", "plan", "VERDICTS"]

VERDICTS = ("ok", "bandwidth-limited", "capacity-limited", "both")
#: each verdict as the printed table says it: what stops the plan, in words
VERDICT_WORDS = {"ok": "ok", "bandwidth-limited": "bandwidth", "capacity-limited": "capacity",
                 "both": "capacity and bandwidth"}
#: the line under the printed table that says what its verdicts mean
VERDICT_LEGEND = ("verdict: what stops the plan on the devices shown. capacity: weights + KV cache exceed the "
                  "usable memory; bandwidth: the step floor is slower than the target; ok: neither. "
                  "min devices: the fewest tensor-parallel devices that fit and meet the target")


@dataclass(frozen=True)
class PlanRow:
    """The plan for one accelerator (SI units; times in seconds)."""

    model: str
    accelerator: str
    devices: int
    batch: int
    context: int
    usable_bytes_per_device: float
    resident_bytes_per_device: float
    tier_resident_bytes_per_device: float
    fits: bool
    max_batch: int | None
    step_time_s: float
    tokens_per_s: float
    per_sequence_tokens_per_s: float
    bound: str
    slo_ms: float | None
    meets_target: bool | None
    verdict: str
    min_devices: int | None
    min_devices_step_time_s: float | None
    notes: tuple[str, ...] = field(default=())
    parallel: str | None = None  # the main row's layout when plan(parallel=...) was given

    @property
    def slo_ms_per_token(self) -> float | None:
        """Deprecated name of :attr:`slo_ms`."""
        import warnings

        warnings.warn("slo_ms_per_token is deprecated; use slo_ms", DeprecationWarning, stacklevel=2)
        return self.slo_ms

    def to_record(self) -> dict[str, Any]:
        record = asdict(self)
        record["notes"] = list(self.notes)
        return record


class PlanResult(ToDataFrame, list[PlanRow]):
    """A list of :class:`PlanRow`, one per accelerator, printed as a verdict table."""

    HEADERS = ["accelerator", "devices", "fits", "GB/device", "usable GB", "max batch", "step ms", "tok/s",
               "bound", "target ms", "verdict", "min devices"]

    def to_records(self) -> list[dict[str, Any]]:
        return [row.to_record() for row in self]

    def rows(self) -> list[list[str]]:
        out: list[list[str]] = []
        for r in self:
            out.append([
                r.accelerator, str(r.devices), "yes" if r.fits else "no",
                format_number(r.resident_bytes_per_device / GB), format_number(r.usable_bytes_per_device / GB),
                "-" if r.max_batch is None else str(r.max_batch), format_number(r.step_time_s * 1e3), format_number(r.tokens_per_s),
                r.bound, "-" if r.slo_ms is None else format_number(r.slo_ms),
                VERDICT_WORDS[r.verdict], "-" if r.min_devices is None else str(r.min_devices),
            ])
        return out

    def __str__(self) -> str:
        if not self:
            return "(no accelerators)"
        first = self[0]
        title = f"{first.model}: batch {first.batch}, context {first.context}" + (
            f", layout {first.parallel}" if first.parallel else "")
        rows = self.rows()
        lines = [title, format_table(self.HEADERS, rows), VERDICT_LEGEND]
        notes = [f"  {r.accelerator}: {note}" for r in self for note in r.notes]
        return "\n".join(lines + (["notes:"] + notes if notes else []))


def _verdict(fits: bool, meets: bool | None) -> str:
    meets = True if meets is None else meets
    return VERDICTS[(not fits) * 2 + (not meets)]


def _bound(floor: OffloadFloor) -> str:
    terms = {
        "memory": float(floor.device_time_s), "tier": float(floor.tier_time_s),
        "compute": float(floor.compute_time_s), "communication": float(floor.communication_time_s),
    }
    return max(terms, key=terms.__getitem__)


def _max_batch(model: Model, floor: OffloadFloor, usable: float, context: float, kv_fraction: float,
               weight_fraction: float, capacity: tuple[float, float] | None = None) -> int | None:
    """The largest batch whose resident bytes fit ``usable``; ``capacity``: (weights per device,
    KV per sequence) of a layout (:func:`~roofline_decode.planning.layouts.layout_capacity`),
    None for the tensor-parallel split of ``floor.num_devices``."""
    from ..floors.parallel import device_traffic

    if capacity is None:
        one = device_traffic(model, np.ones(1), np.full(1, float(context)), floor.num_devices)
        capacity = (one.weight_bytes, float(one.kv_bytes[0]))
    weights = (1 - weight_fraction) * capacity[0]
    per_sequence = float((1 - kv_fraction) * capacity[1])
    if per_sequence == 0:
        return 0 if weights > usable else None  # no KV cache: the batch is not bounded by memory
    batch = int(max(np.floor((usable - weights) / per_sequence), 0))
    return batch - 1 if batch and weights + batch * per_sequence > usable else batch


def plan(model: Model | str, accelerators: Accelerator | str | list[Accelerator | str] | tuple[Accelerator | str, ...],
         batch: int, context: int, slo_ms: float | None = None, *,
         tp: int = 1, reserve: float = DEFAULT_RESERVE, reserve_fraction: float = 0.0, binary_units: bool = True,
         offload_kv: float = 0.0, offload_weights: float = 0.0, tier: MemoryTier | str | None = None,
         tier_links: int = 1,
         overlapped_tier: bool = False, max_devices: int = 8,
         collective_latency: float = DEFAULT_COLLECTIVE_LATENCY, link_bandwidth: float | None = None,
         overlap_communication: bool = False, routing: Routing | str | float = "uniform", prompt: int | None = None,
         output: int | None = None, slo_ms_per_token: float | None = None, parallel: Parallel | str | None = None,
         node_size: int | None = None, scale_out_bandwidth: float | None = None) -> PlanResult:
    """Capacity and bandwidth verdicts of ``model`` at ``batch`` × ``context`` on each accelerator.

    Parameters
    ----------
    model : Model or str
    accelerators : Accelerator, str or a list of them
    batch, context : int
        Sequences decoded together and tokens each holds.
    slo_ms : float, optional
        Target time between two tokens of one sequence [ms] (= the step time).
    tp : int
        Devices per replica (tensor parallelism) for the main row.
    reserve, reserve_fraction, binary_units
        The usable-memory rule per device (:mod:`roofline_decode.floors.capacity`).
    offload_kv, offload_weights, tier, tier_links, overlapped_tier
        Fractions kept in a slower tier (:mod:`roofline_decode.planning.tiers`).
    max_devices : int
        Largest tensor-parallel degree searched for ``min_devices`` (degrees that divide the
        number of query heads).
    collective_latency, link_bandwidth, overlap_communication
        Tensor-parallel options (:mod:`roofline_decode.floors.parallel`).
    routing : {"uniform", "identical"} or float
        MoE routing assumption of the step times (:func:`roofline_decode.decode_floor`); the
        resident bytes hold every expert whatever the routing.
    parallel : Parallel or str, optional
        The main row's layout instead of ``tp`` (which must then stay 1): a
        :class:`~roofline_decode.Parallel` or its text (``"tp4"``, ``"dp8 ep8"``); the row is
        the busiest device's (:mod:`roofline_decode.planning.layouts`), ``devices`` all of the
        layout's and ``parallel`` its text.  ``node_size`` and ``scale_out_bandwidth`` override
        its links.  ``min_devices`` still searches tensor-parallel degrees.
    prompt, output : int, optional
        With both, each row's notes carry the one-device request floor of a static batch
        (:func:`~roofline_decode.floors.request.request_floor`: the prefill yields the first
        token, then output − 1 decode steps): TTFT, TPOT and end-to-end latency.

    Returns
    -------
    PlanResult
        One :class:`PlanRow` per accelerator: whether it fits, the largest batch that would fit
        at this context (``None`` when no KV cache stays in device memory to bound it: context 0, or
        ``offload_kv=1``), the floor step time
        and tokens/s, the bound, the verdict, and the smallest device count that fits and meets the target
        (``None`` if none up to ``max_devices`` does, or if the device has no interconnect
        figure and ``link_bandwidth`` is not given).

    Examples
    --------
    Llama-3.1-70B in bf16, batch 16 at 32K tokens, 50 ms per token:

    >>> r = plan("llama-3.1-70b", ["h100-sxm", "h200-sxm"], batch=16, context=32768, slo_ms=50)
    >>> [(row.accelerator, row.verdict, row.min_devices) for row in r]
    [('h100-sxm', 'both', 4), ('h200-sxm', 'both', 4)]

    The same on four H100s as a layout (the same numbers as ``tp=4``):

    >>> row = plan("llama-3.1-70b", "h100-sxm", batch=16, context=32768, slo_ms=50, parallel="tp4")[0]
    >>> row.devices, row.parallel, row.verdict
    (4, 'tp4', 'ok')
    """
    from ..catalog import load_accelerator, load_model

    model = load_model(model)
    devices: list[Accelerator | str] = [accelerators] if not isinstance(accelerators, (list, tuple)) else list(accelerators)
    if not devices:
        raise InvalidValueError("accelerators", accelerators, "at least one accelerator")
    batch = whole_number("batch", batch, 1)
    context = whole_number("context", context, 0)
    slo_ms = check_slo_ms(renamed("slo_ms", slo_ms, "slo_ms_per_token", slo_ms_per_token))
    max_devices = whole_number("max_devices", max_devices, 1)
    binary_units, overlapped_tier = flag("binary_units", binary_units), flag("overlapped_tier", overlapped_tier)
    overlap_communication = flag("overlap_communication", overlap_communication)
    if (prompt is None) != (output is None):
        raise InvalidValueError("prompt/output", prompt if output is None else output,
                                "both a prompt and an output length, or neither")
    options: dict[str, Any] = dict(kv_fraction=offload_kv, weight_fraction=offload_weights, links=tier_links,
                   overlapped=overlapped_tier, collective_latency=collective_latency,
                   link_bandwidth=link_bandwidth, overlap_communication=overlap_communication, routing=routing)
    layout = planned_layout(parallel)
    tp = whole_number("tp", tp, 1)
    if layout is not None and tp != 1:
        raise InvalidValueError("tp", tp, "1 when parallel= is given (the layout holds the degrees)")
    link_overrides: dict[str, Any] = dict(node_size=node_size, scale_out_bandwidth=scale_out_bandwidth)

    def evaluate(device: Accelerator, n: int, main: bool = False) -> tuple[OffloadFloor, float, bool, bool | None]:
        floor = (offload_floor(model, device, tier, batch, context, parallel=layout, **options, **link_overrides)
                 if main and layout is not None else
                 offload_floor(model, device, tier, batch, context, num_devices=n, **options))
        usable = usable_memory(device, reserve, reserve_fraction, binary_units)
        fits = bool(float(floor.device_resident_bytes) <= usable)
        step = float(floor.step_time_s)
        meets = None if slo_ms is None else bool(step <= slo_ms / 1e3)
        return floor, usable, fits, meets

    result = PlanResult()
    for device in devices:
        device = load_accelerator(device)
        floor, usable, fits, meets = evaluate(device, tp, main=True)
        min_devices = min_step = None
        notes = list(floor.notes)
        # only counts that divide the query heads shard evenly: the divisors up to max_devices
        divisors = [n for n in range(1, min(max_devices, model.num_heads) + 1) if model.num_heads % n == 0]
        for n in divisors:
            try:
                candidate = evaluate(device, n)
            except InvalidValueError:
                notes.append("no interconnect figure: pass link_bandwidth to search multi-device plans")
                break
            if candidate[2] and candidate[3] in (None, True):
                min_devices, min_step = n, float(candidate[0].step_time_s)
                break
        if model.num_heads % tp:
            notes.append(f"tp={tp} does not divide {model.num_heads} query heads: shards are uneven")
        if prompt is not None and output is not None:  # both or neither (checked above)
            notes.append(_request_note(model, device, batch, prompt, output))
        step = float(floor.step_time_s)
        result.append(PlanRow(
            model=model.name, accelerator=device.id or device.name, devices=floor.num_devices, batch=int(batch),
            context=int(context), usable_bytes_per_device=usable,
            resident_bytes_per_device=float(floor.device_resident_bytes),
            tier_resident_bytes_per_device=float(floor.tier_resident_bytes), fits=fits,
            max_batch=_max_batch(model, floor, usable, context, offload_kv, offload_weights, None if layout is None else
                                 layout_capacity(model, device, context, layout, link_bandwidth=link_bandwidth,
                                                 routing=routing, **link_overrides)),
            step_time_s=step, tokens_per_s=batch / step, per_sequence_tokens_per_s=1 / step, bound=_bound(floor),
            slo_ms=slo_ms, meets_target=meets, verdict=_verdict(fits, meets),
            min_devices=min_devices, min_devices_step_time_s=min_step, notes=tuple(notes),
            parallel=None if layout is None else str(layout),
        ))
    return result


def _request_note(model: Model, device: Accelerator, batch: int, prompt: int, output: int) -> str:
    """TTFT, TPOT and latency of a static batch of requests on one device (request convention)."""
    from ..floors.request import request_floor

    r = request_floor(model, device, prompt, output, batch)
    tpot = "no decode step" if output == 1 else f"TPOT {float(r.tpot_s) * 1e3:.4g} ms"
    ttft, e2e = float(r.ttft_s), float(r.e2e_latency_s)
    if ttft != ttft:  # NaN: the prefill needs a compute peak the device does not publish
        times = f"TTFT n/a (no compute peak published), {tpot}, end to end n/a"
    else:
        times = f"TTFT {ttft * 1e3:.4g} ms, {tpot}, {e2e:.4g} s end to end"
    return (f"request {prompt} in / {output} out at batch {batch} on one device: {times} (prefill yields the first "
            f"token, then {output - 1} decode steps)")
