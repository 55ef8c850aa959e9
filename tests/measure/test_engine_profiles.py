"""Engine profiles (measure/engine_profile.py, engine_rows.py, published_llamacpp.py) and
`expected` (measure/expected.py): shipped data, refit reproducibility, the band and the prior."""

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import roofline_decode as rd
from roofline_decode.catalog import load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.measure.engine_profile import (
    PARAMETERS, EngineProfile, fit_profile, fit_step_model, list_engine_profiles, load_engine_profile, predict_step,
    profile_dir, step_terms,
)
from roofline_decode.measure.engine_rows import engine_rows
from roofline_decode.measure.expected import UserRun, expected
from roofline_decode.measure.published_llamacpp import load_llamacpp_published

MEASURED = Path(__file__).parents[1] / "data" / "measured"
SINGLE_DEVICE = ("exllama", "gpt-fast", "hf-eager", "llama.cpp-cuda", "llama.cpp-metal")
PRODUCTION = ("sglang", "tensorrt-llm", "vllm")


def test_llamacpp_reader_places_rows_and_says_why_it_skips():
    found = load_llamacpp_published(MEASURED / "llamacpp" / "xiongjiedai_llamacpp_gpu_benchmarks.csv")
    assert len(found.rows) == 563
    reasons = " ".join(r for _, r in found.skipped)
    assert "OOM" in reasons and "LLaMA-1 30B" in reasons and "A100 80GB" in reasons and "CPU" in reasons
    # llama-bench tg512: 512 tokens from an empty cache, mean context 255.5 (the README's convention)
    first = found.rows[0]
    assert (first.context, first.accelerator, first.weight_format, first.tokens_per_s) == (255.5, "rtx-3070", "Q4_K_M", 72.79)
    assert {r.label.split()[0] for r in found.rows} == {"llama.cpp-cuda", "llama.cpp-metal"}


@pytest.mark.parametrize("engine", SINGLE_DEVICE + PRODUCTION)
def test_shipped_profile_has_sources_statistics_and_a_band(engine):
    assert engine in list_engine_profiles()
    p = load_engine_profile(engine)
    assert p.rows >= 18 and p.devices and p.sources and all(s["url"].startswith("https://github.com/") for s in p.sources)
    assert all(0 < p.efficiency(s) <= 1 for s in ("w", "kv", "c"))
    assert all(p.parameters[k] >= 0 for k in PARAMETERS)
    lo, hi = p.band[0.9]
    assert lo <= 0 <= hi and lo <= p.band[0.5][0] <= p.band[0.5][1] <= hi
    assert 0.8 <= p.statistics["held_out_coverage_90"] <= 1


@pytest.mark.parametrize("engine", ("exllama", "llama.cpp-metal"))
def test_refit_reproduces_the_shipped_profile(engine):
    rows = engine_rows(MEASURED, (engine,))[engine]
    shipped = load_engine_profile(engine)
    refit = fit_profile(engine, shipped.description, rows.terms, rows.measured_s, rows.device_ids, rows.bandwidths,
                        shipped.sources, shipped.notes)
    assert refit.rows == shipped.rows
    for name in PARAMETERS:
        assert refit.parameters[name] == pytest.approx(shipped.parameters[name], rel=1e-9, abs=1e-15)
    for level, (lo, hi) in shipped.band.items():
        assert refit.band[level] == pytest.approx((lo, hi), rel=1e-9)


