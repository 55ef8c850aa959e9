"""Griffe extension for the docs site: numpydoc cross-reference roles -> mkdocstrings links.

The docstrings follow numpydoc, whose cross-references are Sphinx roles (``:func:`decode_floor```,
``:class:`~roofline_decode.Model```, ``:mod:`.families```, ``:meth:``, ``:attr:``, ``:data:``,
...); Markdown knows none of them, so the site showed them as text. This extension rewrites
every role, on griffe's copy of each docstring only (the docstrings and ``help()`` keep them),
into an mkdocs-autorefs cross-reference to the object's canonical path:

* the target is looked up as Sphinx would, and a little further: in the object itself (a
  class's methods and attributes), in its parents up to the package root (so a leading dot,
  ``.families``, is relative to the enclosing package), as an absolute path, and last as the
  unique object whose path ends with the target (functions for ``:func:``, classes for
  ``:class:``, ...). A re-export (``roofline_decode.decode_floor``) leads to the object where it
  is defined (``roofline_decode.estimate.decode_floor``), the path the API pages give it.
* a target found in the package becomes an *optional* autoref: a link where the site renders
  that object, and inline code (with the full path as tooltip) where it does not (a private
  helper, an attribute without a docstring), so ``mkdocs build --strict`` never fails on one;
* a target outside the package (``pandas.DataFrame``) or not found becomes inline code;
* a role inside code (a doctest, a fenced or an indented block) stays as it is.

The text shown follows Sphinx: the target as written, its last part with ``~``, the title of
``:func:`title <target>```, ``()`` after functions and methods. Loaded by mkdocs.yml
(``extensions: - tools/griffe_xref.py:NumpydocCrossrefs``); ``tools/mkdocs_hooks.py`` fails the
build if role text still reaches a page.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any, cast

try:
    from griffe import AliasResolutionError, CyclicAliasError, Extension
except ImportError:  # the pure rewrite below is tested (tests/test_docs_xref.py) without griffe
    Extension = object  # type: ignore[assignment,misc]
    AliasResolutionError = CyclicAliasError = LookupError  # type: ignore[assignment,misc]

if TYPE_CHECKING:
    from griffe import Module, Object

#: a Sphinx Python-domain role: ``:func:`~a.b```, ``:py:class:`C```, ``:meth:`title <C.m>```
ROLE = re.compile(
    r":(?:py:)?(?P<kind>func|meth|class|exc|mod|attr|data|const|obj|type|deco|property):"
    r"`(?P<body>[^`\n]+)`"
)
_TITLED = re.compile(r"(?P<title>.*?)\s*<(?P<target>[^<>]+)>\s*$")
_CALLABLE = {"func", "meth", "deco"}
#: griffe kinds that answer each role first in the suffix search (others answer when none does)
_KINDS = {"func": {"function"}, "meth": {"function"}, "deco": {"function"}, "class": {"class"},
          "exc": {"class"}, "mod": {"module"}, "attr": {"attribute"}, "data": {"attribute"},
          "const": {"attribute"}, "property": {"attribute", "function"}}


def rst_roles_to_markdown(text: str, resolve: Callable[[str, str], str | None]) -> str:
    """Return ``text`` with its Sphinx cross-reference roles as autorefs or inline code.

    ``resolve(target, kind)`` gives the canonical path of a target (leading ``~`` and ``!``
    removed, leading dots kept, ``kind`` the role name such as ``"func"``), or None.

    >>> paths = {"decode_floor": "rd.estimate.decode_floor", "rd.Model": "rd.specs.model.Model"}
    >>> resolve = lambda target, kind: paths.get(target)
    >>> rst_roles_to_markdown("See :func:`decode_floor` and :class:`~rd.Model`.", resolve)
    'See <autoref identifier="rd.estimate.decode_floor" optional>`decode_floor()`</autoref> and <autoref identifier="rd.specs.model.Model" optional>`Model`</autoref>.'
    >>> rst_roles_to_markdown(":class:`pandas.DataFrame`, :py:mod:`.families`", resolve)
    '`pandas.DataFrame`, `families`'
    >>> rst_roles_to_markdown(":meth:`the floor <decode_floor>`, :func:`!decode_floor`", resolve)
    '<autoref identifier="rd.estimate.decode_floor" optional>`the floor`</autoref>, `decode_floor()`'

    Code is left as it is (a role in a code block is text, as in Sphinx): doctest examples and
    their output, fenced blocks, and indented blocks before the first numpydoc section.

    >>> text = "Text.\\n\\n    :func:`decode_floor`\\n\\n```\\nf()  # :func:`decode_floor`\\n```"
    >>> rst_roles_to_markdown(text, resolve) == text
    True
    """

    def replace(match: re.Match[str]) -> str:
        kind, body = match["kind"], match["body"].strip()
        titled = _TITLED.match(body)
        target = (titled["target"] if titled else body).strip()
        no_link = target.startswith("!")
        short = target.lstrip("!").startswith("~")
        target = target.lstrip("!~")
        if titled and titled["title"]:
            shown = titled["title"]
        else:
            shown = target.lstrip(".")
            if short:
                shown = shown.rsplit(".", 1)[-1]
            if kind in _CALLABLE and not shown.endswith(")"):
                shown += "()"
        path = None if no_link else resolve(target.removesuffix("()"), kind)
        code = f"`{shown}`"
        return code if path is None else f'<autoref identifier="{path}" optional>{code}</autoref>'

    lines = text.split("\n")
    code = _code_lines(lines)
    return "\n".join(line if i in code else ROLE.sub(replace, line) for i, line in enumerate(lines))


def _code_lines(lines: list[str]) -> set[int]:
    """The indices of the lines that Markdown shows as code (see ``rst_roles_to_markdown``)."""
    code: set[int] = set()
    fence = doctest = False
    sections = False  # past the first numpydoc section header (a line underlined with dashes)
    for i, line in enumerate(lines):
        stripped = line.strip()
        fence_line = stripped.startswith(("```", "~~~"))
        if not line.startswith(" ") and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            sections = True
        if fence_line:
            fence = not fence
        elif stripped.startswith(">>>"):
            doctest = True
        elif not stripped:
            doctest = False
        blank_before = i == 0 or not lines[i - 1].strip()
        indented = not sections and line.startswith("    ") and (blank_before or i - 1 in code)
        if fence or fence_line or doctest or indented:
            code.add(i)
    return code


class Resolver:
    """Find the canonical path of a role's target in a package loaded by griffe."""

    def __init__(self, package: Module) -> None:
        self.package = package
        #: dotted suffix of a path (``"kv_cache.attended_positions"``) -> objects ending so
        self.by_suffix: dict[str, list[Object]] = {}
        for obj in _walk(package):
            parts = obj.path.split(".")
            for start in range(len(parts)):
                self.by_suffix.setdefault(".".join(parts[start:]), []).append(obj)

    def resolve(self, target: str, kind: str, scope: Object) -> str | None:
        """The canonical path of ``target`` seen from ``scope`` (an object of the package), or None."""
        name = target.lstrip(".")
        if not name:
            return None
        scopes = list(_scopes(scope))
        for place in [*scopes, self.package.modules_collection]:
            if (path := _canonical(place, name, kind)) is not None:
                return path
        for place in scopes:  # nearest scope first: the one object of that name under it
            if found := self._ending_with(name, kind, under=place.path):
                return found[0] if len(found) == 1 else None  # several: inline code, never a guess
        head, _, last = name.rpartition(".")  # a name the package does not import statically
        if head and (under := self.resolve(head, "obj", scope)) is not None:
            found = self._ending_with(last, kind, under=under)
            return found[0] if len(found) == 1 else None
        return None

    def _ending_with(self, name: str, kind: str, *, under: str) -> list[str]:
        """The paths under ``under`` that end with ``name``, narrowed to one where possible.

        Objects of the role's kind are taken first, then of those the public ones (no ``_``
        part in the path).
        """
        found = [o for o in self.by_suffix.get(name, []) if o.path.startswith(under + ".")]
        wanted = _KINDS.get(kind, set())
        for pool in ([o for o in found if o.kind.value in wanted], found):
            public = [o for o in pool if not any(part.startswith("_") for part in o.path.split("."))]
            for candidates in (pool, public):
                if len(candidates) == 1:
                    return [candidates[0].path]
            if pool:
                return [o.path for o in pool]
        return []


