"""The docs site's cross-references: numpydoc roles become links or code (tools/griffe_xref.py).

The rewrite and the leftover check run everywhere; resolving names needs griffe and the
mini-site build needs mkdocstrings (both in the ``docs`` extra), else those tests skip.
The real site is checked by ``make docs`` itself: tools/mkdocs_hooks.py fails the --strict
build when role text reaches a page.
"""

from __future__ import annotations

import doctest
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOOLS = ROOT / "tools"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"_docs_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


xref = _load("griffe_xref")
hooks = _load("mkdocs_hooks")

PATHS = {"decode_floor": "rd.estimate.decode_floor", "rd.Model": "rd.specs.model.Model",
         ".families": "rd.specs.hf_config.families", "Spec.size": "rd.specs.Spec.size",
         "Spec.save": "rd.specs.Spec.save"}


def rewrite(text: str) -> str:
    return xref.rst_roles_to_markdown(text, lambda target, kind: PATHS.get(target))


def link(path: str, shown: str) -> str:
    return f'<autoref identifier="{path}" optional>`{shown}`</autoref>'


@pytest.mark.parametrize("name", ["griffe_xref", "mkdocs_hooks", "griffe_math"])
def test_tools_doctests(name):
    if name == "griffe_math":
        pytest.importorskip("griffe")
    result = doctest.testmod(_load(name))
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize(("text", "expected"), [
    (":func:`decode_floor`", link("rd.estimate.decode_floor", "decode_floor()")),
    (":func:`decode_floor()`", link("rd.estimate.decode_floor", "decode_floor()")),
    (":class:`rd.Model`", link("rd.specs.model.Model", "rd.Model")),
    (":class:`~rd.Model`", link("rd.specs.model.Model", "Model")),
    (":py:class:`~rd.Model`", link("rd.specs.model.Model", "Model")),
    (":mod:`.families`", link("rd.specs.hf_config.families", "families")),
    (":attr:`Spec.size`", link("rd.specs.Spec.size", "Spec.size")),
    (":meth:`~Spec.save`", link("rd.specs.Spec.save", "save()")),
    (":data:`WEIGHT_GROUPS`", "`WEIGHT_GROUPS`"),  # not found: code, no link
    (":class:`pandas.DataFrame`", "`pandas.DataFrame`"),
    (":exc:`~errors.InvalidValueError`", "`InvalidValueError`"),
    (":func:`!decode_floor`", "`decode_floor()`"),  # "!": no link, as in Sphinx
    (":func:`the floor <decode_floor>`", link("rd.estimate.decode_floor", "the floor")),
])
def test_each_role_becomes_a_link_or_code(text, expected):
    assert rewrite(text) == expected


def test_text_around_roles_is_kept_and_no_role_survives():
    text = ("Uses :func:`decode_floor` and :class:`~rd.Model` (:data:`X`),\n"
            "math stays :math:`a_b`, a literal ``:func:`` too.")
    out = rewrite(text)
    assert out.startswith("Uses <autoref") and out.endswith("math stays :math:`a_b`, a literal ``:func:`` too.")
    assert xref.ROLE.search(out) is None


def test_roles_in_code_stay_text():
    """A role in a code block is text (as in Sphinx): doctests, fences, top-level indented blocks."""
    text = textwrap.dedent("""\
        Summary with :func:`decode_floor`.

            an indented block :func:`decode_floor`
            more :func:`decode_floor`

        ```
        :func:`decode_floor`
        ```

        >>> f(":func:`decode_floor`")
        ':func:`decode_floor`'

        After :func:`decode_floor`.

        Parameters
        ----------
        batch : int
            Sequences.

            See :func:`decode_floor` (a second paragraph, not code).
        """)
    out = rewrite(text).splitlines()
    linked = link("rd.estimate.decode_floor", "decode_floor()")
    assert [i for i, line in enumerate(out) if linked in line] == [0, 12, 19]
    assert [i for i, line in enumerate(out) if xref.ROLE.search(line)] == [2, 3, 6, 9, 10]


