"""One test per device added without a reference CSV row (issues 13 and 28): each figure against the value its source prints.

The table below was written while reading the sources (the URL is the one the spec file cites): the
value and unit as printed, and the figure's kind (``derived`` rows give the arithmetic in the spec
file's ``derivation``).  A spec file that drifts from what its source says, or a figure added
without a row here, fails its device's test.  These devices have no row in the shared reference CSV;
``test_catalog_reference.py`` checks the older ones against it.  The devices of issue 28 (GB300, Max 1550,
SN40L, laptop GPUs, more workstation cards and SoCs) are listed last.

Every catalog device either has a compute peak or says in its ``notes`` why it has none
(``No compute peak: <reason>``): a floor without a peak is the memory time alone, and the reader
should know whether that is a gap in the sources or a property of the device.
"""

from __future__ import annotations

import pytest

from roofline_decode import catalog
from roofline_decode.cli import main
from roofline_decode.units import BANDWIDTH_UNITS, BYTE_UNITS, FLOPS_UNITS, POWER_UNITS

from .helpers import ACCELERATOR_FILES, raw, spec
from .source_values_devices2 import DEVICES2_SOURCE_VALUES, RIBALLKAA_5060L, SYSRQMTS_3070TI, XEON_6980P_AMX

#: device id -> figure -> (value as printed, unit as printed, kind, source URL)
SOURCE_VALUES = {
    'rtx-3060-12gb': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'memory_bandwidth': (360.0, 'GB/s', 'datasheet', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'peak_flops.fp32': (12.74, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'peak_flops.bf16': (25.48, 'TFLOP/s', 'derived', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'peak_flops.fp16': (25.48, 'TFLOP/s', 'derived', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'tdp': (170, 'W', 'datasheet', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
    },
    'rtx-3060-ti': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'memory_bandwidth': (448, 'GB/s', 'datasheet', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'peak_flops.fp32': (16.2, 'TFLOP/s', 'datasheet', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'peak_flops.bf16': (32.4, 'TFLOP/s', 'derived', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'peak_flops.fp16': (32.4, 'TFLOP/s', 'derived', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'tdp': (200, 'W', 'datasheet', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
    },
    'rtx-3070': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
        'memory_bandwidth': (448, 'GB/s', 'datasheet', 'https://www.tomshardware.com/uk/news/nvidia-driver-geforce-rtx-3080-ti-ampere-gpu'),
        'peak_flops.fp32': (20.31, 'TFLOP/s', 'derived', 'https://cpu-gpu.alldbin.com/graphics-card-comparison/GeForce-RTX-3070-and-GeForce-RTX-2060-12-GB-comparison.html'),
        'peak_flops.bf16': (40.62, 'TFLOP/s', 'derived', 'https://cpu-gpu.alldbin.com/graphics-card-comparison/GeForce-RTX-3070-and-GeForce-RTX-2060-12-GB-comparison.html'),
        'peak_flops.fp16': (40.62, 'TFLOP/s', 'derived', 'https://cpu-gpu.alldbin.com/graphics-card-comparison/GeForce-RTX-3070-and-GeForce-RTX-2060-12-GB-comparison.html'),
        'tdp': (220, 'W', 'datasheet', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
    },
    'rtx-3070-ti': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://umatechnology.org/?p=774864'),
        'memory_bandwidth': (608, 'GB/s', 'datasheet', 'https://praeco-medii-aevi.de/nvidia-geforce-rtx-4070-ti-test-verkauft-um-mit-1440p-zu-spielen-und-4k-ist-nicht-einschuechternd'),
        'peak_flops.fp32': (21.75, 'TFLOP/s', 'datasheet', SYSRQMTS_3070TI),
        'peak_flops.bf16': (43.5, 'TFLOP/s', 'derived', SYSRQMTS_3070TI),
        'peak_flops.fp16': (43.5, 'TFLOP/s', 'derived', SYSRQMTS_3070TI),
        'tdp': (290, 'W', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
    },
    'rtx-3080': {
        'memory_capacity': (10, 'GB', 'datasheet', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
        'memory_bandwidth': (760, 'GB/s', 'datasheet', 'https://www.itcreations.com/nvidia-gpu/nvidia-geforce-rtx-3080-gpu'),
        'peak_flops.fp32': (29.8, 'TFLOP/s', 'datasheet', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
        'peak_flops.bf16': (59.6, 'TFLOP/s', 'derived', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
        'peak_flops.fp16': (59.6, 'TFLOP/s', 'derived', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
        'tdp': (320, 'W', 'datasheet', 'https://fudzilla.net/news/graphics/51457-nvidia-rtx-30-series-specifications-are-now-official'),
    },
    'rtx-3080-12gb': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://droix.net/geforce-rtx-3080-12-gb-launch-on-january-11/'),
        'memory_bandwidth': (912, 'GB/s', 'datasheet', 'https://droix.net/geforce-rtx-3080-12-gb-launch-on-january-11/'),
        'tdp': (350, 'W', 'datasheet', 'https://droix.net/geforce-rtx-3080-12-gb-launch-on-january-11/'),
        'peak_flops.fp32': (30.64, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-6x-geforce-rtx-5090-vs-nvidia-geforce-rtx-3080-12gb'),
        'peak_flops.bf16': (61.28, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/nvidia-6x-geforce-rtx-5090-vs-nvidia-geforce-rtx-3080-12gb'),
        'peak_flops.fp16': (61.28, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/nvidia-6x-geforce-rtx-5090-vs-nvidia-geforce-rtx-3080-12gb'),
    },
    'rtx-3090-ti': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://cpu-gpu.alldbin.com/graphics-card-comparison/GeForce-RTX-3090-Ti-and-GeForce-RTX-3060-12-GB-GA104-comparison.html'),
        'memory_bandwidth': (1008, 'GB/s', 'datasheet', 'https://cpu-gpu.alldbin.com/graphics-card-comparison/GeForce-RTX-3090-Ti-and-GeForce-RTX-3060-12-GB-GA104-comparison.html'),
        'peak_flops.fp32': (40.0, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'peak_flops.bf16': (80.0, 'TFLOP/s', 'derived', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'peak_flops.fp16': (80.0, 'TFLOP/s', 'derived', 'https://sysrqmts.com/vi/gpus/compare/nvidia-geforce-rtx-3060-vs-nvidia-geforce-rtx-3090-ti'),
        'tdp': (450, 'W', 'datasheet', 'https://cpu-gpu.alldbin.com/graphics-card-comparison/GeForce-RTX-3090-Ti-and-GeForce-RTX-3060-12-GB-GA104-comparison.html'),
    },
    'rtx-4060': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'memory_bandwidth': (272, 'GB/s', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'tdp': (115, 'W', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'onchip_cache': (24, 'MB', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'peak_flops.fp32': (15.11, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
        'peak_flops.bf16': (30.23, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
        'peak_flops.fp16': (30.23, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
        'peak_flops.fp8': (60.46, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
        'sparse_peak_flops.bf16': (60.46, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
        'sparse_peak_flops.fp16': (60.46, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
        'sparse_peak_flops.fp8': (120.91, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-4060-vs-nvidia-geforce-rtx-4060'),
    },
    'rtx-4060-ti-16gb': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'memory_bandwidth': (288, 'GB/s', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'peak_flops.fp32': (22, 'TFLOP/s', 'datasheet', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'peak_flops.bf16': (44, 'TFLOP/s', 'derived', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'peak_flops.fp16': (44, 'TFLOP/s', 'derived', 'https://www.guru3d.com/story/geforce-rtx-4060-ti-gpu-pictured/'),
        'tdp': (165, 'W', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
        'onchip_cache': (32, 'MB', 'datasheet', 'https://geektopia.es/es/technology/2023/05/18/articulos/amp/nvidia-anuncia-las-rtx-4060-y-rtx-4060-ti-desde-299-dolares.html'),
    },
    'rtx-4070': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'memory_bandwidth': (504, 'GB/s', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.fp32': (29.1, 'TFLOP/s', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.bf16': (58.2, 'TFLOP/s', 'derived', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.fp16': (58.2, 'TFLOP/s', 'derived', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'tdp': (200, 'W', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'onchip_cache': (36, 'MB', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
    },
    'rtx-4070-ti': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'memory_bandwidth': (504, 'GB/s', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.fp32': (40.1, 'TFLOP/s', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.bf16': (80.2, 'TFLOP/s', 'derived', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.fp16': (80.2, 'TFLOP/s', 'derived', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'tdp': (285, 'W', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'onchip_cache': (48, 'MB', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
    },
    'rtx-4080': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'memory_bandwidth': (717, 'GB/s', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.fp32': (48.7, 'TFLOP/s', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.bf16': (97.4, 'TFLOP/s', 'derived', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'peak_flops.fp16': (97.4, 'TFLOP/s', 'derived', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'tdp': (320, 'W', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
        'onchip_cache': (64, 'MB', 'datasheet', 'https://www.club386.com/complete-geforce-rtx-4070-specifications-reveal-a-frugal-599-gpu/'),
    },
    'rtx-4080-super': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.cnews.cz/clanky/specifikace-grafik-geforce-rtx-4000-super-uz-jsou-venku-vykon-muze-stoupnout-o-10-25/'),
        'memory_bandwidth': (736, 'GB/s', 'datasheet', 'https://www.cnews.cz/clanky/specifikace-grafik-geforce-rtx-4000-super-uz-jsou-venku-vykon-muze-stoupnout-o-10-25/'),
        'peak_flops.fp32': (52.22, 'TFLOP/s', 'datasheet', 'https://fpsbench.com/compare/gpu/amd-radeon-540-vs-nvidia-geforce-rtx-4080-super'),
        'peak_flops.bf16': (104.44, 'TFLOP/s', 'derived', 'https://fpsbench.com/compare/gpu/amd-radeon-540-vs-nvidia-geforce-rtx-4080-super'),
        'peak_flops.fp16': (104.44, 'TFLOP/s', 'derived', 'https://fpsbench.com/compare/gpu/amd-radeon-540-vs-nvidia-geforce-rtx-4080-super'),
        'tdp': (320, 'W', 'datasheet', 'https://www.cnews.cz/clanky/specifikace-grafik-geforce-rtx-4000-super-uz-jsou-venku-vykon-muze-stoupnout-o-10-25/'),
    },
    'rtx-5080': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'memory_bandwidth': (960, 'GB/s', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'peak_flops.bf16': (112.6, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp16': (112.6, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp8': (225.1, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp4': (900.5, 'TFLOP/s', 'derived', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'sparse_peak_flops.fp4': (1801, 'TFLOP/s', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'tdp': (360, 'W', 'datasheet', 'https://playeatsleep.fun/en/rtx-5000-specs'),
    },
    'rtx-5070-ti': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'memory_bandwidth': (896, 'GB/s', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'peak_flops.bf16': (87.9, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp16': (87.9, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp8': (175.8, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp4': (703.0, 'TFLOP/s', 'derived', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'sparse_peak_flops.fp4': (1406, 'TFLOP/s', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'tdp': (300, 'W', 'datasheet', 'https://playeatsleep.fun/en/rtx-5000-specs'),
    },
    'rtx-5070': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'memory_bandwidth': (672, 'GB/s', 'datasheet', 'https://playeatsleep.fun/en/rtx-5000-specs'),
        'peak_flops.bf16': (61.7, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp16': (61.7, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp8': (123.5, 'TFLOP/s', 'derived', 'https://github.com/lamonoai/gpumap/blob/8d5e174f6f25a520db1ada126d4c1fa5c5eb6df9/nvidia/GPU.md'),
        'peak_flops.fp4': (494.0, 'TFLOP/s', 'derived', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'sparse_peak_flops.fp4': (988, 'TFLOP/s', 'datasheet', 'https://www.tweaktown.com/news/102469/nvidia-geforce-rtx-50-series-specs-pricing-and-performance-plan-that-upgrade-today/index.html'),
        'tdp': (250, 'W', 'datasheet', 'https://playeatsleep.fun/en/rtx-5000-specs'),
    },
    'rtx-5060-ti-16gb': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://expertspeak.ru/nvidia-rtx-5060-ti-poyavilas-v-dokumentah-ritejlerov/'),
        'memory_bandwidth': (448, 'GB/s', 'datasheet', 'https://expertspeak.ru/nvidia-rtx-5060-ti-poyavilas-v-dokumentah-ritejlerov/'),
        'tdp': (180, 'W', 'datasheet', 'https://expertspeak.ru/nvidia-rtx-5060-ti-poyavilas-v-dokumentah-ritejlerov/'),
        'peak_flops.bf16': (47.41, 'TFLOP/s', 'derived', 'https://cputronic.com/gpu/compare/nvidia-geforce-rtx-5060-ti-16-gb-vs-nvidia-geforce-rtx-2060-super'),
        'peak_flops.fp16': (47.41, 'TFLOP/s', 'derived', 'https://cputronic.com/gpu/compare/nvidia-geforce-rtx-5060-ti-16-gb-vs-nvidia-geforce-rtx-2060-super'),
    },
    'rtx-a4000': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-graphics-card-for-professional-video-editing.html'),
        'memory_bandwidth': (448, 'GB/s', 'datasheet', 'https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-graphics-card-for-professional-video-editing.html'),
        'peak_flops.fp32': (19.2, 'TFLOP/s', 'datasheet', 'https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-graphics-card-for-professional-video-editing.html'),
        'peak_flops.fp16': (76.7, 'TFLOP/s', 'derived', 'https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-graphics-card-for-professional-video-editing.html'),
        'sparse_peak_flops.fp16': (153.4, 'TFLOP/s', 'datasheet', 'https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-graphics-card-for-professional-video-editing.html'),
        'tdp': (140, 'W', 'datasheet', 'https://www.ecer.com/corp/details-uuuedqa-p1bsb03-pci-express-3-0-x16-nvidia-rtx-a4000-16g-graphics-card-for-professional-video-editing.html'),
    },
    'rtx-a6000': {
        'memory_capacity': (48, 'GB', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
        'memory_bandwidth': (768.0, 'GB/s', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
        'peak_flops.fp32': (38.71, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
        'peak_flops.bf16': (154.8, 'TFLOP/s', 'datasheet', 'https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf'),
        'peak_flops.fp16': (154.8, 'TFLOP/s', 'derived', 'https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf'),
        'sparse_peak_flops.bf16': (309.6, 'TFLOP/s', 'datasheet', 'https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf'),
        'tdp': (300, 'W', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
    },
    'a40': {
        'memory_capacity': (48, 'GB', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'usable_memory': (46068, 'MiB', 'measured', 'https://github.com/chatdoc-com/OCRFlux/issues/64'),
        'memory_bandwidth': (695.8, 'GB/s', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'peak_flops.fp32': (37.42, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'peak_flops.tf32': (74.83, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.bf16': (149.67, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.fp16': (149.67, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.int8': (299.34, 'TOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.tf32': (149.67, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.bf16': (299.34, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.fp16': (299.34, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.int8': (598.67, 'TOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'tdp': (300, 'W', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
    },
    'l40': {
        'memory_capacity': (48, 'GB', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'memory_bandwidth': (864, 'GB/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.fp32': (90.52, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.tf32': (181.03, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.bf16': (362.07, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.fp16': (362.07, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.fp8': (724.13, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'peak_flops.int8': (724.13, 'TOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.tf32': (362.07, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.bf16': (724.13, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.fp16': (724.13, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.fp8': (1448.26, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'sparse_peak_flops.int8': (1448.26, 'TOP/s', 'derived', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
        'tdp': (300, 'W', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-l40-vs-nvidia-a40'),
    },
    'rtx-6000-ada': {
        'memory_capacity': (48, 'GB', 'datasheet', 'https://www.yottalabs.ai/post/which-nvidia-rtx-6000-gpu-is-right-for-you-in-2026'),
        'memory_bandwidth': (960, 'GB/s', 'datasheet', 'https://www.yottalabs.ai/post/which-nvidia-rtx-6000-gpu-is-right-for-you-in-2026'),
        'peak_flops.fp32': (91.1, 'TFLOP/s', 'datasheet', 'https://www.grafikkarten.com/de/news/nvidia-rtx-6000-grafikkarte-der-ada-generation'),
        'peak_flops.bf16': (364.4, 'TFLOP/s', 'derived', 'https://www.grafikkarten.com/de/news/nvidia-rtx-6000-grafikkarte-der-ada-generation'),
        'peak_flops.fp16': (364.4, 'TFLOP/s', 'derived', 'https://www.grafikkarten.com/de/news/nvidia-rtx-6000-grafikkarte-der-ada-generation'),
        'tdp': (300, 'W', 'datasheet', 'https://www.hardwareluxx.de/index.php/news/hardware/grafikkarten/59532-l40-und-rtx-6000-ada-generation-sind-die-ersten-profi-karten-der-neuen-generation.html'),
    },
    'rtx-pro-6000-blackwell': {
        'memory_capacity': (96, 'GB', 'datasheet', 'https://hardware-corner.net/rtx-5090-vs-rtx-pro-6000-spec-comparison-20250321'),
        'memory_bandwidth': (1792, 'GB/s', 'datasheet', 'https://hardware-corner.net/rtx-5090-vs-rtx-pro-6000-spec-comparison-20250321'),
        'peak_flops.fp32': (126, 'TFLOP/s', 'datasheet', 'https://technical.city/en/video/RTX-4000-Ada-Generation-vs-RTX-PRO-6000-Blackwell'),
        'peak_flops.bf16': (503.8, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-pro-6000-blackwell-vs-amd-radeon-pro-duo-polaris'),
        'peak_flops.fp16': (503.8, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-pro-6000-blackwell-vs-amd-radeon-pro-duo-polaris'),
        'peak_flops.fp8': (1.01, 'PFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-pro-6000-blackwell-vs-amd-radeon-pro-duo-polaris'),
        'sparse_peak_flops.bf16': (1.01, 'PFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-pro-6000-blackwell-vs-amd-radeon-pro-duo-polaris'),
        'sparse_peak_flops.fp16': (1.01, 'PFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-pro-6000-blackwell-vs-amd-radeon-pro-duo-polaris'),
        'sparse_peak_flops.fp8': (2.02, 'PFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-pro-6000-blackwell-vs-amd-radeon-pro-duo-polaris'),
        'tdp': (600, 'W', 'datasheet', 'https://hardware-corner.net/rtx-5090-vs-rtx-pro-6000-spec-comparison-20250321'),
        'onchip_cache': (128, 'MB', 'datasheet', 'https://technical.city/en/video/RTX-4000-Ada-Generation-vs-RTX-PRO-6000-Blackwell'),
    },
    'rtx-pro-6000-blackwell-max-q': {
        'memory_capacity': (96, 'GB', 'datasheet', 'https://www.yottalabs.ai/post/which-nvidia-rtx-6000-gpu-is-right-for-you-in-2026'),
        'memory_bandwidth': (1792, 'GB/s', 'datasheet', 'https://ferreiradozezere.net/entretenimento/a-mansao-na-qual-adele-viveu-nao-e-vendida-por-ser-assombrada/2388/?random-post=1'),
        'peak_flops.fp32': (110.1, 'TFLOP/s', 'datasheet', 'https://technical.city/en/video/RTX-4000-SFF-Ada-Generation-vs-RTX-PRO-6000-Blackwell-Max-Q'),
        'tdp': (300, 'W', 'datasheet', 'https://technical.city/en/video/RTX-4000-SFF-Ada-Generation-vs-RTX-PRO-6000-Blackwell-Max-Q'),
        'peak_flops.bf16': (440.4, 'TFLOP/s', 'derived', 'https://technical.city/en/video/RTX-4000-SFF-Ada-Generation-vs-RTX-PRO-6000-Blackwell-Max-Q'),
        'peak_flops.fp16': (440.4, 'TFLOP/s', 'derived', 'https://technical.city/en/video/RTX-4000-SFF-Ada-Generation-vs-RTX-PRO-6000-Blackwell-Max-Q'),
    },
    'rtx-pro-6000-blackwell-server': {
        'memory_capacity': (96, 'GB', 'datasheet', 'https://www.yottalabs.ai/post/which-nvidia-rtx-6000-gpu-is-right-for-you-in-2026'),
        'memory_bandwidth': (1792, 'GB/s', 'datasheet', 'https://www.yottalabs.ai/post/which-nvidia-rtx-6000-gpu-is-right-for-you-in-2026'),
        'peak_flops.fp32': (125, 'TFLOP/s', 'datasheet', 'https://www.topcpu.net/es/news/nvidia-launches-96gb-rtx-5090-model-with-a-whopping-price-tag-of-10000'),
        'peak_flops.bf16': (500, 'TFLOP/s', 'derived', 'https://www.topcpu.net/es/news/nvidia-launches-96gb-rtx-5090-model-with-a-whopping-price-tag-of-10000'),
        'peak_flops.fp16': (500, 'TFLOP/s', 'derived', 'https://www.topcpu.net/es/news/nvidia-launches-96gb-rtx-5090-model-with-a-whopping-price-tag-of-10000'),
    },
    'tesla-p40': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
        'memory_bandwidth': (694.3, 'GB/s', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
        'peak_flops.fp32': (11.76, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
        'tdp': (250, 'W', 'datasheet', 'https://sysrqmts.com/es/gpus/compare/nvidia-rtx-a6000-vs-nvidia-tesla-p40'),
    },
    'quadro-rtx-6000': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'memory_bandwidth': (672.0, 'GB/s', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'peak_flops.fp32': (16.31, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'peak_flops.fp16': (32.62, 'TFLOP/s', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
        'tdp': (260, 'W', 'datasheet', 'https://sysrqmts.com/fr/gpus/compare/nvidia-a40-pcie-vs-nvidia-quadro-rtx-6000'),
    },
    'dgx-spark': {
        'memory_capacity': (128, 'GB', 'datasheet', 'https://ai-infrastructure.net/dgx-spark/'),
        'memory_bandwidth': (273, 'GB/s', 'datasheet', 'https://ai-infrastructure.net/dgx-spark/'),
        'peak_flops.fp32': (31, 'TFLOP/s', 'datasheet', 'https://meterpreter.org/a-supercomputer-on-your-desk-nvidia-unveils-the-dgx-spark-ai-superchip'),
        'peak_flops.fp4': (500, 'TFLOP/s', 'derived', 'https://ai-infrastructure.net/dgx-spark/'),
        'sparse_peak_flops.fp4': (1000, 'TFLOP/s', 'datasheet', 'https://ai-infrastructure.net/dgx-spark/'),
        'tdp': (140, 'W', 'datasheet', 'https://ai-infrastructure.net/dgx-spark/'),
    },
    'jetson-agx-thor': {
        'memory_capacity': (128, 'GB', 'datasheet', 'https://developer.ridgerun.com/wiki/index.php/NVIDIA_Jetson_AGX_Thor/Introduction/SoM_Overview'),
        'memory_bandwidth': (273, 'GB/s', 'datasheet', 'https://developer.ridgerun.com/wiki/index.php/NVIDIA_Jetson_AGX_Thor/Introduction/SoM_Overview'),
        'peak_flops.bf16': (257.2, 'TFLOP/s', 'derived', 'https://torring.dev/blog/2026/rtx-spark-throttling/'),
        'peak_flops.fp16': (257.2, 'TFLOP/s', 'derived', 'https://torring.dev/blog/2026/rtx-spark-throttling/'),
        'peak_flops.fp4': (1035, 'TFLOP/s', 'derived', 'https://learnaivisually.com/ai-explained/jetson-thor-edge-blackwell'),
        'tdp': (130, 'W', 'datasheet', 'https://learnaivisually.com/ai-explained/jetson-thor-edge-blackwell'),
    },
    'jetson-agx-orin-64gb': {
        'memory_capacity': (64, 'GB', 'datasheet', 'https://static.generation-robots.com/media/Jetson-AGX-Orin-Data-Sheet.pdf'),
        'memory_bandwidth': (204.8, 'GB/s', 'datasheet', 'https://static.generation-robots.com/media/Jetson-AGX-Orin-Data-Sheet.pdf'),
        'peak_flops.bf16': (42.5, 'TFLOP/s', 'derived', 'http://mzph.cn/web/30785.shtml'),
        'peak_flops.fp16': (42.5, 'TFLOP/s', 'derived', 'http://mzph.cn/web/30785.shtml'),
        'peak_flops.int8': (137.5, 'TOP/s', 'derived', 'https://blog.us.fixstars.com/?p=1855&preview=true'),
        'sparse_peak_flops.int8': (275, 'TOP/s', 'datasheet', 'https://blog.us.fixstars.com/?p=1855&preview=true'),
        'tdp': (60, 'W', 'datasheet', 'https://blog.us.fixstars.com/?p=1855&preview=true'),
    },
    'jetson-orin-nano-super': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
        'memory_bandwidth': (102, 'GB/s', 'datasheet', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
        'peak_flops.bf16': (16.75, 'TFLOP/s', 'derived', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
        'peak_flops.fp16': (16.75, 'TFLOP/s', 'derived', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
        'peak_flops.int8': (33.5, 'TOP/s', 'derived', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
        'sparse_peak_flops.int8': (67, 'TOP/s', 'datasheet', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
        'tdp': (25, 'W', 'datasheet', 'https://www.brojogopalsapui.com/dark/ai-foundations/sub_contents/AI_hardware/jetson_orin_nano_dark.html'),
    },
    'rx-7900-xtx': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'memory_bandwidth': (960, 'GB/s', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'peak_flops.fp32': (61.44, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/amd-radeon-rx-9070-xt-vs-amd-radeon-rx-7900-xtx'),
        'peak_flops.fp16': (122.88, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/amd-radeon-rx-9070-xt-vs-amd-radeon-rx-7900-xtx'),
        'tdp': (355, 'W', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'onchip_cache': (96, 'MB', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
    },
    'rx-7900-xt': {
        'memory_capacity': (20, 'GB', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'memory_bandwidth': (800, 'GB/s', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'peak_flops.fp32': (52, 'TFLOP/s', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'peak_flops.fp16': (103.2, 'TFLOP/s', 'derived', 'https://www.hardwaredb.net/radeon-rx-7900-xt-benchmark'),
        'tdp': (315, 'W', 'datasheet', 'https://www.hardwaredb.net/radeon-rx-7900-xt-benchmark'),
        'onchip_cache': (80, 'MB', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
    },
    'rx-6950-xt': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'memory_bandwidth': (576, 'GB/s', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'peak_flops.fp32': (23.65, 'TFLOP/s', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'peak_flops.fp16': (47.31, 'TFLOP/s', 'datasheet', 'https://swavedigest.com/amd-radeon-rx-6950-xt-6760-xt-and-6650-xt-deliver-faster-memory-and-clocks-to-gamers'),
        'tdp': (335, 'W', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
        'onchip_cache': (128, 'MB', 'datasheet', 'https://www.guru3d.com/review/powercolor-radeon-rx-7900-xtx-hellhound-spectral-white-review/page-4/'),
    },
    'rx-6900-xt': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.tomshardware.com/uk/news/nvidia-driver-geforce-rtx-3080-ti-ampere-gpu'),
        'memory_bandwidth': (512, 'GB/s', 'datasheet', 'https://www.tomshardware.com/uk/news/nvidia-driver-geforce-rtx-3080-ti-ampere-gpu'),
        'peak_flops.fp32': (23.04, 'TFLOP/s', 'datasheet', 'http://www.topcpu.net/en/gpu-c/radeon-hd-7970-ghz-edition-vs-radeon-rx-6900-xt'),
        'peak_flops.fp16': (46.08, 'TFLOP/s', 'datasheet', 'http://www.topcpu.net/en/gpu-c/radeon-hd-7970-ghz-edition-vs-radeon-rx-6900-xt'),
        'tdp': (300, 'W', 'datasheet', 'https://www.tomshardware.com/uk/news/nvidia-driver-geforce-rtx-3080-ti-ampere-gpu'),
        'onchip_cache': (128, 'MB', 'datasheet', 'https://www.tomshardware.com/uk/news/nvidia-driver-geforce-rtx-3080-ti-ampere-gpu'),
    },
    'rx-9070-xt': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
        'memory_bandwidth': (640, 'GB/s', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
        'peak_flops.fp32': (48.66, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/amd-radeon-rx-9070-xt-vs-amd-radeon-rx-7900-xtx'),
        'peak_flops.fp16': (97.32, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/amd-radeon-rx-9070-xt-vs-amd-radeon-rx-7900-xtx'),
        'tdp': (304, 'W', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
        'onchip_cache': (64, 'MB', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
    },
    'rx-9070': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
        'memory_bandwidth': (640, 'GB/s', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
        'peak_flops.fp32': (44.24, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/amd-radeon-rx-9070-vs-xfx-radeon-rx-6800-xt-speedster-merc-319'),
        'peak_flops.fp16': (88.47, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/amd-radeon-rx-9070-vs-xfx-radeon-rx-6800-xt-speedster-merc-319'),
        'tdp': (220, 'W', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
        'onchip_cache': (64, 'MB', 'datasheet', 'https://multiplayer.it/notizie/amd-radeon-rx-9070-xt-rx-9070-specifiche.html'),
    },
    'rx-7800-xt': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.purepc.pl/amd-radeon-rx-7800-xt-powercolor-opublikowal-pelna-specyfikacje-nadchodzacej-karty-graficznej-rdna-3'),
        'memory_bandwidth': (576, 'GB/s', 'datasheet', 'https://www.purepc.pl/amd-radeon-rx-7800-xt-powercolor-opublikowal-pelna-specyfikacje-nadchodzacej-karty-graficznej-rdna-3'),
        'peak_flops.fp32': (37.32, 'TFLOP/s', 'datasheet', 'https://www.topcpu.net/es/gpu-c/radeon-rx-7800-xt-vs-radeon-hd-6970'),
        'peak_flops.fp16': (74.65, 'TFLOP/s', 'datasheet', 'https://www.topcpu.net/es/gpu-c/radeon-rx-7800-xt-vs-radeon-hd-6970'),
        'tdp': (263, 'W', 'datasheet', 'https://www.sportskeeda.com/gaming-tech/news-amd-radeon-rx-7800-xt-specs-prices-performance'),
    },
    'radeon-pro-w6900x': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'memory_bandwidth': (512, 'GB/s', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'peak_flops.fp32': (22.2, 'TFLOP/s', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'peak_flops.fp16': (44.4, 'TFLOP/s', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'tdp': (300, 'W', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
    },
    'radeon-pro-w6800x': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'memory_bandwidth': (512, 'GB/s', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'peak_flops.fp32': (16, 'TFLOP/s', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'peak_flops.fp16': (32, 'TFLOP/s', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
        'tdp': (300, 'W', 'datasheet', 'https://leganerd.com/2021/08/03/apple-e-amd-presentano-le-nuove-schede-video-dei-mac-pro/'),
    },
    'ryzen-ai-max-395': {
        'memory_capacity': (128, 'GB', 'datasheet', 'https://modelfit.io/blog/amd-strix-halo-local-ai-128gb/'),
        'memory_bandwidth': (256, 'GB/s', 'derived', 'https://spawningpoint.com/article/amd-strix-halo-review-2026-is-the-ryzen-ai-max-395-the-ai-inference-answer'),
        'peak_flops.fp32': (14.85, 'TFLOP/s', 'datasheet', 'https://fpsbench.com/compare/gpu/amd-radeon-8060s-vs-amd-radeon-r9-m295x'),
        'peak_flops.fp16': (59.39, 'TFLOP/s', 'derived', 'https://fpsbench.com/compare/gpu/amd-radeon-8060s-vs-amd-radeon-r9-m295x'),
        'tdp': (55, 'W', 'datasheet', 'https://www.purepc.pl/amd-ryzen-ai-max-395-apu-strix-halo-test-recenzja-opinia'),
    },
    'arc-a770': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'memory_bandwidth': (560, 'GB/s', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'tdp': (225, 'W', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'peak_flops.bf16': (137.6, 'TFLOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
        'peak_flops.fp16': (137.6, 'TFLOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
        'peak_flops.int8': (275.3, 'TOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
    },
    'arc-a750': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'memory_bandwidth': (512, 'GB/s', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'tdp': (225, 'W', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'peak_flops.bf16': (117.6, 'TFLOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
        'peak_flops.fp16': (117.6, 'TFLOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
        'peak_flops.int8': (235.1, 'TOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
    },
    'arc-a580': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'memory_bandwidth': (512, 'GB/s', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'peak_flops.fp32': (12.29, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/intel-arc-b580-vs-intel-arc-a580'),
        'peak_flops.fp16': (24.58, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/intel-arc-b580-vs-intel-arc-a580'),
        'tdp': (185, 'W', 'datasheet', 'https://hmc-tech.com/gpu/intel-arc-b580-vs-intel-arc-a580'),
    },
    'arc-a380': {
        'memory_capacity': (6, 'GB', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'memory_bandwidth': (186, 'GB/s', 'datasheet', 'https://www.svethardware.cz/intel-zverejnil-oficialni-specifikace-grafickych-karet-arc/58344'),
        'tdp': (75, 'W', 'datasheet', 'https://www.hardwareluxx.de/index.php/news/hardware/grafikkarten/58908-intel-arc-a380-startet-in-china-und-erstes-custom-modell-zeigt-sich.html'),
        'peak_flops.bf16': (32.77, 'TFLOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
        'peak_flops.fp16': (32.77, 'TFLOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
        'peak_flops.int8': (65.54, 'TOP/s', 'derived', 'https://m.yd166.com/jingyan/5611804206_3.html'),
    },
    'arc-b580': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-arc-b580-vs-intel-uhd-graphics-730'),
        'memory_bandwidth': (456.0, 'GB/s', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-arc-b580-vs-intel-uhd-graphics-730'),
        'peak_flops.fp32': (13.67, 'TFLOP/s', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-arc-b580-vs-intel-uhd-graphics-730'),
        'peak_flops.fp16': (27.34, 'TFLOP/s', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-arc-b580-vs-intel-uhd-graphics-730'),
        'tdp': (190, 'W', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-arc-b580-vs-intel-uhd-graphics-730'),
        'onchip_cache': (18, 'MB', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-arc-b580-vs-intel-uhd-graphics-730'),
    },
    'm1-pro': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://semiwiki.com/forum/index.php?goto/post&id=48836'),
        'memory_bandwidth': (200, 'GB/s', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'peak_flops.fp16': (5.31, 'TFLOP/s', 'derived', 'https://github.com/philipturner/metal-benchmarks'),
    },
    'm2': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'memory_bandwidth': (100, 'GB/s', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'peak_flops.fp16': (3.58, 'TFLOP/s', 'derived', 'https://github.com/philipturner/metal-benchmarks'),
    },
    'm2-pro': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'memory_bandwidth': (200, 'GB/s', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'peak_flops.fp16': (6.8, 'TFLOP/s', 'derived', 'https://github.com/philipturner/metal-benchmarks'),
    },
    'm3': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'memory_bandwidth': (100, 'GB/s', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'peak_flops.fp16': (3.58, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple_10_core_m3'),
    },
    'm3-pro': {
        'memory_capacity': (36, 'GB', 'datasheet', 'https://abachy.com/news/apples-m3-series-chips-enhanced-performance-and-advanced-gpus'),
        'memory_bandwidth': (150, 'GB/s', 'datasheet', 'https://www.macrumors.com/2023/10/31/apple-m3-pro-less-memory-bandwidth/'),
        'peak_flops.fp32': (6.44, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/apple-32-core-m4-max-vs-apple-18-core-m3-pro'),
        'peak_flops.fp16': (6.44, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-32-core-m4-max-vs-apple-18-core-m3-pro'),
    },
    'm4': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://mactrast.com/?p=168123'),
        'memory_bandwidth': (120, 'GB/s', 'datasheet', 'https://mactrast.com/?p=168123'),
        'peak_flops.fp32': (3.76, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/apple-10-core-m4-vs-apple-30-core-m3-max'),
        'peak_flops.fp16': (3.76, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-10-core-m4-vs-apple-30-core-m3-max'),
    },
    'm4-pro': {
        'memory_capacity': (64, 'GB', 'datasheet', 'https://techmoran.com/2024/10/31/apple-unveils-its-most-powerful-chips-the-m4-pro-and-m4-max/?amp=1'),
        'memory_bandwidth': (273, 'GB/s', 'datasheet', 'https://techmoran.com/2024/10/31/apple-unveils-its-most-powerful-chips-the-m4-pro-and-m4-max/?amp=1'),
        'peak_flops.fp16': (7.53, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-20-core-m4-pro-vs-intel-hd-620-1000mhz'),
    },
    'm5': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://www.lowyat.net/2025/369913/apple-m5'),
        'memory_bandwidth': (153, 'GB/s', 'datasheet', 'https://www.lowyat.net/2025/369913/apple-m5'),
        'peak_flops.fp32': (4.45, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/apple-10-core-m4-fl-vs-apple-10-core-m5-fl'),
        'peak_flops.bf16': (17.82, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-10-core-m4-fl-vs-apple-10-core-m5-fl'),
        'peak_flops.fp16': (17.82, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-10-core-m4-fl-vs-apple-10-core-m5-fl'),
    },
    'm5-max': {
        'memory_capacity': (128, 'GB', 'datasheet', 'https://thedailyscout.com/s/RBeSWv0Jfmg'),
        'memory_bandwidth': (614, 'GB/s', 'datasheet', 'https://thedailyscout.com/s/RBeSWv0Jfmg'),
    },
    'm4-max-32c': {
        'memory_capacity': (36, 'GB', 'datasheet', 'https://huggingface.co/datasets/Yinxing/LLM_Dataset/blob/main/MacPro.txt'),
        'memory_bandwidth': (410, 'GB/s', 'datasheet', 'https://goodnewsapodcast.com/apples-m4-m4-pro-and-m4-max-compared-to-past-generations-and-to-each-other'),
        'peak_flops.fp32': (13.74, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/apple-32-core-m4-max-vs-apple-18-core-m3-pro'),
        'peak_flops.fp16': (13.75, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-32-core-m4-max-vs-apple-18-core-m3-pro'),
    },
    'm3-max-30c': {
        'memory_capacity': (36, 'GB', 'datasheet', 'https://huggingface.co/spaces/Vokturz/can-it-run-llm/discussions/11'),
        'memory_bandwidth': (300, 'GB/s', 'datasheet', 'https://www.macrumors.com/2023/10/31/apple-m3-pro-less-memory-bandwidth/'),
        'peak_flops.fp32': (10.74, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/apple-10-core-m4-vs-apple-30-core-m3-max'),
        'peak_flops.fp16': (10.74, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/apple-10-core-m4-vs-apple-30-core-m3-max'),
    },
    'epyc-9004-genoa': {
        'memory_capacity': (768, 'GB', 'derived', 'https://tech2sports.com/amd-epyc-genoa-2'),
        'memory_bandwidth': (460.8, 'GB/s', 'derived', 'https://en.wikichip.org/w/index.php?title=amd/cores/genoa&oldid=101546&diff=prev'),
    },
    'epyc-9005-turin': {
        'memory_capacity': (768, 'GB', 'derived', 'https://www.tweaktown.com/news/97071/amds-next-gen-epyc-9845-turin-cpu-160-cores-320-threads-with-640mb-cache-500w-power/index.html'),
        'memory_bandwidth': (576, 'GB/s', 'derived', 'https://www.tweaktown.com/news/97071/amds-next-gen-epyc-9845-turin-cpu-160-cores-320-threads-with-640mb-cache-500w-power/index.html'),
    },
    'xeon-6980p': {
        'memory_capacity': (768, 'GB', 'derived', 'https://rillor.com/insights/granite-rapids-vs-turin-cpu-pairing-gpu-servers'),
        'memory_bandwidth': (614.4, 'GB/s', 'datasheet', 'https://technosports.co.in/intel-next-gen-lga-7529-xeon-cpus'),
        **XEON_6980P_AMX,
        'tdp': (500, 'W', 'datasheet', 'https://rillor.com/insights/granite-rapids-vs-turin-cpu-pairing-gpu-servers'),
    },
    'xeon-6980p-mrdimm': {
        'memory_capacity': (768, 'GB', 'derived', 'https://rillor.com/insights/granite-rapids-vs-turin-cpu-pairing-gpu-servers'),
        'memory_bandwidth': (844.8, 'GB/s', 'derived', 'https://wccftech.com/intel-xeon-6900p-granite-rapids-p-core-launched-128-cores-tackles-amd-epyc-turin/amp'),
        **XEON_6980P_AMX,
        'tdp': (500, 'W', 'datasheet', 'https://rillor.com/insights/granite-rapids-vs-turin-cpu-pairing-gpu-servers'),
    },
    'xeon-sapphire-rapids': {
        'memory_capacity': (512, 'GB', 'derived', 'https://technosports.co.in/intel-next-gen-lga-7529-xeon-cpus'),
        'memory_bandwidth': (307.2, 'GB/s', 'datasheet', 'https://technosports.co.in/intel-next-gen-lga-7529-xeon-cpus'),
    },
    # issue 28: devices added with their sources (laptop GPUs at the top of NVIDIA's ranges)
    'gb300': {
        'memory_capacity': (288, 'GB', 'datasheet', 'https://awesomeagents.ai/hardware/nvidia-gb300-nvl72'),
        'memory_bandwidth': (8, 'TB/s', 'derived', 'https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300'),
        'peak_flops.fp32': (0.08, 'PFLOP/s', 'datasheet', 'https://verda.com/blog/gb300-nvl72-architecture'),
        'peak_flops.tf32': (1.25, 'PFLOP/s', 'datasheet', 'https://verda.com/blog/gb300-nvl72-architecture'),
        'peak_flops.bf16': (2.5, 'PFLOP/s', 'datasheet', 'https://verda.com/blog/gb300-nvl72-architecture'),
        'peak_flops.fp16': (2.5, 'PFLOP/s', 'datasheet', 'https://verda.com/blog/gb300-nvl72-architecture'),
        'peak_flops.fp8': (5, 'PFLOP/s', 'derived', 'https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300'),
        'peak_flops.fp4': (15, 'PFLOP/s', 'derived', 'https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300'),
        'sparse_peak_flops.fp8': (10, 'PFLOP/s', 'derived', 'https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300'),
        'sparse_peak_flops.fp4': (20, 'PFLOP/s', 'derived', 'https://vendordeep.com/report/nvidia-launches-blackwell-ultra-gb300'),
        'tdp': (1.4, 'kW', 'datasheet', 'https://verda.com/blog/gb300-nvl72-architecture'),
        'interconnect.bandwidth': (1.8, 'TB/s', 'datasheet', 'https://verda.com/blog/gb300-nvl72-architecture'),
        'interconnect.domain_size': (72, 'devices', 'datasheet',
                                     'https://docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/components.html'),
        'scale_out.bandwidth': (800, 'Gbit/s', 'derived',
                                'https://cloudnews.tech/nvidia-connectx-8-supernic-the-new-generation-of-pcie-gen6-nics-at-800g-for-the-ai-era'),
    },
    'max-1550': {
        'memory_capacity': (128, 'GB', 'datasheet', 'https://glennklockwood.com/garden/processors/pvc'),
        'memory_bandwidth': (3.2768, 'TB/s', 'datasheet', 'https://glennklockwood.com/garden/processors/pvc'),
        'peak_flops.fp32': (52.43, 'TFLOP/s', 'derived', 'https://glennklockwood.com/garden/processors/pvc'),
        'peak_flops.bf16': (838.9, 'TFLOP/s', 'derived', 'https://glennklockwood.com/garden/processors/pvc'),
        'peak_flops.fp16': (838.9, 'TFLOP/s', 'derived', 'https://glennklockwood.com/garden/processors/pvc'),
        'tdp': (600, 'W', 'datasheet', 'https://glennklockwood.com/garden/processors/pvc'),
    },
    'sn40l': {
        'memory_capacity': (64, 'GB', 'datasheet', 'https://www.sgpjbg.com/baogao/465014.html'),
        'memory_bandwidth': (1.6, 'TB/s', 'derived', 'https://www.sgpjbg.com/baogao/465014.html'),
        'peak_flops.bf16': (638, 'TFLOP/s', 'datasheet', 'https://www.sgpjbg.com/baogao/465014.html'),
    },
    'rtx-4000-ada': {
        'memory_capacity': (20, 'GB', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'memory_bandwidth': (360.0, 'GB/s', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'peak_flops.fp32': (26.73, 'TFLOP/s', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'peak_flops.bf16': (106.91, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-5000-ada-vs-nvidia-rtx-4000-ada'),
        'peak_flops.fp16': (106.91, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-5000-ada-vs-nvidia-rtx-4000-ada'),
        'tdp': (130, 'W', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'onchip_cache': (48, 'MB', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
    },
    'rtx-5000-ada': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'memory_bandwidth': (576.0, 'GB/s', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'peak_flops.fp32': (65.28, 'TFLOP/s', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'peak_flops.bf16': (261.12, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-5000-ada-vs-nvidia-rtx-4000-ada'),
        'peak_flops.fp16': (261.12, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-rtx-5000-ada-vs-nvidia-rtx-4000-ada'),
        'tdp': (250, 'W', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
        'onchip_cache': (72, 'MB', 'datasheet', 'https://topcpu.net/en/gpu-c/rtx-4000-ada-generation-vs-rtx-5000-ada-generation'),
    },
    'rtx-4070-ti-super': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
        'memory_bandwidth': (672.3, 'GB/s', 'datasheet', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
        'peak_flops.fp32': (44.1, 'TFLOP/s', 'datasheet', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
        'peak_flops.bf16': (88.2, 'TFLOP/s', 'derived', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
        'peak_flops.fp16': (88.2, 'TFLOP/s', 'derived', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
        'tdp': (285, 'W', 'datasheet', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
        'onchip_cache': (48, 'MB', 'datasheet', 'https://www.topcpu.net/vi/gpu-c/geforce-rtx-4070-ti-super-vs-geforce-rtx-2060-tu104'),
    },
    'rtx-4090-laptop': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'memory_bandwidth': (640.0, 'GB/s', 'derived', 'https://www.notebookcheck.pl/NVIDIA-NVIDIA-GeForce-RTX-4050-Laptop-GPU.771530.0.html'),
        'peak_flops.fp32': (39.69, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.bf16': (79.38, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.fp16': (79.38, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'tdp': (150, 'W', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
    },
    'rtx-4080-laptop': {
        'memory_capacity': (12, 'GB', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'memory_bandwidth': (480.0, 'GB/s', 'derived', 'https://www.notebookcheck.pl/NVIDIA-NVIDIA-GeForce-RTX-4050-Laptop-GPU.771530.0.html'),
        'peak_flops.fp32': (33.85, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.bf16': (67.7, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.fp16': (67.7, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'tdp': (150, 'W', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
    },
    'rtx-4070-laptop': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'memory_bandwidth': (256.0, 'GB/s', 'derived', 'https://www.notebookcheck.pl/NVIDIA-NVIDIA-GeForce-RTX-4050-Laptop-GPU.771530.0.html'),
        'peak_flops.fp32': (20.04, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.bf16': (40.08, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.fp16': (40.08, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'tdp': (115, 'W', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
    },
    'rtx-4060-laptop': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'memory_bandwidth': (256.0, 'GB/s', 'derived', 'https://www.notebookcheck.pl/NVIDIA-NVIDIA-GeForce-RTX-4050-Laptop-GPU.771530.0.html'),
        'peak_flops.fp32': (14.56, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.bf16': (29.12, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.fp16': (29.12, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'tdp': (115, 'W', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
    },
    'rtx-4050-laptop': {
        'memory_capacity': (6, 'GB', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'memory_bandwidth': (192.0, 'GB/s', 'derived', 'https://www.notebookcheck.pl/NVIDIA-NVIDIA-GeForce-RTX-4050-Laptop-GPU.771530.0.html'),
        'peak_flops.fp32': (12.13, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.bf16': (24.26, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'peak_flops.fp16': (24.26, 'TFLOP/s', 'derived', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
        'tdp': (115, 'W', 'datasheet', 'https://nvidia.com/de-de/geforce/gaming-laptops/compare'),
    },
    'rtx-5090-laptop': {
        'memory_capacity': (24, 'GB', 'datasheet', 'https://www.neowin.net/news/rtx-50-powered-laptops-promise-double-the-performance-and-40-better-battery-life/'),
        'memory_bandwidth': (896, 'GB/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-5090-laptop-140w-vs-nvidia-geforce-rtx-4090-laptop-120w'),
        'peak_flops.fp32': (45.34, 'TFLOP/s', 'datasheet', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-5090-laptop-150w-vs-nvidia-rtx-5000-max-q'),
        'peak_flops.bf16': (90.68, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-5090-laptop-150w-vs-nvidia-rtx-5000-max-q'),
        'peak_flops.fp16': (90.68, 'TFLOP/s', 'derived', 'https://hmc-tech.com/gpu/nvidia-geforce-rtx-5090-laptop-150w-vs-nvidia-rtx-5000-max-q'),
        'peak_flops.fp4': (912, 'TFLOP/s', 'derived', 'https://www.neowin.net/news/rtx-50-powered-laptops-promise-double-the-performance-and-40-better-battery-life/'),
        'sparse_peak_flops.fp4': (1824, 'TFLOP/s', 'datasheet', 'https://www.neowin.net/news/rtx-50-powered-laptops-promise-double-the-performance-and-40-better-battery-life/'),
        'tdp': (150, 'W', 'datasheet', 'https://www.neowin.net/news/rtx-50-powered-laptops-promise-double-the-performance-and-40-better-battery-life/'),
    },
    'rtx-5060-laptop': {
        'memory_capacity': (8, 'GB', 'datasheet', 'https://fpsbench.com/compare/gpu/nvidia-t550-mobile-vs-nvidia-geforce-rtx-5060-mobile'),
        'memory_bandwidth': (384.0, 'GB/s', 'datasheet', 'https://fpsbench.com/compare/gpu/nvidia-t550-mobile-vs-nvidia-geforce-rtx-5060-mobile'),
        'peak_flops.fp32': (16.62, 'TFLOP/s', 'derived', RIBALLKAA_5060L),
        'peak_flops.bf16': (33.24, 'TFLOP/s', 'derived', RIBALLKAA_5060L),
        'peak_flops.fp16': (33.24, 'TFLOP/s', 'derived', RIBALLKAA_5060L),
        'tdp': (100, 'W', 'datasheet', RIBALLKAA_5060L),
    },
    'm1': {
        'memory_capacity': (16, 'GB', 'datasheet', 'https://yogabas.blogg.se/2022/october/large-clock-for-mac-desktop.html'),
        'memory_bandwidth': (68.26, 'GB/s', 'derived', 'https://nanoreview.info/en/gpu/apple-m1-gpu'),
        'peak_flops.fp32': (2.6, 'TFLOP/s', 'datasheet', 'https://nanoreview.info/en/gpu/apple-m1-gpu'),
        'peak_flops.fp16': (2.62, 'TFLOP/s', 'derived', 'https://github.com/philipturner/metal-benchmarks'),
    },
    'm5-pro': {
        'memory_capacity': (64, 'GB', 'datasheet', 'https://allyoucantech.com/?p=178375'),
        'memory_bandwidth': (307, 'GB/s', 'datasheet', 'https://allyoucantech.com/?p=178375'),
    },
    'snapdragon-x-elite': {
        'memory_capacity': (64, 'GB', 'datasheet', 'https://www.tweaktown.com/news/93943/qualcomm-snapdragon-elite-4-6-tflops-more-gpu-power-than-xbox-series/index.html'),
        'memory_bandwidth': (136, 'GB/s', 'datasheet', 'https://www.tweaktown.com/news/93943/qualcomm-snapdragon-elite-4-6-tflops-more-gpu-power-than-xbox-series/index.html'),
        'peak_flops.fp32': (4.6, 'TFLOP/s', 'datasheet', 'https://www.tweaktown.com/news/93943/qualcomm-snapdragon-elite-4-6-tflops-more-gpu-power-than-xbox-series/index.html'),
    },
    'arc-140v': {
        'memory_capacity': (32, 'GB', 'datasheet', 'https://www.notebookcheck.net/Intel-Core-Ultra-7-256V-Processor-Benchmarks-and-Specs.892554.0.html'),
        'memory_bandwidth': (136, 'GB/s', 'datasheet', 'https://runlocalai.co/hardware/intel-lunar-lake-258v'),
        'peak_flops.int8': (67, 'TOP/s', 'derived', 'https://zareason.com/intel-lunar-lake-will-deliver-120-tops-combining-cpu-igpu-and-npu/'),
        'peak_flops.bf16': (33.5, 'TFLOP/s', 'derived', 'https://zareason.com/intel-lunar-lake-will-deliver-120-tops-combining-cpu-igpu-and-npu/'),
        'peak_flops.fp16': (33.5, 'TFLOP/s', 'derived', 'https://zareason.com/intel-lunar-lake-will-deliver-120-tops-combining-cpu-igpu-and-npu/'),
    },
    'iris-xe-max': {
        'memory_capacity': (4, 'GB', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-geforce-rtx-5070'),
        'memory_bandwidth': (68.26, 'GB/s', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-geforce-rtx-5070'),
        'peak_flops.fp32': (2.534, 'TFLOP/s', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-geforce-rtx-5070'),
        'peak_flops.fp16': (5.069, 'TFLOP/s', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-geforce-rtx-5070'),
        'tdp': (25, 'W', 'datasheet', 'https://fpsbench.com/compare/gpu/intel-iris-xe-max-graphics-vs-nvidia-geforce-rtx-5070'),
    },
    **DEVICES2_SOURCE_VALUES,
}

_UNITS = {**BYTE_UNITS, **BANDWIDTH_UNITS, **FLOPS_UNITS, **POWER_UNITS, "devices": 1.0}


@pytest.mark.parametrize("device", sorted(SOURCE_VALUES))
def test_device_figures_match_their_source(device):
    gpu = catalog.load_accelerator(device)
    expected = SOURCE_VALUES[device]
    assert set(gpu.figures) == set(expected), "every figure of the file has a row here, and no more"
    for key, (value, unit, kind, url) in expected.items():
        figure = gpu.figures[key]
        assert (figure.value, figure.unit, figure.kind) == (value, unit, kind), key
        assert gpu.sources[figure.source].url == url, key
        assert figure.si_value == pytest.approx(value * _UNITS[unit], rel=1e-12), key
    assert gpu.category is not None


def test_the_catalog_has_100_accelerators_in_every_category():
    assert len(ACCELERATOR_FILES) >= 100
    files = {p.stem: p for p in ACCELERATOR_FILES}
    assert set(SOURCE_VALUES) <= set(files)
    categories = {spec(p).category for p in ACCELERATOR_FILES}
    assert categories == {"datacenter", "workstation", "consumer", "soc", "cpu"}
    # devices without a reference CSV row are exactly the ones pinned here
    assert {stem for stem, p in files.items() if "reference_id" not in raw(p)} == set(SOURCE_VALUES)


NO_PEAK = "No compute peak:"

#: Devices added by issue 28 (item 4): `roofline-decode list gpus` must show each of them.
ISSUE_28_DEVICES = [
    "gb300", "max-1550", "sn40l", "rtx-4000-ada", "rtx-5000-ada", "rtx-4070-ti-super", "rtx-4090-laptop",
    "rtx-4080-laptop", "rtx-4070-laptop", "rtx-4060-laptop", "rtx-4050-laptop", "rtx-5090-laptop", "rtx-5060-laptop",
    "m1", "m5-pro", "snapdragon-x-elite", "arc-140v", "iris-xe-max",
]


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=[p.stem for p in ACCELERATOR_FILES])
def test_every_device_has_a_compute_peak_or_says_why_not(path):
    gpu = spec(path)
    notes = gpu.notes or ""
    if gpu.peak_flops:
        assert NO_PEAK not in notes, "the notes say there is no compute peak, but the file has one"
    else:
        assert NO_PEAK in notes, f"no peak_flops: put '{NO_PEAK} <reason>' in the file's notes"
        reason = notes.split(NO_PEAK, 1)[1].strip()
        assert len(reason) > 20, "say why no credible peak was found"


def test_list_gpus_shows_the_issue_28_devices(capsys):
    assert set(ISSUE_28_DEVICES) <= set(SOURCE_VALUES)
    assert main(["list", "gpus"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines()[1:] if line.strip()}
    assert set(ISSUE_28_DEVICES) <= listed, set(ISSUE_28_DEVICES) - listed



#: The RTX 5090 has a reference CSV row (blank bf16/fp16/fp8 there), so its tensor rates are pinned here:
#: NVIDIA's RTX Blackwell whitepaper, Appendix A, FP32-accumulate rows, dense/sparse.
RTX_BLACKWELL_WP = "https://images.nvidia.com/aem-dam/Solutions/geforce/blackwell/nvidia-rtx-blackwell-gpu-architecture.pdf"
RTX_5090_TENSOR = {
    "peak_flops.bf16": (209.5, "TFLOP/s", "datasheet"),
    "peak_flops.fp16": (209.5, "TFLOP/s", "datasheet"),
    "peak_flops.fp8": (419, "TFLOP/s", "datasheet"),
    "sparse_peak_flops.bf16": (419, "TFLOP/s", "datasheet"),
    "sparse_peak_flops.fp16": (419, "TFLOP/s", "datasheet"),
    "sparse_peak_flops.fp8": (838, "TFLOP/s", "datasheet"),
}


def test_rtx_5090_tensor_rates_are_the_whitepapers_fp32_accumulate_rows():
    gpu = catalog.load_accelerator("rtx-5090")
    for key, (value, unit, kind) in RTX_5090_TENSOR.items():
        figure = gpu.figures[key]
        assert (figure.value, figure.unit, figure.kind) == (value, unit, kind), key
        assert gpu.sources[figure.source].url == RTX_BLACKWELL_WP, key
