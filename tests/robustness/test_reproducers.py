"""Issue 12, item 5: every reproducer of a raw traceback or a meaningless answer, as a test.

The public API raises only RooflineError subclasses on bad input, and the CLI answers with
exit code 2 and exactly one line on stderr.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import roofline_decode as rd
from roofline_decode import catalog, planning
from roofline_decode.cli import main
from roofline_decode.errors import InvalidValueError, RooflineError
from roofline_decode.specs.accelerator import Accelerator
from roofline_decode.specs.model import Model
from tests.catalog.test_catalog_loading import GOOD

MODEL, GPU = "llama-3.1-8b", "h100-sxm"
CONFIGS = catalog._MODEL_DIR
DEEP = "[" * 5000 + "]" * 5000


def cli(capsys, *argv) -> tuple[int, str, str]:
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exc:  # argparse's own refusals (a count beyond 2**53) exit through SystemExit(2)
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line_exit_2(capsys, *argv) -> str:
    code, _, err = cli(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    return err


# -- file readers: deep nesting, huge integers ---------------------------------------------------
@pytest.mark.parametrize("text", ['{"a": ' + DEEP + "}", '{"hidden_size": ' + "9" * 5000 + "}"])
def test_config_json_deep_or_huge_is_a_config_error(tmp_path, text):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(rd.ConfigError, match="not valid JSON: (nested too deeply|an integer of more than 4300)"):
        catalog.load_model(path)


@pytest.mark.parametrize("text", ["a = " + DEEP + "\n", "a = " + "9" * 5000 + "\n"])
def test_spec_toml_deep_or_huge_is_a_spec_file_error(tmp_path, text):
    path = tmp_path / "deep.toml"
    path.write_text(text)
    with pytest.raises(rd.SpecFileError, match="malformed TOML"):
        catalog.load_accelerator(path)


@pytest.mark.parametrize("text", ["[" + "{" * 0 + DEEP + "]", '[{"batch": ' + "9" * 5000 + "}]"])
def test_measurement_json_deep_or_huge_is_a_measurement_file_error(tmp_path, text):
    from roofline_decode.measure import MeasurementFileError, load_measurements

    path = tmp_path / "rows.json"
    path.write_text(text)
    with pytest.raises(MeasurementFileError, match="not valid JSON"):
        load_measurements(path)


def test_a_bad_toml_in_a_spec_folder_breaks_only_its_own_id(tmp_path, capsys):
    (tmp_path / "broken.toml").write_text("type = \n")
    (tmp_path / "fine-gpu.toml").write_text(GOOD)
    catalog.add_spec_directory(tmp_path)
    try:
        code, out, _ = cli(capsys, "floor", "--model", MODEL, "--gpu", "fine-gpu")
        assert code == 0 and "fine-gpu" in out
        assert "fine-gpu" in catalog.list_accelerators() and "broken" not in catalog.list_accelerators()
        assert "broken.toml" in assert_one_line_exit_2(capsys, "floor", "--model", MODEL, "--gpu", "broken")
    finally:
        catalog.remove_spec_directory(tmp_path)


# -- names: too long, not strings, escaping the catalog -------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: catalog.load_model("x" * 300), lambda: catalog.model_metadata("x" * 300),
    lambda: catalog.load_model("x" * 300 + ".json"), lambda: catalog.load_accelerator("x" * 300 + ".toml"),
    lambda: catalog.load_model(123), lambda: catalog.load_model(None), lambda: catalog.load_accelerator(["h100-sxm"]),
    lambda: catalog.model_metadata(5), lambda: rd.sweep(False, "a10"), lambda: catalog.add_spec_directory([]),
    lambda: catalog.add_spec_directory(""), lambda: catalog.load_model("../model_configs/gpt2"),
    lambda: catalog.load_memory_tier(3.5), lambda: rd.sweep([], "a10"),
])
def test_bad_names_raise_library_errors(call):
    with pytest.raises(RooflineError):
        call()


@pytest.mark.parametrize("argv", [
    ["show", "x" * 300], ["floor", "--model", "x" * 300 + ".json", "--gpu", GPU],
    ["floor", "--model", MODEL, "--gpu", "x" * 300], ["floor", "--model", "ab\ncd", "--gpu", GPU],
])
def test_cli_bad_names_are_one_line(capsys, argv):
    err = assert_one_line_exit_2(capsys, *argv)
    if "ab\ncd" in argv:
        assert "ab\\ncd" in err  # the newline of the argument is escaped


# -- the batch and context rule --------------------------------------------------------------------
@pytest.mark.parametrize("batch, context", [
    ([1, 2], [1, 2, 3]), ([1, 10**400], 0), (1, 1e300), (1e300, 0), (True, 0), (np.array([1 + 1j]), 0),
    (None, 0), ("8", 0), (1, [True]), (0.5, 0), (5e-324, 0), (1, -1), ([], 0), (2.0**53 + 2, 0),
    (np.array([1, np.nan]), 0), ([[1, 2], [3]], 0), (object(), 0),
])
def test_batch_and_context_follow_one_rule(batch, context):
    with pytest.raises(InvalidValueError):
        rd.decode_floor(MODEL, GPU, batch=batch, context=context)
    if not (isinstance(context, list) and len(context) == 3):  # sweep takes the outer product of two axes
        with pytest.raises(InvalidValueError):
            rd.sweep(MODEL, GPU, batch=batch, context=context)


def test_the_rule_accepts_real_numbers_of_every_kind():
    from fractions import Fraction

    r = rd.decode_floor(MODEL, GPU, batch=[1, 2.5, np.int32(3), Fraction(7, 2), 2**53], context=np.uint16(7))
    assert np.all(np.isfinite(r.step_time_s)) and np.all(r.tokens_per_s > 0)
    assert np.all(np.isfinite(r.arithmetic_intensity)) and np.all(r.arithmetic_intensity > 0)
    huge = rd.decode_floor(MODEL, GPU, batch=2**53, context=2**53)
    assert np.isfinite(huge.step_time_s) and huge.tokens_per_s > 0


def test_the_message_names_the_field_and_the_rule():
    with pytest.raises(InvalidValueError, match=r"batch=True is invalid: .*no booleans"):
        rd.decode_floor(MODEL, GPU, batch=True)
    with pytest.raises(InvalidValueError, match=r"batch and context=.*shapes that broadcast"):
        rd.decode_floor(MODEL, GPU, batch=[1, 2], context=[1, 2, 3])
    with pytest.raises(InvalidValueError, match="an integer of 401 digits"):
        rd.decode_floor(MODEL, GPU, batch=[1, 10**400])


@pytest.mark.parametrize("call", [
    lambda: planning.plan(MODEL, GPU, batch=10**400, context=1),
    lambda: planning.plan(MODEL, GPU, 1, 1, tp=1e30), lambda: planning.plan(MODEL, GPU, 1, 1, tp=True),
    lambda: planning.kv_bytes_per_sequence(MODEL, "abc"), lambda: planning.kv_bytes_per_sequence(MODEL, -5),
    lambda: planning.kv_bytes_per_sequence(MODEL, None), lambda: planning.max_batch(MODEL, GPU, context=True),
    lambda: planning.max_context(MODEL, GPU, batch=0.5),
    lambda: rd.measure.calibrate([], GPU, level="0.9"), lambda: rd.measure.compare([], MODEL, GPU, tolerance="0.1"),
])
def test_planning_and_measure_arguments_raise_library_errors(call):
    with pytest.raises(RooflineError):
        call()


def test_capacity_answers_stay_non_negative_on_a_huge_device():
    # 1e30 B is outside the plausible range: an exotic device, explicitly allowed
    huge = rd.load_accelerator(GPU).replace(memory_capacity=1e30, plausibility_checks=False)
    assert int(planning.max_batch(MODEL, huge, context=4096)) == 2**53
    assert int(planning.max_context(MODEL, huge, batch=1)) == 2**53


def test_plan_max_devices_does_not_loop_over_every_count():
    rows = planning.plan("llama-3.1-405b", "l4", batch=1, context=1, max_devices=10**12)
    assert rows[0].min_devices is None or rows[0].min_devices <= 128


@pytest.mark.parametrize("argv", [
    ["plan", "--model", MODEL, "--gpu", GPU, "--batch", "1", "--context", "1", "--tp", "1e300"],
    ["floor", "--model", MODEL, "--gpu", GPU, "--batch", "1e300"],
    ["floor", "--model", MODEL, "--gpu", GPU, "--context", "1e300"],
    ["floor", "--model", MODEL, "--gpu", GPU, "--batch", "0.5"],
])
def test_cli_overflowing_numbers_are_one_line(capsys, argv):
    assert_one_line_exit_2(capsys, *argv)


# -- specs: booleans and sizes ------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: catalog.load_model(MODEL).replace(hidden_size=10**400),
    lambda: catalog.load_model(MODEL).replace(num_layers=True),
    lambda: catalog.load_model(MODEL).replace(num_layers=2**31),
    lambda: catalog.load_accelerator(GPU).replace(memory_bandwidth=True),
    lambda: catalog.load_accelerator(GPU).replace(peak_flops={"bf16": True}),
    lambda: rd.formats.group_quantized(4, 32, True, True),
])
def test_meaningless_spec_values_are_refused(call):
    with pytest.raises(RooflineError):
        call()


@pytest.mark.parametrize("family", ["gemma2", "gemma3_text", "mistral", "qwen2", "gpt_oss"])
def test_sliding_window_families_with_two_billion_layers_fail_fast(family):
    from roofline_decode.specs.hf_config import READERS

    assert family in READERS
    config = {"model_type": family, "num_hidden_layers": 2**31, "hidden_size": 64, "num_attention_heads": 4,
              "num_key_value_heads": 4, "head_dim": 16, "intermediate_size": 128, "vocab_size": 100,
              "sliding_window": 16, "num_local_experts": 4, "num_experts_per_tok": 2}
    with pytest.raises(rd.ConfigError, match="num_hidden_layers"):
        Model.from_hf_config(config)


def test_replace_drops_the_stale_printed_figure():
    m1 = catalog.load_accelerator("m1-max").replace(memory_capacity=32e9)
    assert "memory_capacity" not in m1.figures
    assert planning.usable_memory(m1) < 32e9


def test_closed_form_refuses_a_negative_context():
    pytest.importorskip("sympy")
    from roofline_decode import symbolic

    form = symbolic.closed_form("crossover_context")
    with pytest.raises(InvalidValueError, match="context"):
        form.evaluate(MODEL, GPU, batch=1, context=-5)


# -- messages for people ------------------------------------------------------------------------
def test_messages_name_only_what_matters():
    pytest.importorskip("sympy")
    from roofline_decode import symbolic

    with pytest.raises(InvalidValueError) as info:
        symbolic.closed_form("crossover_context").evaluate(MODEL, GPU)
    assert str(info.value).startswith("batch=") and str(info.value).count(",") < 4
    with pytest.raises(RooflineError, match="did you mean batch") as info:
        symbolic.entry("B")
    assert "glossary.py" not in str(info.value)
    config = json.loads((CONFIGS / "llama-3.1-8b.json").read_text())
    with pytest.raises(rd.ConfigError) as info:
        Model.from_hf_config({**config, "num_key_value_heads": 7})
    assert "must be a multiple" in str(info.value) and "vocab_size" not in str(info.value)
    with pytest.raises(rd.ConfigError, match="quantization_config.group_size"):
        Model.from_hf_config({**config, "quantization_config": {"quant_method": "gptq", "bits": 4, "group_size": 2**21}})


def test_a_toml_value_beyond_float_names_the_figure(tmp_path):
    path = tmp_path / "huge.toml"
    path.write_text(GOOD.replace("value = 2.0", "value = 1e300"))
    with pytest.raises(rd.SpecFileError, match=r"memory_bandwidth\.value") as info:
        catalog.load_accelerator(path)
    assert "si_value" not in str(info.value)


# -- measurement files and the --plot option ----------------------------------------------------
GPT_FAST_HEADER = "model,hardware,num_gpus,weight_precision,prompt_tokens,gen_tokens,tokens_per_s"
EXLLAMA_HEADER = "repo,model,weight_format,hardware,context_len,decode_condition,prompt_tokens_per_s,vram_MB,tokens_per_s"


@pytest.mark.parametrize("text", [
    "prompt_tokens,gen_tokens,weight_precision\n1,2,bf16\n",  # columns the layout reads are missing
    EXLLAMA_HEADER + "\n" + "x,Llama-2-7B,GPTQ 4-bit groupsize 128\n",  # a short row
    EXLLAMA_HEADER + "\n" + ",Llama-2-7B,GPTQ 4-bit groupsize 128,RTX 4090,0-2048,x,1,1,100\n",  # empty repo
    "latency_ms_per_step,tokens_per_s_aggregate,latency_std_ms,model,hardware,batch_size,context_len,dataset,kv_precision\n"
    "1.0,5e-324,0,Llama-3.1-8B,H100,5e-324,0,d,fp16\n",
])
def test_published_layout_problems_are_measurement_file_errors(tmp_path, text):
    from roofline_decode.measure import MeasurementFileError
    from roofline_decode.measure.published import load_published

    path = tmp_path / "published.csv"
    path.write_text(text)
    try:
        result = load_published(path)
    except MeasurementFileError:
        return
    assert result.rows == [] and result.skipped  # or the row is skipped, with the reason


@pytest.mark.parametrize("plot", ["nodir/x.png", "", "DIR"])
def test_plot_paths_are_checked_before_any_work(capsys, tmp_path, plot):
    rows = tmp_path / "rows.csv"
    rows.write_text("batch,context,step_time_ms\n1,0,50\n")
    plot = str(tmp_path) if plot == "DIR" else (str(tmp_path / plot) if plot else plot)
    err = assert_one_line_exit_2(capsys, "compare", rows, "--model", MODEL, "--gpu", GPU, "--plot", plot)
    assert "--plot" in err


def test_plot_without_a_suffix_reports_the_file_written(capsys, tmp_path):
    pytest.importorskip("matplotlib")
    rows = tmp_path / "rows.csv"
    rows.write_text("batch,context,step_time_ms\n1,0,50\n")
    code, _, err = cli(capsys, "compare", rows, "--model", MODEL, "--gpu", GPU, "--plot", tmp_path / "chart")
    assert code == 0 and (tmp_path / "chart.png").is_file() and "chart.png" in err


@pytest.mark.parametrize("kwargs", [dict(batch=[True, 2]), dict(batch=[0.5, 2]), dict(context=1 + 1j),
                                    dict(batch=["1", "2"]), dict(context=-1)])
def test_plots_follow_the_batch_and_context_rule(kwargs):
    pytest.importorskip("matplotlib")
    from roofline_decode import plotting

    with pytest.raises(InvalidValueError):
        plotting.batch_plot(MODEL, GPU, **kwargs)