def test_leftover_roles_in_html():
    html = "<p>See :func:<code>decode_floor</code> and :py:class:<code>Model</code>; <code>:func:</code> alone.</p>"
    assert hooks.leftover_roles(html) == [":func:<code>decode_floor</code>", ":py:class:<code>Model</code>"]
    assert hooks.leftover_roles('<a href="#x"><code>decode_floor()</code></a>') == []


# -- resolving targets in a package loaded by griffe -------------------------------------------

PACKAGE = {
    "__init__.py": '"""Top: :func:`floor`."""\nfrom .core import floor, Spec\n',
    "core.py": textwrap.dedent('''
        """Core."""
        from pandas import DataFrame

        from ._private import calc as compute

        LIMIT = 3
        """A limit."""


        def floor():
            """The floor; see :class:`Spec`, :attr:`Spec.size`, :data:`LIMIT`."""


        class Spec:
            """A spec; :meth:`save` and :attr:`size`."""

            size: int = 1
            """The size."""

            def save(self):
                """Save it."""

            def frame(self):
                """As a :class:`pandas.DataFrame` (:class:`DataFrame`)."""
        '''),
    "calc.py": '"""A module named after its function."""\n\ndef calc():\n    """Calculate."""\n\ndef both():\n    """One."""\n',
    "_private.py": '"""Private."""\n\ndef calc():\n    """Another calc."""\n\ndef twice():\n    """One."""\n',
    "other.py": '"""Other."""\n\ndef twice():\n    """Two."""\n\ndef both():\n    """Two."""\n',
    "sub/__init__.py": '"""Sub: the readers of :mod:`.families` and :data:`.families.READERS`."""\n',
    "sub/families.py": '"""Families."""\n\nREADERS = {}\n"""The readers."""\n',
    "sub/reader.py": '"""Reads; see :mod:`.families`."""\n',
}


@pytest.fixture(scope="module")
def package(tmp_path_factory):
    griffe = pytest.importorskip("griffe")
    root = tmp_path_factory.mktemp("src")
    for name, text in PACKAGE.items():
        path = root / "xpkg" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return griffe.load("xpkg", search_paths=[str(root)], docstring_parser="numpy")


@pytest.mark.parametrize(("target", "kind", "scope", "expected"), [
    ("floor", "func", "xpkg", "xpkg.core.floor"),  # a re-export leads to the definition
    ("xpkg.floor", "func", "xpkg.other", "xpkg.core.floor"),  # absolute
    ("Spec", "class", "xpkg.core.floor", "xpkg.core.Spec"),  # the enclosing module
    ("size", "attr", "xpkg.core.Spec", "xpkg.core.Spec.size"),  # the class itself
    ("save", "meth", "xpkg.core.Spec.frame", "xpkg.core.Spec.save"),  # the enclosing class
    ("Spec.size", "attr", "xpkg.core.floor", "xpkg.core.Spec.size"),
    ("families", "mod", "xpkg.sub.reader", "xpkg.sub.families"),  # ".families": enclosing package
    ("families.READERS", "data", "xpkg.sub", "xpkg.sub.families.READERS"),
    ("READERS", "data", "xpkg.core", "xpkg.sub.families.READERS"),  # the one object of that name
    ("compute", "func", "xpkg.core", "xpkg._private.calc"),  # imported under another name
    ("calc", "func", "xpkg.core", "xpkg.calc.calc"),  # the module stands for its namesake function
    ("calc", "mod", "xpkg.core", "xpkg.calc"),
    ("xpkg.sub.READERS", "data", "xpkg.core", "xpkg.sub.families.READERS"),  # not imported by sub
    ("twice", "func", "xpkg.other", "xpkg.other.twice"),  # nearest scope first
    ("twice", "func", "xpkg.core", "xpkg.other.twice"),  # the public one of two
    ("DataFrame", "class", "xpkg.core.Spec.frame", None),  # outside the package
    ("pandas.DataFrame", "class", "xpkg.core.Spec.frame", None),
    ("missing", "func", "xpkg.core", None),
])
def test_resolver(package, target, kind, scope, expected):
    resolver = xref.Resolver(package)
    assert resolver.resolve(target, kind, package.modules_collection[scope]) == expected