def test_refit_reproduces_a_shipped_production_profile():
    """vLLM from the production rows: duplicates and data errors dropped, log loss, band from
    device and model hold-outs (tools/fit_engine_profiles.py)."""
    from roofline_decode.measure.engine_rows_production import (PRODUCTION_LOSS, PRODUCTION_PRIOR, TTFT_LOSS,
                                                                 TTFT_TERMS,
                                                                 dropped_counts, production_rows)
    from roofline_decode.measure.engine_ttft import fit_ttft

    tpot, ttft = production_rows(MEASURED)
    rows, t = tpot["vllm"], ttft["vllm"]
    shipped = load_engine_profile("vllm")
    counts = dropped_counts(rows)
    assert counts["duplicate"] > 0 and counts["data error"] > 0
    assert f"{counts['duplicate']} duplicates" in shipped.notes and f"{counts['data error']} data errors" in shipped.notes
    refit = fit_profile("vllm", shipped.description, rows.terms, rows.measured_s, rows.device_ids, rows.bandwidths,
                        shipped.sources, shipped.notes, loss=PRODUCTION_LOSS, models=rows.models,
                        prior=PRODUCTION_PRIOR)
    assert refit.rows == shipped.rows and "leave-one-model-out" in refit.band_method
    assert refit.parameter_prior == shipped.parameter_prior == PRODUCTION_PRIOR
    for name in PARAMETERS:
        assert refit.parameters[name] == pytest.approx(shipped.parameters[name], rel=1e-9, abs=1e-15)
    assert refit.band[0.9] == pytest.approx(shipped.band[0.9], rel=1e-9)
    assert refit.statistics == pytest.approx(shipped.statistics, rel=1e-9)
    fit = fit_ttft(t.measured_s, t.prefill_floor_s, t.queue_floor_s, t.clients, t.device_ids, t.models, TTFT_LOSS["vllm"],
                   step_s=t.step_floor_s, prompt_tokens=t.prompt_tokens, output_tokens=t.output_tokens,
                   terms=TTFT_TERMS["vllm"])
    assert shipped.ttft is not None and fit["parameters"] == pytest.approx(shipped.ttft["parameters"], rel=1e-9)
    assert shipped.ttft["fitted"] == fit["fitted"] and {"t_token", "t_others"} <= set(fit["fitted"])
    assert shipped.ttft["loss"] == "log-exact"


def test_duplicates_and_data_errors_are_not_fitted():
    from roofline_decode.measure.engine_rows_production import production_rows
    from roofline_decode.measure.production_runs import load_production_runs

    runs = load_production_runs(MEASURED / "production" / "aic_silicon_hopper.csv")
    flagged = {r.source for r in runs if r.duplicate_of is not None or r.data_problems}
    tpot, _ = production_rows(MEASURED)
    fitted = {s for rows in tpot.values() for s in rows.sources}
    assert fitted and not fitted & flagged
    reasons = [why for rows in tpot.values() for _, why in rows.dropped]
    assert any(why.startswith("duplicate: the same measurement as aic_silicon_hopper.csv:") for why in reasons)


def test_fit_recovers_a_known_step_model():
    """Noise-free rows made from known coefficients on three devices give them back."""
    truth = np.array([50e-6, 1e-3, 20e-6, 0.25, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0])
    parts, ids = [], []
    for device in ("rtx-4090", "a100-80gb-sxm", "h100-sxm"):
        for model in ("llama-3.1-8b", "llama-2-13b"):
            t = step_terms(load_model(model), rd.load_accelerator(device), np.array([1.0, 4.0, 16.0]),
                           np.array([512.0, 512.0, 4096.0]))
            parts.append(t)
            ids += [device] * 3
    from roofline_decode.measure.engine_profile import StepTerms

    terms = StepTerms.stack(parts)
    y, _, _ = predict_step(terms, truth)
    fitted, names = fit_step_model(terms, y)
    assert fitted == pytest.approx(truth, rel=1e-6, abs=1e-12)
    assert fit_step_model(terms, y, loss="log")[0] == pytest.approx(truth, rel=1e-6, abs=1e-12)
    # one row 3x fast: the relative loss charges its over-prediction 4 and bends to it; the log
    # loss charges |log 3| linearly beyond the Huber threshold
    odd = y.copy()
    odd[0] /= 3
    off = {loss: np.max(np.abs(np.log(predict_step(terms, fit_step_model(terms, odd, loss=loss)[0])[0][1:] / y[1:])))
           for loss in ("relative", "log")}
    assert off["log"] < off["relative"]
    with pytest.raises(InvalidValueError, match="loss"):
        fit_step_model(terms, y, loss="l1")
    assert "c_ar" not in names and "t_hop" not in names  # no TP or layer-split rows: not fitted
    assert "t_exp" not in names and "u_moe" not in names  # dense models only


