"""``roofline-decode plan``: the verdict table, JSON, and one-line errors with exit code 2."""

import json

import pytest

from roofline_decode.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_table_has_a_verdict_per_gpu(capsys):
    code, out, _ = run(capsys, "plan", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpu", "b200",
                       "--batch", "16", "--context", "32768", "--slo-ms", "50")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "Llama-3.1-70B: batch 16, context 32768"
    assert "verdict" in lines[1] and "min devices" in lines[1]
    h100 = next(line for line in lines if line.startswith("h100-sxm"))
    b200 = next(line for line in lines if line.startswith("b200"))
    # the verdict in words: what stops the plan
    assert " capacity and bandwidth " in h100 and h100.rstrip().endswith("4")
    assert " capacity " in b200 and "bandwidth" not in b200
    assert lines[-1].startswith("verdict: what stops the plan") and "capacity: weights + KV cache" in lines[-1]


def test_plan_json_with_tp_and_offload(capsys):
    code, out, _ = run(capsys, "plan", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--batch", "16",
                       "--context", "32K", "--slo-ms", "50", "--tp", "4", "--offload-kv", "0.5", "--tier", "pcie5-x16",
                       "--format", "json")
    assert code == 0
    [record] = json.loads(out)
    assert record["devices"] == 4 and record["context"] == 32768
    assert record["bound"] == "tier" and record["verdict"] == "bandwidth-limited"
    assert record["tier_resident_bytes_per_device"] > 0
    assert record["min_devices"] is None  # no tensor-parallel degree meets 50 ms with half the KV over PCIe


def test_plan_without_target(capsys):
    code, out, _ = run(capsys, "plan", "--model", "llama-3.1-8b", "--gpu", "l4", "--batch", "4", "--context", "8192",
                       "--format", "json")
    [record] = json.loads(out)
    assert code == 0 and record["verdict"] == "ok" and record["meets_target"] is None and record["min_devices"] == 1


@pytest.mark.parametrize("argv,needle", [
    (["--batch", "0", "--context", "1024"], "--batch"),
    (["--batch", "1", "--context", "1024", "--slo-ms", "-3"], "--slo-ms"),
    (["--batch", "1", "--context", "1024", "--offload-kv", "2", "--tier", "pcie5-x16"], "--offload-kv"),
    (["--batch", "1", "--context", "1024", "--offload-kv", "0.5"], "--tier"),
    (["--batch", "1", "--context", "1024", "--offload-kv", "0.5", "--tier", "pcie9"], "pcie9"),
])
def test_plan_errors_are_one_line_exit_2(capsys, argv, needle):
    try:
        code = main(["plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", *argv])
    except SystemExit as exc:  # argparse errors exit directly
        code = exc.code
    out, err = capsys.readouterr()
    assert code == 2
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_plan_help_shows_example(capsys):
    with pytest.raises(SystemExit):
        main(["plan", "--help"])
    out, _ = capsys.readouterr()
    assert "--offload-kv" in out and "example:" in out


@pytest.mark.parametrize("option,value", [("--reserve-gib", "nan"), ("--reserve-gib", "-1"),
                                          ("--collective-us", "abc"), ("--collective-us", "inf"),
                                          ("--offload-weights", "half")])
def test_plan_number_options_are_checked_by_argparse(capsys, option, value):
    with pytest.raises(SystemExit) as info:
        main(["plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "1024",
              option, value])
    _, err = capsys.readouterr()
    assert info.value.code == 2 and option in err and len(err.strip().splitlines()) == 1
