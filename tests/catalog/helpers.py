"""Shared data for the catalog tests: the bundled spec files, loaded once."""

from __future__ import annotations

import tomllib
from functools import cache
from pathlib import Path

from roofline_decode.catalog import bundled_spec_directory
from roofline_decode.specs.accelerator import Accelerator, MemoryTier
from roofline_decode.specs.spec_file import load_spec_file

REPO_ROOT = Path(__file__).resolve().parents[2]
SPEC_DIR = bundled_spec_directory()
SPEC_FILES = sorted(SPEC_DIR.rglob("*.toml"))
ACCELERATOR_FILES = [p for p in SPEC_FILES if p.parent.name != "tiers"]
TIER_FILES = [p for p in SPEC_FILES if p.parent.name == "tiers"]


@cache
def spec(path: Path) -> Accelerator | MemoryTier:
    """The loaded spec of a bundled file (loaded once per test session)."""
    return load_spec_file(path)


@cache
def raw(path: Path) -> dict:
    """The TOML document of a bundled file."""
    with path.open("rb") as handle:
        return tomllib.load(handle)


def ids(paths: list[Path]) -> list[str]:
    """pytest ids for a list of spec files."""
    return [p.stem for p in paths]
