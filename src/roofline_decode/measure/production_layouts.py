"""The parallel layout of a production run's worker and the checks that its fields agree.

aiconfigurator's convention (``ai-dynamo/aiconfigurator``, ``sdk/models.py``): a worker spans
``tp x pp x attention_dp`` GPUs and its MoE layers ``moe_tp x moe_ep x pp``, and the two must
be equal.  :func:`layout_problems` names where a row's fields disagree with that, with its id,
or with the memory of one node; :func:`likely_gpus` gives the GPU count the id or an MoE grid
read as GPUs states instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["HGX_NODE_GPUS", "Mode", "WorkerLayout", "batch_per_rank", "id_gpus", "layout_problems", "likely_gpus"]

#: GPUs in one HGX H100 / H200 node (eight SXM GPUs on one NVLink switch fabric).
HGX_NODE_GPUS = 8

Mode = Literal["aggregated", "disaggregated"]


@dataclass(frozen=True)
class WorkerLayout:
    """The parallel layout of one worker (aiconfigurator's fields; None where the cell is empty).

    ``gpus`` = tp x pp x attention_dp; ``moe_gpus`` = moe_tp x moe_ep x pp (both degrees stated).
    """

    tp: int
    pp: int = 1
    attention_dp: int = 1
    moe_tp: int | None = None
    moe_ep: int | None = None
    batch: int | None = None
    workers: int | None = None

    @property
    def gpus(self) -> int:
        """GPUs of one worker: tp x pp x attention_dp."""
        return self.tp * self.pp * self.attention_dp

    @property
    def moe_gpus(self) -> int | None:
        """GPUs the MoE layers span: moe_tp x moe_ep x pp (None when a degree is missing or 0)."""
        if not self.moe_tp or not self.moe_ep:
            return None
        return self.moe_tp * self.moe_ep * self.pp

    @property
    def running_batch_limit(self) -> int | None:
        """Sequences one worker runs at most: batch per attention-DP rank x attention_dp."""
        return None if self.batch is None else self.batch * self.attention_dp

    def describe(self) -> str:
        moe = f" moe_tp{self.moe_tp} ep{self.moe_ep}" if self.moe_tp is not None or self.moe_ep is not None else ""
        extra = "" if self.workers is None else f" x{self.workers} workers"
        return f"tp{self.tp} pp{self.pp} dp{self.attention_dp}{moe} ({self.gpus} GPUs){extra}"


def id_gpus(run_id: str) -> int | None:
    """The GPUs of a worker as a run id names them (``..._tp8_ep8_922``, ``..._tp8_0_ep8_0_1238``:
    the engine's tensor-parallel size, attention DP included), or None where the id names none.

    >>> id_gpus("2026_04_06_deepseek_r1_h200_sxm_trtllm_fp8_agg_1024x1024_c32_tp8_ep8_922")
    8
    """
    named = re.search(r"_tp(\d{1,4})_(?:\d+_)?ep(\d{1,4})", run_id)
    return (int(named[1]) or None) if named else None


def likely_gpus(run_id: str, mode: Mode, layout: WorkerLayout | None) -> int | None:
    """Fewer GPUs than the fields give, as the id or an MoE grid read as GPUs state them."""
    if mode != "aggregated" or layout is None:
        return None
    named = id_gpus(run_id)
    stated = [named] if named is not None and named < layout.gpus else []
    if layout.gpus > HGX_NODE_GPUS and layout.moe_gpus == layout.gpus and min(layout.moe_tp or 1, layout.moe_ep or 1) > 1:
        stated.append(layout.moe_tp or 1)
    return min(stated) if stated else None


def batch_per_rank(layout: WorkerLayout | None, concurrency: int | None) -> bool:
    """True when ``batch_size`` reads as the batch of one tensor-parallel rank: attention_dp 1,
    batch_size < concurrency and batch_size x tp x pp = concurrency (attention DP over the ranks
    with attention_dp_size left empty?); then it is no limit on the worker's running batch."""
    return (layout is not None and concurrency is not None and layout.batch is not None and layout.attention_dp == 1
            and layout.gpus > 1 and layout.batch < concurrency == layout.batch * layout.gpus)


def layout_problems(run_id: str, model_id: str | None, mode: Mode, layout: WorkerLayout | None,
                    prefill: WorkerLayout | None, decode: WorkerLayout | None,
                    concurrency: int | None = None) -> tuple[str, ...]:
    """Where the row's parallel fields disagree with each other, with its id or its concurrency."""
    from ..catalog import load_model, list_models

    moe = model_id is not None and model_id in list_models() and bool(load_model(model_id).num_experts)
    problems: list[str] = []
    for name, lay in (("", layout), ("prefill ", prefill), ("decode ", decode)):
        if lay is None:
            continue
        if moe and lay.moe_gpus is None:
            problems.append(f"{name}moe_tp_size {lay.moe_tp} / moe_ep_size {lay.moe_ep}: a MoE degree is missing or 0")
        elif moe and lay.moe_gpus != lay.gpus:
            problems.append(f"{name}tp x pp x attention_dp = {lay.gpus} GPUs but moe_tp x moe_ep x pp = {lay.moe_gpus} "
                            "(aiconfigurator requires them equal)")
        elif moe and lay.gpus > HGX_NODE_GPUS and min(lay.moe_tp or 1, lay.moe_ep or 1) > 1:
            problems.append(f"{name}tp_size x attention_dp = moe_tp_size x moe_ep_size = {lay.gpus} GPUs, more than an "
                            f"{HGX_NODE_GPUS}-GPU node: the product of the {lay.moe_tp} x {lay.moe_ep} MoE grid read as "
                            f"GPUs (rows of this kind that name their GPUs in the id or a twin name {lay.moe_tp})")
    named = id_gpus(run_id)
    if named is not None and mode == "aggregated" and layout is not None and named != layout.gpus:
        problems.append(f"the id names tp{named} ({named} GPUs) but the fields give {layout.describe()}")
    if mode == "aggregated" and batch_per_rank(layout, concurrency):
        assert layout is not None and layout.batch is not None
        problems.append(f"batch_size {layout.batch} x {layout.gpus} GPUs = the concurrency {concurrency}: batch_size "
                        "is per GPU, as with attention DP over the ranks, but attention_dp_size says 1")
    return tuple(problems)
