"""The TTFT model of the engine profiles (measure/engine_ttft.py): its terms, the fit, old profile
files, and the expected TTFT never below serving_floor's TTFT floor (measure/expected.py)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from roofline_decode.catalog import load_model
from roofline_decode.errors import InvalidValueError
from roofline_decode.floors.serving import serving_floor
from roofline_decode.measure.engine_profile import load_engine_profile
from roofline_decode.measure.engine_rows_production import TTFT_LOSS, TTFT_TERMS
from roofline_decode.measure.engine_ttft import TTFT_OPTIONAL, TTFT_PARAMETERS, fit_ttft, predict_ttft, ttft_from_dict
from roofline_decode.measure.expected import expected

TRUTH = {"t_first": 0.03, "u_prefill": 1.5, "u_queue": 2.0, "w_clients": 0.1, "k_step": 4.0, "t_token": 2e-5,
         "t_others": 1e-6, "k_arrive": 30.0}
NONE = {k: 0.0 for k in ("k_step", "t_token", "t_others", "k_arrive")}


def _rows() -> dict[str, np.ndarray]:
    """Rows on a grid of prefill floors, queues, clients, steps and prompts, two devices, three models."""
    rng = np.random.default_rng(7)
    n = 120
    return {"prefill_s": rng.uniform(0.002, 0.3, n), "queue_s": np.where(rng.uniform(size=n) < 0.2,
                                                                         rng.uniform(0, 1.0, n), 0.0),
            "clients": rng.integers(1, 256, n).astype(float), "step_s": rng.uniform(0.002, 0.04, n),
            "prompt_tokens": rng.choice([128.0, 1024.0, 4096.0, 8192.0], n),
            "output_tokens": rng.choice([128.0, 512.0, 1024.0, 8192.0], n),
            "devices": np.array(["h100-sxm", "h200-sxm"] * (n // 2)), "models": np.array(["a", "b", "c"] * (n // 3))}


@pytest.mark.parametrize("loss", ["relative", "log-exact", "log"])
def test_fit_recovers_known_parameters_with_every_term(loss):
    r = _rows()
    y = predict_ttft(TRUTH, r["prefill_s"], r["queue_s"], r["clients"], r["step_s"], r["prompt_tokens"],
                     r["output_tokens"])
    fit = fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), list(r["models"]), loss,
                   step_s=r["step_s"], prompt_tokens=r["prompt_tokens"], output_tokens=r["output_tokens"],
                   terms=TTFT_OPTIONAL)
    assert fit["loss"] == loss
    assert fit["fitted"] == list(TTFT_PARAMETERS)
    for name, value in TRUTH.items():
        assert fit["parameters"][name] == pytest.approx(value, rel=1e-6, abs=1e-12)
    assert fit["statistics"]["held_out_median"] < 1e-6 and fit["statistics"]["held_out_model_median"] < 1e-6


def test_terms_not_chosen_stay_zero_and_the_base_model_is_unchanged():
    """Without ``terms`` the fit is the four-parameter model (w_clients the only optional term);
    the other optional ones are 0 and not listed; with no optional term, w_clients is 0 too."""
    r = _rows()
    base = {**TRUTH, **NONE}
    y = predict_ttft(base, r["prefill_s"], r["queue_s"], r["clients"])
    fit = fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]))
    assert fit["fitted"] == ["t_first", "u_prefill", "u_queue", "w_clients"]
    assert fit["parameters"] == pytest.approx(base, rel=1e-6, abs=1e-12)
    assert all(fit["parameters"][k] == 0.0 for k in TTFT_OPTIONAL if k != "w_clients")
    bare = fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), terms=())
    assert bare["fitted"] == ["t_first", "u_prefill", "u_queue"] and bare["parameters"]["w_clients"] == 0.0


def test_exact_log_loss_is_symmetric_in_the_log_error_and_robust():
    """Rows 1.3x off either way leave the "log-exact" fit centred (the relative loss leans low,
    the Gauss-Newton "log" one high); every 20th row 20x slower (a queue the floor does not see)
    barely moves it (Huber), where it drags the "log" fit up."""
    r = _rows()
    truth = {**TRUTH, **NONE}
    y = predict_ttft(truth, r["prefill_s"], r["queue_s"], r["clients"])
    ids = list(r["devices"])

    def centre(measured: np.ndarray, loss: str) -> np.ndarray:
        p = fit_ttft(measured, r["prefill_s"], r["queue_s"], r["clients"], ids, loss=loss)["parameters"]
        ratio: np.ndarray = predict_ttft(p, r["prefill_s"], r["queue_s"], r["clients"]) / y
        return ratio

    scattered = np.where(np.arange(len(y)) % 2 == 0, 1.3, 1 / 1.3) * y
    assert abs(np.log(np.median(centre(scattered, "log-exact")))) < 0.02
    assert np.median(centre(scattered, "relative")) < 0.95 and np.median(centre(scattered, "log")) > 1.02
    slow = y * np.where(np.arange(len(y)) % 20 == 0, 20.0, 1.0)
    assert np.median(np.abs(centre(slow, "log-exact") - 1)) < 0.05 < 0.1 < np.median(np.abs(centre(slow, "log") - 1))


def test_bad_terms_and_missing_columns_are_refused():
    r = _rows()
    y = np.full(len(r["clients"]), 0.5)
    with pytest.raises(InvalidValueError, match="loss"):
        fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), loss="median")
    with pytest.raises(InvalidValueError, match="terms"):
        fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), terms=("k_layer",))
    with pytest.raises(InvalidValueError, match="step_s"):
        fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), terms=("k_step",))
    with pytest.raises(InvalidValueError, match="prompt_tokens"):
        fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), terms=("t_others",))
    # a profile with a step term needs the step to predict
    with pytest.raises(InvalidValueError, match="step_s"):
        predict_ttft(TRUTH, 0.01, 0.0, 8, prompt_tokens=1024)
    with pytest.raises(InvalidValueError, match="prompt_tokens"):
        predict_ttft(TRUTH, 0.01, 0.0, 8, step_s=0.005)
    with pytest.raises(InvalidValueError, match="output_tokens"):
        fit_ttft(y, r["prefill_s"], r["queue_s"], r["clients"], list(r["devices"]), terms=("k_arrive",))
    with pytest.raises(InvalidValueError, match="output_tokens"):
        predict_ttft(TRUTH, 0.01, 0.0, 8, step_s=0.005, prompt_tokens=1024)


def test_a_prompt_without_output_counts_no_other_arrivals():
    """expected(prompt=...) without output=: no steady serving, so the arrivals term (SGLang's
    k_arrive) adds nothing; with output= it does."""
    model = load_model("llama-3.1-8b")
    alone = expected(model, "h100-sxm", batch=64, prompt=1024, engine="sglang")
    served = expected(model, "h100-sxm", batch=64, prompt=1024, output=256, engine="sglang")
    p = load_engine_profile("sglang").ttft
    assert p is not None and p["parameters"]["k_arrive"] > 0
    assert alone.ttft_s is not None and served.ttft_s is not None and alone.ttft_floor_s is not None
    bare = predict_ttft(p["parameters"], alone.ttft_floor_s, 0.0, 64, output_tokens=np.inf)
    assert float(alone.ttft_s) == pytest.approx(float(bare))
    assert float(served.ttft_s) > float(alone.ttft_s)


def test_profile_files_without_the_new_terms_read_them_as_zero():
    old = {"parameters": {"t_first": 0.05, "u_prefill": 3.0, "u_queue": 3.2, "w_clients": 0.014},
           "band": {"0.9": [-0.6, 1.6]}, "rows": 10}
    read = ttft_from_dict(old)
    assert read is not None and all(read["parameters"][k] == 0.0 for k in TTFT_OPTIONAL if k != "w_clients")
    assert float(predict_ttft(read["parameters"], 0.02, 0.0, 8)) == pytest.approx(0.05 + 4 * 0.02 + 0.014 * 7 * 0.02)
    with pytest.raises(KeyError):
        ttft_from_dict({**old, "parameters": {"t_first": 0.05}})


@pytest.mark.parametrize("engine", sorted(TTFT_TERMS))
def test_shipped_profiles_fit_the_terms_their_splits_chose(engine):
    t = load_engine_profile(engine).ttft
    assert t is not None
    assert set(t["fitted"]) == {"t_first", "u_prefill", "u_queue", *TTFT_TERMS[engine]}
    assert all(t["parameters"][k] == 0.0 for k in TTFT_OPTIONAL if k not in TTFT_TERMS[engine])
    assert t["loss"] == TTFT_LOSS[engine]
    # physically plausible: a few floor steps of wait, microseconds of host time per prompt token,
    # the others' arrivals of fewer steps than a request's TTFT spans (tens) at the prefill's pace
    p = t["parameters"]
    assert p["k_step"] <= 20 and p["t_token"] <= 1e-4 and p["t_others"] <= 1e-5
    assert p["k_arrive"] / (1 + p["u_prefill"]) <= 100


@settings(max_examples=12, deadline=None)
@given(clients=st.sampled_from([1, 4, 16, 64, 256, 1024]), prompt=st.sampled_from([128, 1024, 8192]),
       engine=st.sampled_from(["vllm", "tensorrt-llm", "sglang"]))
def test_expected_ttft_is_never_below_the_serving_floor(clients, prompt, engine):
    model = load_model("llama-3.1-8b")
    e = expected(model, "h100-sxm", batch=clients, prompt=prompt, output=256, engine=engine)
    sf = serving_floor(model, "h100-sxm", concurrency=clients, input_length=prompt, output_length=256)
    floor = float(np.ravel(sf.ttft_s)[0])
    assert e.ttft_s is not None and e.ttft_lower_s is not None and e.ttft_upper_s is not None
    assert floor * (1 - 1e-12) <= float(e.ttft_lower_s) <= float(e.ttft_s) <= float(e.ttft_upper_s)
