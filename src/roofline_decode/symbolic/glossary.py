"""The glossary: one name, one symbol, one unit per quantity (DESIGN.md §3).

This table is the single place where a formula parameter gets its sympy symbol.  The symbolic
twins (:mod:`roofline_decode.symbolic.expressions`) introspect the signature of every function in
:data:`roofline_decode.formulas.PUBLIC_FORMULAS` and look each parameter name up here; the
name of the function itself is looked up too, for the left-hand side of its equation.  A
parameter missing from this table makes the twin fail with :class:`GlossaryError` and the
meta-test in ``tests/symbolic`` fail, so a new formula cannot ship without its glossary line.

The table is plain data (no sympy import); ``docs/glossary.md`` is generated from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import RooflineError, close_matches

__all__ = ["Entry", "GLOSSARY", "GlossaryError", "entry"]


class GlossaryError(RooflineError, LookupError):
    """A formula parameter (or formula name) has no entry in :data:`GLOSSARY`."""

    def __init__(self, name: str, where: str):
        self.name, self.where = name, where
        hint = close_matches(str(name), GLOSSARY)
        if where == "glossary":  # a user's look-up: point to the names, not to the source
            by_symbol = [key for key, e in GLOSSARY.items() if getattr(e, "symbol", None) == name][:5]
            known = by_symbol or hint
            super().__init__(
                f"unknown glossary name {name!r}: "
                + (f"did you mean {', '.join(known)}?" if known else "names are the library's parameter names "
                   f"({', '.join(list(GLOSSARY)[:6])}, ...); symbolic.GLOSSARY lists them all")
            )
            return
        super().__init__(
            f"{where}: {name!r} has no glossary entry; add one line to GLOSSARY in "
            f"src/roofline_decode/symbolic/glossary.py (name | symbol | LaTeX | unit | domain | meaning)"
            + (f"; similar names: {', '.join(hint)}" if hint else "")
        )

    def __str__(self) -> str:  # LookupError would repr() the message
        return str(self.args[0])  # the message: a str already


@dataclass(frozen=True)
class Entry:
    """One quantity: its library name, sympy symbol name, LaTeX, unit and meaning.

    ``assumptions`` are passed to ``sympy.Symbol`` (``positive``, ``nonnegative``,
    ``integer``); they state the domain the symbolic twin describes.  Two names may share a
    symbol (aliases: ``arrival_rate`` and ``requests_per_second`` are both λ) if they agree on
    symbol, LaTeX, unit and assumptions.  ``switch`` marks a boolean option a formula tests
    with ``if``; a twin evaluates such a formula at the option's default (pass another value
    to :meth:`~roofline_decode.symbolic.Twin.expression`).
    """

    name: str
    symbol: str
    latex: str
    unit: str
    meaning: str
    assumptions: dict[str, bool] = field(default_factory=lambda: {"positive": True})
    switch: bool = False

    @property
    def is_switch(self) -> bool:
        """A Python-level option (``if overlapped:``): twins keep the function's default."""
        return self.switch


#: The domain column of the table: sympy assumptions of the symbol (``switch``: a boolean
#: option, 0 or 1, see :attr:`Entry.switch`).
_DOMAINS: dict[str, dict[str, bool]] = {
    "positive": {"positive": True},
    "nonnegative": {"nonnegative": True},
    "binary": {"nonnegative": True, "integer": True},
    "switch": {"nonnegative": True, "integer": True},
    "real": {"real": True},
}


def _entries(text: str) -> list[Entry]:
    """The rows of the table ``text``: ``name | symbol | LaTeX | unit | domain | meaning``, one
    quantity a line; an indented line continues the meaning above it; ``#`` starts a comment line."""
    rows: list[list[str]] = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0].isspace() and rows:
            rows[-1][-1] += " " + line.strip()
            continue
        cells = [cell.strip() for cell in line.split("|", 5)]
        if len(cells) != 6 or cells[4] not in _DOMAINS:  # pragma: no cover - guards edits of the table below
            raise ValueError(f"glossary line {line!r}: want name | symbol | LaTeX | unit | domain | meaning, "
                             f"domain one of {', '.join(_DOMAINS)}")
        rows.append(cells)
    return [Entry(name, symbol, latex, unit, meaning, dict(_DOMAINS[domain]), domain == "switch")
            for name, symbol, latex, unit, domain, meaning in rows]


