"""MkDocs hooks of the docs site (mkdocs.yml ``hooks:``).

Role text left in a page fails the build: a reStructuredText role that reaches the HTML
unrendered (``:func:<code>decode_floor</code>``, ``:math:<code>x</code>``) means a docstring
syntax the griffe extensions in tools/ do not rewrite yet. The warning names the page and the
roles; ``mkdocs build --strict`` turns it into an error.
"""

from __future__ import annotations

import logging
import re
from typing import Any

# under "mkdocs.", so that --strict counts the warning (no import of mkdocs needed for the tests)
log = logging.getLogger("mkdocs.hooks.roofline_docs")

#: a role as it reaches HTML: ``:name:`` (or ``:domain:name:``) right before its code span
#: (a role quoted in a code block keeps its backticks and is left alone)
LEFTOVER_ROLE = re.compile(r":(?:[a-z]+:)?[a-z]+:<code>[^<]*</code>")


def leftover_roles(html: str) -> list[str]:
    """The unrendered roles in a page's HTML.

    >>> leftover_roles('<p>See :func:<code>decode_floor</code>; <code>:func:</code> is fine.</p>')
    [':func:<code>decode_floor</code>']
    """
    return LEFTOVER_ROLE.findall(html)


def on_page_content(html: str, page: Any, **kwargs: Any) -> str:
    """Warn about role text left in ``page`` (an error under ``--strict``)."""
    if found := leftover_roles(html):
        shown = ", ".join(sorted(set(found))[:5])
        log.warning("%s: %d unrendered reST role(s), e.g. %s", page.file.src_uri, len(found), shown)
    return html