def test_ambiguous_names_are_not_guessed(package):
    resolver = xref.Resolver(package)
    assert resolver.resolve("both", "func", package["core"]) is None  # xpkg.calc.both, xpkg.other.both
    assert resolver.resolve("both", "func", package["other"]) == "xpkg.other.both"


def test_extension_rewrites_every_docstring(package):
    xref.NumpydocCrossrefs().on_package(pkg=package)
    texts = [obj.docstring.value for obj in xref._walk(package) if obj.docstring is not None]
    assert not any(xref.ROLE.search(text) for text in texts)
    assert package["sub"].docstring.value == (
        'Sub: the readers of <autoref identifier="xpkg.sub.families" optional>`families`</autoref> and '
        '<autoref identifier="xpkg.sub.families.READERS" optional>`families.READERS`</autoref>.')
    assert package["core.Spec.frame"].docstring.value == "As a `pandas.DataFrame` (`DataFrame`)."


# -- a mini site: links where the target is rendered, code elsewhere, --strict stays green -------

SITE_PACKAGE = {
    "__init__.py": '"""Mini."""\nfrom .core import floor\n',
    "core.py": textwrap.dedent('''
        """Core: :func:`floor`, :func:`~mini.floor`, :func:`_helper`, :class:`pandas.DataFrame`."""


        def floor():
            """The floor (:func:`_helper`, :mod:`mini.hidden`)."""


        def _helper():
            """Not rendered (private)."""
        '''),
    "hidden.py": '"""Not on any page."""\n',
}


def _build(tmp_path: Path, page: str) -> subprocess.CompletedProcess[str]:
    for name, text in SITE_PACKAGE.items():
        (tmp_path / "src" / "mini").mkdir(parents=True, exist_ok=True)
        (tmp_path / "src" / "mini" / name).write_text(text, encoding="utf-8")
    (tmp_path / "docs").mkdir(exist_ok=True)
    (tmp_path / "docs" / "index.md").write_text(page, encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text(textwrap.dedent(f"""
        site_name: mini
        strict: true
        hooks: ["{(TOOLS / 'mkdocs_hooks.py').as_posix()}"]
        plugins:
          - mkdocstrings:
              handlers:
                python:
                  paths: [src]
                  options:
                    docstring_style: numpy
                    show_root_heading: true
                    show_source: false
                    extensions: ["{(TOOLS / 'griffe_xref.py').as_posix()}:NumpydocCrossrefs"]
        """), encoding="utf-8")
    # no --quiet: it drops the warnings that --strict counts (mkdocs 1.6)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})


def test_mini_site_links_and_falls_back_to_code(tmp_path):
    pytest.importorskip("mkdocstrings_handlers.python")
    built = _build(tmp_path, "# API\n\n::: mini.core\n")
    assert built.returncode == 0, built.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert hooks.leftover_roles(html) == [] and "<autoref" not in html
    assert html.count('href="#mini.core.floor"><code>floor()</code></a>') == 2  # floor, ~mini.floor
    assert '<span title="mini.core._helper"><code>_helper()</code></span>' in html  # found, not rendered
    assert '<span title="mini.hidden"><code>mini.hidden</code></span>' in html
    assert "<code>pandas.DataFrame</code>" in html  # outside the package


def test_mini_site_fails_on_role_text_left_in_a_page(tmp_path):
    pytest.importorskip("mkdocstrings_handlers.python")
    built = _build(tmp_path, "# API\n\nA role in a page: :func:`floor`.\n")
    assert built.returncode != 0
    assert "index.md: 1 unrendered reST role(s), e.g. :func:<code>floor</code>" in built.stderr
