"""`roofline-decode serve`: tables, records, disaggregation, bad input (exit 2, one line)."""

import csv
import io
import json

import numpy as np
import pytest

from roofline_decode.cli import main
from roofline_decode.floors.serving import serving_floor

BASE = ["serve", "--model", "qwen3-32b-fp8", "--kv", "fp8", "--gpu", "h100-sxm", "--concurrency", "128", "--isl",
        "4K", "--osl", "128,256,512", "--tp", "4"]


def run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse errors
        code = exit_.code
    out, err = capsys.readouterr()
    return code, out, err


def test_table_json_csv_agree_with_the_library(capsys):
    code, out, _ = run(capsys, BASE)
    assert code == 0 and "TPOT ms" in out and "35.44" in out and "tp4" in out and "note: steady state" in out
    expected = serving_floor("qwen3-32b-fp8", "h100-sxm", 128, 4096, [128, 256, 512], parallel=4,
                             kv="fp8").to_records()
    code, out, _ = run(capsys, BASE + ["--format", "json"])
    records = json.loads(out)
    assert code == 0 and len(records) == 3
    for got, want in zip(records, expected):
        assert got["tpot_s"] == pytest.approx(want["tpot_s"], rel=1e-12) and got["layout"] == "tp4"
        assert got["limited_by"] == want["limited_by"]
    code, out, _ = run(capsys, BASE + ["--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [float(r["osl"] if "osl" in r else r["output_length"]) for r in rows] == [128, 256, 512]


def test_grid_is_concurrency_by_isl_by_osl(capsys):
    code, out, _ = run(capsys, ["serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "1,8",
                                "--isl", "512,2K", "--osl", "64", "--format", "json"])
    records = json.loads(out)
    assert code == 0 and [(r["concurrency"], r["input_length"]) for r in records] == [
        (1, 512), (1, 2048), (8, 512), (8, 2048)]


def test_disaggregated_with_workers_link_and_rate(capsys):
    argv = ["serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "64", "--isl", "2K", "--osl",
            "256", "--disagg", "--decode-workers", "2", "--kv-link-gbps", "50", "--rate", "30"]
    code, out, _ = run(capsys, argv)
    assert code == 0 and "1 x prefill tp1 + 2 x decode tp1" in out and "P:D ratio" in out
    code, out, _ = run(capsys, argv[:-2] + ["--format", "json"])
    record = json.loads(out)[0]
    want = serving_floor("llama-3.1-8b", "h100-sxm", 64, 2048, 256, mode="disaggregated", decode_workers=2,
                         kv_link_bandwidth=50e9)
    assert record["kv_transfer_s"] == pytest.approx(float(want.kv_transfer_s), rel=1e-12)
    assert record["num_devices"] == 3 and record["prefill_tokens_per_step"] == 0
    assert np.isclose(record["kv_transfer_s"], 2048 * 131072 / 50e9)


@pytest.mark.parametrize("extra, flag", [
    (["--osl", "1"], "output_length"),
    (["--concurrency", "0"], "concurrency"),
    (["--ep", "2"], "--ep"),
    (["--tp", "3"], "--tp"),
    (["--tp", "0"], "--tp"),
    (["--rate", "3"], "--rate"),
    (["--kv-link-gbps", "50"], "--kv-link-gbps"),
    (["--decode", "tp2"], "--decode"),
    (["--decode-workers", "2"], "--prefill-workers/--decode-workers"),
    (["--chunk", "256,512"], "--chunk"),
    (["--disagg", "--kv-link-gbps", "-5"], "--kv-link-gbps"),
    (["--disagg", "--prefill-workers", "0"], "--prefill-workers"),
    (["--disagg", "--decode", "tp0"], "--decode"),
    (["--disagg", "--decode", "tq4"], "--decode"),
])
def test_bad_input_exits_2_with_one_line(capsys, extra, flag):
    argv = ["serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "8", "--isl", "512", "--osl",
            "64"]
    code, out, err = run(capsys, argv + extra)
    assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err
    assert flag in err


def test_layouts_reach_the_library(capsys):
    code, out, _ = run(capsys, ["serve", "--model", "mixtral-8x7b", "--gpu", "h100-sxm", "--concurrency", "64", "--isl",
                                "1K", "--osl", "256", "--disagg", "--prefill", "tp2", "--decode", "tp2ep2",
                                "--format", "json"])
    record = json.loads(out)[0]
    want = serving_floor("mixtral-8x7b", "h100-sxm", 64, 1024, 256, mode="disaggregated", prefill_parallel="tp2",
                         decode_parallel="tp2ep2")
    assert code == 0 and record["tpot_s"] == pytest.approx(float(want.tpot_s), rel=1e-12)
    assert record["layout"] == "1 x prefill tp2 + 1 x decode tp2 ep2" and record["num_devices"] == 4


def test_missing_required_option_exits_2(capsys):
    code, _, err = run(capsys, ["serve", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--isl", "512"])
    assert code == 2 and "--concurrency" in err
