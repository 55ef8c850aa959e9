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
GAMERS4_RTX30 = "https://4gamers.com.tw/news/detail/50420/nvidia-preparing-geforce-rtx-3080-with-ga102-220-gpu-and-12gb-memory-for-january-2022-launch"
HKEPC_3080TI = "https://h2.hkepc.com/20389/%E6%80%A7%E8%83%BD%E5%AA%B2%E7%BE%8E_RTX_3090__NVIDIA_GeForce_RTX_3080_Ti_FE_%E9%A1%AF%E7%A4%BA%E5%8D%A1"
SPHERON_GH200 = "https://spheron.network/blog/nvidia-gh200-guide"
NISHIKIOUT_GH200 = "https://nishikiout.net/entry/2023/08/09/143040"
#: The RTX 3070 Ti's FP32 rate and the RTX 5060 Laptop's clock (files that existed before; their peaks are new).
RIBALLKAA_5060L = "https://riballkaa.ru/?p=40514"
SYSRQMTS_3070TI = "https://sysrqmts.com/pt/gpus/compare/nvidia-geforce-rtx-2060-mobile-vs-nvidia-geforce-rtx-3070-ti"

#: The Xeon 6980P's AMX upper bounds (both of its memory files): 128 cores x AMX rate x 3.2 GHz all-core turbo.
XEON_6980P_AMX = {
    "peak_flops.bf16": (419.4, "TFLOP/s", "derived", "https://www.hardwareluxx.de/index.php/artikel/hardware/prozessoren/64561-intels-comeback-granite-rapids-mit-96-kernen-im-test.html"),
    "peak_flops.fp16": (419.4, "TFLOP/s", "derived", "https://techpowerup.com/326957/intel-granite-rapids-ucc-powering-xeon-6-6980p-detailed-up-to-132-cores-possible"),
    "peak_flops.int8": (838.9, "TOP/s", "derived", "https://wikimili.com/en/Advanced_Matrix_Extensions"),
}

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
    "rtx-3080-ti": {
        "memory_capacity": (12, "GB", "datasheet", HKEPC_3080TI),
        "memory_bandwidth": (912, "GB/s", "datasheet", GAMERS4_RTX30),
        "peak_flops.fp32": (34.1, "TFLOP/s", "derived", GAMERS4_RTX30),
        "peak_flops.bf16": (68.2, "TFLOP/s", "derived", GAMERS4_RTX30),
        "peak_flops.fp16": (68.2, "TFLOP/s", "derived", GAMERS4_RTX30),
        "tdp": (350, "W", "datasheet", GAMERS4_RTX30),
    },
    "gh200": {
        "memory_capacity": (96, "GB", "datasheet", SPHERON_GH200),
        "memory_bandwidth": (4, "TB/s", "datasheet", NISHIKIOUT_GH200),
    },
}
