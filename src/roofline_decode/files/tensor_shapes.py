"""The main tensors of a model file must have the shapes its metadata implies (issue 27 item 2).

Weight bytes come from the architecture the metadata states and the formats the tensors are
stored in, so a file whose tensors contradict its metadata (an embedding that is not vocab x
hidden, attention projections of another width) would get a floor for a model it does not
hold.  Both readers check the tensors whose layout is fixed by the architecture, where the
file has them, against the :class:`~roofline_decode.specs.model.Model` read from it:

* GGUF (dimensions ne0 first, as llama.cpp's ``create_tensor`` checks them in
  ``src/llama-model.cpp``): ``token_embd`` and ``output`` [d, V]; per block ``attn_q``
  [d, H_q·d_h] (twice that with Qwen3-Next's output gate), ``attn_k`` / ``attn_v``
  [d, H_kv·d_h], ``attn_qkv`` [d, (H_q + 2·H_kv)·d_h], ``attn_output`` [H_q·d_h, d]; MLA's
  ``attn_q_a``, ``attn_q_b``, ``attn_kv_a_mqa``, ``attn_kv_b`` and ``attn_output``; dense
  ``ffn_gate`` / ``ffn_up`` [d, d_ff] (``ffn_up`` may hold gate and up, [d, 2·d_ff], as
  Phi-3's) and ``ffn_down`` [d_ff, d] with d_ff the block's ``feed_forward_length``; experts
  [d, d_ff_expert, E] and [d_ff_expert, d, E]; the router [d, E]; shared experts on their d side.
  Per-block head counts (hybrids) are read per block.
* safetensors (rows first, ``nn.Linear``'s [out, in]): ``embed_tokens`` and ``lm_head`` [V, d];
  per layer ``self_attn.{q,k,v,o}_proj`` (MLA: ``q_proj``, ``q_a_proj``, ``q_b_proj``,
  ``kv_a_proj_with_mqa``, ``kv_b_proj``, ``o_proj``), dense ``mlp.{gate,up,down}_proj`` and
  routed ``mlp.experts.<e>.{gate,up,down}_proj``, the router ``mlp.gate``, of the language
  model only (a vision tower's layers are not named so), in a float dtype (packed integer
  tensors of GPTQ, AWQ or bitsandbytes have other shapes).

Other tensors (norms, biases, recurrent mixers, fused or 3-D layouts) are not checked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..specs.model import Model
    from .gguf_config import GgufMetadata

__all__ = ["check_gguf_shapes", "check_hf_shapes"]

_GGUF_BLOCK = re.compile(r"blk\.([0-9]{1,9})\.([a-z_]+)\.weight")
_GGUF_BLOCK_NAME = re.compile(r"blk\.([0-9]+)\.")
#: Largest gap between the parameters a file's tensors hold and those of the architecture its
#: metadata states (real files add a few vectors: Llama 3's rope_freqs, DeepSeek's kv_b beside
#: k_b and v_b, 0.15 %).
_PARAMETER_TOLERANCE = 0.01


def _refuse(path: str | Path, name: str, shape: tuple[int, ...], expected: Sequence[int | None], order: str,
            why: str) -> None:
    """Raise unless ``shape`` is ``expected`` (None: any size)."""
    if len(shape) == len(expected) and all(e is None or e == s for s, e in zip(shape, expected)):
        return
    want = "[" + ", ".join("any" if e is None else f"{e:,}" for e in expected) + "]"
    raise ConfigError(path, name, f"shape {list(shape)} ({order}) contradicts the metadata: expected {want} ({why})")


def check_gguf_shapes(model: Model, tensors: list[tuple[str, tuple[int, ...], str]], m: GgufMetadata,
                      blocks: int) -> None:
    """Refuse a GGUF tensor of blocks below ``blocks`` (the ones that decode) whose shape
    contradicts ``model`` (read from the metadata ``m``)."""
    d, vocab, dh = model.hidden_size, model.vocab_size, model.head_dim
    heads = m.per_block("attention.head_count") or [model.num_heads] * m.blocks
    kv_heads = m.per_block("attention.head_count_kv") or [model.num_kv_heads] * m.blocks
    widths = m.per_block("feed_forward_length")
    experts, expert_width = model.num_experts, model.moe_intermediate_size
    gate = 2 if model.attention_output_gate else 1
    names = {name for name, _, _ in tensors}
    elements = 0
    for name, shape, _ in tensors:
        def check(expected: Sequence[int | None], why: str) -> None:
            _refuse(m.path, name, shape, expected, "ne0 first", why)

        block = _GGUF_BLOCK_NAME.match(name)
        if block and int(block[1]) >= m.blocks:
            raise ConfigError(m.path, name, f"a tensor of block {block[1]}, but {m.key('block_count')} = {m.blocks:,} "
                                            f"(blocks 0 to {m.blocks - 1})")
        if block and int(block[1]) >= blocks:
            continue  # a block past the decoding ones (an MTP module)
        size = 1
        for dim in shape:
            size *= dim
        elements += size
        if name in ("token_embd.weight", "output.weight"):
            check([d, vocab], f"{m.key('embedding_length')} = {d:,} by the vocabulary of {vocab:,}")
            continue
        match = _GGUF_BLOCK.fullmatch(name)
        if not match:
            continue
        i, part = int(match[1]), match[2]
        hq, hkv = heads[i] or model.num_heads, kv_heads[i] or model.num_kv_heads
        where = f"block {i}: d = {d:,}"
        if model.is_mla:
            nope, rope, dv = model.qk_nope_head_dim, model.qk_rope_head_dim, model.v_head_dim
            mla: dict[str, Sequence[int | None]] = {"attn_q": [d, hq * (nope + rope)], "attn_q_a": [d, model.q_lora_rank or None],
                   "attn_q_b": [model.q_lora_rank or None, hq * (nope + rope)],
                   "attn_kv_a_mqa": [d, model.kv_lora_rank + rope], "attn_kv_b": [model.kv_lora_rank, hq * (nope + dv)],
                   "attn_output": [hq * dv, d]}
            if part in mla:
                check(mla[part], f"{where}, {hq} heads, kv_lora_rank {model.kv_lora_rank}, q_lora_rank "
                                 f"{model.q_lora_rank}, head widths nope {nope}, rope {rope}, value {dv}")
        elif part.startswith("attn_"):
            attention: dict[str, Sequence[int | None]] = {"attn_q": [d, gate * hq * dh], "attn_k": [d, hkv * dh], "attn_v": [d, hkv * dh],
                         "attn_qkv": [d, (hq + 2 * hkv) * dh], "attn_output": [hq * dh, d]}
            if part in attention:
                check(attention[part], f"{where}, {hq} heads and {hkv} KV heads of {dh}")
        ff = widths[i] if widths is not None else None
        fused = bool(ff) and f"blk.{i}.ffn_gate.weight" not in names and shape[1:2] == (2 * (ff or 0),)
        mlp: dict[str, Sequence[int | None]] = {"ffn_gate": [d, ff], "ffn_up": [d, 2 * ff if fused and ff else ff], "ffn_down": [ff, d],
               "ffn_gate_exps": [d, expert_width, experts], "ffn_up_exps": [d, expert_width, experts],
               "ffn_down_exps": [expert_width, d, experts], "ffn_gate_inp": [d, experts],
               "ffn_gate_shexp": [d, None], "ffn_up_shexp": [d, None], "ffn_down_shexp": [None, d]}
        if part in mlp:
            check(mlp[part], f"{where}, feed_forward_length {ff if ff is not None else 'not stated'}, "
                             f"{experts} experts of {expert_width}")
    params = model.parameter_count
    if abs(elements - params) > _PARAMETER_TOLERANCE * params:
        raise ConfigError(m.path, "(tensors)", f"the tensors of the {blocks:,} decoding blocks hold {elements:,} "
                                               f"parameters, the architecture the metadata states has {params:,}: more "
                                               f"than {_PARAMETER_TOLERANCE:.0%} apart (tensors missing, or the metadata "
                                               "of another model)")


_PREFIX = r"(?:model\.|language_model\.|language_model\.model\.|model\.language_model\.)?"
_HF_TOP = re.compile(_PREFIX + r"(?:embed_tokens|lm_head)\.weight")
_HF_LAYER = re.compile(_PREFIX + r"layers\.([0-9]{1,9})\.(?:self_attn\.(\w+)_proj(?:_with_mqa)?|mlp\.(gate|up|down)_proj"
                                 r"|mlp\.experts\.([0-9]{1,9})\.(gate|up|down)_proj|mlp\.(gate))\.weight")
_FLOATS = ("F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2")


def check_hf_shapes(model: Model, tensors: dict[str, tuple[str, tuple[int, ...], Path]]) -> None:
    """Refuse a safetensors tensor (name -> dtype, shape, file) of the language model's layers
    below ``num_layers`` whose shape contradicts ``model`` (read from config.json)."""
    d, vocab, dh = model.hidden_size, model.vocab_size, model.head_dim
    hq, hkv = model.num_heads, model.num_kv_heads
    ff, experts, expert_width = model.intermediate_size or None, model.num_experts, model.moe_intermediate_size
    gate = 2 if model.attention_output_gate else 1
    nope, rope, dv, rq, rkv = (model.qk_nope_head_dim, model.qk_rope_head_dim, model.v_head_dim, model.q_lora_rank,
                               model.kv_lora_rank)
    attention: dict[str, Sequence[int | None]] = ({"q": [hq * (nope + rope), d], "q_a": [rq or None, d], "q_b": [hq * (nope + rope), rq or None],
                  "kv_a": [rkv + rope, d], "kv_b": [hq * (nope + dv), rkv], "o": [d, hq * dv]} if model.is_mla else
                 {"q": [gate * hq * dh, d], "k": [hkv * dh, d], "v": [hkv * dh, d], "o": [d, hq * dh]})
    why_attention = (f"hidden_size {d:,}, {hq} heads, kv_lora_rank {rkv}, q_lora_rank {rq}, head widths nope {nope}, "
                     f"rope {rope}, value {dv}" if model.is_mla else
                     f"hidden_size {d:,}, {hq} heads and {hkv} KV heads of {dh}")
    for name, (dtype, shape, path) in tensors.items():
        if dtype not in _FLOATS:
            continue
        expected: Sequence[int | None] | None = None
        why = ""
        if top := _HF_TOP.fullmatch(name):
            expected, why = [vocab, d], f"vocab_size {vocab:,} by hidden_size {d:,}"
        elif layer := _HF_LAYER.fullmatch(name):
            if int(layer[1]) >= model.num_layers:
                continue
            projection, dense, expert, expert_part, router = layer[2], layer[3], layer[4], layer[5], layer[6]
            if projection in attention:
                expected, why = attention[projection], why_attention
            elif dense:
                expected = [d, ff] if dense == "down" else [ff, d]
                why = f"hidden_size {d:,}, intermediate_size {model.intermediate_size:,}"
            elif expert and experts:
                if int(expert) >= experts:
                    raise ConfigError(path, name, f"expert {expert} of a model of {experts} experts (0 to {experts - 1})")
                expected = [d, expert_width] if expert_part == "down" else [expert_width, d]
                why = f"hidden_size {d:,}, moe_intermediate_size {expert_width:,}"
            elif router and experts:
                expected, why = [experts, d], f"{experts} experts, hidden_size {d:,}"
        if expected is not None:
            _refuse(path, name, shape, expected, "rows first", why)
