"""Benchmark: the cost of one ``decode_floor`` call, the 1M-point grid, CLI start-up, and peers.

Issue 18 targets (on an unloaded 2-core machine): one call on a dense model with Model and
Accelerator objects <= 20 us, by catalog id <= 30 us after the first load, an MoE model
<= 40 us; the 1,000 x 1,000 grid >= 20 M points/s; ``roofline-decode floor ...`` end to end
<= 0.35 s.  Issue 30 (one source for every term: the fast path calls the general path's term
functions on floats) keeps the dense call with objects <= 15 us; a call at a context the plan
has not seen also runs the general path's per-context functions (limits, critical batch).  Prints figures; asserts nothing.  Each per-call figure is the minimum and the median
of repeated timings in wall-clock time, and the minimum in process CPU time: on a shared machine
the wall-clock minimum is inflated by the other processes, and the CPU time (the time this
process ran) is the better estimate of what an unloaded machine takes.  The load average is
printed with the figures.

The CLI runs in fresh interpreters with a warm bytecode cache (``PYTHONPYCACHEPREFIX`` in a
temporary folder): an installed package has its ``.pyc`` files, and a development environment
with ``PYTHONDONTWRITEBYTECODE`` would otherwise compile every module on every run.  The time of
``import numpy, pydantic`` plus one pydantic model in a fresh interpreter is printed beside it:
the part of the start-up that the library does not control.

When llm-analysis and llm-flops are importable (``pip install roofline-decode[bench]``, or a
folder of them on ``PYTHONPATH``), their per-call time for the same question (Llama-3.1-8B
shaped model in bf16 on an H100 SXM, batch 1, 4096 tokens of context) is measured in the same
run and printed as a ratio.

Run: ``python benchmarks/per_call.py [--quick]``
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import timeit

import numpy as np


def per_call(statement: str, namespace: dict, repeats: int, number: int) -> tuple[float, float, float]:
    """(wall min, wall median, CPU min) seconds per call of ``statement`` over ``repeats``
    timings of ``number`` calls each (wall clock, then process CPU time)."""
    eval(compile(statement, "<bench>", "exec"), namespace)  # warm (plans, caches, imports)
    once = timeit.timeit(statement, number=1, globals=namespace)
    number = max(1, min(number, int(0.05 / max(once, 1e-9))))  # about 50 ms per timing at most
    wall = [timeit.timeit(statement, number=number, globals=namespace) / number for _ in range(repeats)]
    cpu = [timeit.timeit(statement, number=number, globals=namespace, timer=time.process_time) / number
           for _ in range(repeats)]
    return min(wall), statistics.median(wall), min(cpu)


def library_cases() -> list[tuple[str, str]]:
    return [
        ("dense, objects (llama-3.1-8b, h100-sxm, B=1, T=4096)", "rd.decode_floor(model, gpu, 1, 4096)"),
        ("dense, catalog ids", "rd.decode_floor('llama-3.1-8b', 'h100-sxm', 1, 4096)"),
        ("dense, a new context each call", "state[0] += 1; rd.decode_floor(model, gpu, 8, state[0])"),
        ("dense, catalog ids, a new batch each call", "state[2] += 1; rd.decode_floor('llama-3.1-8b', 'h100-sxm', state[2], 4096)"),
        ("dense, latency='cuda-graph-h100'", "rd.decode_floor(model, gpu, 1, 4096, latency='cuda-graph-h100')"),
        ("MoE, objects (mixtral-8x7b, B=1, T=4096)", "rd.decode_floor(moe, gpu, 1, 4096)"),
        ("MoE, a new context each call (Newton)", "state[1] += 1; rd.decode_floor(moe, gpu, 8, state[1])"),
        ("MoE, routing='identical'", "rd.decode_floor(moe, gpu, 8, 4096, routing='identical')"),
        ("MoE, deepseek-v3 (fp8, per-group precision)", "rd.decode_floor(deepseek, gpu, 8, 4096)"),
        ("dense, 0-d array batch (general path)", "rd.decode_floor(model, gpu, one, 4096)"),
    ]


def grid_throughput(rd, model: str, repeats: int) -> tuple[float, float]:
    """Points per second of one decode_floor call on a 1,000 x 1,000 (batch, context) grid: by
    the best wall time, and by the best process CPU time."""
    batch = np.arange(1, 1001, dtype=float)[:, None]
    context = np.linspace(0, 131072, 1000)[None, :]
    spec, gpu = rd.load_model(model), rd.load_accelerator("h100-sxm")
    rd.decode_floor(spec, gpu, batch, context)
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        rd.decode_floor(spec, gpu, batch, context)
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return batch.size * context.size / min(wall), batch.size * context.size / min(cpu)


def fresh_seconds(arguments: list[str], repeats: int) -> tuple[float, float, float]:
    """(wall min, wall median, CPU min) seconds of ``python ARGUMENTS`` in fresh interpreters
    with a warm bytecode cache (the CPU time is the child's user + system time)."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = _PYCACHE
    command = [sys.executable, *arguments]
    subprocess.run(command, check=True, capture_output=True, env=env)  # write the bytecode cache
    wall, cpu = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall.append(time.perf_counter() - start)
        cpu.append(usage.ru_utime + usage.ru_stime)
        if status:
            raise RuntimeError(f"{' '.join(arguments)} failed ({status})")
    return min(wall), statistics.median(wall), min(cpu)


_PYCACHE = os.path.join(tempfile.gettempdir(), "roofline_decode_bench_pycache")
#: what the floor command imports that the library does not control
_BASELINE = ("import numpy, pydantic\n"
             "class Spec(pydantic.BaseModel):\n"
             "    value: float")


def peers(repeats: int, number: int) -> dict[str, tuple[float, float, float]]:
    """Per-call (min, median) seconds of llm-analysis and llm-flops on the same question (a
    Llama-3.1-8B shaped model in bf16 on an H100 SXM, batch 1, 4096 tokens, one generated
    token), where they import; a peer that does not is reported as not measured.  Both run
    offline: llm-analysis from a ModelConfig built here (d_ff rounded up to a multiple of d, which
    it requires), llm-flops from its own registry."""
    import logging

    logging.disable(logging.WARNING)  # llm-analysis logs efficiency warnings on every call
    found: dict[str, tuple[float, float, float]] = {}
    try:
        from llm_analysis.analysis import LLMAnalysis
        from llm_analysis.config import (DtypeConfig, ModelConfig, ParallelismConfig, get_dtype_config_by_name,
                                         get_gpu_config_by_name)

        # llm-analysis requires d_ff to be a multiple of d: 16384 stands in for Llama's 14336 (the
        # per-call time does not depend on the sizes)
        model = ModelConfig(name="llama-3.1-8b-like", num_layers=32, n_head=32, hidden_dim=4096, vocab_size=128256,
                            max_seq_len=131072, num_key_value_heads=8, ffn_embed_dim=16384, model_type="llama")
        namespace = dict(LLMAnalysis=LLMAnalysis, model=model, gpu=get_gpu_config_by_name("h100-sxm-80gb"),
                         dtype=get_dtype_config_by_name("w16a16e16"), ParallelismConfig=ParallelismConfig)
        assert DtypeConfig
        statement = ("LLMAnalysis(model, gpu, dtype, ParallelismConfig()).inference("
                     "batch_size_per_gpu=1, seq_len=4096, num_tokens_to_generate=1)")
        found["llm-analysis 0.2 (object configs)"] = per_call(statement, namespace, repeats, max(1, number // 10))
    except Exception as exc:  # not installed, or its API moved
        print(f"llm-analysis: not measured ({type(exc).__name__}: {exc})")
    try:
        import llmflops

        namespace = dict(llmflops=llmflops, config=llmflops.get_config("meta-llama/Llama-3.1-8B"))
        options = ("batch_size=1, sequence_length=4096, precision='bf16', gpu='H100-SXM', include_backward=False, "
                   "num_generated_tokens=1, allow_hf_fetch=False")
        found["llm-flops 0.0.1 (config object)"] = per_call(f"llmflops.estimate(config, {options})", namespace,
                                                            repeats, max(1, number // 10))
        found["llm-flops 0.0.1 (registry id)"] = per_call(
            f"llmflops.estimate('meta-llama/Llama-3.1-8B', {options})", namespace, repeats, max(1, number // 10))
    except Exception as exc:
        print(f"llm-flops: not measured ({type(exc).__name__}: {exc})")
    return found


def main() -> None:
    quick = "--quick" in sys.argv
    repeats, number = (5, 200) if quick else (15, 500)
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)")
    start = time.perf_counter()
    import roofline_decode as rd

    model, moe = rd.load_model("llama-3.1-8b"), rd.load_model("mixtral-8x7b")
    namespace = dict(rd=rd, model=model, moe=moe, deepseek=rd.load_model("deepseek-v3"),
                     gpu=rd.load_accelerator("h100-sxm"), state=[4096, 4096, 1], one=np.array(1.0))
    print(f"import + first loads: {(time.perf_counter() - start) * 1e3:.0f} ms")
    ours = {}
    for label, statement in library_cases():
        low, mid, cpu = per_call(statement, namespace, repeats, number)
        ours[label] = low
        print(f"{label:52s} min {low * 1e6:8.1f} us   median {mid * 1e6:8.1f} us   CPU {cpu * 1e6:8.1f} us")
    for name in ("llama-3.1-8b", "mixtral-8x7b", "deepseek-v3"):
        wall, cpu = grid_throughput(rd, name, 3 if quick else 7)
        print(f"1,000 x 1,000 grid, {name}: {wall / 1e6:.1f} M points/s (best wall), {cpu / 1e6:.1f} (best CPU)")
    floor = ["-m", "roofline_decode", "floor", "--model", "llama-3.1-8b", "--gpu", "h100-sxm", "--batch", "1",
             "--context", "4096"]
    for label, arguments in (("roofline-decode floor --model llama-3.1-8b --gpu h100-sxm", floor),
                             ("python -c 'import numpy, pydantic' + one model", ["-c", _BASELINE])):
        low, mid, cpu = fresh_seconds(arguments, 3 if quick else 7)
        print(f"{label:52s} min {low:.3f} s   median {mid:.3f} s   CPU {cpu:.3f} s (fresh interpreter)")
    reference = ours[library_cases()[0][0]]
    for name, (low, mid, cpu) in peers(repeats, number).items():
        print(f"{name:52s} min {low * 1e6:8.1f} us   median {mid * 1e6:8.1f} us   CPU {cpu * 1e6:8.1f} us   "
              f"= {low / reference:.1f} x roofline_decode's {reference * 1e6:.1f} us (wall min)")
    print(f"load average at end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
