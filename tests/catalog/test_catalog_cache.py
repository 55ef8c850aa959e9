"""The catalog caches parsed specs and folder listings (issue 18); every change is still seen:
an edited file, a file added in a subfolder (also one overriding a bundled id), a removed file."""

from __future__ import annotations

import os
import shutil

import pytest

import roofline_decode as rd
from roofline_decode import catalog
from roofline_decode.errors import UnknownIdError


def _copy_with_bandwidth(target, bandwidth: str) -> None:
    text = (catalog.bundled_spec_directory() / "nvidia" / "l4.toml").read_text(encoding="utf-8")
    target.write_text(text.replace('value = 300\nunit = "GB/s"', f'value = {bandwidth}\nunit = "GB/s"'), encoding="utf-8")


@pytest.fixture
def folder(tmp_path):
    root = tmp_path / "specs"
    (root / "vendor").mkdir(parents=True)
    catalog.add_spec_directory(root)
    yield root
    catalog.remove_spec_directory(root)


def test_l4_bandwidth_pattern_is_in_the_bundled_file():
    # the helper above edits the bandwidth by this pattern; make sure it still matches
    text = (catalog.bundled_spec_directory() / "nvidia" / "l4.toml").read_text(encoding="utf-8")
    assert 'value = 300\nunit = "GB/s"' in text
    assert rd.load_accelerator("l4").memory_bandwidth == 300e9


def test_edited_added_and_removed_files_are_seen(folder):
    path = folder / "vendor" / "cached-gpu.toml"
    with pytest.raises(UnknownIdError):
        rd.load_accelerator("cached-gpu")
    _copy_with_bandwidth(path, "301")  # added in a subfolder of an indexed folder
    assert rd.load_accelerator("cached-gpu").memory_bandwidth == 301e9
    _copy_with_bandwidth(path, "302")  # edited: a new mtime
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    assert rd.load_accelerator("cached-gpu").memory_bandwidth == 302e9
    path.unlink()
    with pytest.raises(UnknownIdError):
        rd.load_accelerator("cached-gpu")


def test_a_user_file_overriding_a_bundled_id_is_seen_at_once(folder):
    assert rd.load_accelerator("l4").memory_bandwidth == 300e9  # cached from the bundled file
    _copy_with_bandwidth(folder / "vendor" / "l4.toml", "299")
    try:
        assert rd.load_accelerator("l4").memory_bandwidth == 299e9
    finally:
        shutil.rmtree(folder / "vendor")
    assert rd.load_accelerator("l4").memory_bandwidth == 300e9


def test_models_by_id_are_shared_and_equal_to_a_fresh_parse():
    first = rd.load_model("llama-3.1-8b")
    assert rd.load_model("llama-3.1-8b") is first  # parsed once (frozen, so shared)
    fresh = rd.Model.from_hf_config(catalog._MODEL_DIR / "llama-3.1-8b.json")
    assert fresh == first
    assert rd.load_model("llama-3.1-8b", weights="int8").weight_format.name == "int8"
    assert rd.load_model("llama-3.1-8b").weight_format.name == "bf16"  # the cached one untouched
    with pytest.raises(UnknownIdError):
        rd.load_model("../model_configs/llama-3.1-8b")


def test_a_folder_named_like_an_id_is_still_read_as_a_path(tmp_path, monkeypatch):
    source = catalog._MODEL_DIR / "llama-3.2-1b.json"
    (tmp_path / "llama-3.1-8b").mkdir()
    shutil.copy(source, tmp_path / "llama-3.1-8b" / "config.json")
    monkeypatch.chdir(tmp_path)
    assert rd.load_model("llama-3.1-8b").num_layers == rd.Model.from_hf_config(source).num_layers


_BUNDLED_MODELS = catalog._MODEL_DIR


