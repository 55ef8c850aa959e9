"""Decode on several devices: tensor-parallel shares and collectives, pipeline stages.

Tensor parallelism (Megatron) splits every matrix n ways and joins the partial results with
two all-reduces per layer (after attention and after the MLP), each of B·d activations.
Pipeline parallelism gives each of p devices L/p whole layers and passes B·d activations
from stage to stage.
"""

from __future__ import annotations

from .._typing import ArrayOrExpr, Operand
from .ops import maximum, minimum

__all__ = [
    "ring_all_reduce_time",
    "ring_all_gather_time",
    "all_to_all_time",
    "expert_parallel_communication_time",
    "tensor_parallel_communication_time",
    "kv_head_share",
    "recurrent_state_share",
    "sharded_bytes",
    "pipeline_step_time",
]


def ring_all_reduce_time(
    message_bytes: Operand, num_devices: Operand, link_bandwidth: Operand, collective_latency: Operand = 0,
) -> ArrayOrExpr:
    r"""Time of one ring all-reduce of a message over n devices.

    .. math:: T_{AR} = \alpha\,\min(n - 1, 1) + \frac{2\,(n-1)}{n}\,\frac{S}{BW_{link}}

    Parameters
    ----------
    message_bytes : array_like
        Bytes each device contributes and receives S [B].
    num_devices : array_like
        Devices in the ring n [1], ≥ 1 (n = 1 costs nothing).
    link_bandwidth : array_like
        Bandwidth each device sends with, in one direction BW_link [B/s].
    collective_latency : array_like, optional
        Fixed cost α of one collective [s] (kernel launch, synchronisation, link hops).

    Returns
    -------
    array_like
        All-reduce time [s]; 0 for n = 1.

    Notes
    -----
    A ring reduce-scatter followed by an all-gather sends 2(n−1)/n of the message over every
    link, the bandwidth optimum for all-reduce; at decode the messages are small and α
    usually dominates.

    References
    ----------
    .. [1] Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
       workstations", J. Parallel Distrib. Comput. 69(2), 2009.
    .. [2] NVIDIA nccl-tests, doc/PERFORMANCE.md ("bus bandwidth" = 2(n−1)/n × algorithm
       bandwidth for all-reduce).

    Examples
    --------
    kipply's 13B model (d = 5120) at batch 1 in fp16 on 2 A100s (NVLink 3, 300 GB/s per
    direction): 10,240 B take 34 ns of link time, plus the fixed cost.

    >>> round(ring_all_reduce_time(5120 * 2, 2, 300e9) * 1e9, 1)
    34.1
    >>> round(ring_all_reduce_time(5120 * 2, 2, 300e9, 5e-6) * 1e6, 3)
    5.034
    """
    return collective_latency * minimum(num_devices - 1, 1) + (
        2 * (num_devices - 1) / num_devices * message_bytes / link_bandwidth
    )


def ring_all_gather_time(
    message_bytes: Operand, num_devices: Operand, link_bandwidth: Operand, collective_latency: Operand = 0,
) -> ArrayOrExpr:
    r"""Time of one ring all-gather that leaves every device with a message of S bytes.

    .. math:: T_{AG} = \alpha\,\min(n - 1, 1) + \frac{n-1}{n}\,\frac{S}{BW_{link}}

    Parameters
    ----------
    message_bytes : array_like
        Bytes of the gathered message each device ends with S [B] (each contributes S / n).
    num_devices : array_like
        Devices in the ring n [1], ≥ 1 (n = 1 costs nothing).
    link_bandwidth : array_like
        Bandwidth each device sends with, in one direction BW_link [B/s].
    collective_latency : array_like, optional
        Fixed cost α of one collective [s].

    Returns
    -------
    array_like
        Time until every device holds the whole message [s].

    Notes
    -----
    Each device receives the n − 1 shares it lacks, (n−1)/n of the message, over its link: half
    the link time of an all-reduce of the same size.  A gather to one device (the sampler's)
    costs the same on that device's link.

    References
    ----------
    .. [1] NVIDIA nccl-tests, doc/PERFORMANCE.md ("bus bandwidth" = (n−1)/n × algorithm
       bandwidth for all-gather).

    Examples
    --------
    The logits of Llama-3.1-8B (V = 128,256) at batch 1 in bf16, gathered over 8 H100s
    (450 GB/s per direction): 256,512 B take 0.5 µs of link time.

    >>> round(ring_all_gather_time(128256 * 2, 8, 450e9) * 1e6, 3)
    0.499
    """
    return collective_latency * minimum(num_devices - 1, 1) + (num_devices - 1) / num_devices * message_bytes / link_bandwidth


