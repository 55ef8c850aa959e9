"""Layer 1: the physics, as pure numpy-broadcasting functions that also run on sympy symbols.

No pydantic, no I/O, no globals (DESIGN.md §2).  Every public function here has a symbolic
twin in :mod:`roofline_decode.symbolic` obtained by calling it on sympy symbols.
"""

from .flops import attention_flops, matmul_flops
from .chain import serial_chain_time
from .energy import board_energy, cost_per_token, data_movement_energy, energy_per_token
from .capacity import batch_capacity, context_capacity, usable_memory
from .parallel import (
    all_to_all_time,
    expert_parallel_communication_time,
    kv_head_share,
    pipeline_step_time,
    recurrent_state_share,
    ring_all_gather_time,
    ring_all_reduce_time,
    sharded_bytes,
    tensor_parallel_communication_time,
)
from .prefill import (
    mla_prefill_score_value_width,
    prefill_attended_positions,
    prefill_attention_flops,
    prefill_kv_read_bytes,
    prefill_matmul_flops,
    prefill_weight_bytes,
)
from .speculative import expected_tokens_per_round, speculative_speedup, speculative_time_per_token
from .shared_prefix import shared_prefix_positions, shared_prefix_saved_bytes
from .serving import (closed_loop_latency, kv_transfer_time, littles_law_concurrency, prefill_tokens_per_step,
                      request_rate_at_concurrency, requests_per_second, steady_decode_batch, time_per_output_token,
                      workers_for_rate)
from .tiers import overlapped_tiered_memory_time, required_tier_bandwidth, tiered_memory_time
from .kv_cache import (
    attended_positions,
    kv_bytes_per_token_per_layer,
    kv_cache_bytes,
    kv_read_bytes,
    kv_write_bytes,
    mla_kv_bytes_per_token_per_layer,
)
from .recurrent import (
    gated_deltanet_matrix_parameters,
    gated_deltanet_state_elements,
    mamba2_matrix_parameters,
    mamba2_state_elements,
    mamba_matrix_parameters,
    mamba_state_elements,
    recurrent_state_bytes,
    recurrent_update_flops,
)
from .sparse_attention import chunked_attended_positions, indexer_bytes_per_token, indexer_flops, indexer_read_bytes
from .roofline import (
    arithmetic_intensity,
    compute_time,
    critical_batch,
    memory_time,
    ridge_point,
    step_time,
    tokens_per_second,
)
from .weights import (
    attention_matrix_parameters,
    distinct_experts_read,
    expected_experts_touched,
    mla_matrix_parameters,
    mlp_matrix_parameters,
    weight_bytes_read,
)

#: Every public formula, by name: the registry the symbolic layer and its meta-test use.
PUBLIC_FORMULAS = {
    f.__name__: f
    for f in (
        attention_matrix_parameters,
        mla_matrix_parameters,
        mlp_matrix_parameters,
        expected_experts_touched,
        distinct_experts_read,
        weight_bytes_read,
        kv_bytes_per_token_per_layer,
        mla_kv_bytes_per_token_per_layer,
        attended_positions,
        kv_cache_bytes,
        kv_read_bytes,
        kv_write_bytes,
        matmul_flops,
        attention_flops,
        memory_time,
        compute_time,
        step_time,
        arithmetic_intensity,
        ridge_point,
        tokens_per_second,
        critical_batch,
        usable_memory, batch_capacity, context_capacity,
        ring_all_reduce_time, ring_all_gather_time, tensor_parallel_communication_time, kv_head_share,
        all_to_all_time, expert_parallel_communication_time,
        recurrent_state_share, sharded_bytes,
        pipeline_step_time,
        requests_per_second, littles_law_concurrency, request_rate_at_concurrency,
        prefill_tokens_per_step, steady_decode_batch, time_per_output_token, closed_loop_latency, kv_transfer_time, workers_for_rate,
        tiered_memory_time, overlapped_tiered_memory_time, required_tier_bandwidth,
        serial_chain_time,
        prefill_attended_positions, prefill_attention_flops, prefill_matmul_flops, prefill_weight_bytes,
        prefill_kv_read_bytes, mla_prefill_score_value_width, shared_prefix_positions, shared_prefix_saved_bytes,
        expected_tokens_per_round, speculative_time_per_token, speculative_speedup,
        mamba_matrix_parameters, mamba_state_elements,
        mamba2_matrix_parameters, mamba2_state_elements, gated_deltanet_matrix_parameters,
        gated_deltanet_state_elements, recurrent_state_bytes, recurrent_update_flops,
        chunked_attended_positions, indexer_bytes_per_token, indexer_read_bytes, indexer_flops,
        data_movement_energy, board_energy, energy_per_token, cost_per_token,
    )
}

# spelled out (not built from PUBLIC_FORMULAS) so that mypy --strict sees the re-exports;
# tests/symbolic/test_registry.py checks that it names every formula of the registry
__all__ = [
    "PUBLIC_FORMULAS",
    "arithmetic_intensity",
    "attended_positions",
    "attention_flops",
    "attention_matrix_parameters",
    "batch_capacity",
    "board_energy",
    "chunked_attended_positions",
    "closed_loop_latency",
    "compute_time",
    "context_capacity",
    "cost_per_token",
    "critical_batch",
    "data_movement_energy",
    "distinct_experts_read",
    "energy_per_token",
    "expected_experts_touched",
    "expected_tokens_per_round",
    "gated_deltanet_matrix_parameters",
    "gated_deltanet_state_elements",
    "indexer_bytes_per_token",
    "indexer_flops",
    "indexer_read_bytes",
    "kv_bytes_per_token_per_layer",
    "kv_cache_bytes",
    "kv_head_share",
    "kv_read_bytes",
    "kv_transfer_time",
    "kv_write_bytes",
    "littles_law_concurrency",
    "mamba2_matrix_parameters",
    "mamba2_state_elements",
    "mamba_matrix_parameters",
    "mamba_state_elements",
    "matmul_flops",
    "memory_time",
    "mla_kv_bytes_per_token_per_layer",
    "mla_matrix_parameters",
    "mla_prefill_score_value_width",
    "mlp_matrix_parameters",
    "overlapped_tiered_memory_time",
    "pipeline_step_time",
    "prefill_attended_positions",
    "prefill_attention_flops",
    "prefill_kv_read_bytes",
    "prefill_matmul_flops",
    "prefill_tokens_per_step",
    "prefill_weight_bytes",
    "recurrent_state_bytes",
    "recurrent_state_share",
    "recurrent_update_flops",
    "request_rate_at_concurrency",
    "requests_per_second",
    "required_tier_bandwidth",
    "ridge_point",
    "ring_all_gather_time",
    "all_to_all_time",
    "expert_parallel_communication_time",
    "ring_all_reduce_time",
    "serial_chain_time",
    "sharded_bytes",
    "shared_prefix_positions",
    "shared_prefix_saved_bytes",
    "speculative_speedup",
    "speculative_time_per_token",
    "steady_decode_batch",
    "step_time",
    "tensor_parallel_communication_time",
    "tiered_memory_time",
    "time_per_output_token",
    "tokens_per_second",
    "usable_memory",
    "weight_bytes_read",
    "workers_for_rate",
]
