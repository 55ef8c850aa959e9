"""``Parallel``: how a model is laid out over devices (TP, PP, EP, attention DP, MoE TP).

The convention is AIConfigurator's and TensorRT-LLM's (the ``tp_size``, ``pp_size``,
``attention_dp_size``, ``moe_tp_size`` and ``moe_ep_size`` of their configs):

* a pipeline stage runs on ``tp x attention_dp`` devices; the attention block of a layer is split
  ``tp`` ways (heads) inside each of ``attention_dp`` groups, each group holding its own sequences
  and their KV cache (attention weights replicated over the groups);
* the MoE block of the same stage runs on the same devices, split ``ep`` ways by routed experts
  and each expert ``moe_tp`` ways: ``moe_tp x ep = tp x attention_dp``;
* ``pp`` stages hold the layers one after another: ``num_devices = tp x attention_dp x pp``.

Only the layout's own arithmetic is checked here (positive whole numbers, the product rule);
whether it suits a model (heads divisible by ``tp``, experts by ``ep``, layers >= ``pp``) and a
device (an interconnect figure for more than one device) is checked by the floors
(:func:`roofline_decode.floors.layout.check_layout`).
"""

from __future__ import annotations

import numbers
import re
from typing import Any

import numpy as np

from pydantic import ConfigDict, Field, model_validator

from ..errors import InvalidValueError
from ._base import Spec

__all__ = ["Parallel", "MAX_DEGREE"]

#: Largest degree of any one dimension accepted (far above any real deployment).
MAX_DEGREE = 1 << 20

_PART = re.compile(r"(attention_dp|moe_tp|moe_ep|moetp|tp|pp|ep|dp)[=:]?(\d+)")
_NAMES = {"attention_dp": "attention_dp", "dp": "attention_dp", "moe_tp": "moe_tp", "moetp": "moe_tp",
          "moe_ep": "ep", "tp": "tp", "pp": "pp", "ep": "ep"}
_SEPARATORS = re.compile(r"[\s,;/x*+_-]*")
_DEGREES = ("tp", "pp", "ep", "attention_dp", "dp", "moe_tp")


def _whole(value: Any) -> Any:
    """``value`` as an int if it is a whole number of a numeric type other than bool, else as is."""
    if isinstance(value, (bool, np.bool_, str, bytes)) or not isinstance(value, numbers.Real):
        return value
    try:
        number = float(value)
        return int(number) if number.is_integer() else value
    except (OverflowError, ValueError):
        return value


