"""The ``roofline-decode`` command line.

Each subcommand lives in a module with a ``register(subparsers)`` function; this file only
wires them up and turns library errors into one line on stderr with exit code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from typing import NoReturn

from ..errors import RooflineError

#: Modules that register subcommands, in the order they appear in ``--help``.
COMMAND_MODULES = [
    "roofline_decode.cli.core",
    "roofline_decode.cli.plan",
    "roofline_decode.cli.deploy",
    "roofline_decode.cli.request",
    "roofline_decode.cli.serve",
    "roofline_decode.cli.plot",
    "roofline_decode.cli.measure",
    "roofline_decode.cli.validate",
    "roofline_decode.cli.report",
]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, exit 2, no traceback
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


#: subcommand -> the module of :data:`COMMAND_MODULES` that registers it (a test holds them equal)
COMMANDS = {
    **dict.fromkeys(["floor", "list", "show", "demo"], "roofline_decode.cli.core"),
    "plan": "roofline_decode.cli.plan",
    "deploy": "roofline_decode.cli.deploy",
    "request": "roofline_decode.cli.request",
    "serve": "roofline_decode.cli.serve",
    "plot": "roofline_decode.cli.plot",
    **dict.fromkeys(["compare", "calibrate", "predict"], "roofline_decode.cli.measure"),
    "validate": "roofline_decode.cli.validate",
    "report": "roofline_decode.cli.report",
}


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand; or, given the ``argv`` it will parse and a known
    subcommand first in it, of that subcommand's module alone (start-up time: the other
    modules and their parsers are not built).  Help, errors and unknown commands get every
    subcommand."""
    from .. import __version__

    parser = _Parser(
        prog="roofline-decode",
        description="How fast can an LLM possibly decode on a given accelerator, and why.",
    )
    parser.add_argument("--version", action="version", version=f"roofline_decode {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    first = argv[0] if argv else None
    for name in [COMMANDS[first]] if first in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except BrokenPipeError:  # e.g. piped into `head`
        return 0
    except (RooflineError, OSError) as exc:  # OSError: a file the command writes, a folder it lists
        message = str(exc) if isinstance(exc, RooflineError) else f"{exc.strerror or exc}: {exc.filename or ''}".rstrip(": ")
        print(f"roofline-decode: error: {one_line(message)}", file=sys.stderr)
        return 2


def one_line(message: str) -> str:
    """``message`` on one line: newlines and other control characters escaped as ``\\n``."""
    return "".join(ch if ch.isprintable() or ch == " " else repr(ch)[1:-1] for ch in message)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
