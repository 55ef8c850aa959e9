"""Loading spec files: each kind of bad file fails with its path and field; user files and
directories override bundled ids."""

from __future__ import annotations

import pytest

import roofline_decode as rd
from roofline_decode import catalog
from roofline_decode.errors import RooflineError, SpecFileError, UnknownIdError
from roofline_decode.specs.spec_file import load_spec_file

GOOD = """\
type = "accelerator"
name = "Test GPU"
vendor = "Test"

[memory_capacity]
value = 64
unit = "GB"
kind = "datasheet"
source = "sheet"

[memory_bandwidth]
value = 2.0
unit = "TB/s"
kind = "datasheet"
source = "sheet"

[peak_flops.bf16]
value = 400
unit = "TFLOP/s"
kind = "derived"
derivation = "sparse/2: 800 with sparsity"
source = "sheet"

[sources.sheet]
title = "Test datasheet"
url = "https://example.com/sheet.pdf"
retrieved = "2026-01-15"
"""

TIER = """\
type = "memory_tier"
name = "Test link"
direction = "per_direction"

[bandwidth]
value = 10
unit = "GB/s"
kind = "datasheet"
source = "s"

[sources.s]
title = "Test"
url = "https://example.com/"
retrieved = "2026-01-15"
"""


def write(directory, name, text):
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def user_paths():
    """Paths added with add_spec_directory/add_spec_file during a test, removed afterwards."""
    added = []
    yield added
    for path in added:
        catalog.remove_spec_directory(path)


def test_a_good_file_loads_with_its_figures(tmp_path):
    gpu = load_spec_file(write(tmp_path, "test-gpu.toml", GOOD))
    assert gpu.id == "test-gpu" and gpu.memory_bandwidth == 2.0e12 and gpu.peak_flops == {"bf16": 4.0e14}
    assert gpu.figures["peak_flops.bf16"].derivation.startswith("sparse/2")
    assert gpu.source_of("memory_capacity").url == "https://example.com/sheet.pdf"


BAD_FILES = [
    # (what, edit of GOOD, field named in the error, words in the message)
    ("malformed TOML", lambda t: t.replace('name = "Test GPU"', 'name = "Test GPU'), "(toml)", "malformed TOML"),
    ("unknown top-level key", lambda t: t.replace('vendor = "Test"', 'vendor = "Test"\ncolour = "green"'),
     "colour", "unknown field"),
    ("unknown key in a figure", lambda t: t.replace('value = 64\n', 'value = 64\nerror_bar = 2\n'),
     "memory_capacity.error_bar", "unknown field"),
    ("figure without source", lambda t: t.replace('unit = "GB"\nkind = "datasheet"\nsource = "sheet"\n',
                                                  'unit = "GB"\nkind = "datasheet"\n'),
     "memory_capacity.source", "missing"),
    ("undefined source", lambda t: t.replace('unit = "TB/s"\nkind = "datasheet"\nsource = "sheet"',
                                             'unit = "TB/s"\nkind = "datasheet"\nsource = "brochure"'),
     "memory_bandwidth.source", "'brochure' is not defined"),
    ("no sources table", lambda t: t[: t.index("[sources.sheet]")], "sources", "missing"),
    ("source without retrieval date", lambda t: t.replace('retrieved = "2026-01-15"\n', ""),
     "sources.sheet.retrieved", "missing"),
    ("source date not ISO", lambda t: t.replace('"2026-01-15"', '"15/01/2026"'), "sources.sheet.retrieved", "15/01/2026"),
    ("source date not a day", lambda t: t.replace('"2026-01-15"', '"2026-02-30"'), "sources.sheet.retrieved", "calendar"),
    ("source URL not a URL", lambda t: t.replace("https://example.com/sheet.pdf", "example dot com"),
     "sources.sheet.url", "example dot com"),
    ("bad unit", lambda t: t.replace('unit = "TB/s"', 'unit = "TB/sec"'), "memory_bandwidth.unit", "TB/sec"),
    ("unit of another quantity", lambda t: t.replace('unit = "TB/s"', 'unit = "TB"'), "memory_bandwidth.unit", "'TB'"),
    ("FLOP unit on capacity", lambda t: t.replace('unit = "GB"', 'unit = "TFLOP/s"'), "memory_capacity.unit", "TFLOP/s"),
    ("derived without derivation", lambda t: t.replace('derivation = "sparse/2: 800 with sparsity"\n', ""),
     "peak_flops.bf16.derivation", "must say how"),
    ("derived with blank derivation", lambda t: t.replace('"sparse/2: 800 with sparsity"', '"  "'),
     "peak_flops.bf16.derivation", "must say how"),
    ("unknown kind", lambda t: t.replace('kind = "derived"', 'kind = "estimated"'), "peak_flops.bf16.kind", "estimated"),
    ("value as a string", lambda t: t.replace("value = 64", 'value = "64"'), "memory_capacity.value", "'64'"),
    ("value as a boolean", lambda t: t.replace("value = 64", "value = true"), "memory_capacity.value", "True"),
    ("name as a number", lambda t: t.replace('name = "Test GPU"', "name = 5"), "name", "5"),
    ("figure as a bare number", lambda t: t.replace(
        '[memory_capacity]\nvalue = 64\nunit = "GB"\nkind = "datasheet"\nsource = "sheet"\n', "").replace(
        'vendor = "Test"', 'vendor = "Test"\nmemory_capacity = 64'), "memory_capacity", "64"),
    ("negative value", lambda t: t.replace("value = 64", "value = -64"), "memory_capacity.value", "greater than 0"),
    ("unknown precision", lambda t: t.replace("[peak_flops.bf16]", "[peak_flops.fp9]"), "peak_flops.fp9", "fp9"),
    ("missing bandwidth", lambda t: t.replace("[memory_bandwidth]", "[tdp]").replace('unit = "TB/s"', 'unit = "W"'),
     "memory_bandwidth", "missing"),
    ("no type", lambda t: t.replace('type = "accelerator"\n', ""), "type", "None"),
    ("unknown type", lambda t: t.replace('type = "accelerator"', 'type = "gpu"'), "type", "'gpu'"),
    ("type as a list", lambda t: t.replace('type = "accelerator"', 'type = ["accelerator"]'), "type", "['accelerator']"),
]