@pytest.fixture
def bundled_copy(tmp_path, monkeypatch):
    """A writable copy of the bundled hardware_specs and model_configs folders in their place."""
    specs = tmp_path / "hardware_specs"
    shutil.copytree(catalog.bundled_spec_directory(), specs)
    models = tmp_path / "model_configs"
    models.mkdir()
    shutil.copy(catalog._MODEL_DIR / "llama-3.2-1b.json", models / "llama-3.2-1b.json")
    monkeypatch.setattr(catalog, "_BUNDLED_FOUND", [specs])
    monkeypatch.setattr(catalog, "_MODEL_DIR", models)
    monkeypatch.setattr(catalog, "_MODEL_DIR_NAME", str(models))
    monkeypatch.setattr(catalog, "_MODEL_DIRECTORY_STAMP", [])
    monkeypatch.setattr(catalog, "_RECENT", {})
    monkeypatch.setattr(catalog, "_RECENT_MODELS", {})
    monkeypatch.delenv(catalog.ENV_SPEC_PATH, raising=False)
    yield specs, models


def _touch_later(path) -> None:
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))


def test_a_spec_loaded_by_id_is_reused_until_its_file_changes(bundled_copy):
    specs, _ = bundled_copy
    first = rd.load_accelerator("l4")
    assert rd.load_accelerator("l4") is first  # one stat, no parse
    _copy_with_bandwidth(specs / "nvidia" / "l4.toml", "297")
    _touch_later(specs / "nvidia" / "l4.toml")
    assert rd.load_accelerator("l4").memory_bandwidth == 297e9
    (specs / "nvidia" / "l4.toml").unlink()
    with pytest.raises(UnknownIdError):
        rd.load_accelerator("l4")


def test_a_second_file_for_a_loaded_id_is_reported_after_a_listing(bundled_copy):
    specs, _ = bundled_copy
    assert rd.load_accelerator("l4").memory_bandwidth == 300e9
    _copy_with_bandwidth(specs / "amd" / "l4.toml", "296")  # the same id twice in the bundled tree
    assert "l4" not in rd.list_accelerators()  # the listing sees the folders changed
    with pytest.raises(rd.errors.SpecFileError, match="also defined by"):
        rd.load_accelerator("l4")


def test_an_environment_folder_overrides_a_loaded_id_at_once(bundled_copy, tmp_path, monkeypatch):
    assert rd.load_accelerator("l4").memory_bandwidth == 300e9
    override = tmp_path / "env"
    override.mkdir()
    _copy_with_bandwidth(override / "l4.toml", "295")
    monkeypatch.setenv(catalog.ENV_SPEC_PATH, str(override))
    assert rd.load_accelerator("l4").memory_bandwidth == 295e9
    monkeypatch.delenv(catalog.ENV_SPEC_PATH)
    assert rd.load_accelerator("l4").memory_bandwidth == 300e9


def test_a_file_of_another_type_under_an_id_is_not_that_type(bundled_copy):
    specs, _ = bundled_copy
    tier = next(specs.rglob("pcie5-x16.toml"))
    assert rd.load_memory_tier("pcie5-x16").name
    with pytest.raises(UnknownIdError):
        rd.load_accelerator("pcie5-x16")
    (specs / "nvidia" / "broken.toml").write_text("type = [\n", encoding="utf-8")
    with pytest.raises(rd.errors.SpecFileError, match="broken.toml"):
        rd.load_accelerator("broken")
    assert "broken" not in rd.list_accelerators() and tier.exists()


def test_a_model_loaded_by_id_is_reused_until_its_file_changes(bundled_copy):
    _, models = bundled_copy
    path, source = models / "llama-3.2-1b.json", _BUNDLED_MODELS / "llama-3.2-1b.json"
    first = rd.load_model("llama-3.2-1b")
    assert rd.load_model("llama-3.2-1b") is first
    path.write_text(path.read_text(encoding="utf-8").replace('"num_hidden_layers": 16', '"num_hidden_layers": 15'),
                    encoding="utf-8")
    _touch_later(path)
    assert rd.load_model("llama-3.2-1b").num_layers == 15
    path.unlink()
    with pytest.raises(UnknownIdError):
        rd.load_model("llama-3.2-1b")
    shutil.copy(source, models / "added-model.json")  # a new id: the folder is listed again
    assert rd.load_model("added-model").num_layers == 16