def test_expected_is_never_below_the_floor_and_labels_its_basis():
    model = load_model("llama-3.1-8b", weights="Q4_K_M", kv="f16")
    batch, context = np.array([[1.0], [8.0]]), np.array([[0.0, 4096.0, 32768.0]])
    for engine in SINGLE_DEVICE:
        e = expected(model, "rtx-4090", batch=batch, context=context, engine=engine)
        assert e.step_time_s.shape == (2, 3)
        assert np.all(e.lower_s >= e.floor_step_time_s) and np.all(e.step_time_s >= e.lower_s)
        assert np.all(e.upper_s >= e.step_time_s) and e.basis == "engine profile" and engine in e.label
    floor_only = expected(model, "rtx-4090")
    assert floor_only.basis == "floor only" and math.isnan(float(floor_only.upper_s))
    assert float(floor_only.step_time_s) == pytest.approx(float(rd.decode_floor(model, "rtx-4090").step_time_s))


def test_expected_names_how_far_an_unseen_device_is():
    e = expected("llama-3.1-8b", "h200-sxm", engine="llama.cpp-cuda")
    assert "h200-sxm is not among them: nearest by bandwidth" in e.label
    assert "is among them" in expected("llama-3.1-8b", "rtx-4090", engine="llama.cpp-cuda").label


def test_one_run_updates_the_profile_and_narrows_the_band():
    """The profile is the prior: one run 20 % slower than the profile pulls the expectation
    towards it and leaves a band narrower than the device-to-device one."""
    model = load_model("llama-3.1-8b", weights="Q4_K_M", kv="f16")
    prior = expected(model, "l40s", context=1024, engine="llama.cpp-cuda")
    run = UserRun(batch=1, context=1024, step_time_s=1.2 * float(prior.step_time_s))
    post = expected(model, "l40s", context=1024, engine="llama.cpp-cuda", runs=[run])
    assert post.basis == "calibration" and "1 run(s)" in post.label
    assert float(prior.step_time_s) < float(post.step_time_s) < 1.2 * float(prior.step_time_s)
    width = lambda e: math.log(float(e.upper_s) / float(e.lower_s))  # noqa: E731
    assert width(post) < width(prior)
    two = expected(model, "l40s", context=1024, engine="llama.cpp-cuda", runs=[run, run])
    assert float(two.step_time_s) > float(post.step_time_s) and width(two) < width(post)


def test_expected_flags_points_that_do_not_fit():
    e = expected("llama-3.1-8b", "rtx-3090", batch=[1, 64], context=4096, engine="hf-eager")
    assert list(e.fits) == [True, False] and "do not fit" in e.label


@pytest.mark.parametrize("kwargs, field", [
    ({"engine": "no-such-engine"}, "engine"), ({"level": 0.7, "engine": "gpt-fast"}, "level"),
    ({"runs": [UserRun(1, 0, 0.01)]}, "runs"), ({"tensor_parallel": 0, "engine": "gpt-fast"}, "tensor_parallel"),
])
def test_expected_bad_input_names_the_field(kwargs, field):
    with pytest.raises(InvalidValueError, match=field):
        expected("llama-3.1-8b", "h100-sxm", **kwargs)


def test_a_profile_file_round_trips_and_a_bad_one_is_refused(tmp_path):
    p = load_engine_profile("exllama")
    path = tmp_path / "mine.json"
    p.save(path)
    assert load_engine_profile(str(path)) == p
    data = json.loads(path.read_text())
    del data["parameters"]["u_w"]
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidValueError, match="engine profile"):
        load_engine_profile(str(path))
    assert isinstance(load_engine_profile(p), EngineProfile) and profile_dir().is_dir()


