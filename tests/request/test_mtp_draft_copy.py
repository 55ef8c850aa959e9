"""The MTP draft of a Model already used is built from its fields, not from a copy of its
cached parameter counts (model_copy kept the target's 61-layer counts for a 1-layer draft)."""

import roofline_decode as rd
from roofline_decode.floors.speculative import mtp_draft_model


def test_mtp_draft_of_a_used_model_equals_that_of_a_fresh_one():
    used = rd.load_model("deepseek-v3")
    rd.decode_floor(used, "h200-sxm", 1, 4096)  # fills the cached parameter counts
    fresh = rd.Model.from_hf_config(rd.catalog._MODEL_DIR / "deepseek-v3.json")
    assert mtp_draft_model(used, 1).parameter_groups == mtp_draft_model(fresh, 1).parameter_groups
    assert mtp_draft_model(used, 1).weight_bytes < used.weight_bytes / 10
    s = rd.speculative_floor(used, "h200-sxm", mtp_layers=1, k=1, acceptance=0.85, batch=[1, 64], context=4096)
    assert [round(float(x), 2) for x in s.speedup] == [1.17, 1.62]  # docs/speculative.md
