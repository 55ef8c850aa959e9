"""The written rules of the house (DESIGN.md §2) that import-linter cannot state.

The layer contracts themselves are in pyproject.toml and run by ``lint-imports`` (CI runs it;
the last test here runs it too where it is installed).
"""

from __future__ import annotations

import ast
import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "roofline_decode"
ROOT = PACKAGE.parents[1]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _private_imports(text: str, module: str, is_package: bool) -> list[str]:
    """``from X import _name`` in one module's source, where ``_name`` is not a submodule of X."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ImportFrom):
            continue
        source = importlib.util.resolve_name("." * node.level + (node.module or ""), package)
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and not _is_module(f"{source}.{alias.name}"):  # a private module stays in its package
                found.append(f"{module}:{node.lineno} imports {alias.name} from {source}")
    return found


def test_no_module_imports_another_module_s_private_name():
    found = [line for path in sorted(PACKAGE.rglob("*.py"))
             for line in _private_imports(path.read_text(encoding="utf-8"), _module_name(path),
                                          path.name == "__init__.py")]
    assert found == []


def test_the_check_sees_a_private_name_and_passes_a_private_module():
    """The AST walk finds the kind of import it forbids (a check that cannot fail proves nothing)."""
    text = "from .peaks import _hidden, NO_COMPUTE_PEAK\nfrom .. import _moved\nfrom ..formulas import ops\n"
    assert _private_imports(text, "roofline_decode.floors.decode", False) == [
        "roofline_decode.floors.decode:1 imports _hidden from roofline_decode.floors.peaks"]


def test_modules_stay_readable_in_one_sitting():
    """House rule: modules under ~500 lines (DESIGN.md §2)."""
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 520}
    assert long == {}


@pytest.mark.skipif(shutil.which("lint-imports") is None and not (ROOT / ".venv/bin/lint-imports").exists(),
                    reason="import-linter is not installed (pip install -e '.[dev]')")
def test_import_linter_contracts_are_kept():
    exe = shutil.which("lint-imports") or str(ROOT / ".venv/bin/lint-imports")
    proc = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "0 broken" in proc.stdout