def all_to_all_time(
    message_bytes: Operand, num_devices: Operand, link_bandwidth: Operand, collective_latency: Operand = 0,
    domain_size: Operand | None = None, scale_out_bandwidth: Operand | None = None,
) -> ArrayOrExpr:
    r"""Time of one all-to-all in which each of n devices spreads a message evenly over all n.

    .. math::
        T_{A2A} = \alpha\,\min(n-1, 1) + \max\left(
            \left(\frac{\min(m, n)}{n} - \frac{1}{n}\right)\frac{S}{BW_{up}},\
            \left(1 - \frac{\min(m, n)}{n}\right)\frac{S}{BW_{out}}\right)

    Parameters
    ----------
    message_bytes : array_like
        Bytes each device sends, its own share included S [B] (1/n of it stays on the device).
    num_devices : array_like
        Devices taking part n [1], ≥ 1.
    link_bandwidth : array_like
        Scale-up bandwidth each device sends with, in one direction BW_up [B/s] (NVLink/NVSwitch).
    collective_latency : array_like, optional
        Fixed cost α of one collective [s] (0: the strict floor).
    domain_size : array_like, optional
        Devices per scale-up domain m [1] (8 for an HGX node, 72 for NVL72); default n: all
        devices share the scale-up link.
    scale_out_bandwidth : array_like, optional
        Per-device bandwidth to devices of other domains, one direction BW_out [B/s] (the NIC);
        default BW_up.

    Returns
    -------
    array_like
        Time until every device has received its shares [s]; 0 for n = 1 (without α).

    Notes
    -----
    With the n devices spread over n / m domains, a device sends (m − 1)/n of its message inside
    its domain and (n − m)/n to other domains; the two parts travel on different links and
    overlap (the larger sets the time).  With one domain it is (n − 1)/n · S / BW_up, the
    all-to-all's link time on a non-blocking switch.  Uneven traffic (a hot expert) is slower:
    this is the floor.

    References
    ----------
    .. [1] NVIDIA nccl-tests, doc/PERFORMANCE.md (all-to-all "bus bandwidth" = (n−1)/n ×
       algorithm bandwidth).
    .. [2] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, §3.2.2 (dispatch and
       combine over NVLink inside a node and InfiniBand across nodes).

    Examples
    --------
    DeepSeek-V3's dispatch of 128 tokens per GPU (d = 7168, fp8 activations, k = 8 copies) over
    8 H200s (450 GB/s per direction), then over 16 GPUs in two HGX nodes with 50 GB/s NICs:

    >>> message = 128 * 7168 * 1 * 8
    >>> round(all_to_all_time(message, 8, 450e9) * 1e6, 2)
    14.27
    >>> round(all_to_all_time(message, 16, 450e9, 0, 8, 50e9) * 1e6, 1)
    73.4
    """
    if domain_size is None:
        domain_size = num_devices
    if scale_out_bandwidth is None:
        scale_out_bandwidth = link_bandwidth
    inside = minimum(domain_size, num_devices) / num_devices
    return collective_latency * minimum(num_devices - 1, 1) + maximum(
        (inside - 1 / num_devices) * message_bytes / link_bandwidth,
        (1 - inside) * message_bytes / scale_out_bandwidth,
    )


def expert_parallel_communication_time(
    tokens: Operand, hidden_size: Operand, bytes_per_activation: Operand, experts_per_token: Operand,
    num_moe_layers: Operand, expert_parallel: Operand, link_bandwidth: Operand, collective_latency: Operand = 0,
    domain_size: Operand | None = None, scale_out_bandwidth: Operand | None = None,
) -> ArrayOrExpr:
    r"""Dispatch and combine time of expert parallelism in one step [s].

    Each MoE layer sends every token's hidden state to the ranks of its k experts (dispatch)
    and their outputs back (combine): two all-to-alls of N·k·d·b_act bytes per device
    (:func:`all_to_all_time`), of which (ep − 1)/ep leaves the device.

    .. math:: T_{EP} = 2\,L_{moe}\,T_{A2A}(N\,k\,d\,b_{act},\ ep)

    Parameters
    ----------
    tokens : array_like
        Tokens each device routes N [1] (the step's tokens over the devices of a stage).
    hidden_size : array_like
        Model width d [1].
    bytes_per_activation : array_like
        Bytes per activation element b_act [B].
    experts_per_token : array_like
        Copies of each token sent k [1]: the routed experts per token, or min(k, ep) when a
        token goes once to each rank that holds some of its experts.
    num_moe_layers : array_like
        MoE layers L_moe [1].
    expert_parallel : array_like
        Expert-parallel ranks ep [1].
    link_bandwidth, collective_latency, domain_size, scale_out_bandwidth : array_like
        As in :func:`all_to_all_time` [B/s], [s], [1], [B/s].

    Returns
    -------
    array_like
        Seconds per step [s].

    Notes
    -----
    Even placement: the k experts of a token sit on uniformly spread ranks, so (ep − 1)/ep of
    the copies leave the device.  A token whose experts share a rank needs to reach that rank
    once (DeepEP sends it once per destination): pass ``experts_per_token`` = min(k, ep), the
    ranks a token reaches, for that count (the parallel floors do; with ep >= k it is k).

    References
    ----------
    .. [1] DeepSeek-AI, "DeepSeek-V3 Technical Report", arXiv:2412.19437, §3.2.2 and §3.4.2
       (EP dispatch and combine in decoding).

    Examples
    --------
    DeepSeek-V3 (58 MoE layers, d = 7168, k = 8) at 32 tokens per GPU, fp8 dispatch, EP over 8
    H200s at 450 GB/s: 0.41 ms per step of link time.

    >>> round(expert_parallel_communication_time(32, 7168, 1, 8, 58, 8, 450e9) * 1e3, 3)
    0.414
    """
    message = tokens * experts_per_token * hidden_size * bytes_per_activation
    return 2 * num_moe_layers * all_to_all_time(message, expert_parallel, link_bandwidth, collective_latency,
                                                domain_size, scale_out_bandwidth)