@pytest.mark.parametrize("engine", PRODUCTION)
def test_production_profiles_fit_interleaved_prefill_and_ttft(engine):
    p = load_engine_profile(engine)
    assert "k_pf" in p.fitted and "c_ar" in p.fitted and set(p.devices) == {"h100-sxm", "h200-sxm"}
    assert "serving_floor's terms" in p.notes
    assert p.ttft is not None and p.ttft["rows"] >= 100 and all(v >= 0 for v in p.ttft["parameters"].values())


def test_expected_serving_run_carries_prefill_and_ttft():
    """vLLM, Llama-3.1-70B fp8 on 4 H200, 8 clients, ISL = OSL = 1024; AIConfigurator's silicon run
    measured TPOT 10.14 ms and TTFT 101 ms (tests/data/measured/production)."""
    model = load_model("llama-3.1-70b", weights="fp8", kv="fp8")
    plain = expected(model, "h200-sxm", batch=8, context=1535, tensor_parallel=4, engine="vllm")
    served = expected(model, "h200-sxm", batch=8, tensor_parallel=4, engine="vllm", prompt=1024, output=1024)
    assert "serving run" in served.label and "give prompt= and output=" in plain.label and plain.ttft_s is None
    assert float(served.floor_step_time_s) <= float(served.lower_s) <= 10.14e-3 <= float(served.upper_s)
    assert float(served.ttft_floor_s) <= float(served.ttft_lower_s) <= 0.101 <= float(served.ttft_upper_s)
    floor_only = expected(model, "h200-sxm", batch=8, tensor_parallel=4, prompt=1024, output=1024)
    assert float(floor_only.ttft_s) == float(floor_only.ttft_floor_s) and math.isnan(float(floor_only.ttft_upper_s))
    with pytest.raises(InvalidValueError, match="output"):
        expected(model, "h200-sxm", output=1024, engine="vllm")


def test_production_reader_states_what_it_skips():
    from roofline_decode.measure.engine_rows_production import production_runs

    runs, skipped = production_runs(MEASURED)
    reasons = " ".join(r for _, r in skipped)
    assert len(runs) + len(skipped) == 1884 and "more than an 8-GPU node" in reasons and "Kimi" in reasons
    assert {r.engine for r in runs} == set(PRODUCTION)


@settings(max_examples=25, deadline=None)
@given(engine=st.sampled_from(SINGLE_DEVICE + PRODUCTION), batch=st.floats(1, 256), context=st.floats(0, 65536),
       device=st.sampled_from(["rtx-4090", "h100-sxm", "m2-ultra", "mi300x", "l4"]),
       model=st.sampled_from(["llama-3.1-8b", "qwen3-30b-a3b", "gemma-2-9b"]))
def test_expected_never_below_the_floor_and_monotone_in_context(engine, batch, context, device, model):
    e = expected(model, device, batch=batch, context=[context, context + 4096], engine=engine)
    assert np.all(e.floor_step_time_s <= e.lower_s) and np.all(e.lower_s <= e.step_time_s)
    assert np.all(e.step_time_s <= e.upper_s)
    assert e.step_time_s[1] >= e.step_time_s[0]


def test_floor_engine_cli(capsys):
    from roofline_decode.cli import main

    assert main(["floor", "--model", "llama-3.1-8b", "--weights", "Q4_K_M", "--gpu", "rtx-4090", "--batch", "1,4",
                 "--engine", "llama.cpp-cuda", "--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 2 and all(r["floor_step_time_s"] <= r["lower_s"] <= r["expected_step_time_s"]
                                     <= r["upper_s"] for r in records)
    assert records[0]["basis"] == "engine profile" and "llama.cpp-cuda" in records[0]["label"]
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "llama.cpp-cuda"]) == 0
    out = capsys.readouterr().out
    assert "expected ms" in out and "90% band ms" in out
    assert main(["floor", "--model", "llama-3.1-8b", "--gpu", "rtx-4090", "--engine", "nope"]) == 2
    err = capsys.readouterr().err
    assert "engine='nope'" in err and "llama.cpp-cuda" in err and "Traceback" not in err


