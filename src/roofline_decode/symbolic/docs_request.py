"""The derivation page's section on prefill, requests and speculative decoding (generated).

Equations are printed from the twins of :mod:`roofline_decode.formulas.prefill`,
:mod:`~roofline_decode.formulas.shared_prefix` and :mod:`~roofline_decode.formulas.speculative`;
numbers come from the layer-3 functions on bundled models.
"""

from __future__ import annotations

from .expressions import twin

__all__ = ["section_request"]


def _eq(name: str) -> str:
    return f"$$\n{twin(name).expression().latex()}\n$$\n"


def section_request() -> str:
    from ..floors.prefill import prefill_floor
    from ..floors.request import request_floor
    from ..floors.speculative import speculative_floor

    out = ["## 7. Beyond one step: prefill, the request, speculative decoding\n",
           "A prefill of P prompt tokens per sequence (C already cached, chunks of c tokens) multiplies every "
           "token through the matrices (the lm_head for the last one only) and attends causally, summed exactly "
           "over positions ([prefill.md](prefill.md)):\n"]
    for name in ("prefill_matmul_flops", "prefill_attended_positions", "prefill_attention_flops"):
        out.append(_eq(name))
    out.append("\nIt reads the weights once per chunk and the KV before each chunk once:\n")
    for name in ("prefill_weight_bytes", "prefill_kv_read_bytes", "mla_prefill_score_value_width"):
        out.append(_eq(name))
    r = prefill_floor("llama-2-7b", "a100-80gb-sxm", 2048)
    out.append(f"\nLlama-2-7B, a 2,048-token prompt on the A100-80GB SXM: {float(r.flops):.4g} FLOPs, "
               f"{float(r.ttft_s) * 1e3:.1f} ms, {r.bound}-bound; the shortest compute-bound prompt is "
               f"{int(r.compute_bound_prompt)} tokens.\n")
    q = request_floor("llama-3.1-8b", "h100-sxm", 2048, 512, batch=[1, 32])
    out.append("\nA request is that prefill, which yields the first token, then O − 1 decode steps at contexts "
               "P … P + O − 2 ([request.md](request.md)). Llama-3.1-8B on the H100 SXM, 2,048 in and 512 out: "
               f"TTFT {q.ttft_s[0] * 1e3:.1f} ms, TPOT {q.tpot_s[0] * 1e3:.3f} ms, {q.e2e_latency_s[0]:.3f} s end to end "
               f"at batch 1; {q.ttft_s[1] * 1e3:.1f} ms, {q.tpot_s[1] * 1e3:.3f} ms and {q.e2e_latency_s[1]:.3f} s at "
               "batch 32. A prefix shared by the batch is held (and, with a cascade kernel, read) once:\n")
    for name in ("shared_prefix_positions", "shared_prefix_saved_bytes"):
        out.append(_eq(name))
    out.append("\nSpeculative decoding ([speculative.md](speculative.md)): k draft steps and one verify step of "
               "k + 1 tokens per round:\n")
    for name in ("expected_tokens_per_round", "speculative_time_per_token", "speculative_speedup"):
        out.append(_eq(name))
    s = speculative_floor("llama-3.1-70b", "h100-sxm", draft="llama-3.2-1b", k=4, acceptance=0.8,
                          batch=[1, 8, 64], context=2048)
    out.append("\nOnce plain decoding is compute-bound the verify step costs at least k + 1 plain steps, so "
               "S <= E / (k + 1) <= 1. Llama-3.1-70B with a Llama-3.2-1B draft on the H100 SXM, k = 4, a = 0.8, "
               "T = 2,048: speedup " + ", ".join(f"{float(x):.2f}" for x in s.speedup)
               + " at batch 1, 8 and 64.\n")
    out.append("These equations price a round phase by phase (`pricing=\"phased\"`). The strict floor "
               "(`speculative_floor`'s default, `pricing=\"overlapped\"`) bounds a round by its total bytes and "
               "its total FLOPs, since an engine may overlap one micro-batch's draft steps with another's verify "
               "step: t_round >= max((Q_draft + Q_verify) / BW, the sum of FLOPs_g / peak_g over the draft's and the verify "
               "step's FLOP groups g); the law above holds for it too.\n")
    return "\n".join(out)