def tensor_parallel_communication_time(
    batch: Operand, hidden_size: Operand, bytes_per_activation: Operand, num_layers: Operand,
    num_devices: Operand, link_bandwidth: Operand, collective_latency: Operand = 0,
    all_reduces_per_layer: Operand = 2,
) -> ArrayOrExpr:
    r"""Communication time of one tensor-parallel decode step.

    .. math:: T_{comm} = k\,L\left(\alpha\,\min(n-1, 1) + \frac{2\,(n-1)}{n}\,\frac{B\,d\,b_{act}}{BW_{link}}\right)

    Parameters
    ----------
    batch : array_like
        Sequences B [1].
    hidden_size : array_like
        Model width d [1].
    bytes_per_activation : array_like
        Bytes per activation element b_act [B] (the model's activation format).
    num_layers : array_like
        Layers L [1].
    num_devices : array_like
        Tensor-parallel degree n [1].
    link_bandwidth : array_like
        Per-direction link bandwidth of each device [B/s].
    collective_latency : array_like, optional
        Fixed cost of one all-reduce α [s].
    all_reduces_per_layer : array_like, optional
        k [1]: 2 for Megatron attention + MLP blocks.

    Returns
    -------
    array_like
        Seconds per step [s].

    References
    ----------
    .. [1] Shoeybi et al., "Megatron-LM", arXiv:1909.08053, §3 (two all-reduces per layer
       in the forward pass).
    .. [2] kipply, "Transformer Inference Arithmetic", 2022, "model parallelism".

    Examples
    --------
    Llama-3.1-70B (80 layers, d = 8192, bf16 activations) at batch 16 on 8 H100s (450 GB/s
    per direction) with 5 µs per all-reduce: 0.96 ms, of which 0.8 ms is fixed cost.

    >>> round(tensor_parallel_communication_time(16, 8192, 2, 80, 8, 450e9, 5e-6) * 1e3, 3)
    0.963
    """
    message = batch * hidden_size * bytes_per_activation
    return all_reduces_per_layer * num_layers * ring_all_reduce_time(
        message, num_devices, link_bandwidth, collective_latency
    )


def kv_head_share(num_kv_heads: Operand, num_devices: Operand) -> ArrayOrExpr:
    r"""Fraction of the KV cache (and of the k/v projections) one tensor-parallel device holds.

    .. math:: s_{kv} = \max\left(\frac{1}{n}, \frac{1}{H_{kv}}\right)

    Parameters
    ----------
    num_kv_heads : array_like
        Key/value heads H_kv [1] (1 for an MLA latent, which every device needs whole).
    num_devices : array_like
        Tensor-parallel degree n [1].

    Returns
    -------
    array_like
        Share [1].  Up to n = H_kv each device keeps H_kv / n heads; beyond, each KV head
        is replicated on n / H_kv devices and the per-device cache stops shrinking.

    Notes
    -----
    Real-valued: when n does not divide H_kv (or H_kv does not divide n) the busiest device
    holds ⌈H_kv / n⌉ heads, which this share rounds down.

    References
    ----------
    .. [1] vLLM ``QKVParallelLinear`` and SGLang attention layers: KV heads per rank =
       max(1, H_kv / n), i.e. heads are replicated once n exceeds H_kv.

    Examples
    --------
    Llama-3.1-70B (8 KV heads): 1/4 on 4 devices, 1/8 on 8, still 1/8 on 16.

    >>> [float(kv_head_share(8, n)) for n in (4, 8, 16)]
    [0.25, 0.125, 0.125]
    """
    return maximum(1 / num_devices, 1 / num_kv_heads)


