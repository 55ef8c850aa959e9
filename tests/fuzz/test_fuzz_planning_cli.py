"""Fuzz the planning functions and the CLI, in-process."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode import planning
from roofline_decode.floors.capacity import resident_bytes
from tests.fuzz.strategies import anything, finite_non_negative, finite_positive, grid_values, outcome, run_cli
from tests.fuzz.test_fuzz_estimate import fuzz

MODELS = ["llama-3.1-8b", "gemma-2-9b", "gpt2", "llama-3.1-70b"]
GPUS = ["h100-sxm", "l4", "m2-max", "rtx-4090"]
options = st.one_of(anything, st.integers(0, 64), st.floats(0, 1))


@fuzz(500)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(GPUS), batch=st.one_of(st.integers(1, 512), anything),
       context=st.one_of(st.integers(0, 131072), anything),
       extra=st.dictionaries(st.sampled_from(["slo_ms", "tp", "max_devices", "reserve", "reserve_fraction",
                                              "offload_kv", "offload_weights", "collective_latency", "link_bandwidth",
                                              "tier", "tier_links"]), options, max_size=2))
def test_plan(model, gpu, batch, context, extra):
    result = outcome("plan", lambda: planning.plan(model, gpu, batch, context, **extra))
    for row in result or []:
        finite_positive("step_time_s", row.step_time_s)
        finite_positive("tokens_per_s", row.tokens_per_s)
        finite_non_negative("usable_bytes_per_device", row.usable_bytes_per_device)  # 0: the reserve takes it all
        assert row.max_batch is None or row.max_batch >= 0


@fuzz(600)
@given(model=st.sampled_from(MODELS), gpu=st.sampled_from(GPUS), value=grid_values,
       function=st.sampled_from(["max_batch", "max_context", "kv_bytes_per_sequence", "resident_bytes"]),
       reserve=st.one_of(st.just(2 * 2**30), anything))
def test_capacity_functions(model, gpu, value, function, reserve):
    calls = {
        "max_batch": lambda: planning.max_batch(model, gpu, value, reserve=reserve),
        "max_context": lambda: planning.max_context(model, gpu, value, reserve=reserve),
        "kv_bytes_per_sequence": lambda: planning.kv_bytes_per_sequence(model, value),
        "resident_bytes": lambda: resident_bytes(model, value, 4096),
    }
    answer = outcome(f"planning.{function}", calls[function])
    if answer is not None:
        array = np.asarray(answer, dtype=float)
        assert not np.any(np.isnan(array)) and np.all(array >= 0), (function, answer)
        if function != "max_context":  # a model whose every layer slides fits any context: inf
            finite_non_negative(function, answer)


@fuzz(300)
@given(model=st.sampled_from(["deepseek-v2-lite", "qwen3-next-80b-a3b", "gpt2"]), n=st.one_of(st.integers(1, 64), anything),
       batch=st.one_of(st.integers(1, 512), anything), context=st.one_of(st.integers(0, 131072), anything),
       layout=st.one_of(st.sampled_from(["sharded", "replicated"]), anything))
def test_tensor_parallel_mla_layout_and_recurrent_split(model, n, batch, context, layout):
    result = outcome("tensor_parallel_floor", lambda: planning.tensor_parallel_floor(
        model, "mi300x", batch, context, n, mla_layout=layout, link_bandwidth=64e9))
    if result is not None:
        finite_positive("step_time_s", result.step_time_s)
        finite_positive("bytes_read_per_device", result.bytes_read_per_device)
        finite_non_negative("kv_bytes_per_device", result.kv_bytes_per_device)


@fuzz(300)
@given(usable=st.one_of(st.floats(0, 1e13), anything), weights=st.floats(0, 1e13),
       per_sequence=st.one_of(st.floats(0, 1e12), st.lists(st.floats(0, 1e12), max_size=4)),
       resident=st.one_of(st.floats(0, 1e9), st.lists(st.floats(0, 1e9), max_size=4), anything))
def test_fitting_batch_and_onchip_note(usable, weights, per_sequence, resident):
    from roofline_decode.floors.capacity import fitting_batch, onchip_cache_note

    batch = outcome("capacity.fitting_batch", lambda: fitting_batch(usable, weights, per_sequence))
    if batch is not None:  # None: a negative or non-numeric usable, or an empty list, refused by name
        finite_non_negative("fitting_batch", batch)
    note = outcome("capacity.onchip_cache_note", lambda: onchip_cache_note(resident, "mi300x"))
    assert note is None or "on-chip cache" in note


WORK = Path(tempfile.mkdtemp(prefix="roofline-fuzz-cli-"))
ROWS = WORK / "rows.csv"
ROWS.write_text("batch,context,step_time_ms\n1,1024,9.5\n8,1024,11\n16,4096,14\n")
#: Argument text: good values, bad ones, control characters, long names.
texts = st.one_of(
    st.sampled_from(["1", "8,64", "0", "-1", "1e300", "nan", "inf", "4k", "1.5", "", ",", "x", "1e400", "a\nb", "\t",
                     "llama-3.1-8b", "h100-sxm", "gpt2", "bf16", "q4_0", "fp9", "x" * 300, "../x", "/", str(ROWS),
                     str(WORK / "nodir" / "p.png"), "--help-not"]),
    st.text(max_size=6),
)
SUBCOMMANDS = {
    "request": ["--model", "--gpu", "--prompt", "--output", "--batch", "--chunk", "--cached", "--draft", "--k",
                "--acceptance", "--mtp-layers", "--format"],
    "floor": ["--model", "--gpu", "--batch", "--context", "--weights", "--kv", "--format", "--sparse", "--routing"],
    "plan": ["--model", "--gpu", "--batch", "--context", "--slo-ms", "--tp", "--max-devices", "--reserve-gib",
             "--offload-kv", "--tier", "--link-gbps", "--format", "--pp", "--ep", "--dp", "--moe-tp", "--node-size",
             "--scale-out-gbps"],
    "show": [],
    "list": ["--vendor", "--category"],
    "compare": ["--model", "--gpu", "--tolerance", "--weights", "--plot", "--format"],
    "calibrate": ["--model", "--gpu", "--level", "--fit-rows", "--weighting", "--format", "--plot"],
}
REQUIRED = {"request": ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--prompt", "512", "--output", "64"],
            "floor": ["--model", "llama-3.1-8b", "--gpu", "h100-sxm"],
            "plan": ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1", "--context", "1024"],
            "show": [], "list": [], "compare": [str(ROWS)], "calibrate": [str(ROWS), "--gpu", "h100-sxm"]}


@st.composite
def argvs(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(SUBCOMMANDS)))
    argv = [command]
    if command == "show":
        return argv + [draw(st.one_of(texts, st.sampled_from(["h100-sxm", "llama-3.1-8b", "pcie5-x16"])))]
    if command == "list":
        argv.append(draw(st.sampled_from(["models", "gpus", "tiers", "formats", "latency", "what"])))
    argv += draw(st.one_of(st.just(REQUIRED[command]), st.just([])))
    for _ in range(draw(st.integers(0, 3))):
        option = draw(st.sampled_from(SUBCOMMANDS[command] or ["--x"]))
        argv += [option] if option == "--sparse" else [option, draw(texts)]
    return argv


@fuzz(500)
@given(argv=argvs())
def test_cli(argv):
    from tests.fuzz.strategies import INPUTS

    INPUTS["CLI (in-process)"] += 1
    if "--plot" in argv and not argv[argv.index("--plot") + 1:][:1] == [str(WORK / "nodir" / "p.png")]:
        argv[argv.index("--plot") + 1] = ""  # never render: an empty --plot is refused before any work
    code, out, err = run_cli(argv)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, (argv, err)
    else:
        assert not re.search(r"\bnan\b", out, re.IGNORECASE), (argv, out)


#: The serving, report and deploy commands: slower per run (a report renders its plots, deploy searches
#: layouts), so fuzzed apart, fewer.
LAYOUT_FLAGS = ["--tp", "--pp", "--ep", "--dp", "--moe-tp", "--link-gbps", "--node-size", "--scale-out-gbps"]
SERVING_COMMANDS = {
    "serve": ["--model", "--gpu", "--concurrency", "--isl", "--osl", "--disagg", "--prefill", "--decode",
              "--prefill-workers", "--decode-workers", "--kv-link-gbps", "--rate", "--chunk", "--max-batch", "--routing",
              "--format", *LAYOUT_FLAGS],
    "report": ["--model", "--gpu", "--batch", "--context", "--routing", "--sparse", "--isl", "--osl", "--output",
               "--gpus", "--ttft-ms", "--tpot-ms", "--price-per-hour", "--engine", *LAYOUT_FLAGS],
    "deploy": ["--model", "--gpu", "--weights", "--kv", "--gpus", "--isl", "--osl", "--ttft-ms", "--tpot-ms",
               "--price-per-hour", "--mode", "--kv-link-gbps", "--json"],
}
SERVING_REQUIRED = {
    "serve": ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--concurrency", "1,8", "--isl", "512", "--osl", "64"],
    "report": ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "-o", str(WORK / "report.html")],
    "deploy": ["--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--gpus", "8", "--isl", "1024", "--osl", "128"],
}
#: GPU counts of the deploy search: good and bad, none so large that the search runs for long
#: (thousands of GPUs search 10**8 points)
gpu_counts = st.sampled_from(["1", "2", "8", "16", "0", "-1", "1.5", "nan", "x", "", "1e300", "8,16"])
layout_texts = st.one_of(st.sampled_from(["1", "2", "4", "8", "3", "tp4", "dp8 ep8", "tp2pp2", "ep0", "64", "0.5"]), texts)


@st.composite
def serving_argvs(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(SERVING_COMMANDS)))
    argv = [command, *draw(st.sampled_from([SERVING_REQUIRED[command]] * 3 + [[]]))]  # mostly a runnable command
    for _ in range(draw(st.integers(0, 2))):
        option = draw(st.sampled_from(SERVING_COMMANDS[command]))
        if option in ("--sparse", "--disagg", "--json"):
            argv.append(option)
        elif option == "--gpus":
            argv += [option, draw(gpu_counts)]
        elif option == "--engine":
            argv += [option, draw(st.sampled_from(["vllm", "llama.cpp-cuda", "sglang", "nope", "", "vllm.json"]))]
        elif option == "--output":  # a report is written only into the fuzz folder, or refused
            argv += [option, draw(st.sampled_from([str(WORK / "r.html"), str(WORK / "nodir" / "r.html"), "",
                                                   str(WORK / "r.png")]))]
        else:
            argv += [option, draw(layout_texts)]
    return argv


@fuzz(80)
@given(argv=serving_argvs())
def test_cli_serve_report_and_deploy(argv):
    from tests.fuzz.strategies import INPUTS

    INPUTS["CLI serve/report/deploy (in-process)"] += 1
    code, out, err = run_cli(argv)
    assert code in (0, 2), (argv, code, err)
    if code == 2:
        assert err.count("\n") == 1 and err.endswith("\n") and "Traceback" not in err, (argv, err)
    elif argv[0] in ("serve", "deploy"):
        assert not re.search(r"\bnan\b", out, re.IGNORECASE), (argv, out)


def test_the_fuzz_suite_reaches_ten_thousand_inputs():
    """Runs last in this folder: the counts of every fuzz test of this session add up."""
    from tests.fuzz.strategies import INPUTS

    if len([k for k in INPUTS if not k.startswith(("compare", "config.json (floor"))]) >= 14:
        assert sum(INPUTS.values()) >= 10_000, dict(INPUTS)
