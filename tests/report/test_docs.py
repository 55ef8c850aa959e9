"""docs/report.md shows what the library prints: its >>> examples and its per-layer console block."""

import re

from roofline_decode.cli import main
from tests.markdown_examples import DOCS, run_page


def test_report_page_examples():
    run_page(DOCS / "report.md")


def test_per_layer_console_block_is_the_cli_output(capsys):
    text = (DOCS / "report.md").read_text(encoding="utf-8")
    block = re.search(r"```console\n\$ roofline-decode (floor [^\n]*--per-layer)\n(.*?)```", text, re.S)
    assert main(block.group(1).split()) == 0
    printed = capsys.readouterr().out
    assert printed.startswith(block.group(2))  # the page leaves the legend line out
