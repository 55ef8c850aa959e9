"""``ModelCounts``: what a :class:`~roofline_decode.specs.model.Model`'s fields imply.

Layer counts by kind, parameter counts per group, weight bytes, KV-cache bytes per token and
the recurrent state: read-only properties that derive numbers from the fields and never
validate.  They are a mixin of ``Model`` (``class Model(ModelCounts, Spec)``), kept apart from
the fields, validators and formats in :mod:`roofline_decode.specs.model` so that each module
reads in one sitting; the arithmetic itself is in :mod:`roofline_decode.formulas`.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from .. import formulas as f

if TYPE_CHECKING:
    from ..formats import NumberFormat


class ModelCounts:
    """Counts, bytes and layer structure derived from a ``Model``'s fields (see ``Model``)."""

    if TYPE_CHECKING:  # the fields and formats of Model these counts read, for the type checker
        # only: pydantic would take an annotation here for a field (Model declares and checks them)
        num_layers: int
        hidden_size: int
        num_heads: int
        num_kv_heads: int
        head_dim: int
        intermediate_size: int
        vocab_size: int
        mlp_gated: bool
        qkv_bias: bool
        o_bias: bool
        mlp_bias: bool
        tie_word_embeddings: bool
        norm_type: str
        norms_per_layer: int
        qk_norm: bool
        qk_norm_scope: str
        position_embedding_rows: int
        sliding_window: int | None
        layer_types: tuple[str, ...] | None
        attention_chunk_size: int | None
        indexer_heads: int
        indexer_head_dim: int
        recurrent_matrix_parameters: int
        recurrent_vector_parameters: int
        recurrent_state_elements: int
        recurrent_flops_per_token: int
        recurrent_heads: int
        attention_output_gate: bool
        num_experts: int
        num_experts_per_token: int
        moe_intermediate_size: int
        shared_expert_intermediate_size: int
        first_dense_layers: int
        mlp_free_layers: int
        kv_lora_rank: int
        q_lora_rank: int
        qk_rope_head_dim: int
        qk_nope_head_dim: int
        v_head_dim: int
        weight_format: NumberFormat
        kv_format: NumberFormat
        state_format: NumberFormat

        @property
        def routed_expert_format(self) -> NumberFormat: ...

        @property
        def has_uniform_weights(self) -> bool: ...

        def group_format(self, group: str) -> NumberFormat: ...

    # -- layer structure ----------------------------------------------------------------------
    @property
    def is_moe(self) -> bool:
        return self.num_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def num_sliding_layers(self) -> int:
        if self.layer_types is not None:
            return self.layer_types.count("sliding")
        return self.num_layers if self.sliding_window is not None else 0

    def _count(self, kind: str) -> int:
        return self.layer_types.count(kind) if self.layer_types is not None else 0

    @property
    def num_chunked_layers(self) -> int:
        """Layers with chunked local attention (Llama 4)."""
        return self._count("chunked")

    @property
    def num_sparse_layers(self) -> int:
        """Layers with DeepSeek sparse attention."""
        return self._count("sparse")

    @property
    def num_recurrent_layers(self) -> int:
        """Layers with a recurrent mixer (no KV cache; a fixed state per sequence)."""
        return self._count("recurrent")

    @property
    def num_attention_layers(self) -> int:
        """Layers that cache keys and values (all but the recurrent ones)."""
        return self.num_layers - self.num_recurrent_layers

    @property
    def num_global_layers(self) -> int:
        return (self.num_layers - self.num_sliding_layers - self.num_chunked_layers - self.num_sparse_layers
                - self.num_recurrent_layers)

    @property
    def indexer_bytes_per_token_per_layer(self) -> float:
        """Lightning-indexer key bytes per token and sparse layer [B]: fp8 keys plus one fp32
        scale per 128 elements, whatever the KV-cache format
        (:func:`~roofline_decode.formulas.indexer_bytes_per_token`; 132 B for DeepSeek-V3.2)."""
        return float(f.indexer_bytes_per_token(self.indexer_head_dim)) if self.num_sparse_layers else 0.0

    @property
    def cache_residency(self) -> tuple[float, int, float, float]:
        """What one sequence keeps resident: ``(growing, windowed, window, fixed)`` such that its
        cache holds m_kv · (growing · T + windowed · min(T, window)) + fixed bytes.

        Global and sparse layers keep every token (a sparse layer also its indexer key, counted
        as a fraction of a layer); sliding layers W tokens, chunked layers their chunk C (counted
        as global when a model has both); recurrent layers a fixed state.
        """
        m_kv = self.kv_bytes_per_token_per_layer
        growing = float(self.num_global_layers)
        if self.num_sparse_layers:
            growing += self.num_sparse_layers * (m_kv + self.indexer_bytes_per_token_per_layer) / m_kv
        windowed, window = self.num_sliding_layers, self.window
        if self.num_chunked_layers:
            if windowed:
                growing += self.num_chunked_layers
            else:
                assert self.attention_chunk_size is not None  # chunked layers need it (validated)
                windowed, window = self.num_chunked_layers, float(self.attention_chunk_size)
        return growing, windowed, window, self.recurrent_state_bytes_per_sequence

    @property
    def recurrent_state_bytes_per_sequence(self) -> float:
        """Recurrent-state bytes one sequence keeps over all recurrent layers [B]."""
        return float(self.num_recurrent_layers * self.recurrent_state_elements * self.state_format.bytes_per_element)

    @property
    def window(self) -> float:
        """Sliding window [tokens], +inf when no layer slides."""
        if not self.num_sliding_layers:
            return float("inf")
        assert self.sliding_window is not None  # sliding layers need it (validated)
        return float(self.sliding_window)

    @property
    def num_moe_layers(self) -> int:
        return self.num_layers - self.first_dense_layers - self.mlp_free_layers if self.is_moe else 0

    @property
    def num_dense_mlp_layers(self) -> int:
        return self.num_layers - self.mlp_free_layers - self.num_moe_layers

    # -- parameter groups (counts, not bytes) -------------------------------------------------
    @cached_property
    def parameter_groups(self) -> dict[str, float]:
        """Parameter counts by group [1], summed over layers (counts, not bytes).

        ``attention_matrix``; ``layer_vector`` (norms, attention biases, the final norm);
        ``dense_mlp_matrix``/``_bias``; ``shared_expert_matrix``/``_bias`` and
        ``router_matrix``/``_bias`` of the MoE layers; ``expert`` and ``expert_matrix`` of *one*
        routed expert; ``embedding`` (token and learned position tables); ``lm_head`` (V × d,
        present even when tied).  The estimator turns them into bytes and FLOPs.
        """
        d, gated = self.hidden_size, self.mlp_gated
        if self.is_mla:
            attn_matrix = f.mla_matrix_parameters(
                d, self.num_heads, self.q_lora_rank, self.kv_lora_rank,
                self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim,
            )
            attn_vector = self.q_lora_rank + self.kv_lora_rank  # the latent norms
            attn_vector += self.o_bias * d
        else:
            attn_matrix = f.attention_matrix_parameters(d, self.num_heads, self.num_kv_heads, self.head_dim)
            attn_vector = self.qkv_bias * (self.num_heads + 2 * self.num_kv_heads) * self.head_dim + self.o_bias * d
        attn_matrix += self.attention_output_gate * d * self.num_heads * self.head_dim
        norm_width = 2 if self.norm_type == "layer" else 1
        L_attn, L_rec = self.num_attention_layers, self.num_recurrent_layers
        # q/k norms: one head_dim vector each (shared by the heads), or one over each projection
        qk_width = 2 if self.qk_norm_scope == "head" else self.num_heads + self.num_kv_heads
        attn_vector += self.qk_norm * qk_width * self.head_dim
        indexer_matrix = indexer_vector = 0
        if self.indexer_heads:  # DeepSeek-V3.2 lightning indexer: wq_b, wk, weights_proj; k_norm (LayerNorm)
            query_in = self.q_lora_rank or d
            indexer_matrix = (query_in * self.indexer_heads * self.indexer_head_dim + d * self.indexer_head_dim
                              + d * self.indexer_heads)
            indexer_vector = 2 * self.indexer_head_dim

        def mlp(width: int) -> tuple[int, int]:
            matrix = f.mlp_matrix_parameters(d, width, gated)
            bias = self.mlp_bias * ((1 + gated) * width + d) if width else 0
            return matrix, bias

        dense_matrix, dense_bias = mlp(self.intermediate_size)
        expert_matrix, expert_bias = mlp(self.moe_intermediate_size)
        shared_matrix, shared_bias = mlp(self.shared_expert_intermediate_size)
        router_matrix = d * self.num_experts
        router_bias = self.mlp_bias * self.num_experts
        L, L_dense, L_moe = self.num_layers, self.num_dense_mlp_layers, self.num_moe_layers
        L_sparse = self.num_sparse_layers
        vocab_rows = self.vocab_size * d
        return {
            "attention_matrix": L_attn * attn_matrix + L_rec * self.recurrent_matrix_parameters
            + L_sparse * indexer_matrix,
            "layer_vector": (L * self.norms_per_layer - self.mlp_free_layers) * norm_width * d + L_attn * attn_vector
            + L_rec * self.recurrent_vector_parameters + L_sparse * indexer_vector + norm_width * d,  # + final norm
            "dense_mlp_matrix": L_dense * dense_matrix,
            "dense_mlp_bias": L_dense * dense_bias,
            "shared_expert_matrix": L_moe * shared_matrix,
            "shared_expert_bias": L_moe * shared_bias,
            "router_matrix": L_moe * router_matrix,
            "router_bias": L_moe * router_bias,
            "expert": expert_matrix + expert_bias,  # one routed expert
            "expert_matrix": expert_matrix,
            "embedding": vocab_rows + self.position_embedding_rows * d,
            "lm_head": vocab_rows,
        }

    @property
    def parameter_count(self) -> int:
        """Total parameters [1] (tied lm_head counted once).

        Examples
        --------
        >>> from roofline_decode import load_model
        >>> load_model("llama-2-7b").parameter_count
        6738415616
        """
        g = self.parameter_groups
        total = sum(v for k, v in g.items() if k not in ("expert", "expert_matrix", "lm_head"))
        total += self.num_moe_layers * self.num_experts * g["expert"]
        total += 0 if self.tie_word_embeddings else g["lm_head"]
        return int(total)

    @property
    def active_parameter_count(self) -> int:
        """Parameters one token uses [1]: as :attr:`parameter_count` with k of E experts."""
        return self.parameter_count - int(
            self.num_moe_layers * (self.num_experts - self.num_experts_per_token) * self.parameter_groups["expert"]
        )

    @property
    def streamed_parameters(self) -> int:
        """Parameters read in full every step [1]: all but the embedding tables and routed
        experts, with the lm_head (V × d) included even when tied."""
        g = self.parameter_groups
        return int(sum(v for k, v in g.items() if k not in ("expert", "expert_matrix", "embedding")))

    @property
    def embedding_row_parameters(self) -> int:
        """Parameters gathered per token from the embedding tables [1]."""
        return self.hidden_size * (2 if self.position_embedding_rows else 1)

    @property
    def expert_parameters(self) -> int:
        """Parameters of one routed expert [1] (0 for a dense model)."""
        return int(self.parameter_groups["expert"]) if self.is_moe else 0

    @property
    def matmul_parameters_per_token(self) -> int:
        """Matrix parameters each token multiplies through [1] (drives FLOPs)."""
        g = self.parameter_groups
        return int(
            g["attention_matrix"] + g["dense_mlp_matrix"] + g["shared_expert_matrix"] + g["router_matrix"]
            + self.num_moe_layers * self.num_experts_per_token * g["expert_matrix"] + g["lm_head"]
        )

    # -- KV cache and attention -----------------------------------------------------------------
    @property
    def kv_bytes_per_token_per_layer(self) -> float:
        """KV bytes of one token in one layer [B] (MLA: one latent plus the rotary key)."""
        b = self.kv_format.bytes_per_element
        per_token: float = (f.mla_kv_bytes_per_token_per_layer(self.kv_lora_rank, self.qk_rope_head_dim, b)
                            if self.is_mla else f.kv_bytes_per_token_per_layer(self.num_kv_heads, self.head_dim, b))
        return per_token

    @property
    def kv_bytes_per_token(self) -> float:
        """KV bytes one token adds over all layers [B].

        Every attention layer holds the token's KV and each sparse layer its indexer key too;
        recurrent layers hold none (their state does not grow with the context).

        Examples
        --------
        >>> from roofline_decode import load_model
        >>> load_model("llama-3.1-70b").kv_bytes_per_token
        327680.0
        """
        return float(self.kv_bytes_per_token_per_layer * self.num_attention_layers
                     + self.indexer_bytes_per_token_per_layer * self.num_sparse_layers)

    @property
    def score_value_width(self) -> int:
        """Multiply-adds per head per cached position (q·k plus p·v) [1]."""
        if self.is_mla:
            return 2 * self.kv_lora_rank + self.qk_rope_head_dim
        return 2 * self.head_dim

    @cached_property
    def group_parameters(self) -> dict[str, int]:
        """Stored parameters per weight group [1] (keys of :data:`WEIGHT_GROUPS`): every routed
        expert, the lm_head 0 when tied (it is the embedding); they add up to
        :attr:`parameter_count`."""
        g = self.parameter_groups
        return {
            "embedding": int(g["embedding"]),
            "lm_head": 0 if self.tie_word_embeddings else int(g["lm_head"]),
            "attention": int(g["attention_matrix"]),
            "mlp": int(g["dense_mlp_matrix"] + g["dense_mlp_bias"]),
            "experts": int(self.num_moe_layers * self.num_experts * self.expert_parameters),
            "shared_experts": int(g["shared_expert_matrix"] + g["shared_expert_bias"]),
            "router": int(g["router_matrix"] + g["router_bias"]),
            "norms": int(g["layer_vector"]),
        }

    @property
    def streamed_groups(self) -> dict[str, int]:
        """Parameters read in full every step per weight group [1] (no embedding, no routed
        experts; the lm_head V × d also when tied); they add up to :attr:`streamed_parameters`."""
        counts = {k: v for k, v in self.group_parameters.items() if k not in ("embedding", "experts")}
        counts["lm_head"] = int(self.parameter_groups["lm_head"])
        return counts

    @property
    def streamed_weight_bytes(self) -> float:
        """Bytes of the weights read in full every step [B], each group in its own format."""
        if self.has_uniform_weights:
            return self.streamed_parameters * self.weight_format.bytes_per_element
        return float(sum(n * self.group_format(g).bytes_per_element for g, n in self.streamed_groups.items()))

    @property
    def embedding_row_bytes(self) -> float:
        """Bytes gathered per token from the embedding tables [B] (embedding format)."""
        return self.embedding_row_parameters * self.group_format("embedding").bytes_per_element

    @property
    def weight_bytes(self) -> float:
        """Bytes the weights occupy in memory [B] (all experts, tied lm_head once), each
        weight group in its own format."""
        expert_total = self.num_moe_layers * self.num_experts * self.expert_parameters
        if self.has_uniform_weights:
            return (self.parameter_count - expert_total) * self.weight_format.bytes_per_element + (
                expert_total * self.routed_expert_format.bytes_per_element
            )
        return float(sum(n * self.group_format(g).bytes_per_element for g, n in self.group_parameters.items()))
