"""`roofline-decode list gpus|tiers` and `roofline-decode show ID` for the hardware catalog."""

from __future__ import annotations

import pytest

from roofline_decode import catalog
from roofline_decode.cli import main
from roofline_decode.planning import device_memory
from roofline_decode.units import GB, TFLOP

from .helpers import ACCELERATOR_FILES, SPEC_FILES, TIER_FILES, ids, spec


def run(capsys, *argv):
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def gpu_rows():
    import io
    from contextlib import redirect_stdout

    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["list", "gpus"]) == 0
    lines = buffer.getvalue().splitlines()
    header = lines[0]
    starts = [header.index(h) for h in ("id", "name", "memory", "bandwidth", "dense bf16", "ridge", "category",
                                         "device GiB")]

    def cells(line):
        return [line[a:b].strip() for a, b in zip(starts, starts[1:] + [None])]

    rows = {cells(line)[0]: cells(line) for line in lines[1:]
            if line and not line.startswith(("(", "device GiB:"))}
    return header, rows, lines


def test_list_gpus_has_one_row_per_accelerator(gpu_rows):
    header, rows, _ = gpu_rows
    for column in ("id", "name", "memory", "bandwidth", "dense bf16", "ridge"):
        assert column in header
    assert sorted(rows) == sorted(catalog.list_accelerators())


@pytest.mark.parametrize("path", ACCELERATOR_FILES, ids=ids(ACCELERATOR_FILES))
def test_list_gpus_row_matches_the_spec(gpu_rows, path):
    _, rows, _ = gpu_rows
    gpu = spec(path)
    gpu_id, name, memory, bandwidth, peak, ridge, category, device_gib = rows[path.stem]
    assert name == gpu.name
    assert category == gpu.category
    assert float(device_gib) == pytest.approx(device_memory(gpu) / 2**30, rel=1e-3)
    printed = gpu.figures["memory_capacity"]
    assert memory == f"{printed.value:g} {printed.unit}"  # as printed: GB or GiB
    assert float(bandwidth.removesuffix(" GB/s")) == pytest.approx(gpu.memory_bandwidth / GB, rel=1e-5)
    precision = "bf16" if "bf16" in gpu.peak_flops else "fp16" if "fp16" in gpu.peak_flops else None
    if precision is None:
        assert peak == "-" and ridge == "-"
        return
    value, _, marker = peak.partition(" ")
    assert float(value) == pytest.approx(gpu.peak_flops[precision] / TFLOP, rel=1e-5)
    assert marker == ("" if precision == "bf16" else "(fp16)")
    assert float(ridge) == pytest.approx(gpu.ridge_point(precision), rel=1e-3)


def test_list_gpus_shows_printed_units_and_marks_the_fp16_fallback(gpu_rows):
    _, rows, lines = gpu_rows
    assert rows["tpu-v4"][2] == "32 GiB" and rows["h100-sxm"][2] == "80 GB"
    assert rows["h100-sxm"][3:] == ["3350 GB/s", "989.5", "295.4", "datacenter", "79.65"]  # 81,559 MiB (nvidia-smi)
    assert rows["t4"][4] == "65 (fp16)" and rows["t4"][7] == "15"  # 15,360 MiB with ECC on
    assert rows["m1-max"][4:] == ["10.62 (fp16)", "26.55", "soc", "48"]  # the GPU ALU rate; 3/4 of 64 GiB
    assert rows["m5-max"][4:] == ["-", "-", "soc", "96"]  # no compute peak (the notes say why); 3/4 of 128 GiB
    assert any(line.startswith("(fp16):") for line in lines)


@pytest.mark.parametrize("vendor, category", [("apple", None), ("NVIDIA", "consumer"), ("intel", "datacenter"),
                                              (None, "workstation"), ("amd", "cpu"), ("intel", "consumer"), ("nvidia", "soc")])
