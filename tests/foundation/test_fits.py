"""Fit and limits in every answer: fits, max_batch, resident bytes, position limit, notes."""

import csv
import io
import json

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import RECORD_KEYS, decode_floor, sweep
from roofline_decode.cli import main
from roofline_decode.floors.results import EXTRA_RECORD_KEYS
from roofline_decode.floors.capacity import max_batch, resident_bytes, usable_memory


def test_llama_70b_batch_256_at_8k_on_one_h100_does_not_fit_and_says_so():
    r = decode_floor("llama-3.1-70b", "h100-sxm", batch=256, context=8192)
    # the step moves 826.3 GB (weights read + KV read); resident are 828.3 GB (all weights + KV)
    assert round(float(r.bytes_total) / 1e9, 1) == 826.3
    assert round(float(r.resident_bytes) / 1e9, 1) == 828.3
    assert round(float(r.tokens_per_s)) == 1038  # the floor is still reported ...
    assert not bool(r.fits) and float(r.max_batch) == 0  # ... but it does not fit
    assert r.usable_memory == usable_memory("h100-sxm")
    # 81,559 MiB (nvidia-smi) - 2 GiB = 83,373,326,336 B
    assert any(n.startswith("does not fit: the weights alone (141.1 GB) > 83.37 GB usable on h100-sxm") for n in r.notes)
    (record,) = r.to_records()
    assert record["fits"] is False
    assert record["notes"] == ["does not fit: 828.3 GB resident > 83.37 GB usable on h100-sxm"]
    # on a B200 batch 1 fits, batch 256 does not
    b200 = decode_floor("llama-3.1-70b", "b200", batch=[1, 256], context=8192)
    assert list(b200.fits) == [True, False]
    assert any(n.startswith("does not fit at 1 of 2 grid points") for n in b200.notes)


def test_fits_and_max_batch_follow_the_planning_rule():
    contexts = np.array([0, 1024, 8192, 32768, 131071])
    batches = np.array([1, 2, 7, 15, 16, 60, 61, 62, 500, 4096])[:, None]
    r = decode_floor("llama-3.1-8b", "h100-sxm", batch=batches, context=contexts)
    np.testing.assert_array_equal(r.fits, resident_bytes("llama-3.1-8b", batches, contexts) <= usable_memory("h100-sxm"))
    largest = max_batch("llama-3.1-8b", "h100-sxm", contexts[1:])
    np.testing.assert_array_equal(r.max_batch[0, 1:], largest)
    assert np.isinf(r.max_batch[0, 0])  # context 0: no KV cache, the weights fit
    np.testing.assert_array_equal(r.fits, batches <= r.max_batch)  # whole batches: fits iff B <= max_batch
    assert int(r.max_batch[0, 3]) == 15  # planning's doctest: 15 sequences at 32K
    assert r.notes == (f"does not fit at {int((~r.fits).sum())} of 50 grid points (weights + KV cache > 83.37 GB "
                       "usable on h100-sxm (2 GiB reserve)); see fits, resident_bytes and max_batch",)


def test_weights_that_never_fit_give_max_batch_zero_everywhere():
    r = decode_floor("llama-3.1-405b", "h100-sxm", batch=[1, 8], context=[[0], [4096]])
    assert not r.fits.any() and (r.max_batch == 0).all()


def test_sweep_carries_fits_per_device():
    result = sweep("llama-3.1-8b", ["l4", "h200-sxm"], batch=[1, 64], context=[1024, 32768])
    l4, h200 = result
    assert l4.fits.shape == (2, 2) and not l4.fits[1, 1] and h200.fits[1, 0]
    assert l4.usable_memory < h200.usable_memory


def test_context_beyond_max_position_embeddings_is_noted():
    r = decode_floor("llama-3.1-8b", "h200-sxm", batch=1, context=[131071, 131072, 200000])
    np.testing.assert_array_equal(r.beyond_positions, [False, True, True])
    assert ("context 131072 and more is beyond Llama-3.1-8B's max_position_embeddings = 131072: the model has no "
            "position for the new token; the floor extrapolates") in r.notes
    records = r.to_records()
    assert records[0]["notes"] == [] and records[1]["notes"] == ["context beyond max_position_embeddings = 131072"]
    assert not any("position" in n for n in decode_floor("llama-3.1-8b", "h200-sxm", context=4096).notes)


def test_point_notes_put_limits_before_assumptions():
    r = decode_floor("gpt-oss-120b", "h100-sxm", batch=[1, 512], context=32768, sparse=True)
    first, second = r.to_records()
    assert first["fits"] and second["fits"] is False
    assert second["notes"][0].startswith("does not fit: ") and "routing 'uniform'" in second["notes"][-1]
    assert first["notes"] == list(r.assumptions)


def test_cli_table_has_a_fits_column_and_notes(capsys):
    code = main(["floor", "--model", "llama-3.1-70b", "--gpu", "b200", "--batch", "1,256", "--context", "8K"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[1].split()[-1] == "fits"
    assert out[2].split()[-1] == "yes" and out[3].split()[-1] == "no"
    assert any(line.startswith("note: does not fit at 1 of 2 grid points") for line in out)


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_json_and_csv_keep_the_19_keys_then_fits_and_notes(capsys, fmt):
    code = main(["floor", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--batch", "256", "--context", "8K",
                 "--format", fmt])
    out = capsys.readouterr().out
    (record,) = json.loads(out) if fmt == "json" else list(csv.DictReader(io.StringIO(out)))
    assert len(RECORD_KEYS) == 19 and list(record)[:21] == [*RECORD_KEYS, "fits", "notes"]
    assert list(record) == [*RECORD_KEYS, *EXTRA_RECORD_KEYS]
    assert record["fits"] in (False, "False")
    assert "does not fit: 828.3 GB resident" in (record["notes"][0] if fmt == "json" else record["notes"])


def test_ridge_and_breakdown_plots_mark_points_that_do_not_fit():
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from roofline_decode import plotting

    ax = plotting.ridge_plot("llama-3.1-70b", ["h100-sxm", "b200"], batch=[1, 16, 256], context=[256, 8192])
    marks = [a for a in ax.get_children() if a.get_gid() == "does-not-fit"]
    b200 = decode_floor("llama-3.1-70b", "b200", batch=[[1], [16], [256]], context=[256, 8192])
    # every H100 point (the weights alone do not fit) and the B200 points that do not
    assert sum(len(m.get_xdata()) for m in marks) == 6 + int((~b200.fits).sum()) and (~b200.fits).sum() == 1
    assert "does not fit: weights + KV cache > usable memory" in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(ax.figure)
    fitting = plotting.ridge_plot("llama-3.1-8b", "h200-sxm", batch=[1, 8], context=1024)
    assert not [a for a in fitting.get_children() if a.get_gid() == "does-not-fit"]
    plt.close(fitting.figure)

    ax = plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", batch=[1, 8, 32, 64, 128], context=8192)
    (span,) = [a for a in ax.get_children() if a.get_gid() == "does-not-fit"]
    assert span.get_x() == 64  # 64 sequences at 8K need 84.78 GB > 83.75 GB usable; 32 fit
    plt.close(ax.figure)
    ax = plotting.breakdown_plot("llama-3.1-8b", "h100-sxm", batch=[1, 8], context=1024)
    assert not [a for a in ax.get_children() if a.get_gid() == "does-not-fit"]
    plt.close(ax.figure)