def recurrent_state_share(recurrent_heads: Operand, num_devices: Operand) -> ArrayOrExpr:
    r"""Fraction of the recurrent state (and of its update FLOPs) one tensor-parallel device holds.

    .. math:: s_{rec} = \max\left(\frac{1}{n}, \frac{1}{H_{rec}}\right)

    Parameters
    ----------
    recurrent_heads : array_like
        Independent parts of a recurrent layer's state H_rec [1]: Gated DeltaNet's value heads,
        Mamba-2's SSM heads, Mamba (v1)'s inner channels.
    num_devices : array_like
        Tensor-parallel degree n [1].

    Returns
    -------
    array_like
        Share [1]: up to n = H_rec each device keeps H_rec / n heads' states and updates them;
        beyond, a head is the smallest part placed on a device and the share stops shrinking.

    Notes
    -----
    The split follows the recurrent heads, not the KV heads of the model's attention layers
    (Qwen3-Next: 32 value heads, 2 KV heads).  Real-valued, like :func:`kv_head_share`: the
    busiest device of an uneven split holds ⌈H_rec / n⌉ heads, which this share rounds down, so
    it never overstates a device's state.

    References
    ----------
    .. [1] vLLM ``Qwen3NextGatedDeltaNet`` (``num_v_heads // tp_size`` value heads and their
       states per rank) and ``MambaMixer2`` (``num_heads // tp_size`` SSM heads per rank);
       ``MambaStateShapeCalculator`` (state shapes per rank).

    Examples
    --------
    Qwen3-Next-80B-A3B (32 Gated DeltaNet value heads): 1/8 of the state on 8 devices, 1/32 on
    64.

    >>> [float(recurrent_state_share(32, n)) for n in (8, 32, 64)]
    [0.125, 0.03125, 0.03125]
    """
    return maximum(1 / num_devices, 1 / recurrent_heads)


def sharded_bytes(split_bytes: Operand, replicated_bytes: Operand, num_devices: Operand) -> ArrayOrExpr:
    r"""Bytes one device holds (or reads) when part of them is split n ways.

    .. math:: b_{device} = \frac{b_{split}}{n} + b_{replicated}

    Parameters
    ----------
    split_bytes : array_like
        Bytes divided evenly among the devices [B].
    replicated_bytes : array_like
        Bytes every device keeps a full copy of [B] (norm vectors, replicated KV heads).
    num_devices : array_like
        Devices n [1].

    Returns
    -------
    array_like
        Bytes per device [B]; never increases with n.

    References
    ----------
    .. [1] Shoeybi et al., "Megatron-LM", arXiv:1909.08053, §3.

    Examples
    --------
    Llama-3.1-70B's 141.1 GB of bf16 weights over 8 devices, norms (about 2.6 MB) replicated:

    >>> round(sharded_bytes(141.1e9, 2.6e6, 8) / 1e9, 3)
    17.64
    """
    return split_bytes / num_devices + replicated_bytes


def pipeline_step_time(
    stage_time: Operand, num_stages: Operand, microbatches: Operand = 1, hop_time: Operand = 0,
) -> ArrayOrExpr:
    r"""Time between two tokens of one sequence under pipeline parallelism.

    The batch is cut into m micro-batches that circulate through p stages; a micro-batch
    needs p stage passes and p hand-offs per token, and each stage serves all m micro-batches:

    .. math:: T_{round} = \max\left(m\,t_{stage},\ p\,(t_{stage} + t_{hop})\right)

    Every round produces one token for each of the B sequences.

    Parameters
    ----------
    stage_time : array_like
        Time one stage takes for one micro-batch t_stage [s] (its L/p layers).
    num_stages : array_like
        Pipeline stages p [1].
    microbatches : array_like, optional
        Micro-batches in flight m [1] (1: the whole batch moves as one, no stage overlap).
    hop_time : array_like, optional
        Stage-to-stage transfer of one micro-batch's activations t_hop [s] (0 for p = 1).

    Returns
    -------
    array_like
        Seconds per token per sequence [s]; aggregate tokens/s = B / T_round.

    Notes
    -----
    With m = 1 pipelining adds capacity, not speed: the p stages run one after another.  With
    m ≥ p every stage is busy and throughput rises toward p×, but each micro-batch re-reads the
    stage's weights, which :func:`pipeline_step_time` sees through t_stage.

    References
    ----------
    .. [1] Huang et al., "GPipe", NeurIPS 2019, §2.2; Pope et al., "Efficiently Scaling
       Transformer Inference", MLSys 2023, §3.1.

    Examples
    --------
    Four stages of 5 ms each with 10 µs hops: 20.04 ms per token with one micro-batch.

    >>> round(pipeline_step_time(5e-3, 4, 1, 10e-6) * 1e3, 2)
    20.04
    """
    return maximum(microbatches * stage_time, num_stages * (stage_time + hop_time))
