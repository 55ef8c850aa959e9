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


def test_readme_counts_and_names_the_record_keys():
    """The README's "after the N record keys" is len(RECORD_KEYS), and the sentence names every
    key that follows them (EXTRA_RECORD_KEYS: fits, notes, chain_time_s)."""
    from roofline_decode import RECORD_KEYS
    from roofline_decode.floors.results import EXTRA_RECORD_KEYS

    sentence = re.search(r"the table's `fits` column.*?record keys", TEXT, re.S).group(0)
    (count,) = re.findall(r"after the (\d+) record keys", sentence)
    assert int(count) == len(RECORD_KEYS)
    named = re.findall(r"`(\w+)`", sentence.split("notes under it,")[1])
    assert named == list(EXTRA_RECORD_KEYS)


def test_readme_lists_every_list_choice():
    """``roofline-decode list A|B|...`` in the README names every choice the parser has."""
    import argparse

    (line,) = [line for line in _cli_lines() if line.startswith("roofline-decode list ")]
    listed = shlex.split(line)[-1].split("|")
    subparsers = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    choices = next(a for a in subparsers.choices["list"]._actions if a.dest not in ("help", "vendor", "category"))
    assert listed == list(choices.choices)
    for choice in listed:
        assert callable(build_parser().parse_args(["list", choice]).handler)