def test_list_gpus_filters_by_vendor_and_category(capsys, vendor, category):
    argv = ["list", "gpus"] + (["--vendor", vendor] if vendor else []) + (["--category", category] if category else [])
    code, out, _ = run(capsys, *argv)
    assert code == 0
    expected = sorted(
        p.stem for p in ACCELERATOR_FILES
        if (vendor is None or spec(p).vendor.split(" (")[0].casefold() == vendor.casefold())
        and (category is None or spec(p).category == category)
    )
    assert expected, "each case should match at least one bundled device"
    listed = sorted(line.split()[0] for line in out.splitlines()[1:]
                    if line and not line.startswith(("(", "device GiB:")))
    assert listed == expected


def test_list_gpus_filter_matching_nothing_says_so(capsys):
    code, out, _ = run(capsys, "list", "gpus", "--vendor", "google", "--category", "consumer")
    assert code == 0 and out.strip() == "no accelerator matches --vendor google --category consumer"


@pytest.mark.parametrize("argv, needle", [
    (["list", "gpus", "--vendor", "nvidea"], "nvidea"),
    (["list", "gpus", "--category", "phone"], "phone"),
    (["list", "models", "--vendor", "amd"], "list gpus"),
    (["list", "tiers", "--category", "cpu"], "list gpus"),
])
def test_list_filters_reject_bad_input_in_one_line(capsys, argv, needle):
    code, _, err = run(capsys, *argv)
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_every_bundled_accelerator_has_a_category():
    for path in ACCELERATOR_FILES:
        assert spec(path).category in catalog_categories(), path.stem


def catalog_categories():
    from roofline_decode.specs.accelerator import CATEGORIES

    return CATEGORIES


def test_list_tiers_shows_printed_bandwidth_and_meaning(capsys):
    code, out, _ = run(capsys, "list", "tiers")
    assert code == 0
    lines = {line.split()[0]: line for line in out.splitlines()[1:]}
    assert sorted(lines) == sorted(p.stem for p in TIER_FILES)
    assert "63 GB/s" in lines["pcie5-x16"] and "per_direction" in lines["pcie5-x16"]
    assert "half_duplex" in lines["ddr5-4800-channel"]


@pytest.mark.parametrize("path", SPEC_FILES, ids=ids(SPEC_FILES))
def test_show_prints_every_figure_with_unit_kind_source_and_derivation(capsys, path):
    code, out, err = run(capsys, "show", path.stem)
    assert code == 0 and err == ""
    loaded = spec(path)
    lines = out.splitlines()
    assert loaded.name in lines[0] and path.stem in lines[0]
    for key, figure in loaded.figures.items():
        row = next((line for line in lines if line.split()[:1] == [key]), None)
        assert row is not None, f"no line for {key}"
        value = repr(figure.value).removesuffix(".0")
        assert row.split()[1:5] == [value, figure.unit, figure.kind, figure.source], row
        if figure.derivation:
            assert f"derivation: {figure.derivation}" in out
        if figure.note:
            assert f"note: {figure.note}" in out
    for key, source in loaded.sources.items():
        assert f"{key}: {source.title}" in out and source.url in out and source.retrieved in out


@pytest.mark.parametrize("gpu, expected", [
    ("l40s", "device memory: 44.99 GiB (category datacenter; the runtime exposes 46068 MiB)"),
    ("m1-max", "device memory: 48 GiB (category soc; unified: 0.75 of it by macOS's default GPU wired limit"),
    ("dgx-spark", "device memory: 128 GiB (category soc; unified: all of it counted"),
    ("h100-sxm", "device memory: 79.65 GiB (category datacenter; the runtime exposes 81559 MiB)"),
    ("a100-80gb-sxm", "device memory: 80 GiB (category datacenter)"),
])
def test_show_states_the_device_memory_rule(capsys, gpu, expected):
    code, out, _ = run(capsys, "show", gpu)
    assert code == 0 and expected in out


