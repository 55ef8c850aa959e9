"""The examples of docs/your_own_device.md are the library's actual output, and its TOML example loads."""

import doctest
import re
from pathlib import Path

from roofline_decode import load_accelerator

DOC = Path(__file__).resolve().parents[2] / "docs" / "your_own_device.md"


def test_your_own_device_page_examples_run():
    # code fences become blank lines, so a fence never reads as expected output
    text = "\n".join("" if line.startswith("```") else line for line in DOC.read_text(encoding="utf-8").splitlines())
    test = doctest.DocTestParser().get_doctest(text, {}, "your_own_device.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert len(test.examples) >= 10
    assert runner.failures == 0


def test_the_page_spec_file_example_loads(tmp_path):
    block = re.search(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    path = tmp_path / "my-gpu.toml"
    path.write_text(block, encoding="utf-8")
    gpu = load_accelerator(str(path))
    assert gpu.id == "my-gpu" and gpu.category == "consumer"
    assert gpu.memory_bandwidth == 256e9 and gpu.peak_flops == {"fp16": 30e12}