def _walk(obj: Object) -> Iterator[Object]:
    """``obj`` and every object defined (not imported) under it."""
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _walk(cast("Object", member))


def _scopes(obj: Object) -> Iterator[Object]:
    """Where a short name is looked up: the object, then each parent up to the package root."""
    place: Object | None = obj
    while place is not None:
        yield place
        place = place.parent


def _canonical(place: Any, name: str, kind: str) -> str | None:
    """The canonical path of ``place[name]`` (a member of an object or a modules collection).

    For a role that names no module (``:func:`calibrate```), a module holding a namesake member
    (``measure.calibrate.calibrate``) stands for that member.
    """
    try:
        found = place[name]
        if found.is_module and "module" not in _KINDS.get(kind, {"module"}) and found.name in found.members:
            found = found[found.name]
        return str(found.canonical_path)
    except (KeyError, AttributeError, ValueError, AliasResolutionError, CyclicAliasError):
        return None


class NumpydocCrossrefs(Extension):
    """Rewrite the cross-reference roles of every docstring in a package (module docstring)."""

    def on_package(self, *, pkg: Module, **kwargs: Any) -> None:  # noqa: D102
        resolver = Resolver(pkg)
        for obj in _walk(pkg):
            docstring = obj.docstring
            if docstring is not None and ROLE.search(docstring.value):
                docstring.value = rst_roles_to_markdown(docstring.value, partial(resolver.resolve, scope=obj))