def test_tokens_per_s_band_brackets_the_rate():
    e = expected("llama-3.1-8b", "h100-sxm", batch=[1, 16], context=2048, engine="vllm")
    low, high = e.tokens_per_s_band
    assert np.all(low <= e.tokens_per_s) and np.all(e.tokens_per_s <= high)
    floor_only = expected("llama-3.1-8b", "h100-sxm")
    assert float(floor_only.tokens_per_s_band[0]) == 0.0


@pytest.mark.parametrize("edit", [
    lambda d: d["parameters"].update(u_w=-1.0), lambda d: d["parameters"].update(t_layer=float("nan")),
    lambda d: d["band"].update({"0.9": [0.2, 0.1]}), lambda d: d["band"].pop("0.5"), lambda d: d["prior"].update(noise=0.0),
    lambda d: d.update(format="something else"), lambda d: d.update(devices=[1, 2]),
])
def test_a_lying_profile_file_is_refused(tmp_path, edit):
    data = load_engine_profile("exllama").to_dict()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidValueError):
        load_engine_profile(str(path))


def test_serve_engine_cli(capsys):
    """`serve --engine`: expected TTFT and TPOT with bands beside the serving floors; AIConfigurator's
    vLLM run of Llama-3.1-70B fp8 on 4 H200 at 8 clients, ISL = OSL = 1024 measured TPOT 10.14 ms
    and TTFT 101 ms (tests/data/measured/production): inside the bands."""
    from roofline_decode.cli import main

    args = ["serve", "--model", "llama-3.1-70b", "--weights", "fp8", "--kv", "fp8", "--gpu", "h200-sxm",
            "--concurrency", "8,64", "--isl", "1024", "--osl", "1024", "--tp", "4", "--engine", "vllm"]
    assert main(args + ["--format", "json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [r["concurrency"] for r in records] == [8.0, 64.0]
    for r in records:
        assert r["ttft_floor_s"] <= r["ttft_lower_s"] <= r["expected_ttft_s"] <= r["ttft_upper_s"]
        assert r["tpot_floor_s"] <= r["tpot_lower_s"] <= r["expected_tpot_s"] <= r["tpot_upper_s"]
        assert r["basis"] == "engine profile" and "vllm" in r["label"]
    assert records[0]["tpot_lower_s"] <= 10.14e-3 <= records[0]["tpot_upper_s"]
    assert records[0]["ttft_lower_s"] <= 0.101 <= records[0]["ttft_upper_s"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "serving floors of" in out and "expected with engine profile vllm" in out and "90% band ms" in out
    for bad, needle in ((["--engine", "nope"], "engine='nope'"), (["--engine", "vllm", "--disagg"], "--disagg"),
                        (["--engine", "vllm", "--chunk", "512"], "--chunk")):
        assert main(args[:-2] + bad) == 2
        err = capsys.readouterr().err
        assert needle in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_profile_written_before_k_comm_or_t_exp_still_loads(tmp_path):
    data = load_engine_profile("exllama").to_dict()
    del data["parameters"]["k_comm"], data["parameters"]["t_exp"], data["parameters"]["c_peer"]
    del data["parameter_prior"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(data))
    old = load_engine_profile(str(path))
    assert old.parameters["k_comm"] == old.parameters["t_exp"] == old.parameters["c_peer"] == 0.0
    assert old.parameter_prior is None


def test_production_bands_pool_device_and_model_hold_outs():
    for engine in PRODUCTION:
        p = load_engine_profile(engine)
        assert p.band_method == "leave-one-device-out and leave-one-model-out, pooled"
        assert "k_comm" in p.fitted and "u_moe" in p.fitted  # serving layouts and MoE rows: both determined
        for split in ("held_out_coverage_90", "held_out_model_coverage_90"):
            assert 0.8 <= p.statistics[split] <= 1.0
        assert p.ttft is not None and 0.8 <= p.ttft["statistics"]["held_out_coverage_90"] <= 1.0


def test_decode_only_tp_step_carries_the_collective_floor():
    """Without prompt= and output=, a TP step still pays k_comm x its all-reduce floor (the decode
    floor's communication time on that layout); a layout the floors refuse says so."""
    from dataclasses import replace

    model = load_model("llama-3.1-70b", weights="fp8", kv="fp8")
    vllm = load_engine_profile("vllm")
    without = replace(vllm, parameters={**vllm.parameters, "k_comm": 0.0})
    comm = float(rd.decode_floor(model, "h200-sxm", batch=64, context=1535, parallel=rd.Parallel(tp=4))
                 .communication_time_s)
    a, b = (float(expected(model, "h200-sxm", batch=64, context=1535, tensor_parallel=4, engine=p).step_time_s)
            for p in (vllm, without))
    assert a - b == pytest.approx(vllm.parameters["k_comm"] * comm, rel=1e-9) and comm > 0
    odd = expected("qwen3-30b-a3b", "h100-sxm", batch=4, tensor_parallel=3, engine="tensorrt-llm")
    assert "collectives not included" in odd.label and "parallel.tp=3" in odd.label


def test_a_layout_is_the_tensor_and_pipeline_degrees():
    by_layout = rd.expected("llama-3.1-70b", "h100-sxm", batch=8, engine="vllm", parallel="tp4")
    by_degree = rd.expected("llama-3.1-70b", "h100-sxm", batch=8, engine="vllm", tensor_parallel=4)
    assert float(by_layout.step_time_s) == float(by_degree.step_time_s)
    with pytest.raises(InvalidValueError, match="no term for expert or attention data parallelism"):
        rd.expected("deepseek-v3", "h200-sxm", engine="vllm", parallel="dp8 ep8")
    with pytest.raises(InvalidValueError, match="either parallel= or tensor_parallel="):
        rd.expected("llama-3.1-70b", "h100-sxm", engine="vllm", parallel="tp4", tensor_parallel=4)


def test_experts_run_counts_the_experts_a_device_runs():
    """N_exp = MoE layers x distinct experts read / EP: uniform routing at batch 8 reads
    E (1 - (1 - k/E)^8) experts per layer; identical routing k; a dense model none.  The
    all-reduces of TP 4 span 3 peers each (c_peer's count), one device none."""
    from roofline_decode.formulas.weights import expected_experts_touched

    model, device = load_model("qwen3-30b-a3b"), rd.load_accelerator("h100-sxm")
    uniform = step_terms(model, device, 8.0, 1024.0, tensor_parallel=4, expert_parallel=4)
    touched = float(expected_experts_touched(model.num_experts, model.num_experts_per_token, 8))
    assert float(uniform.experts_run) == pytest.approx(model.num_moe_layers * touched / 4, rel=1e-12)
    same = step_terms(model, device, 8.0, 1024.0, routing="identical")
    assert float(same.experts_run) == model.num_moe_layers * model.num_experts_per_token
    assert float(step_terms(load_model("llama-3.1-8b"), device, 8.0, 1024.0).experts_run) == 0.0
    assert float(uniform.allreduce_peers) == 2 * model.num_layers * 3 == 3 * float(uniform.allreduces)
    assert float(same.allreduce_peers) == 0.0


def test_terms_without_a_prior_stay_out_of_a_plain_fit():
    """gpt-fast's rows (TP and MoE, no prior): t_exp and c_peer are not fitted and stay 0."""
    rows = engine_rows(MEASURED, ("gpt-fast",))["gpt-fast"]
    assert rows.terms is not None and np.any(rows.terms.experts_run > 0) and np.any(rows.terms.allreduce_peers > 0)
    p, names = fit_step_model(rows.terms, rows.measured_s)
    assert not {"t_exp", "c_peer"} & set(names)
    assert p[PARAMETERS.index("t_exp")] == p[PARAMETERS.index("c_peer")] == 0.0


def test_a_map_fit_keeps_its_parameters_near_the_prior():
    """A tight prior holds the parameters at its values, a prior of huge scale is no prior (the
    truth of noise-free rows comes back), and a parameter no row determines takes its prior value."""
    from roofline_decode.measure.engine_fit import prior_rows, prior_strength
    from roofline_decode.measure.engine_profile import StepTerms

    parts, groups = [], []
    for device in ("a100-80gb-sxm", "h100-sxm"):
        for model in ("llama-3.1-8b", "llama-2-13b"):
            parts.append(step_terms(load_model(model), rd.load_accelerator(device), np.array([1.0, 4.0, 16.0, 64.0]),
                                    np.array([512.0, 2048.0, 4096.0, 8192.0])))
            groups += [f"{device}|{model}"] * 4
    terms = StepTerms.stack(parts)
    truth = np.zeros(len(PARAMETERS))
    for name, value in (("t_layer", 20e-6), ("t_step", 2e-3), ("u_w", 0.3), ("u_kv", 0.6)):
        truth[PARAMETERS.index(name)] = value
    y = predict_step(terms, truth)[0]
    prior = {"t_layer": (5e-6, 5e-6), "t_step": (1e-3, 1e-3), "u_w": (0.43, 0.5), "u_kv": (0.43, 0.5),
             "t_exp": (1e-6, 1e-6)}
    tight = {k: (m, s * 1e-4) for k, (m, s) in prior.items()}
    held, names = fit_step_model(terms, y, loss="log", prior=tight, groups=groups)
    for name, (value, _) in prior.items():
        assert held[PARAMETERS.index(name)] == pytest.approx(value, rel=1e-3)
    assert "t_exp" not in names and "t_layer" in names  # dense models: t_exp at its prior value, not fitted
    loose = {k: (m, s * 1e6) for k, (m, s) in prior.items()}
    free = fit_step_model(terms, y, loss="log", prior=loose, groups=groups)[0]
    for name in ("t_layer", "t_step", "u_w", "u_kv"):
        assert free[PARAMETERS.index(name)] == pytest.approx(truth[PARAMETERS.index(name)], rel=1e-4)
    assert prior_strength(["a"] * 6 + ["b"] * 2, 0.25) == pytest.approx(0.25, rel=1e-12)
    with pytest.raises(InvalidValueError, match="prior"):
        prior_rows(("t_step",), {"t_step": (1e-3, 0.0)}, 1.0)
    with pytest.raises(InvalidValueError, match="groups"):
        prior_strength([])


def test_production_parameters_are_physical():
    """The MAP fits keep every production parameter where the hardware puts it (engine_fit.STEP_PRIOR):
    a per-layer cost of microseconds, a per-step cost of about a millisecond, an NVLink all-reduce
    of 5-50 µs, efficiencies 0.4-1, the collective and prefill floors taken 0.5-3 times."""
    for engine in PRODUCTION:
        p = load_engine_profile(engine).parameters
        assert p["t_layer"] <= 20e-6 and p["t_step"] <= 3e-3 and p["q"] <= 30e-6, engine
        assert 5e-6 <= p["c_ar"] <= 50e-6 and 0.0 < p["t_exp"] <= 5e-6 and 0.0 < p["c_peer"] <= 10e-6, engine
        assert all(0.4 <= 1 / (1 + p[f"u_{s}"]) <= 1 for s in ("w", "kv", "moe")), engine
        assert 0.5 <= p["k_comm"] <= 3 and 0.5 <= p["k_pf"] <= 3, engine


def test_a_term_no_row_fitted_says_it_rests_on_the_prior():
    """vLLM has no layer-split rows: its hand-off cost is the prior's, and the label says so."""
    vllm = load_engine_profile("vllm")
    assert "t_hop" not in vllm.fitted and vllm.parameters["t_hop"] == vllm.parameter_prior["t_hop"][0] > 0
    e = rd.expected("llama-3.1-70b", "h100-sxm", batch=8, engine=vllm, pipeline_parallel=2)
    assert "hand-offs at the profile's prior value (10 µs each" in e.label


def test_decoding_clients_scale_each_run_by_its_measured_decoding_share():
    """The diagnostic rows of benchmarks/sglang_rows.py: Qwen3-32B on one H100 (SGLang, ISL 2048,
    OSL 512, 16 clients) measured TTFT 88.8 s and TPOT 26.3 ms, so 511 x 26.3 ms / (511 x 26.3 ms +
    88.8 s) = 13 % of each request's cycle is decoding: 2 of the 16 clients decode at a time."""
    from roofline_decode.measure.engine_rows_production import production_rows

    plain = production_rows(MEASURED)[0]["sglang"]
    scaled = production_rows(MEASURED, decoding_clients=True)[0]["sglang"]
    assert plain.terms is not None and scaled.terms is not None
    row = "aic_silicon_hopper.csv:203"
    before, after = (float(r.terms.batch[r.sources.index(row)]) for r in (plain, scaled))
    assert 15 < before <= 16 and 1 < after <= 2
    same = [s for s in scaled.sources if s in plain.sources]
    assert len(same) > 0.9 * len(plain.sources)
    for s in same:
        assert scaled.terms.batch[scaled.sources.index(s)] <= plain.terms.batch[plain.sources.index(s)] + 1e-9


def test_a_serving_run_takes_its_layout_and_never_undercuts_its_floors():
    """A serving run's expectation rests on serving_floor of the layout asked for (its TPOT and TTFT
    floors), not on a tensor-parallel group of as many devices: pp4 serializes the layers, so its
    TPOT floor is about four times tp4's, and the expectation may not fall below it."""
    from roofline_decode.floors.serving import serving_floor

    for layout in ("pp4", "dp8 ep8"):
        model = "llama-3.1-70b" if layout == "pp4" else "deepseek-v3"
        device = "h100-sxm" if layout == "pp4" else "h200-sxm"
        sf = serving_floor(model, device, concurrency=8, input_length=1024, output_length=256, parallel=layout)
        e = rd.expected(model, device, batch=8, engine="tensorrt-llm", prompt=1024, output=256, parallel=layout)
        assert float(e.floor_step_time_s) == float(np.ravel(sf.tpot_s)[0])
        assert float(e.ttft_floor_s) >= float(np.ravel(sf.ttft_s)[0]) * (1 - 1e-12)
        assert float(e.lower_s) >= float(e.floor_step_time_s) and float(e.ttft_s) >= float(e.ttft_floor_s)
    pp = rd.expected("llama-3.1-70b", "h100-sxm", batch=8, engine="tensorrt-llm", prompt=1024, output=256,
                     parallel="pp4")
    tp = rd.expected("llama-3.1-70b", "h100-sxm", batch=8, engine="tensorrt-llm", prompt=1024, output=256,
                     parallel="tp4")
    assert float(pp.floor_step_time_s) > 3 * float(tp.floor_step_time_s)
    assert "sits on that floor" in pp.label and "sits on that floor" not in tp.label


def test_floor_engine_cli_under_a_layout(capsys):
    """`floor --engine` under --pp shows the layout's floor and an expectation above it (it used to
    take pp4 for a tp4 group: 19.5 ms expected under a 44.7 ms floor); --ep/--dp are refused by flag."""
    from roofline_decode.cli import main

    assert main(["floor", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--pp", "4", "--batch", "8",
                 "--engine", "tensorrt-llm", "--format", "json"]) == 0
    (record,) = json.loads(capsys.readouterr().out)
    pp = rd.decode_floor("llama-3.1-70b", "h100-sxm", batch=8, parallel="pp4")
    assert record["floor_step_time_s"] == pytest.approx(float(pp.step_time_s), rel=1e-9)
    assert record["floor_step_time_s"] <= record["lower_s"] <= record["expected_step_time_s"]
    assert main(["floor", "--model", "deepseek-v3", "--gpu", "h200-sxm", "--dp", "8", "--ep", "8",
                 "--engine", "sglang"]) == 2
    err = capsys.readouterr().err
    assert "--engine" in err and "--ep or --dp" in err and "Traceback" not in err
