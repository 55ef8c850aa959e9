"""Generated files are current: docs/hardware_catalog.md and hardware_specs/schema/*.json.

Regenerate with ``python -m roofline_decode.catalog_docs`` from the repository root.  The
exported JSON schemas accept every bundled file and reject the mistakes the loader rejects.
"""

from __future__ import annotations

import json
import shutil

import pytest

from roofline_decode import catalog_docs
from roofline_decode.specs.spec_file import SCHEMA_FILES, json_schema

from .helpers import ACCELERATOR_FILES, REPO_ROOT, SPEC_FILES, TIER_FILES, raw, spec

REGENERATE = "run `python -m roofline_decode.catalog_docs` from the repository root"


@pytest.mark.parametrize("relative", list(catalog_docs.generated_files()), ids=str)
def test_checked_in_file_is_current(relative):
    path = REPO_ROOT / relative
    assert path.is_file(), f"{relative} is missing: {REGENERATE}"
    assert path.read_text(encoding="utf-8") == catalog_docs.generated_files()[relative], f"{relative} is stale: {REGENERATE}"


def test_check_mode_reports_stale_files_and_write_mode_fixes_them(tmp_path, capsys):
    shutil.copytree(REPO_ROOT / "hardware_specs", tmp_path / "hardware_specs")
    assert catalog_docs.main(["--root", str(tmp_path), "--check"]) == 1  # no docs/ yet
    assert "docs/hardware_catalog.md: stale" in capsys.readouterr().out
    assert catalog_docs.main(["--root", str(tmp_path)]) == 0
    assert catalog_docs.main(["--root", str(tmp_path), "--check"]) == 0
    page = tmp_path / "docs" / "hardware_catalog.md"
    page.write_text(page.read_text().replace("989.5", "989.6"))
    assert catalog_docs.main(["--root", str(tmp_path), "--check"]) == 1
    assert catalog_docs.main(["--root", str(tmp_path / "nowhere")]) == 2


def test_page_lists_every_spec_with_its_source_links():
    page = catalog_docs.render_catalog_page()
    for path in SPEC_FILES:
        loaded = spec(path)
        row = next(line for line in page.splitlines() if line.startswith(f"| `{path.stem}` |"))
        for source in loaded.sources.values():
            assert f"]({source.url})" in row
    for vendor in ("NVIDIA", "AMD", "Intel", "Google", "AWS", "Apple"):
        assert f"\n## {vendor}\n" in page
    assert "\n## Memory tiers\n" in page


def test_page_row_values():
    rows = {line.split(" | ")[0][3:-1]: line.split(" | ") for line in catalog_docs.render_catalog_page().splitlines()
            if line.startswith("| `")}
    assert rows["h100-sxm"][2:8] == ["datacenter", "80 GB (81559 MiB usable)", "3350", "989.5 †", "1979 †", "295.4"]
    assert rows["tpu-v4"][3:8] == ["32 GiB", "1200", "275", "-", "229.2"]
    assert rows["t4"][3:6] == ["16 GB (15360 MiB usable)", "320", "65 (fp16)"]
    assert rows["m1-max"][2] == "soc"
    assert rows["tpu-v5p"][8:10] == ["1200 GB/s bidirectional, aggregate; domain of 6144", "50 Gbit/s per direction"]
    assert rows["gb300"][8:10] == ["1.8 TB/s bidirectional, aggregate; domain of 72", "800 Gbit/s per direction †"]
    assert rows["a100-80gb-pcie"][9] == "-"
    assert rows["pcie5-x16"][2:4] == ["63 GB/s †", "per direction"]


def test_schema_files_are_valid_json_with_the_draft():
    for kind, name in SCHEMA_FILES.items():
        document = json.loads((REPO_ROOT / "hardware_specs" / "schema" / name).read_text(encoding="utf-8"))
        assert document == json_schema(kind)
        assert document["$schema"].endswith("2020-12/schema") and document["additionalProperties"] is False


def test_json_schema_rejects_an_unknown_kind():
    from roofline_decode.errors import InvalidValueError

    with pytest.raises(InvalidValueError, match="gpu"):
        json_schema("gpu")


@pytest.fixture(scope="module")
def jsonschema():
    return pytest.importorskip("jsonschema")  # a dev dependency (through nbformat)


@pytest.mark.parametrize("path", SPEC_FILES, ids=[p.stem for p in SPEC_FILES])
def test_every_bundled_file_validates_against_the_exported_schema(jsonschema, path):
    kind = "memory_tier" if path in TIER_FILES else "accelerator"
    jsonschema.Draft202012Validator(json_schema(kind)).validate(raw(path))


@pytest.mark.parametrize("edit", [
    lambda d: d.update(colour="green"),
    lambda d: d["memory_bandwidth"].update(unit="TB/sec"),
    lambda d: d["memory_bandwidth"].update(unit="TB"),
    lambda d: d["memory_capacity"].update(value="80"),
    lambda d: d["peak_flops"]["bf16"].pop("derivation"),
    lambda d: d["peak_flops"].update(fp9=d["peak_flops"]["bf16"]),
    lambda d: d["sources"]["nvidia-h100"].pop("retrieved"),
    lambda d: d["interconnect"].pop("direction"),
], ids=["unknown key", "bad unit", "unit of another quantity", "string value", "derived without derivation",
        "unknown precision", "source without date", "interconnect without direction"])
def test_exported_schema_rejects_what_the_loader_rejects(jsonschema, edit):
    document = json.loads(json.dumps(raw(next(p for p in ACCELERATOR_FILES if p.stem == "h100-sxm"))))
    validator = jsonschema.Draft202012Validator(json_schema("accelerator"))
    assert validator.is_valid(document)
    edit(document)
    assert not validator.is_valid(document)
