"""``python -m roofline_decode.symbolic --write-docs docs``: regenerate the derivation and glossary pages."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m roofline_decode.symbolic", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write-docs", metavar="PATH",
                       help="docs directory (or a path to derivation.md) to write derivation.md and glossary.md into")
    group.add_argument("--check-docs", metavar="PATH", help="exit 1 if the pages in PATH are not current")
    args = parser.parse_args(argv)
    from ..errors import RooflineError
    from .docs import write_docs

    target = Path(args.write_docs or args.check_docs)
    directory = target.parent if target.suffix == ".md" else target
    try:
        changed = write_docs(directory, check=bool(args.check_docs))
    except RooflineError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    verb = "stale" if args.check_docs else "wrote"
    for path in changed:
        print(f"{verb}: {path}")
    return 1 if (args.check_docs and changed) else 0


if __name__ == "__main__":
    sys.exit(main())
