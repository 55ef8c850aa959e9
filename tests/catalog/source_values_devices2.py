"""Source values of the devices added by the devices2 round (issue 28, item 4 remainder).

Same layout as ``SOURCE_VALUES`` in ``test_catalog_new_devices.py`` (which merges this table):
device id -> figure -> (value as printed, unit as printed, kind, source URL).  Written while reading
the sources; ``derived`` rows give their arithmetic in the spec file's ``derivation``.
"""

from __future__ import annotations

NEOWIN_RTX50_LAPTOP = "https://www.neowin.net/news/rtx-50-powered-laptops-promise-double-the-performance-and-40-better-battery-life/"
FPSBENCH_5080L = "https://fpsbench.com/compare/gpu/nvidia-geforce-rtx-5080-mobile-vs-amd-radeon-r6-m255dx"
HMC_5080L_150W = "https://hmc-tech.com/gpu/nvidia-geforce-rtx-5080-laptop-150w-vs-nvidia-geforce-rtx-4050-laptop-100w"
FPSBENCH_5070L = "https://fpsbench.com/compare/gpu/intel-iris-pro-graphics-6200-vs-nvidia-geforce-rtx-5070-mobile"
TINHTE_5070L = "https://tinhte.mywebsite.vn/threads/nvidia-geforce-rtx-5070-laptop-hieu-nang-va-thong-so.5079/post-5286"
#: The RTX 3070 Ti's FP32 rate (its file existed before; its peaks are new in this round).
SYSRQMTS_3070TI = "https://sysrqmts.com/pt/gpus/compare/nvidia-geforce-rtx-2060-mobile-vs-nvidia-geforce-rtx-3070-ti"

DEVICES2_SOURCE_VALUES: dict[str, dict[str, tuple[float, str, str, str]]] = {
    "rtx-5080-laptop": {
        "memory_capacity": (16, "GB", "datasheet", NEOWIN_RTX50_LAPTOP),
        "memory_bandwidth": (896.0, "GB/s", "datasheet", FPSBENCH_5080L),
        "peak_flops.fp32": (35.13, "TFLOP/s", "datasheet", HMC_5080L_150W),
        "peak_flops.bf16": (70.26, "TFLOP/s", "derived", HMC_5080L_150W),
        "peak_flops.fp16": (70.26, "TFLOP/s", "derived", HMC_5080L_150W),
        "peak_flops.fp4": (667, "TFLOP/s", "derived", NEOWIN_RTX50_LAPTOP),
        "sparse_peak_flops.fp4": (1334, "TFLOP/s", "datasheet", NEOWIN_RTX50_LAPTOP),
        "tdp": (150, "W", "datasheet", NEOWIN_RTX50_LAPTOP),
    },
    "rtx-5070-laptop": {
        "memory_capacity": (8, "GB", "datasheet", NEOWIN_RTX50_LAPTOP),
        "memory_bandwidth": (384.0, "GB/s", "datasheet", FPSBENCH_5070L),
        "peak_flops.fp32": (21.63, "TFLOP/s", "derived", TINHTE_5070L),
        "peak_flops.bf16": (43.26, "TFLOP/s", "derived", TINHTE_5070L),
        "peak_flops.fp16": (43.26, "TFLOP/s", "derived", TINHTE_5070L),
        "peak_flops.fp4": (399, "TFLOP/s", "derived", NEOWIN_RTX50_LAPTOP),
        "sparse_peak_flops.fp4": (798, "TFLOP/s", "datasheet", NEOWIN_RTX50_LAPTOP),
        "tdp": (100, "W", "datasheet", NEOWIN_RTX50_LAPTOP),
    },
}
