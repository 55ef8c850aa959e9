"""The module paths that moved into floors/, formats/ and views/ still import, with a warning."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import roofline_decode as rd
from roofline_decode._moved import NAMES_MOVED, MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_warns_and_hands_on_the_new_module_s_names(old):
    _forget(old)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to {MOVED[old]}"):
        shim = importlib.import_module(old)
    home = importlib.import_module(MOVED[old])
    assert set(getattr(home, "__all__", ())) <= set(shim.__all__)
    elsewhere = {n: NAMES_MOVED[path, n] for (path, n) in NAMES_MOVED if path == old}
    for name in shim.__all__:
        if name in elsewhere:  # found in its new module (the old home may still warn for it)
            assert getattr(shim, name) is getattr(importlib.import_module(elsewhere[name]), name)
        else:
            assert getattr(shim, name) is getattr(home, name, None)


def _forget(old: str) -> None:
    """Drop an old path imported by an earlier test (a module warns once, when first imported)."""
    sys.modules.pop(old, None)
    package, _, name = old.rpartition(".")
    vars(importlib.import_module(package)).pop(name, None)


def test_names_that_moved_to_another_module_are_found_there():
    _forget("roofline_decode.views_table")
    with pytest.warns(DeprecationWarning):
        from roofline_decode.views_table import format_table
    assert format_table is rd.units.format_table
    _forget("roofline_decode.estimate")
    with pytest.warns(DeprecationWarning):
        from roofline_decode.estimate import decode_floor
    assert decode_floor is rd.decode_floor
    _forget("roofline_decode.estimate")
    with pytest.warns(DeprecationWarning):
        from roofline_decode.estimate import NO_COMPUTE_PEAK, sweep  # once re-exported by estimate.py
    assert sweep is rd.sweep and NO_COMPUTE_PEAK is rd.floors.peaks.NO_COMPUTE_PEAK


def test_the_package_attribute_of_an_old_path_warns_too():
    _forget("roofline_decode.estimate_request")
    with pytest.warns(DeprecationWarning, match="roofline_decode.estimate_request moved"):
        assert rd.estimate_request.request_floor is rd.request_floor
    with pytest.raises(AttributeError, match="no attribute 'estimate_nothing'"):
        rd.estimate_nothing  # noqa: B018


def test_an_unknown_old_looking_path_is_still_an_import_error():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("roofline_decode.estimate_nothing")


def test_the_library_itself_imports_no_old_path():
    """Every module of the package, imported in a fresh interpreter with the warning as an error."""
    code = ("import pkgutil, importlib, warnings, roofline_decode as rd\n"
            "warnings.simplefilter('error', DeprecationWarning)\n"
            "for m in pkgutil.walk_packages(rd.__path__, 'roofline_decode.'):\n"
            "    if m.name.endswith('__main__'): continue\n"
            "    importlib.import_module(m.name)\n"
            "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.stdout.strip() == "ok", proc.stderr
