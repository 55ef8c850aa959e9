"""The memory tier added with the GH200 (devices2 round): it has no reference CSV row, so its figures are pinned here.

Tiers with a CSV row are checked in ``test_catalog_reference.py``; every other tier must have a row in
``TIER_SOURCE_VALUES`` (value and unit as printed, kind, source URL), as ``SOURCE_VALUES`` does for accelerators.
"""

from __future__ import annotations

import pytest

from roofline_decode import catalog

from .helpers import TIER_FILES, raw
from .source_values_devices2 import SPHERON_GH200

#: tier id -> figure -> (value as printed, unit as printed, kind, source URL)
TIER_SOURCE_VALUES = {
    "gh200-nvlink-c2c": {
        "bandwidth": (450.0, "GB/s", "derived", SPHERON_GH200),  # 900 GB/s bidirectional / 2
        "capacity": (480, "GB", "datasheet", SPHERON_GH200),
    },
}


@pytest.mark.parametrize("tier_id", sorted(TIER_SOURCE_VALUES))
def test_tier_figures_match_their_source(tier_id):
    tier = catalog.load_memory_tier(tier_id)
    expected = TIER_SOURCE_VALUES[tier_id]
    assert set(tier.figures) == set(expected), "every figure of the file has a row here, and no more"
    for key, (value, unit, kind, url) in expected.items():
        figure = tier.figures[key]
        assert (figure.value, figure.unit, figure.kind) == (value, unit, kind), key
        assert tier.sources[figure.source].url == url, key


def test_every_tier_without_a_reference_row_is_pinned_here():
    unreferenced = {p.stem for p in TIER_FILES if "reference_id" not in raw(p)}
    assert unreferenced == set(TIER_SOURCE_VALUES)


def test_the_c2c_tier_is_the_per_direction_half_of_the_link_and_slower_than_the_gh200_hbm():
    tier = catalog.load_memory_tier("gh200-nvlink-c2c")
    gh200 = catalog.load_accelerator("gh200")
    assert tier.direction == "per_direction" and tier.bandwidth == 900e9 / 2
    assert tier.bandwidth < gh200.memory_bandwidth / 8  # the HBM is about 9x faster


def test_list_gpus_shows_the_devices2_accelerators(capsys):
    from roofline_decode.cli import main

    from .source_values_devices2 import DEVICES2_SOURCE_VALUES

    assert main(["list", "gpus"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines()[1:] if line.strip()}
    assert set(DEVICES2_SOURCE_VALUES) == {"rtx-5080-laptop", "rtx-5070-laptop", "rtx-3080-ti", "gh200"}
    assert set(DEVICES2_SOURCE_VALUES) <= listed
