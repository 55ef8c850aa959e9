"""The README's instructions stay true: its Python example runs, its commands exist."""

import re
import shlex
from pathlib import Path

import pytest

from roofline_decode.cli import build_parser

README = Path(__file__).resolve().parents[2] / "README.md"
TEXT = README.read_text(encoding="utf-8")


def test_readme_opens_with_the_two_setup_commands():
    first_block = re.search(r"```bash\n(.*?)```", TEXT, re.S).group(1)
    commands = [line.split("#")[0].strip() for line in first_block.strip().splitlines()]
    assert commands == ["make demo", "make test"]


def test_readme_python_example_runs():
    code = re.search(r"```python\n(.*?)```", TEXT, re.S).group(1)
    namespace: dict = {}
    exec(compile(code, str(README), "exec"), namespace)  # noqa: S102 - our own README
    assert "floor" in namespace


def _cli_lines():
    for block in re.findall(r"```bash\n(.*?)```", TEXT, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("roofline-decode "):
                yield line


@pytest.mark.parametrize("line", list(_cli_lines()))
def test_readme_commands_parse(line):
    argv = shlex.split(line)[1:]
    if "|" in argv[-1]:  # "list models|gpus|tiers|formats" names the choices
        argv[-1] = argv[-1].split("|")[0]
    args = build_parser().parse_args(argv)
    assert callable(args.handler)