def test_show_states_interconnect_semantics_and_ridge(capsys):
    code, out, _ = run(capsys, "show", "h100-sxm")
    assert code == 0
    assert "interconnect: NVLink 4 (18 links): bidirectional, aggregate = 450 GB/s per direction" in out
    assert "ridge point (dense bf16): 295.4 FLOP/B" in out
    _, out, _ = run(capsys, "show", "gaudi2")
    assert "per direction, aggregate = 300 GB/s per direction" in out


def test_show_a_spec_file_by_path(capsys, tmp_path):
    from .test_catalog_loading import GOOD, TIER

    (tmp_path / "mine.toml").write_text(GOOD)
    (tmp_path / "link.toml").write_text(TIER)
    code, out, _ = run(capsys, "show", str(tmp_path / "mine.toml"))
    assert code == 0 and "Test GPU  [mine]" in out and "derivation: sparse/2: 800 with sparsity" in out
    code, out, _ = run(capsys, "show", str(tmp_path / "link.toml"))
    assert code == 0 and "direction: per_direction" in out


@pytest.mark.parametrize("argv, needle", [
    (["show", "h100"], "did you mean h100-sxm"),
    (["show", "no-such-device"], "no-such-device"),
    (["show", "missing/file.toml"], "missing/file.toml: (file): cannot read"),
])
def test_show_bad_id_is_one_line_and_exit_2(capsys, argv, needle):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert needle in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_show_a_malformed_file_is_one_line(capsys, tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('type = "accelerator"\nname = "x"\nvendor = "y"\nmemory_capacity = "lots"\n')
    code, _, err = run(capsys, "show", str(path))
    assert code == 2 and f"{path}: memory_capacity" in err and len(err.strip().splitlines()) == 1


# -- models: `list models` and `show MODEL` ------------------------------------------------------

def test_list_models_shows_name_and_stated_parameters(capsys):
    code, out, _ = run(capsys, "list", "models")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["id", "name", "parameters", "(stated)"]
    rows = {line.split()[0]: line for line in lines[1:]}
    assert sorted(rows) == catalog.list_models()
    for model_id, line in rows.items():
        meta = catalog.model_metadata(model_id)
        assert meta["name"] in line and meta["params_stated"] and line.rstrip().endswith(meta["params_stated"])


def test_show_a_model_by_id_gives_counts_layout_and_provenance(capsys):
    code, out, err = run(capsys, "show", "llama-3.1-8b")
    assert code == 0 and err == ""
    model = catalog.load_model("llama-3.1-8b")
    rows = {line[:38].strip(): line[38:].strip() for line in out.splitlines()[1:]}
    assert out.splitlines()[0] == model.name
    assert rows["parameters (stated)"] == catalog.model_metadata("llama-3.1-8b")["params_stated"]
    assert rows["parameters"] == f"{model.parameter_count:,}" == "8,030,261,248"
    assert rows["hidden, heads, KV heads, head_dim"] == "4096, 32, 8, 128"
    assert rows["KV per token"] == "131,072 B (bf16)"  # 2 x 8 heads x 128 x 2 B x 32 layers
    assert rows["experts (k of E)"] == "dense" and rows["source"] == model.source
    _, out, _ = run(capsys, "show", "qwen1.5-moe-a2.7b")
    assert "4 of 60, width 1408, shared width 5632" in out


def test_show_a_model_config_by_file_or_folder(capsys, tmp_path):
    from .helpers import REPO_ROOT

    text = (REPO_ROOT / "src" / "roofline_decode" / "model_configs" / "gpt2.json").read_text()
    (tmp_path / "config.json").write_text(text)
    for target in (tmp_path / "config.json", tmp_path):
        code, out, err = run(capsys, "show", str(target))
        assert code == 0 and err == "", target
        assert out.startswith("GPT-2 (124M)\n") and "124,439,808" in out and "parameters (stated)" not in out
    (tmp_path / "config.json").write_text(text[: len(text) // 2])
    code, out, err = run(capsys, "show", str(tmp_path))
    assert code == 2 and out == "" and "not valid JSON" in err and len(err.strip().splitlines()) == 1
