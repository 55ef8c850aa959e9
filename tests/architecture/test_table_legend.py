"""The table's B* legend names what each sequence brings: a KV cache, a recurrent state or both."""

import pytest

from roofline_decode import decode_floor
from roofline_decode.views.table import legend


@pytest.mark.parametrize("model, per_sequence", [
    ("llama-3.1-8b", "KV reads"),
    ("mamba-codestral-7b", "recurrent-state reads and writes"),
    ("nemotron-3-nano-30b-a3b", "KV and recurrent-state reads"),
])
def test_never_compute_bound_is_explained_by_the_model_s_own_per_sequence_traffic(model, per_sequence):
    floor = decode_floor(model, "h100-sxm", batch=[1, 64], context=100_000)
    (text,) = [line for line in legend(floor) if line.startswith("B* ")]
    assert f"inf: never compute-bound at that context, memory-bound at any batch (each sequence's {per_sequence} keep" in text
