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