@pytest.mark.parametrize("what, edit, field, words", BAD_FILES, ids=[b[0] for b in BAD_FILES])
def test_bad_file_fails_naming_path_and_field(tmp_path, what, edit, field, words):
    text = edit(GOOD)
    assert text != GOOD, "the edit did not apply"
    path = write(tmp_path, "broken.toml", text)
    with pytest.raises(SpecFileError) as info:
        load_spec_file(path)
    error = info.value
    assert isinstance(error, RooflineError) and isinstance(error, ValueError)
    assert error.path == str(path) and error.field == field
    assert str(error).startswith(f"{path}: {field}: ")
    assert words in error.problem
    assert "\n" not in str(error)


def test_unreadable_file_names_the_path(tmp_path):
    with pytest.raises(SpecFileError, match="cannot read") as info:
        load_spec_file(tmp_path / "absent.toml")
    assert info.value.field == "(file)" and "absent.toml" in str(info.value)


def test_every_problem_is_reported_at_once(tmp_path):
    text = GOOD.replace('unit = "TB/s"', 'unit = "TB/sec"').replace('vendor = "Test"', 'vendor = "Test"\nx = 1')
    with pytest.raises(SpecFileError) as info:
        load_spec_file(write(tmp_path, "two.toml", text))
    message = str(info.value)
    assert "memory_bandwidth.unit:" in message and "'TB/sec'" in message and "x: unknown field" in message


def test_a_bad_user_file_fails_when_its_id_is_loaded(tmp_path, user_paths):
    write(tmp_path, "broken-gpu.toml", GOOD.replace('unit = "GB"', 'unit = "gigs"'))
    catalog.add_spec_directory(tmp_path)
    user_paths.append(tmp_path)
    assert "broken-gpu" in catalog.list_accelerators()
    with pytest.raises(SpecFileError, match=r"broken-gpu\.toml: memory_capacity\.unit"):
        catalog.load_accelerator("broken-gpu")


@pytest.mark.parametrize("text, field, words", [
    ('type = ["accelerator"]\n', "type", "['accelerator']"),
    ('type = "accelerator"\nname = \n', "(toml)", "malformed TOML"),
])
def test_a_bad_file_in_a_user_directory_fails_only_when_its_id_is_loaded(tmp_path, user_paths, text, field, words):
    path = write(tmp_path, "odd.toml", text)
    catalog.add_spec_directory(tmp_path)
    user_paths.append(tmp_path)
    assert "odd" not in catalog.list_accelerators() and "h100-sxm" in catalog.list_accelerators()
    assert rd.decode_floor("llama-3.1-8b", "h100-sxm").memory_bandwidth == 3.35e12
    with pytest.raises(SpecFileError) as info:
        catalog.load_accelerator("odd")
    assert str(info.value).startswith(f"{path}: {field}: ") and words in info.value.problem


def test_user_directory_overrides_a_bundled_id_and_adds_new_ones(tmp_path, user_paths):
    bundled = catalog.load_accelerator("h100-sxm")
    write(tmp_path, "h100-sxm.toml", GOOD)
    (tmp_path / "lab").mkdir()
    write(tmp_path / "lab", "lab-gpu.toml", GOOD)
    write(tmp_path / "lab", "slow-link.toml", TIER)
    catalog.add_spec_directory(tmp_path)
    user_paths.append(tmp_path)
    overridden = catalog.load_accelerator("h100-sxm")
    assert overridden.memory_bandwidth == 2.0e12 and overridden.path == str(tmp_path / "h100-sxm.toml")
    assert {"lab-gpu", "h100-sxm", "a100-80gb-sxm"} <= set(catalog.list_accelerators())
    assert catalog.load_memory_tier("slow-link").bandwidth == 10e9
    # the estimate uses the override
    floor = rd.decode_floor("llama-3.1-8b", "h100-sxm", batch=1, context=1024)
    assert floor.memory_bandwidth == 2.0e12
    catalog.remove_spec_directory(tmp_path)
    assert catalog.load_accelerator("h100-sxm").memory_bandwidth == bundled.memory_bandwidth
    assert "lab-gpu" not in catalog.list_accelerators()


