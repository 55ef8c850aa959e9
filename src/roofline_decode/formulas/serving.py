"""Serving: generated tokens per second, requests per second, Little's law, the benchmark
metrics and the KV transfer of disaggregated serving.

Under continuous batching a request occupies one batch slot for its whole decode, so the
steady state obeys Little's law: concurrency = arrival rate × time in the system.  The
derivations of the serving floors built on these functions are in docs/serving.md.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand

__all__ = ["requests_per_second", "littles_law_concurrency", "request_rate_at_concurrency", "prefill_tokens_per_step",
           "steady_decode_batch",
           "time_per_output_token", "closed_loop_latency", "kv_transfer_time", "workers_for_rate"]


def requests_per_second(tokens_per_second: Operand, output_length: Operand) -> ArrayOrExpr:
    r"""Requests completed per second for a generated-token rate and an output length.

    .. math:: \lambda = \frac{\text{tok/s}}{N_{out}}

    Parameters
    ----------
    tokens_per_second : array_like
        Generated tokens per second, aggregated over the batch [1/s].
    output_length : array_like
        Tokens generated per request N_out [1].

    Returns
    -------
    array_like
        Requests per second [1/s] (decode only: prefill time is not counted).

    References
    ----------
    .. [1] Austin et al., "How to Scale Your Model", 2025, "Serving LLaMA 3-70B on TPUs"
       (queries per second = batch / (step time × median decode length)).

    Examples
    --------
    2,000 tokens/s with 500-token answers: 4 requests/s.

    >>> requests_per_second(2000.0, 500)
    4.0
    """
    return tokens_per_second / output_length


def littles_law_concurrency(arrival_rate: Operand, output_length: Operand, step_time: Operand) -> ArrayOrExpr:
    r"""Requests decoding at once in the steady state of continuous batching.

    .. math:: B = \lambda\,N_{out}\,T_{step}(B)

    Parameters
    ----------
    arrival_rate : array_like
        Requests arriving per second λ [1/s].
    output_length : array_like
        Tokens generated per request N_out [1]; a request stays N_out steps.
    step_time : array_like
        Seconds per decode step at that concurrency T_step(B) [s].

    Returns
    -------
    array_like
        Mean concurrency B [1] (= the mean batch).  Since T_step depends on B, the steady
        state is a fixed point; :mod:`roofline_decode.planning.serving` solves it.

    References
    ----------
    .. [1] Little, "A Proof for the Queuing Formula: L = λW", Operations Research 9(3), 1961.

    Examples
    --------
    4 requests/s of 500 tokens at 20 ms per step keep 40 requests in flight.

    >>> littles_law_concurrency(4.0, 500, 0.02)
    40.0
    """
    return arrival_rate * output_length * step_time


def request_rate_at_concurrency(
    concurrency: Operand, output_length: Operand, step_time: Operand,
) -> ArrayOrExpr:
    r"""Arrival rate that keeps a given concurrency in steady state (Little's law solved for λ).

    .. math:: \lambda = \frac{B}{N_{out}\,T_{step}(B)}

    Parameters
    ----------
    concurrency : array_like
        Requests decoding at once B [1].
    output_length : array_like
        Tokens generated per request N_out [1].
    step_time : array_like
        Seconds per decode step at batch B [s].

    Returns
    -------
    array_like
        Requests per second λ [1/s]; equals :func:`requests_per_second` of B / T_step.

    References
    ----------
    .. [1] Little, Operations Research 9(3), 1961.

    Examples
    --------
    The Scaling Book's LLaMA 3-70B on a TPU v5e 4x4 in bf16: batch 43, 19 ms per step,
    512-token decodes: 4.42 requests/s (0.28 per chip).

    >>> round(request_rate_at_concurrency(43, 512, 0.019), 2)
    4.42
    """
    return concurrency / (output_length * step_time)


def steady_decode_batch(batch: Operand, output_length: Operand) -> ArrayOrExpr:
    r"""Sequences a request's decode steps carry in the steady state of continuous batching.

    .. math:: B_{dec} = 1 + (B - 1)\,\frac{N_{out} - 1}{N_{out}}

    Parameters
    ----------
    batch : array_like
        Requests admitted to the running batch B [1], >= 1.
    output_length : array_like
        Output tokens per request N_out [tokens], > 1.

    Returns
    -------
    array_like
        Decode tokens per step seen by a decoding request B_dec [1]: itself, and each other admitted
        request that is decoding rather than in the step of its prefill.

    Notes
    -----
    A request holds its slot for one step of prefill (the step that yields its first token; a
    prefill spread over more steps leaves fewer slots decoding) and N_out − 1 decode steps, so
    in steady state, with the slots' phases spread evenly, each other slot decodes in a share
    (N_out − 1)/N_out of the steps.  One request alone (B = 1) decodes alone.

    References
    ----------
    .. [1] Yu et al., "Orca: A Distributed Serving System for Transformer-Based Generative
       Models", OSDI 2022, §4 (iteration-level scheduling).

    Examples
    --------
    128 requests admitted with 128 output tokens each: a decode step carries 127 of them.

    >>> steady_decode_batch(128, 128)
    127.0078125
    """
    return 1 + (batch - 1) * (output_length - 1) / output_length


def prefill_tokens_per_step(batch: Operand, prompt: Operand, output_length: Operand) -> ArrayOrExpr:
    r"""Prompt tokens of the other requests that each decode step carries in steady state.

    .. math:: p = \frac{(B - 1)\, P}{N_{out}}

    Parameters
    ----------
    batch : array_like
        Requests admitted to the running batch B [1], >= 1.
    prompt : array_like
        Prompt tokens per request P [tokens] (the benchmarks' input length, ISL).
    output_length : array_like
        Output tokens per request N_out [tokens], > 1.

    Returns
    -------
    array_like
        Prompt tokens per step p [tokens].

    Notes
    -----
    Little's law per slot: a slot holds a request for N_out steps (one step of prefill that
    yields the first token, N_out − 1 decode steps), so B / N_out requests start per step, each
    with P prompt tokens.  A request's own prompt is not in its decode steps: they carry the
    prompts of the other B − 1 slots.  Assumes the prompts are spread evenly over the steps
    (stationary chunked prefill): a run that bunches them into steps outside a request's decode
    steps breaks it (and pays in TTFT).

    References
    ----------
    .. [1] Little, Operations Research 9(3), 1961; Agrawal et al., "Taming Throughput-Latency
       Tradeoff in LLM Inference with Sarathi-Serve", OSDI 2024, §3 (prefill chunks riding
       along decode steps).

    Examples
    --------
    Qwen3-32B served to 128 clients with 4,096-token prompts and 128 output tokens: 4,064
    prompt tokens ride along every decode step.

    >>> prefill_tokens_per_step(128, 4096, 128)
    4064.0
    """
    return (batch - 1) * prompt / output_length


def time_per_output_token(e2e_latency: Operand, ttft: Operand, output_length: Operand) -> ArrayOrExpr:
    r"""Time per output token as the serving benchmarks define it.

    .. math:: \mathrm{TPOT} = \frac{\mathrm{E2E} - \mathrm{TTFT}}{N_{out} - 1}

    Parameters
    ----------
    e2e_latency : array_like
        End-to-end latency of a request, send to last token [s].
    ttft : array_like
        Time to first token [s] (queueing included).
    output_length : array_like
        Output tokens N_out [tokens], > 1.

    Returns
    -------
    array_like
        TPOT [s]; with every request of N_out tokens the mean TPOT equals the mean inter-token
        latency (ITL).

    References
    ----------
    .. [1] vLLM ``benchmarks/benchmark_serving.py`` (``tpot = (latency - ttft) / (output_len - 1)``);
       SGLang ``python/sglang/bench_serving.py``, same definition.

    Examples
    --------
    The measured Qwen3-32B fp8 run on 4 H100s (TensorRT-LLM, 4,096 in, 128 out, 128 clients):
    TTFT 1.284 s and TPOT 118.5 ms make an end-to-end latency of 16.33 s.

    >>> round(time_per_output_token(16.3329, 1.2837, 128) * 1e3, 1)
    118.5
    """
    return (e2e_latency - ttft) / (output_length - 1)


def closed_loop_latency(clients: Operand, arrival_rate: Operand) -> ArrayOrExpr:
    r"""Mean end-to-end latency of a closed loop of C clients (Little's law).

    .. math:: \mathrm{E2E} = \frac{N_c}{\lambda}

    Parameters
    ----------
    clients : array_like
        Clients, each sending its next request when the last one ends N_c [1].
    arrival_rate : array_like
        Requests arriving (and, in steady state, completed) per second λ [1/s].

    Returns
    -------
    array_like
        Mean time in the system per request, queueing included [s].

    Notes
    -----
    Zero think time (``--max-concurrency`` with an infinite request rate in vLLM's
    benchmark_serving, ``--max-concurrency`` in SGLang's bench_serving): every client always
    has one request in flight, so L = C in L = λW.  A ceiling on λ is a floor on E2E.

    References
    ----------
    .. [1] Little, "A Proof for the Queuing Formula: L = λW", Operations Research 9(3), 1961.

    Examples
    --------
    128 clients served 7.84 requests/s (the Qwen3-32B run above) wait 16.3 s per request.

    >>> round(closed_loop_latency(128, 7.837), 1)
    16.3
    """
    return clients / arrival_rate


def kv_transfer_time(prompt: Operand, kv_bytes_per_token: Operand, link_bandwidth: Operand,
                     num_links: Operand = 1) -> ArrayOrExpr:
    r"""Time to move a prompt's KV cache from a prefill worker to a decode worker.

    .. math:: T_{kv} = \frac{P\, m_{tok}}{n_{link}\, BW_{link}}

    Parameters
    ----------
    prompt : array_like
        Prompt tokens P [tokens].
    kv_bytes_per_token : array_like
        KV-cache bytes of one token over all layers m_tok [B].
    link_bandwidth : array_like
        Per-direction bandwidth of one device's link BW_link [B/s].
    num_links : array_like
        Devices sending their shards at once n_link [1] (at most the devices of the smaller
        worker).

    Returns
    -------
    array_like
        Transfer time [s], a floor: no latency, no protocol overhead, no overlap with the
        prefill counted against it.

    References
    ----------
    .. [1] Zhong et al., "DistServe: Disaggregating Prefill and Decoding for Goodput-optimized
       Large Language Model Serving", OSDI 2024, §4 (KV cache transmission).

    Examples
    --------
    Llama-3.1-8B in bf16 holds 2 · 8 · 128 · 32 · 2 = 131,072 B per token: a 4,096-token
    prompt is 0.54 GB, 10.7 ms over a 400 Gb/s NIC (50 GB/s).

    >>> round(kv_transfer_time(4096, 131072, 50e9) * 1e3, 2)
    10.74
    """
    return prompt * kv_bytes_per_token / (num_links * link_bandwidth)


def workers_for_rate(arrival_rate: Operand, worker_rate: Operand) -> ArrayOrExpr:
    r"""Workers needed to sustain a request rate, each serving at most ``worker_rate``.

    .. math:: N_w = \frac{\lambda}{\mu}

    Parameters
    ----------
    arrival_rate : array_like
        Requests per second to sustain λ [1/s].
    worker_rate : array_like
        Most requests per second one worker completes μ [1/s].

    Returns
    -------
    array_like
        Workers W [1] (fractional; round up to deploy).  Prefill and decode workers balance
        when W_p / W_d = μ_d / μ_p.

    References
    ----------
    .. [1] Zhong et al., DistServe, OSDI 2024, §4.1 (placement by per-instance goodput).

    Examples
    --------
    20 requests/s against prefill workers of 8.6 requests/s each: 2.33 workers.

    >>> round(workers_for_rate(20.0, 8.6), 2)
    2.33
    """
    return arrival_rate / worker_rate
