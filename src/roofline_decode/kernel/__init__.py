"""A numpy decode kernel and a bandwidth probe: check the floors on the host CPU.

* :class:`DecodeKernel` runs one float32 decode step of a :class:`~roofline_decode.Model`
  with seeded random weights and counts the bytes and FLOPs it touches
  (:class:`StepCounts`); :func:`expected_counts` gives the library's numbers for the same step.
* :func:`reference_logits` recomputes the logits in float64 without a cache.
* :func:`measure_bandwidth` and :func:`host_accelerator` probe the host's memory bandwidth
  and fp32 peak and describe the host as an :class:`~roofline_decode.Accelerator`.
* :func:`run_validation` times the kernel over a batch × context grid against the floor.

Only numpy is needed; matplotlib is imported when a plot is asked for.
"""

from .accounting import expected_counts
from .decode import DecodeKernel, StepCounts
from .model_weights import KernelWeights, check_supported, init_weights
from .probe import BandwidthReport, host_accelerator, measure_bandwidth
from .reference import reference_logits
from .runner import Measurement, run_validation, validation_model

__all__ = [
    "DecodeKernel", "StepCounts", "KernelWeights", "init_weights", "check_supported", "expected_counts",
    "reference_logits", "BandwidthReport", "measure_bandwidth", "host_accelerator", "Measurement",
    "run_validation", "validation_model",
]
