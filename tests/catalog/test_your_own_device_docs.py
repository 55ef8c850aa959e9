"""The examples of docs/your_own_device.md are the library's actual output, and its TOML example loads."""

import re

from roofline_decode import load_accelerator
from tests.markdown_examples import DOCS, run_page

DOC = DOCS / "your_own_device.md"


def test_your_own_device_page_examples_run():
    run_page(DOC, min_examples=10)


def test_the_page_spec_file_example_loads(tmp_path):
    block = re.search(r"```toml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    path = tmp_path / "my-gpu.toml"
    path.write_text(block, encoding="utf-8")
    gpu = load_accelerator(str(path))
    assert gpu.id == "my-gpu" and gpu.category == "consumer"
    assert gpu.memory_bandwidth == 256e9 and gpu.peak_flops == {"fp16": 30e12}