def test_user_file_overrides_a_bundled_id(tmp_path, user_paths):
    path = write(tmp_path, "mi300x.toml", GOOD)
    catalog.add_spec_file(path)
    user_paths.append(path)
    assert catalog.load_accelerator("mi300x").name == "Test GPU"
    assert catalog.list_accelerators().count("mi300x") == 1


def test_latest_addition_wins(tmp_path, user_paths):
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir(), second.mkdir()
    write(first, "l4.toml", GOOD)
    write(second, "l4.toml", GOOD.replace('name = "Test GPU"', 'name = "Second"'))
    for directory in (first, second):
        catalog.add_spec_directory(directory)
        user_paths.append(directory)
    assert catalog.load_accelerator("l4").name == "Second"


def test_add_spec_file_checks_the_file_at_once(tmp_path):
    bad = write(tmp_path, "bad.toml", GOOD.replace("value = 64", 'value = "64"'))
    with pytest.raises(SpecFileError, match="memory_capacity.value"):
        catalog.add_spec_file(bad)
    assert "bad" not in catalog.list_accelerators()
    with pytest.raises(SpecFileError, match="not a .toml file"):
        catalog.add_spec_file(write(tmp_path, "notes.txt", "hello"))


def test_a_user_spec_can_change_type_of_an_id(tmp_path, user_paths):
    write(tmp_path, "pcie5-x16.toml", GOOD)
    catalog.add_spec_directory(tmp_path)
    user_paths.append(tmp_path)
    assert "pcie5-x16" in catalog.list_accelerators() and "pcie5-x16" not in catalog.list_memory_tiers()


def test_environment_path_overrides_bundled_ids(tmp_path, monkeypatch):
    write(tmp_path, "t4.toml", GOOD)
    monkeypatch.setenv(catalog.ENV_SPEC_PATH, str(tmp_path))
    assert catalog.load_accelerator("t4").name == "Test GPU"
    monkeypatch.setenv(catalog.ENV_SPEC_PATH, str(tmp_path / "nowhere"))
    with pytest.raises(SpecFileError, match=catalog.ENV_SPEC_PATH):
        catalog.list_accelerators()


def test_duplicate_ids_in_one_directory_fail(tmp_path, user_paths):
    (tmp_path / "x").mkdir(), (tmp_path / "y").mkdir()
    write(tmp_path / "x", "twin.toml", GOOD)
    write(tmp_path / "y", "twin.toml", GOOD)
    catalog.add_spec_directory(tmp_path)
    user_paths.append(tmp_path)
    assert "twin" not in catalog.list_accelerators()
    with pytest.raises(SpecFileError, match="also defined by"):
        catalog.load_accelerator("twin")


def test_adding_a_missing_directory_fails(tmp_path):
    with pytest.raises(SpecFileError, match="no such directory"):
        catalog.add_spec_directory(tmp_path / "missing")


def test_load_by_path_and_type_mismatch(tmp_path):
    gpu_path = write(tmp_path, "mine.toml", GOOD)
    tier_path = write(tmp_path, "link.toml", TIER)
    assert catalog.load_accelerator(str(gpu_path)).id == "mine"
    assert catalog.load_accelerator(gpu_path).id == "mine"
    assert catalog.load_memory_tier(tier_path).bandwidth == 10e9
    with pytest.raises(SpecFileError, match="expected type 'accelerator'"):
        catalog.load_accelerator(tier_path)
    with pytest.raises(SpecFileError, match="expected type 'memory_tier'"):
        catalog.load_memory_tier(gpu_path)
    assert rd.decode_floor("llama-3.1-8b", str(gpu_path), batch=1, context=128).memory_bandwidth == 2.0e12


def test_unknown_id_suggests_close_ids():
    with pytest.raises(UnknownIdError, match="h100-sxm"):
        catalog.load_accelerator("h100-smx")
    with pytest.raises(UnknownIdError):
        catalog.load_memory_tier("h100-sxm")


def test_a_file_added_to_an_indexed_folder_is_seen(tmp_path):
    import shutil

    import roofline_decode.catalog as catalog

    folder = tmp_path / "specs"
    folder.mkdir()
    catalog.add_spec_directory(folder)
    try:
        assert "late-gpu" not in catalog.list_accelerators()
        shutil.copy(catalog.bundled_spec_directory() / "nvidia" / "l4.toml", folder / "late-gpu.toml")
        assert "late-gpu" in catalog.list_accelerators()
        assert catalog.load_accelerator("late-gpu").memory_bandwidth == catalog.load_accelerator("l4").memory_bandwidth
    finally:
        catalog.remove_spec_directory(folder)
