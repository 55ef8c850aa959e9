"""Prints how many generated inputs each fuzzed entry point received (issue 12, item 6)."""

from tests.fuzz.strategies import INPUTS


def pytest_terminal_summary(terminalreporter):
    if INPUTS:
        total = sum(INPUTS.values())
        parts = ", ".join(f"{name} {count}" for name, count in sorted(INPUTS.items()))
        terminalreporter.write_line(f"fuzz inputs: {total} ({parts})")