def _table(text: str) -> dict[str, Entry]:
    entries = _entries(text)
    names = [e.name for e in entries]
    repeated = sorted({n for n in names if names.count(n) > 1})
    by_symbol: dict[str, Entry] = {}
    for e in entries:
        first = by_symbol.setdefault(e.symbol, e)
        if (first.latex, first.unit, first.assumptions) != (e.latex, e.unit, e.assumptions):
            repeated.append(f"{first.name}/{e.name} share symbol {e.symbol} but differ")
    if repeated:  # pragma: no cover - guards edits of the table below
        raise ValueError(f"glossary names must be unique and aliases identical: {repeated}")
    return {e.name: e for e in entries}


#: name -> :class:`Entry`.  Names are formula parameters, formula names (the quantity the
#: formula returns) and the derived quantities of :mod:`roofline_decode.symbolic.derived`.
#: One line a quantity (see :func:`_entries`); the domain gives the symbol's assumptions.
GLOSSARY: dict[str, Entry] = _table(r"""
# -- the decode step --------------------------------------------------------------------
batch | B | B | 1 | positive | sequences decoded together; each produces one token per step
context | T | T | tokens | nonnegative | tokens already cached per sequence when the step starts
# -- architecture -------------------------------------------------------------------------
num_layers | L | L | 1 | positive | transformer layers (each holds a KV cache)
num_global_layers | L_g | L_{global} | 1 | nonnegative | layers with full (global) attention
num_sliding_layers | L_s | L_{sliding} | 1 | nonnegative | layers with sliding-window attention
sliding_window | W | W | tokens | positive | window of a sliding-window layer
hidden_size | d | d | 1 | positive | model width
num_heads | H_q | H_{q} | 1 | positive | query (attention) heads
num_kv_heads | H_kv | H_{kv} | 1 | positive | key/value heads (H_kv = H_q: MHA, 1: MQA)
head_dim | d_h | d_{h} | 1 | positive | width of one attention head (from the config, not d / H_q)
intermediate_size | d_ff | d_{ff} | 1 | positive | feed-forward width (of one expert for an expert MLP)
vocab_size | V | V | 1 | positive | vocabulary size (rows of the embedding and the lm_head)
gated | g | g | 1 | binary | 1 for a gated MLP (gate, up, down: SwiGLU/GeGLU), 0 for plain (up, down)
q_lora_rank | r_q | r_{q} | 1 | positive | MLA query compression rank (the twin is the compressed form; r_q = 0
    selects an uncompressed query)
kv_lora_rank | r_kv | r_{kv} | 1 | positive | MLA key/value latent rank
qk_nope_head_dim | d_nope | d_{nope} | 1 | positive | MLA per-head query/key width without rotary embedding
qk_rope_head_dim | d_rope | d_{rope} | 1 | positive | MLA per-head width of the decoupled rotary key
v_head_dim | d_v | d_{v} | 1 | positive | MLA per-head value width
num_experts | E | E | 1 | positive | routed experts per MoE layer
num_experts_per_token | k | k | 1 | positive | routed experts each token is sent to (1 <= k <= E)
num_moe_layers | L_moe | L_{moe} | 1 | positive | layers with routed experts (the twin is the MoE form; the integer
    0 selects the dense form)
# -- recurrent layers, chunked and sparse attention (DESIGN.md §4b) -------------------------
num_recurrent_layers | L_rec | L_{rec} | 1 | nonnegative | layers with a recurrent mixer (Mamba-2, Gated DeltaNet)
ssm_inner_size | d_in | d_{in} | 1 | positive | Mamba-2 inner width (expand × d)
ssm_groups | g_ssm | g_{ssm} | 1 | positive | Mamba-2 groups sharing the B and C projections
ssm_state_size | N_ssm | N_{ssm} | 1 | positive | Mamba-2 state entries per channel
ssm_heads | H_ssm | H_{ssm} | 1 | positive | Mamba-2 heads (one dt and A each)
conv_kernel | K_conv | K_{conv} | 1 | positive | width of the causal convolution of a recurrent mixer
linear_key_heads | H_k | H_{k} | 1 | positive | Gated DeltaNet key (and query) heads
linear_key_head_dim | d_k | d_{k} | 1 | positive | Gated DeltaNet key head width
linear_value_heads | H_v | H_{v} | 1 | positive | Gated DeltaNet value heads (one d_k × d_v state each)
linear_value_head_dim | d_vh | d_{v}^{GDN} | 1 | positive | Gated DeltaNet value head width
ssm_dt_rank | r_dt | r_{dt} | 1 | positive | Mamba time-step projection rank
mamba_matrix_parameters | P_mamba | P_{mamba} | 1 | positive | matrix parameters of one Mamba (v1) mixer
mamba_state_elements | S_mamba | S_{mamba} | 1 | positive | state elements of one Mamba (v1) layer per sequence
mamba2_matrix_parameters | P_mamba2 | P_{mamba2} | 1 | positive | matrix parameters of one Mamba-2 mixer
mamba2_state_elements | S_mamba2 | S_{mamba2} | 1 | positive | state elements of one Mamba-2 layer per sequence
gated_deltanet_matrix_parameters | P_GDN | P_{GDN} | 1 | positive | matrix parameters of one Gated DeltaNet layer
gated_deltanet_state_elements | S_GDN | S_{GDN} | 1 | positive | state elements of one Gated DeltaNet layer per
    sequence
recurrent_state_elements | S_rec | S_{rec} | 1 | nonnegative | recurrent state elements per layer and sequence
bytes_per_state | b_state | b_{state} | B | positive | stored bytes per recurrent-state element
recurrent_state_bytes | Q_state | Q_{state} | B | positive | recurrent-state bytes one step reads (and writes)
recurrent_flops_per_token | f_rec | f_{rec} | FLOP | nonnegative | state-update FLOPs per recurrent layer and token
recurrent_update_flops | F_state | F_{state} | FLOP | positive | state-update FLOPs of one step
num_chunked_layers | L_chunk | L_{chunk} | 1 | nonnegative | layers with chunked local attention (Llama 4)
attention_chunk_size | C_chunk | C_{chunk} | tokens | positive | chunk length of chunked local attention
chunked_attended_positions | N_chunk | N_{chunk} | 1 | positive | positions the chunked layers attend to, summed
num_sparse_layers | L_sparse | L_{sparse} | 1 | nonnegative | layers with DeepSeek sparse attention
sparse_top_k | k_sparse | k_{sparse} | tokens | positive | tokens DeepSeek sparse attention selects per query
indexer_bytes_per_token | m_idx | m_{idx} | B | nonnegative | lightning-indexer key bytes per token and layer
indexer_read_bytes | Q_idx | Q_{idx} | B | positive | lightning-indexer key bytes one step reads
indexer_heads | H_idx | H_{idx} | 1 | positive | lightning-indexer heads
indexer_head_dim | d_idx | d_{idx} | 1 | positive | lightning-indexer head width
indexer_flops | F_idx | F_{idx} | FLOP | positive | lightning-indexer score FLOPs of one step
# -- parameter groups (counts) ------------------------------------------------------------
streamed_parameters | P_stream | P_{stream} | 1 | positive | parameters read in full every step: all but the
    embedding tables and routed experts, lm_head included
embedding_row_parameters | P_row | P_{row} | 1 | positive | parameters gathered per distinct token from the
    embedding tables
expert_parameters | P_expert | P_{expert} | 1 | nonnegative | parameters of one routed expert
expert_matrix_parameters | P_expert_mat | P_{expert}^{mat} | 1 | nonnegative | matrix parameters of one routed
    expert (its FLOPs; no biases)
matmul_parameters_per_token | P_used | P_{used} | 1 | positive | matrix parameters one token multiplies through (k
    of E experts, lm_head, no embedding)
attention_matrix_parameters | P_attn | P_{attn} | 1 | positive | matrix parameters of one GQA/MQA/MHA attention
    layer
mla_matrix_parameters | P_MLA | P_{MLA} | 1 | positive | matrix parameters of one multi-head latent attention layer
mlp_matrix_parameters | P_mlp | P_{mlp} | 1 | positive | matrix parameters of one MLP (or one expert)
expected_experts_touched | U | U | 1 | positive | expected distinct routed experts a batch touches per MoE layer
effective_experts | E_eff | E_{eff} | 1 | positive | experts the batch's routing spreads over (k <= E_eff <= E): E
    is uniform routing, k identical routing
distinct_experts_read | D | D | 1 | positive | distinct routed experts one MoE layer reads in a step (k <= D <=
    min(E, k B); routing assumption)
experts_read | D | D | 1 | positive | alias of distinct_experts_read: the routed experts weight_bytes_read counts
# -- number formats -----------------------------------------------------------------------
bytes_per_weight | b_w | b_{w} | B | positive | stored bytes per weight, block scales included
bytes_per_expert_weight | b_e | b_{e} | B | positive | stored bytes per routed-expert weight
bytes_per_kv | b_kv | b_{kv} | B | positive | stored bytes per cached key/value element
# -- KV cache -----------------------------------------------------------------------------
kv_bytes_per_token_per_layer | m_kv | m_{kv} | B | positive | KV-cache bytes of one token in one layer
mla_kv_bytes_per_token_per_layer | m_kv_MLA | m_{kv}^{MLA} | B | positive | KV-cache bytes of one token in one MLA
    layer (one latent plus the rotary key)
attended_positions | N_pos | N_{pos} | 1 | positive | cached positions attended to, summed over layers
kv_cache_bytes | M_kv | M_{kv} | B | positive | KV-cache bytes resident for the batch
kv_read_bytes | Q_kvr | Q_{kv}^{read} | B | positive | KV-cache bytes one step reads
kv_write_bytes | Q_kvw | Q_{kv}^{write} | B | positive | KV-cache bytes one step writes
weight_bytes_read | Q_w | Q_{w} | B | positive | weight bytes one step reads
score_value_width | w | w | 1 | positive | multiply-adds per head per cached position (2 d_h; MLA 2 r_kv + d_rope)
# -- step totals and the roofline -----------------------------------------------------------
bytes_moved | Q | Q | B | positive | bytes one step moves: weights read + KV read + KV written
flops | F_step | F_{step} | FLOP | positive | floating-point operations of one step
matmul_flops | F_matmul | F_{matmul} | FLOP | positive | FLOPs of the weight matrix products of one step
attention_flops | F_attn | F_{attn} | FLOP | positive | FLOPs of attention scores and weighted sums of one step
memory_bandwidth | BW | BW | B/s | positive | peak memory bandwidth (decimal)
peak_flops | F | F | FLOP/s | positive | dense peak of a compute precision (in the composed step: the weight
    matrices', i.e. the weight format's)
expert_peak_flops | F_e | F_{e} | FLOP/s | positive | dense peak the routed experts multiply at (expert format's
    precision)
attention_peak_flops | F_a | F_{a} | FLOP/s | positive | dense peak attention scores and weighted sums run at (the
    KV format's precision)
effective_peak_flops | F_eff | F_{eff} | FLOP/s | positive | FLOPs over compute time: the FLOP-weighted harmonic
    mean of the group peaks (DecodeFloor.peak_flops)
memory_time | T_mem | T_{mem} | s | positive | time to move the step's bytes at full bandwidth
compute_time | T_comp | T_{comp} | s | positive | time to execute FLOPs at a dense peak (the step's: each FLOP group
    at its own peak, summed)
step_time | T_step | T_{step} | s | positive | decode step floor, max(T_mem, T_comp)
arithmetic_intensity | I | I | FLOP/B | positive | FLOPs per byte moved
ridge_point | I_ridge | I_{ridge} | FLOP/B | positive | intensity at which the device turns compute-bound, F / BW
tokens_per_second | R | R | 1/s | positive | generated tokens per second, aggregated over the batch
fixed_bytes | Q_0 | Q_{0} | B | nonnegative | bytes a step moves whatever the batch (the weights)
bytes_per_sequence | q_seq | q_{seq} | B | nonnegative | bytes each sequence adds to a step (KV read/write,
    embedding row)
flops_per_sequence | f_seq | f_{seq} | FLOP | positive | FLOPs each sequence adds to a step
compute_time_per_sequence | t_seq | t_{seq} | s | positive | compute time each sequence adds to a step (each FLOP
    group at its own peak)
critical_batch | B_star | B^{*} | 1 | positive | batch at which compute time equals memory time (may be infinite)
# -- derived closed forms (roofline_decode.symbolic.derived) --------------------------
crossover_context | T_x | T_{\times} | tokens | positive | context at which KV bytes read equal weight bytes read
intensity_limit | I_inf | I_{\infty} | FLOP/B | positive | arithmetic intensity as the batch grows without bound
compute_bound_context | T_c | T_{c} | tokens | nonnegative | longest context at which a large enough batch makes the
    step compute-bound
target_tokens_per_second | R_target | R_{target} | 1/s | positive | tokens per second asked for
required_bandwidth | BW_req | BW_{req} | B/s | positive | memory bandwidth needed for a target tokens per second
max_batch | B_max | B_{max} | 1 | nonnegative | largest whole batch whose weights and KV cache fit the capacity
# -- capacity (formulas/capacity.py) ------------------------------------------------------
memory_capacity | C | C | B | positive | device memory (weights, KV cache and runtime reserve share it)
reserve_bytes | R_res | R_{reserve} | B | nonnegative | fixed runtime reserve (CUDA context, workspace)
reserve_fraction | f_res | f_{reserve} | 1 | nonnegative | runtime reserve as a fraction of capacity
usable_memory | M_usable | M_{usable} | B | real | bytes a serving process can fill with weights and KV cache
usable_bytes | M_usable | M_{usable} | B | real | alias of usable_memory (the capacity formulas' input)
resident_weight_bytes | M_w | M_{w} | B | positive | bytes the weights occupy in memory (every expert, embedding
    once)
kv_bytes_per_sequence | M_kv_seq | M_{kv}^{seq} | B | nonnegative | resident KV cache of one sequence at the context
batch_capacity | B_cap | B_{cap} | 1 | real | sequences whose KV caches fit beside the weights (real-valued)
free_bytes_per_sequence | M_free | M_{free}^{seq} | B | nonnegative | bytes left for one sequence's KV cache
context_capacity | T_max | T_{max} | tokens | nonnegative | cached tokens per sequence that fit a per-sequence
    budget
# -- parallelism (formulas/parallel.py) ---------------------------------------------------
num_devices | n | n | 1 | positive | devices sharing the model (tensor-parallel degree, ring size)
message_bytes | S | S | B | nonnegative | bytes each device contributes to (and receives from) an all-reduce
link_bandwidth | BW_link | BW_{link} | B/s | positive | per-direction interconnect bandwidth of one device
collective_latency | alpha | \alpha | s | nonnegative | fixed cost of one collective operation
ring_all_reduce_time | T_AR | T_{AR} | s | positive | time of one ring all-reduce
ring_all_gather_time | T_AG | T_{AG} | s | positive | time of one ring all-gather (every device ends with the
    message)
bytes_per_activation | b_act | b_{act} | B | positive | stored bytes per activation element
all_reduces_per_layer | n_AR | k_{AR} | 1 | positive | all-reduces per layer (2 for Megatron attention + MLP)
tensor_parallel_communication_time | T_comm | T_{comm} | s | positive | all-reduce time of one tensor-parallel step
kv_head_share | s_kv | s_{kv} | 1 | positive | fraction of the KV heads each tensor-parallel device holds
recurrent_state_share | s_rec | s_{rec} | 1 | positive | fraction of the recurrent state each tensor-parallel device holds
recurrent_heads | H_rec | H_{rec} | 1 | positive | independent parts of a recurrent layer's state (value heads, SSM heads)
split_bytes | Q_split | Q_{split} | B | nonnegative | bytes divided evenly among the devices
replicated_bytes | Q_repl | Q_{replicated} | B | nonnegative | bytes every device holds a full copy of
sharded_bytes | Q_dev | Q_{device} | B | positive | bytes one device holds or reads
stage_time | t_stage | t_{stage} | s | positive | time one pipeline stage takes for one micro-batch
num_stages | p | p | 1 | positive | pipeline stages
microbatches | m_micro | m | 1 | positive | micro-batches in flight in the pipeline
hop_time | t_hop | t_{hop} | s | nonnegative | stage-to-stage transfer time of one micro-batch
pipeline_step_time | T_round | T_{round} | s | positive | time of one pipeline round (one token per sequence)
domain_size | n_dom | n_{dom} | 1 | positive | devices per scale-up (NVLink) domain taking part in a collective
scale_out_bandwidth | BW_out | BW_{out} | B/s | positive | per-direction bandwidth of one device to other domains (NIC)
all_to_all_time | T_A2A | T_{A2A} | s | nonnegative | time of one all-to-all (each device spreads a message over all)
tokens | N_tok | N_{tok} | 1 | nonnegative | tokens each device routes to the experts in a step
experts_per_token | k | k | 1 | positive | alias of num_experts_per_token (routed experts each token is sent to)
expert_parallel | n_ep | n_{ep} | 1 | positive | expert-parallel ranks the routed experts are spread over
expert_parallel_communication_time | T_EP | T_{EP} | s | nonnegative | dispatch and combine time of expert parallelism in
    one step
# -- the serial chain (formulas/chain.py) ---------------------------------------------------
operations_per_layer | n_op | n_{op} | 1 | nonnegative | dependent operations (kernels, barriers) per layer
operation_latency | t_op | t_{op} | s | nonnegative | minimum time of one dependent operation
all_reduce_time | t_AR | t_{AR} | s | nonnegative | time of one tensor-parallel collective on the chain
pipeline_hops | h | h | 1 | nonnegative | stage-to-stage hand-offs a token makes per step
step_latency | t_0 | t_{0} | s | nonnegative | fixed cost of a step outside the layers (sampling, host round trip)
serial_chain_time | T_chain | T_{chain} | s | nonnegative | shortest time the dependent operations of a step take in
    series
# -- energy and cost (formulas/energy.py) ------------------------------------------------
access_energy_per_bit | e_bit | e_{bit} | J/bit | positive | energy of the memory technology per bit read or written
energy_per_flop | e_flop | e_{flop} | J/FLOP | nonnegative | energy per FLOP, where a source states one
data_movement_energy | E_move | E_{move} | J | positive | least energy a step spends moving its bytes (a floor)
board_power | P_board | P_{board} | W | positive | board power (TDP/TBP) of one device
board_energy | E_board | E_{board} | J | positive | energy of a step at full board power (an estimate, not a floor)
step_energy | E_step | E_{step} | J | positive | energy of one step
energy_per_token | e_tok | e_{tok} | J | positive | energy per generated token
price_per_hour | p_h | p_{h} | $/h | positive | price of one device for one hour (given by the user)
cost_per_token | c_tok | c_{tok} | $ | positive | price of one generated token
# -- serving (formulas/serving.py) --------------------------------------------------------
output_length | N_out | N_{out} | 1 | positive | tokens generated per request
requests_per_second | lambda | \lambda | 1/s | positive | requests completed (or arriving) per second
arrival_rate | lambda | \lambda | 1/s | positive | alias of requests_per_second: requests arriving per second
request_rate_at_concurrency | lambda | \lambda | 1/s | positive | alias of requests_per_second at a concurrency
concurrency | B | B | 1 | positive | alias of batch: requests decoding at once
littles_law_concurrency | B | B | 1 | positive | alias of batch: concurrency by Little's law
clients | N_c | N_{c} | 1 | positive | clients of a closed loop, each with one request in flight (the benchmarks' max
    concurrency)
prefill_tokens_per_step | p_step | p_{step} | tokens | nonnegative | prompt tokens of other requests each decode step
    carries in steady state
steady_decode_batch | B_dec | B_{dec} | 1 | positive | sequences a request's decode steps carry in steady state
e2e_latency | E2E | \mathrm{E2E} | s | positive | end-to-end latency of a request, send to last token
ttft | TTFT | \mathrm{TTFT} | s | positive | time to first token (queueing included)
time_per_output_token | TPOT | \mathrm{TPOT} | s | positive | time per output token after the first, (E2E - TTFT) /
    (N_out - 1)
closed_loop_latency | E2E_C | \mathrm{E2E}_{C} | s | positive | mean end-to-end latency of a closed loop of C clients
kv_bytes_per_token | m_tok | m_{tok} | B | positive | KV-cache bytes of one token over all layers
num_links | n_link | n_{link} | 1 | positive | devices sending their KV shards at once
kv_transfer_time | T_kv | T_{kv} | s | nonnegative | time to move a prompt's KV cache from a prefill to a decode
    worker
worker_rate | mu | \mu | 1/s | positive | most requests per second one worker completes
workers_for_rate | N_w | N_{w} | 1 | positive | workers needed to sustain a request rate
# -- prefill (formulas/prefill.py) --------------------------------------------------------
prompt | P | P | tokens | positive | prompt tokens processed per sequence
cached | T_0 | T_{0} | tokens | nonnegative | tokens already in the KV cache before the prompt (prefix-cache hit)
chunk | c | c | tokens | positive | prompt tokens per sequence in one chunk of a chunked prefill
lm_head_parameters | P_lm | P_{lm} | 1 | positive | parameters of the output projection (V x d)
prefill_attended_positions | N_pos_pf | N_{pos}^{prefill} | 1 | positive | query-key pairs of a causal prefill per
    head, summed over layers
prefill_attention_flops | F_attn_pf | F_{attn}^{prefill} | FLOP | positive | FLOPs of causal attention over a prompt
prefill_matmul_flops | F_matmul_pf | F_{matmul}^{prefill} | FLOP | positive | FLOPs of the matrix products of a
    prefill (lm_head for the last token only)
prefill_weight_bytes | Q_w_pf | Q_{w}^{prefill} | B | positive | weight bytes a chunked prefill reads (once per
    chunk)
prefill_kv_read_bytes | Q_kvr_pf | Q_{kv}^{read,prefill} | B | nonnegative | KV bytes a chunked prefill reads (each
    chunk: the tokens before it, once)
mla_prefill_score_value_width | w_pf | w_{prefill}^{MLA} | 1 | positive | MLA multiply-adds per head per attended
    position in prefill (cheaper of two forms)
# -- shared prefixes (formulas/shared_prefix.py) ------------------------------------------
shared_prefix | S_sh | S_{shared} | tokens | nonnegative | leading prompt tokens every sequence of the batch shares
shared_prefix_positions | N_pos_sh | N_{pos}^{shared} | 1 | nonnegative | positions of a shared prefix one sequence
    holds, summed over layers
shared_prefix_saved_bytes | dQ_sh | \Delta Q_{kv}^{shared} | B | real | KV bytes saved by holding or reading a
    shared prefix once instead of B times
# -- speculative decoding (formulas/speculative.py) ---------------------------------------
acceptance | a | a | 1 | positive | per-token acceptance rate of drafted tokens (0 <= a < 1 in the closed form)
draft_tokens | k_spec | k_{spec} | 1 | positive | tokens drafted per speculative round
draft_step_time | t_draft | t_{draft} | s | positive | time of one draft step (draft model or MTP heads)
verify_step_time | t_verify | t_{verify} | s | positive | time of the verify step of k + 1 tokens per sequence
expected_tokens_per_round | E_round | E_{round} | 1 | positive | expected tokens a speculative round yields per
    sequence
speculative_time_per_token | t_token | t_{token} | s | positive | time per generated token with speculative decoding
speculative_speedup | S_spec | S_{spec} | 1 | positive | speedup of speculative over plain decoding
# -- memory tiers (formulas/tiers.py) -----------------------------------------------------
fast_bytes | Q_fast | Q_{fast} | B | nonnegative | bytes moved in device memory per step
fast_bandwidth | BW_fast | BW_{fast} | B/s | positive | device memory bandwidth (beside a slower tier)
tier_bytes | Q_tier | Q_{tier} | B | nonnegative | bytes read from the slower memory tier per step
tier_bandwidth | BW_tier | BW_{tier} | B/s | positive | read bandwidth of the slower tier toward the device
required_tier_bandwidth | BW_tier | BW_{tier} | B/s | positive | alias of tier_bandwidth: the tier bandwidth needed
target_step_time | T_target | T_{target} | s | positive | seconds per step asked for
tiered_memory_time | T_mem | T_{mem} | s | positive | alias of memory_time: device and tier reads in series
overlapped_tiered_memory_time | T_mem | T_{mem} | s | positive | alias of memory_time: device and tier reads
    overlapped
overlapped | overlapped | o | 1 | switch | switch: tier reads overlap device reads (formula default: False)
""")


def entry(name: str, where: str = "glossary") -> Entry:
    """The :class:`Entry` of ``name``; :class:`GlossaryError` if there is none."""
    try:
        return GLOSSARY[name]
    except KeyError:
        raise GlossaryError(name, where) from None
