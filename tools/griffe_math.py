"""Griffe extension for the docs site: numpydoc math in docstrings -> arithmatex math.

The docstrings follow numpydoc (reStructuredText math: ``.. math::`` blocks and ``:math:`x```
roles); the site renders Markdown with ``pymdownx.arithmatex``. This extension rewrites each
docstring's math, before mkdocstrings parses it, into ``$$ ... $$`` blocks and ``$...$``
inline spans. The docstrings themselves (and ``help()``) are left untouched: only the copy
griffe holds for the site changes. Loaded by mkdocs.yml (``extensions: - tools/griffe_math.py``).
"""

from __future__ import annotations

import re
import textwrap
from typing import Any

import griffe

_ROLE = re.compile(r":math:`([^`]+)`")


def rst_math_to_markdown(text: str) -> str:
    """Return ``text`` with reST math directives and roles as arithmatex math.

    >>> rst_math_to_markdown("Intro.\\n\\n.. math:: a = b\\n\\nMore :math:`x_1`.")
    'Intro.\\n\\n$$\\na = b\\n$$\\n\\nMore $x_1$.'
    """
    lines = text.split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.lstrip()
        if not stripped.startswith(".. math::"):
            out.append(_ROLE.sub(r"$\1$", line))
            i += 1
            continue
        indent = len(line) - len(stripped)
        pad = " " * indent
        body: list[str] = []
        first = stripped[len(".. math::"):].strip()
        if first:
            body.append(first)
        i += 1
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or len(lines[i]) - len(lines[i].lstrip()) > indent):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        block_lines = [b for b in textwrap.dedent("\n".join(block)).split("\n") if not b.lstrip().startswith(":")]
        body.extend(b for b in block_lines if b.strip())
        if out and out[-1].strip():
            out.append("")
        out.extend([pad + "$$", *(pad + b for b in body), pad + "$$"])
        if i < len(lines) and lines[i].strip():
            out.append("")
    return "\n".join(out)


class NumpydocMath(griffe.Extension):
    """Rewrite the math of every docstring griffe loads (see the module docstring)."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: D102
        if obj.docstring is not None and "math:" in obj.docstring.value:
            obj.docstring.value = rst_math_to_markdown(obj.docstring.value)