class Parallel(Spec):
    """A parallel layout: tensor (``tp``), pipeline (``pp``), expert (``ep``), attention data
    (``attention_dp``, alias ``dp``) parallelism and the tensor split of each expert (``moe_tp``).

    Parameters
    ----------
    tp : int
        Tensor-parallel degree of the attention (and dense) blocks [1], default 1.
    pp : int
        Pipeline stages [1], default 1.
    ep : int
        Expert-parallel degree: ranks the routed experts are spread over [1], default 1.
    attention_dp : int
        Attention data-parallel groups (alias ``dp``) [1], default 1: each holds its own
        sequences and their KV cache.
    moe_tp : int, optional
        Tensor split of each routed expert [1]; default ``tp x attention_dp // ep``.  Must
        satisfy ``moe_tp x ep = tp x attention_dp`` (devices per pipeline stage).

    Examples
    --------
    DeepSeek-V3 as SGLang and TensorRT-LLM serve it on one HGX node, attention DP with EP:

    >>> layout = Parallel.parse("tp1 dp8 ep8")
    >>> layout.num_devices, layout.moe_tp, str(layout)
    (8, 1, 'dp8 ep8')
    >>> Parallel(tp=8, ep=8).moe_tp
    1
    >>> Parallel(tp=4, pp=2).num_devices
    8
    """

    model_config = ConfigDict(**Spec.model_config, populate_by_name=True)

    tp: int = Field(default=1, ge=1, le=MAX_DEGREE, strict=True)
    pp: int = Field(default=1, ge=1, le=MAX_DEGREE, strict=True)
    ep: int = Field(default=1, ge=1, le=MAX_DEGREE, strict=True)
    attention_dp: int = Field(default=1, ge=1, le=MAX_DEGREE, strict=True, alias="dp")
    moe_tp: int = Field(default=1, ge=1, le=MAX_DEGREE, strict=True,
                        description="default tp x attention_dp // ep (filled in before validation)")

    def __init__(self, **data: Any) -> None:
        given = data.get("moe_tp") is not None
        super().__init__(**data)
        stage = self.tp * self.attention_dp
        if self.moe_tp * self.ep != stage:
            if given:
                raise InvalidValueError(
                    "Parallel.moe_tp", self.moe_tp,
                    f"moe_tp x ep = tp x attention_dp = {stage} (the devices of a pipeline stage; "
                    f"ep={self.ep} leaves moe_tp={stage // self.ep if stage % self.ep == 0 else 'none'})")
            raise InvalidValueError(
                "Parallel.ep", self.ep,
                f"a divisor of tp x attention_dp = {stage} (the devices of a pipeline stage that hold the "
                "experts), or moe_tp given so that moe_tp x ep = tp x attention_dp")

    @model_validator(mode="before")
    @classmethod
    def _default_moe_tp(cls, data: Any) -> Any:
        """Whole numbers of other types (numpy integers, ``8.0`` as a table column holds it)
        become ints (a bool, a string or a fraction is left for the field to refuse); then
        moe_tp = tp x attention_dp // ep where it is not given (a whole-number division; a
        remainder is refused by ``__init__``, naming ``ep``)."""
        if isinstance(data, dict):
            data = {key: _whole(value) if key in _DEGREES else value for key, value in data.items()}
        if isinstance(data, dict) and data.get("moe_tp") is None:
            values = [data.get(key, 1) for key in ("tp", "ep")] + [data.get("attention_dp", data.get("dp", 1))]
            if all(type(v) is int and v >= 1 for v in values):
                tp, ep, dp = values
                data = {**data, "moe_tp": max(tp * dp // ep, 1)}
        return data

    def replace(self, **changes: Any) -> Parallel:
        """A validated copy with some degrees changed; ``moe_tp`` follows the new default unless
        it was set apart from it (or is among ``changes``)."""
        fields = {k: getattr(self, k) for k in type(self).model_fields}
        if "moe_tp" not in changes and self.moe_tp == self.tp * self.attention_dp // self.ep:
            fields.pop("moe_tp")
        if "dp" in changes:
            changes["attention_dp"] = changes.pop("dp")
        return type(self)(**{**fields, **changes})

    @property
    def devices_per_stage(self) -> int:
        """Devices of one pipeline stage, tp x attention_dp = moe_tp x ep [1]."""
        return self.tp * self.attention_dp

    @property
    def num_devices(self) -> int:
        """Devices of the layout, tp x attention_dp x pp [1]."""
        return self.devices_per_stage * self.pp

    @property
    def dp(self) -> int:
        """Alias of :attr:`attention_dp`."""
        return self.attention_dp

    @classmethod
    def parse(cls, text: str) -> Parallel:
        """A layout from text such as ``"tp8ep8dp8"``, ``"tp4 pp2"``, ``"dp8-ep8"`` or
        ``"tp=2,moe_tp=2,ep=4,dp=4"`` (any order; a missing degree is 1; ``moe_tp`` defaults
        as in the constructor).

        Raises
        ------
        InvalidValueError
            Text that is not a list of degrees, a degree named twice, or a layout that breaks
            the product rule.
        """
        allowed = ("degrees such as 'tp8ep8dp8' or 'tp4 pp2' (tp, pp, ep, dp or attention_dp, moe_tp, each "
                   "followed by a whole number)")
        if not isinstance(text, str):
            raise InvalidValueError("parallel", text, allowed)
        lowered, position, degrees = text.strip().lower(), 0, {}
        while position < len(lowered):
            position = _SEPARATORS.match(lowered, position).end()  # type: ignore[union-attr]
            if position == len(lowered):
                break
            match = _PART.match(lowered, position)
            if match is None:
                raise InvalidValueError("parallel", text, allowed)
            name = _NAMES[match.group(1)]
            if name in degrees:
                raise InvalidValueError("parallel", text, f"each degree once ({name} is given twice)")
            degrees[name] = int(match.group(2))
            position = match.end()
        if not degrees:
            raise InvalidValueError("parallel", text, allowed)
        return cls(**degrees)

    def __str__(self) -> str:
        """The degrees other than 1, in the order tp, dp, ep, moe_tp (shown only where it
        is not the default), pp; ``"tp1"`` for one device."""
        default_moe_tp = self.tp * self.attention_dp // self.ep
        parts = [f"{name}{value}" for name, value in (("tp", self.tp), ("dp", self.attention_dp), ("ep", self.ep))
                 if value > 1]
        if self.moe_tp != default_moe_tp:
            parts.append(f"moe_tp{self.moe_tp}")
        if self.pp > 1:
            parts.append(f"pp{self.pp}")
        return " ".join(parts) or "tp1"
