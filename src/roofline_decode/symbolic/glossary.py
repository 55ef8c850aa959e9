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
from typing import TypeAlias

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
            f"src/roofline_decode/symbolic/glossary.py (symbol, LaTeX, unit, meaning, assumptions)"
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


_POS = {"positive": True}
_NONNEG = {"nonnegative": True}
_BINARY = {"nonnegative": True, "integer": True}
_REAL = {"real": True}

#: one table line: name, symbol, LaTeX, unit, meaning[, assumptions[, switch]] (Entry's fields)
_Row: TypeAlias = (tuple[str, str, str, str, str] | tuple[str, str, str, str, str, dict[str, bool]]
        | tuple[str, str, str, str, str, dict[str, bool], bool])


def _table(*rows: _Row) -> dict[str, Entry]:
    entries = [Entry(*row) for row in rows]
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
GLOSSARY: dict[str, Entry] = _table(
    # -- the decode step --------------------------------------------------------------------
    ("batch", "B", "B", "1", "sequences decoded together; each produces one token per step"),
    ("context", "T", "T", "tokens", "tokens already cached per sequence when the step starts", _NONNEG),
    # -- architecture -------------------------------------------------------------------------
    ("num_layers", "L", "L", "1", "transformer layers (each holds a KV cache)"),
    ("num_global_layers", "L_g", r"L_{global}", "1", "layers with full (global) attention", _NONNEG),
    ("num_sliding_layers", "L_s", r"L_{sliding}", "1", "layers with sliding-window attention", _NONNEG),
    ("sliding_window", "W", "W", "tokens", "window of a sliding-window layer"),
    ("hidden_size", "d", "d", "1", "model width"),
    ("num_heads", "H_q", r"H_{q}", "1", "query (attention) heads"),
    ("num_kv_heads", "H_kv", r"H_{kv}", "1", "key/value heads (H_kv = H_q: MHA, 1: MQA)"),
    ("head_dim", "d_h", r"d_{h}", "1", "width of one attention head (from the config, not d / H_q)"),
    ("intermediate_size", "d_ff", r"d_{ff}", "1", "feed-forward width (of one expert for an expert MLP)"),
    ("vocab_size", "V", "V", "1", "vocabulary size (rows of the embedding and the lm_head)"),
    ("gated", "g", "g", "1", "1 for a gated MLP (gate, up, down: SwiGLU/GeGLU), 0 for plain (up, down)", _BINARY),
    ("q_lora_rank", "r_q", r"r_{q}", "1",
     "MLA query compression rank (the twin is the compressed form; r_q = 0 selects an uncompressed query)"),
    ("kv_lora_rank", "r_kv", r"r_{kv}", "1", "MLA key/value latent rank"),
    ("qk_nope_head_dim", "d_nope", r"d_{nope}", "1", "MLA per-head query/key width without rotary embedding"),
    ("qk_rope_head_dim", "d_rope", r"d_{rope}", "1", "MLA per-head width of the decoupled rotary key"),
    ("v_head_dim", "d_v", r"d_{v}", "1", "MLA per-head value width"),
    ("num_experts", "E", "E", "1", "routed experts per MoE layer"),
    ("num_experts_per_token", "k", "k", "1", "routed experts each token is sent to (1 <= k <= E)"),
    ("num_moe_layers", "L_moe", r"L_{moe}", "1",
     "layers with routed experts (the twin is the MoE form; the integer 0 selects the dense form)"),
    # -- recurrent layers, chunked and sparse attention (DESIGN.md §4b) -------------------------
    ("num_recurrent_layers", "L_rec", r"L_{rec}", "1", "layers with a recurrent mixer (Mamba-2, Gated DeltaNet)", _NONNEG),
    ("ssm_inner_size", "d_in", r"d_{in}", "1", "Mamba-2 inner width (expand × d)"),
    ("ssm_groups", "g_ssm", r"g_{ssm}", "1", "Mamba-2 groups sharing the B and C projections"),
    ("ssm_state_size", "N_ssm", r"N_{ssm}", "1", "Mamba-2 state entries per channel"),
    ("ssm_heads", "H_ssm", r"H_{ssm}", "1", "Mamba-2 heads (one dt and A each)"),
    ("conv_kernel", "K_conv", r"K_{conv}", "1", "width of the causal convolution of a recurrent mixer"),
    ("linear_key_heads", "H_k", r"H_{k}", "1", "Gated DeltaNet key (and query) heads"),
    ("linear_key_head_dim", "d_k", r"d_{k}", "1", "Gated DeltaNet key head width"),
    ("linear_value_heads", "H_v", r"H_{v}", "1", "Gated DeltaNet value heads (one d_k × d_v state each)"),
    ("linear_value_head_dim", "d_vh", r"d_{v}^{GDN}", "1", "Gated DeltaNet value head width"),
    ("ssm_dt_rank", "r_dt", r"r_{dt}", "1", "Mamba time-step projection rank"),
    ("mamba_matrix_parameters", "P_mamba", r"P_{mamba}", "1", "matrix parameters of one Mamba (v1) mixer"),
    ("mamba_state_elements", "S_mamba", r"S_{mamba}", "1", "state elements of one Mamba (v1) layer per sequence"),
    ("mamba2_matrix_parameters", "P_mamba2", r"P_{mamba2}", "1", "matrix parameters of one Mamba-2 mixer"),
    ("mamba2_state_elements", "S_mamba2", r"S_{mamba2}", "1", "state elements of one Mamba-2 layer per sequence"),
    ("gated_deltanet_matrix_parameters", "P_GDN", r"P_{GDN}", "1", "matrix parameters of one Gated DeltaNet layer"),
    ("gated_deltanet_state_elements", "S_GDN", r"S_{GDN}", "1", "state elements of one Gated DeltaNet layer per sequence"),
    ("recurrent_state_elements", "S_rec", r"S_{rec}", "1", "recurrent state elements per layer and sequence", _NONNEG),
    ("bytes_per_state", "b_state", r"b_{state}", "B", "stored bytes per recurrent-state element"),
    ("recurrent_state_bytes", "Q_state", r"Q_{state}", "B", "recurrent-state bytes one step reads (and writes)"),
    ("recurrent_flops_per_token", "f_rec", r"f_{rec}", "FLOP", "state-update FLOPs per recurrent layer and token", _NONNEG),
    ("recurrent_update_flops", "F_state", r"F_{state}", "FLOP", "state-update FLOPs of one step"),
    ("num_chunked_layers", "L_chunk", r"L_{chunk}", "1", "layers with chunked local attention (Llama 4)", _NONNEG),
    ("attention_chunk_size", "C_chunk", r"C_{chunk}", "tokens", "chunk length of chunked local attention"),
    ("chunked_attended_positions", "N_chunk", r"N_{chunk}", "1", "positions the chunked layers attend to, summed"),
    ("num_sparse_layers", "L_sparse", r"L_{sparse}", "1", "layers with DeepSeek sparse attention", _NONNEG),
    ("sparse_top_k", "k_sparse", r"k_{sparse}", "tokens", "tokens DeepSeek sparse attention selects per query"),
    ("indexer_bytes_per_token", "m_idx", r"m_{idx}", "B", "lightning-indexer key bytes per token and layer", _NONNEG),
    ("indexer_read_bytes", "Q_idx", r"Q_{idx}", "B", "lightning-indexer key bytes one step reads"),
    ("indexer_heads", "H_idx", r"H_{idx}", "1", "lightning-indexer heads"),
    ("indexer_head_dim", "d_idx", r"d_{idx}", "1", "lightning-indexer head width"),
    ("indexer_flops", "F_idx", r"F_{idx}", "FLOP", "lightning-indexer score FLOPs of one step"),
    # -- parameter groups (counts) ------------------------------------------------------------
    ("streamed_parameters", "P_stream", r"P_{stream}", "1",
     "parameters read in full every step: all but the embedding tables and routed experts, lm_head included"),
    ("embedding_row_parameters", "P_row", r"P_{row}", "1", "parameters gathered per distinct token from the embedding tables"),
    ("expert_parameters", "P_expert", r"P_{expert}", "1", "parameters of one routed expert", _NONNEG),
    ("expert_matrix_parameters", "P_expert_mat", r"P_{expert}^{mat}", "1",
     "matrix parameters of one routed expert (its FLOPs; no biases)", _NONNEG),
    ("matmul_parameters_per_token", "P_used", r"P_{used}", "1",
     "matrix parameters one token multiplies through (k of E experts, lm_head, no embedding)"),
    ("attention_matrix_parameters", "P_attn", r"P_{attn}", "1", "matrix parameters of one GQA/MQA/MHA attention layer"),
    ("mla_matrix_parameters", "P_MLA", r"P_{MLA}", "1", "matrix parameters of one multi-head latent attention layer"),
    ("mlp_matrix_parameters", "P_mlp", r"P_{mlp}", "1", "matrix parameters of one MLP (or one expert)"),
    ("expected_experts_touched", "U", "U", "1", "expected distinct routed experts a batch touches per MoE layer"),
    ("effective_experts", "E_eff", r"E_{eff}", "1",
     "experts the batch's routing spreads over (k <= E_eff <= E): E is uniform routing, k identical routing"),
    ("distinct_experts_read", "D", "D", "1",
     "distinct routed experts one MoE layer reads in a step (k <= D <= min(E, k B); routing assumption)"),
    ("experts_read", "D", "D", "1", "alias of distinct_experts_read: the routed experts weight_bytes_read counts"),
    # -- number formats -----------------------------------------------------------------------
    ("bytes_per_weight", "b_w", r"b_{w}", "B", "stored bytes per weight, block scales included"),
    ("bytes_per_expert_weight", "b_e", r"b_{e}", "B", "stored bytes per routed-expert weight"),
    ("bytes_per_kv", "b_kv", r"b_{kv}", "B", "stored bytes per cached key/value element"),
    # -- KV cache -----------------------------------------------------------------------------
    ("kv_bytes_per_token_per_layer", "m_kv", r"m_{kv}", "B", "KV-cache bytes of one token in one layer"),
    ("mla_kv_bytes_per_token_per_layer", "m_kv_MLA", r"m_{kv}^{MLA}", "B",
     "KV-cache bytes of one token in one MLA layer (one latent plus the rotary key)"),
    ("attended_positions", "N_pos", r"N_{pos}", "1", "cached positions attended to, summed over layers"),
    ("kv_cache_bytes", "M_kv", r"M_{kv}", "B", "KV-cache bytes resident for the batch"),
    ("kv_read_bytes", "Q_kvr", r"Q_{kv}^{read}", "B", "KV-cache bytes one step reads"),
    ("kv_write_bytes", "Q_kvw", r"Q_{kv}^{write}", "B", "KV-cache bytes one step writes"),
    ("weight_bytes_read", "Q_w", r"Q_{w}", "B", "weight bytes one step reads"),
    ("score_value_width", "w", "w", "1", "multiply-adds per head per cached position (2 d_h; MLA 2 r_kv + d_rope)"),
    # -- step totals and the roofline -----------------------------------------------------------
    ("bytes_moved", "Q", "Q", "B", "bytes one step moves: weights read + KV read + KV written"),
    ("flops", "F_step", r"F_{step}", "FLOP", "floating-point operations of one step"),
    ("matmul_flops", "F_matmul", r"F_{matmul}", "FLOP", "FLOPs of the weight matrix products of one step"),
    ("attention_flops", "F_attn", r"F_{attn}", "FLOP", "FLOPs of attention scores and weighted sums of one step"),
    ("memory_bandwidth", "BW", r"BW", "B/s", "peak memory bandwidth (decimal)"),
    ("peak_flops", "F", "F", "FLOP/s",
     "dense peak of a compute precision (in the composed step: the weight matrices', i.e. the weight format's)"),
    ("expert_peak_flops", "F_e", r"F_{e}", "FLOP/s", "dense peak the routed experts multiply at (expert format's precision)"),
    ("attention_peak_flops", "F_a", r"F_{a}", "FLOP/s",
     "dense peak attention scores and weighted sums run at (the KV format's precision)"),
    ("effective_peak_flops", "F_eff", r"F_{eff}", "FLOP/s",
     "FLOPs over compute time: the FLOP-weighted harmonic mean of the group peaks (DecodeFloor.peak_flops)"),
    ("memory_time", "T_mem", r"T_{mem}", "s", "time to move the step's bytes at full bandwidth"),
    ("compute_time", "T_comp", r"T_{comp}", "s",
     "time to execute FLOPs at a dense peak (the step's: each FLOP group at its own peak, summed)"),
    ("step_time", "T_step", r"T_{step}", "s", "decode step floor, max(T_mem, T_comp)"),
    ("arithmetic_intensity", "I", "I", "FLOP/B", "FLOPs per byte moved"),
    ("ridge_point", "I_ridge", r"I_{ridge}", "FLOP/B", "intensity at which the device turns compute-bound, F / BW"),
    ("tokens_per_second", "R", "R", "1/s", "generated tokens per second, aggregated over the batch"),
    ("fixed_bytes", "Q_0", r"Q_{0}", "B", "bytes a step moves whatever the batch (the weights)", _NONNEG),
    ("bytes_per_sequence", "q_seq", r"q_{seq}", "B", "bytes each sequence adds to a step (KV read/write, embedding row)",
     _NONNEG),
    ("flops_per_sequence", "f_seq", r"f_{seq}", "FLOP", "FLOPs each sequence adds to a step"),
    ("compute_time_per_sequence", "t_seq", r"t_{seq}", "s",
     "compute time each sequence adds to a step (each FLOP group at its own peak)"),
    ("critical_batch", "B_star", r"B^{*}", "1", "batch at which compute time equals memory time (may be infinite)"),
    # -- derived closed forms (roofline_decode.symbolic.derived) --------------------------
    ("crossover_context", "T_x", r"T_{\times}", "tokens", "context at which KV bytes read equal weight bytes read"),
    ("intensity_limit", "I_inf", r"I_{\infty}", "FLOP/B", "arithmetic intensity as the batch grows without bound"),
    ("compute_bound_context", "T_c", r"T_{c}", "tokens",
     "longest context at which a large enough batch makes the step compute-bound", _NONNEG),
    ("target_tokens_per_second", "R_target", r"R_{target}", "1/s", "tokens per second asked for"),
    ("required_bandwidth", "BW_req", r"BW_{req}", "B/s", "memory bandwidth needed for a target tokens per second"),
    ("max_batch", "B_max", r"B_{max}", "1", "largest whole batch whose weights and KV cache fit the capacity",
     _NONNEG),
    # -- capacity (formulas/capacity.py) ------------------------------------------------------
    ("memory_capacity", "C", "C", "B", "device memory (weights, KV cache and runtime reserve share it)"),
    ("reserve_bytes", "R_res", r"R_{reserve}", "B", "fixed runtime reserve (CUDA context, workspace)", _NONNEG),
    ("reserve_fraction", "f_res", r"f_{reserve}", "1", "runtime reserve as a fraction of capacity", _NONNEG),
    ("usable_memory", "M_usable", r"M_{usable}", "B", "bytes a serving process can fill with weights and KV cache",
     _REAL),
    ("usable_bytes", "M_usable", r"M_{usable}", "B", "alias of usable_memory (the capacity formulas' input)", _REAL),
    ("resident_weight_bytes", "M_w", r"M_{w}", "B", "bytes the weights occupy in memory (every expert, embedding once)"),
    ("kv_bytes_per_sequence", "M_kv_seq", r"M_{kv}^{seq}", "B", "resident KV cache of one sequence at the context",
     _NONNEG),
    ("batch_capacity", "B_cap", r"B_{cap}", "1", "sequences whose KV caches fit beside the weights (real-valued)", _REAL),
    ("free_bytes_per_sequence", "M_free", r"M_{free}^{seq}", "B", "bytes left for one sequence's KV cache", _NONNEG),
    ("context_capacity", "T_max", r"T_{max}", "tokens", "cached tokens per sequence that fit a per-sequence budget",
     _NONNEG),
    # -- parallelism (formulas/parallel.py) ---------------------------------------------------
    ("num_devices", "n", "n", "1", "devices sharing the model (tensor-parallel degree, ring size)"),
    ("message_bytes", "S", "S", "B", "bytes each device contributes to (and receives from) an all-reduce", _NONNEG),
    ("link_bandwidth", "BW_link", r"BW_{link}", "B/s", "per-direction interconnect bandwidth of one device"),
    ("collective_latency", "alpha", r"\alpha", "s", "fixed cost of one collective operation", _NONNEG),
    ("ring_all_reduce_time", "T_AR", r"T_{AR}", "s", "time of one ring all-reduce"),
    ("ring_all_gather_time", "T_AG", r"T_{AG}", "s", "time of one ring all-gather (every device ends with the message)"),
    ("bytes_per_activation", "b_act", r"b_{act}", "B", "stored bytes per activation element"),
    ("all_reduces_per_layer", "n_AR", r"k_{AR}", "1", "all-reduces per layer (2 for Megatron attention + MLP)"),
    ("tensor_parallel_communication_time", "T_comm", r"T_{comm}", "s", "all-reduce time of one tensor-parallel step"),
    ("kv_head_share", "s_kv", r"s_{kv}", "1", "fraction of the KV heads each tensor-parallel device holds"),
    ("split_bytes", "Q_split", r"Q_{split}", "B", "bytes divided evenly among the devices", _NONNEG),
    ("replicated_bytes", "Q_repl", r"Q_{replicated}", "B", "bytes every device holds a full copy of", _NONNEG),
    ("sharded_bytes", "Q_dev", r"Q_{device}", "B", "bytes one device holds or reads"),
    ("stage_time", "t_stage", r"t_{stage}", "s", "time one pipeline stage takes for one micro-batch"),
    ("num_stages", "p", "p", "1", "pipeline stages"),
    ("microbatches", "m_micro", "m", "1", "micro-batches in flight in the pipeline"),
    ("hop_time", "t_hop", r"t_{hop}", "s", "stage-to-stage transfer time of one micro-batch", _NONNEG),
    ("pipeline_step_time", "T_round", r"T_{round}", "s", "time of one pipeline round (one token per sequence)"),
    # -- the serial chain (formulas/chain.py) ---------------------------------------------------
    ("operations_per_layer", "n_op", r"n_{op}", "1", "dependent operations (kernels, barriers) per layer", _NONNEG),
    ("operation_latency", "t_op", r"t_{op}", "s", "minimum time of one dependent operation", _NONNEG),
    ("all_reduce_time", "t_AR", r"t_{AR}", "s", "time of one tensor-parallel collective on the chain", _NONNEG),
    ("pipeline_hops", "h", "h", "1", "stage-to-stage hand-offs a token makes per step", _NONNEG),
    ("step_latency", "t_0", r"t_{0}", "s", "fixed cost of a step outside the layers (sampling, host round trip)",
     _NONNEG),
    ("serial_chain_time", "T_chain", r"T_{chain}", "s", "shortest time the dependent operations of a step take in series",
     _NONNEG),
    # -- energy and cost (formulas/energy.py) ------------------------------------------------
    ("access_energy_per_bit", "e_bit", r"e_{bit}", "J/bit", "energy of the memory technology per bit read or written"),
    ("energy_per_flop", "e_flop", r"e_{flop}", "J/FLOP", "energy per FLOP, where a source states one", _NONNEG),
    ("data_movement_energy", "E_move", r"E_{move}", "J", "least energy a step spends moving its bytes (a floor)"),
    ("board_power", "P_board", r"P_{board}", "W", "board power (TDP/TBP) of one device"),
    ("board_energy", "E_board", r"E_{board}", "J", "energy of a step at full board power (an estimate, not a floor)"),
    ("step_energy", "E_step", r"E_{step}", "J", "energy of one step"),
    ("energy_per_token", "e_tok", r"e_{tok}", "J", "energy per generated token"),
    ("price_per_hour", "p_h", r"p_{h}", "$/h", "price of one device for one hour (given by the user)"),
    ("cost_per_token", "c_tok", r"c_{tok}", "$", "price of one generated token"),
    # -- serving (formulas/serving.py) --------------------------------------------------------
    ("output_length", "N_out", r"N_{out}", "1", "tokens generated per request"),
    ("requests_per_second", "lambda", r"\lambda", "1/s", "requests completed (or arriving) per second"),
    ("arrival_rate", "lambda", r"\lambda", "1/s", "alias of requests_per_second: requests arriving per second"),
    ("request_rate_at_concurrency", "lambda", r"\lambda", "1/s", "alias of requests_per_second at a concurrency"),
    ("concurrency", "B", "B", "1", "alias of batch: requests decoding at once"),
    ("littles_law_concurrency", "B", "B", "1", "alias of batch: concurrency by Little's law"),
    # -- prefill (formulas/prefill.py) --------------------------------------------------------
    ("prompt", "P", "P", "tokens", "prompt tokens processed per sequence"),
    ("cached", "T_0", r"T_{0}", "tokens", "tokens already in the KV cache before the prompt (prefix-cache hit)", _NONNEG),
    ("chunk", "c", "c", "tokens", "prompt tokens per sequence in one chunk of a chunked prefill"),
    ("lm_head_parameters", "P_lm", r"P_{lm}", "1", "parameters of the output projection (V x d)"),
    ("prefill_attended_positions", "N_pos_pf", r"N_{pos}^{prefill}", "1",
     "query-key pairs of a causal prefill per head, summed over layers"),
    ("prefill_attention_flops", "F_attn_pf", r"F_{attn}^{prefill}", "FLOP", "FLOPs of causal attention over a prompt"),
    ("prefill_matmul_flops", "F_matmul_pf", r"F_{matmul}^{prefill}", "FLOP",
     "FLOPs of the matrix products of a prefill (lm_head for the last token only)"),
    ("prefill_weight_bytes", "Q_w_pf", r"Q_{w}^{prefill}", "B", "weight bytes a chunked prefill reads (once per chunk)"),
    ("prefill_kv_read_bytes", "Q_kvr_pf", r"Q_{kv}^{read,prefill}", "B",
     "KV bytes a chunked prefill reads (each chunk: the tokens before it, once)", _NONNEG),
    ("mla_prefill_score_value_width", "w_pf", r"w_{prefill}^{MLA}", "1",
     "MLA multiply-adds per head per attended position in prefill (cheaper of two forms)"),
    # -- shared prefixes (formulas/shared_prefix.py) ------------------------------------------
    ("shared_prefix", "S_sh", r"S_{shared}", "tokens", "leading prompt tokens every sequence of the batch shares", _NONNEG),
    ("shared_prefix_positions", "N_pos_sh", r"N_{pos}^{shared}", "1",
     "positions of a shared prefix one sequence holds, summed over layers", _NONNEG),
    ("shared_prefix_saved_bytes", "dQ_sh", r"\Delta Q_{kv}^{shared}", "B",
     "KV bytes saved by holding or reading a shared prefix once instead of B times", _REAL),
    # -- speculative decoding (formulas/speculative.py) ---------------------------------------
    ("acceptance", "a", "a", "1", "per-token acceptance rate of drafted tokens (0 <= a < 1 in the closed form)"),
    ("draft_tokens", "k_spec", r"k_{spec}", "1", "tokens drafted per speculative round"),
    ("draft_step_time", "t_draft", r"t_{draft}", "s", "time of one draft step (draft model or MTP heads)"),
    ("verify_step_time", "t_verify", r"t_{verify}", "s", "time of the verify step of k + 1 tokens per sequence"),
    ("expected_tokens_per_round", "E_round", r"E_{round}", "1", "expected tokens a speculative round yields per sequence"),
    ("speculative_time_per_token", "t_token", r"t_{token}", "s", "time per generated token with speculative decoding"),
    ("speculative_speedup", "S_spec", r"S_{spec}", "1", "speedup of speculative over plain decoding"),
    # -- memory tiers (formulas/tiers.py) -----------------------------------------------------
    ("fast_bytes", "Q_fast", r"Q_{fast}", "B", "bytes moved in device memory per step", _NONNEG),
    ("fast_bandwidth", "BW_fast", r"BW_{fast}", "B/s", "device memory bandwidth (beside a slower tier)"),
    ("tier_bytes", "Q_tier", r"Q_{tier}", "B", "bytes read from the slower memory tier per step", _NONNEG),
    ("tier_bandwidth", "BW_tier", r"BW_{tier}", "B/s", "read bandwidth of the slower tier toward the device"),
    ("required_tier_bandwidth", "BW_tier", r"BW_{tier}", "B/s", "alias of tier_bandwidth: the tier bandwidth needed"),
    ("target_step_time", "T_target", r"T_{target}", "s", "seconds per step asked for"),
    ("tiered_memory_time", "T_mem", r"T_{mem}", "s", "alias of memory_time: device and tier reads in series"),
    ("overlapped_tiered_memory_time", "T_mem", r"T_{mem}", "s", "alias of memory_time: device and tier reads overlapped"),
    ("overlapped", "overlapped", r"o", "1", "switch: tier reads overlap device reads (formula default: False)",
     _BINARY, True),
)


def entry(name: str, where: str = "glossary") -> Entry:
    """The :class:`Entry` of ``name``; :class:`GlossaryError` if there is none."""
    try:
        return GLOSSARY[name]
    except KeyError:
        raise GlossaryError(name, where) from None
