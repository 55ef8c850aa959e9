"""Read a GGUF file's header (metadata and tensor infos) into a Model; no tensor data is read.

The layout is GGUF's, as documented in llama.cpp's ``docs/gguf.md`` / ggml's ``gguf.md``
(https://github.com/ggml-org/ggml/blob/master/docs/gguf.md, retrieved 2026-11-30): the magic
``GGUF``, a uint32 version (2 or 3), uint64 tensor and key-value counts, the key-value pairs
(a string key, a uint32 value type, the value; arrays hold a type, a uint64 count and the
items), then per tensor its name, uint32 dimension count, uint64 dimensions (ne0, the row
length, first), uint32 GGML type and uint64 data offset.  All little-endian.

The architecture comes from the metadata (``general.architecture`` and its
``<arch>.block_count``, ``.embedding_length``, ``.feed_forward_length``,
``.attention.head_count(_kv)``, ``.attention.key_length``, ``.expert_*`` ... keys), read through
the same family readers as a config.json; every tensor's exact byte size comes from its GGML
type and shape, summed per weight group (embedding, lm_head, attention, mlp, experts,
shared_experts, router, norms) into that group's format.
"""

from __future__ import annotations

import struct
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import ConfigError
from ..formats.ggml_types import GGML_TYPE_IDS, GGML_TYPES
from ..formats.llama_quant import TensorInfo, group_formats_from_tensors

if TYPE_CHECKING:
    from ..formats import NumberFormat
    from ..specs.model import Model

__all__ = ["GgufHeader", "read_gguf_header", "model_from_gguf", "tensor_group"]

_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_STRING = 1 << 24


class GgufHeader:
    """Metadata (key -> value) and tensor infos (name, shape ne0-first, GGML type name)."""

    def __init__(self, path: str, version: int, metadata: dict[str, Any], tensors: list[tuple[str, tuple[int, ...], str]]):
        self.path, self.version, self.metadata, self.tensors = path, version, metadata, tensors

    @property
    def tensor_bytes(self) -> int:
        """Bytes of all tensor data [B] (each tensor's blocks, no alignment padding)."""
        return sum(GGML_TYPES[kind].tensor_bytes(_product(shape)) for _, shape, kind in self.tensors)


def _product(shape: tuple[int, ...]) -> int:
    n = 1
    for dim in shape:
        n *= int(dim)
    return n


class _Reader:
    def __init__(self, stream: BinaryIO, path: str):
        self.stream, self.path = stream, path

    def error(self, where: str, problem: str) -> ConfigError:
        return ConfigError(self.path, where, problem)

    def take(self, size: int, where: str) -> bytes:
        data = self.stream.read(size)
        if len(data) != size:
            raise self.error(where, f"file ends early (wanted {size} bytes, got {len(data)}): not a complete GGUF header")
        return data

    def unpack(self, fmt: str, where: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt), where))[0]

    def string(self, where: str) -> str:
        size = self.unpack("<Q", where)
        if size > _MAX_STRING:
            raise self.error(where, f"string of {size} bytes is implausible: not a GGUF file or a corrupt one")
        return self.take(size, where).decode("utf-8", errors="replace")

    def value(self, kind: int, where: str) -> Any:
        if kind in _SCALARS:
            return self.unpack(_SCALARS[kind], where)
        if kind == _STRING:
            return self.string(where)
        if kind == _ARRAY:
            item = self.unpack("<I", where)
            count = self.unpack("<Q", where)
            if item in _SCALARS:  # read in one go; keep only the length for long arrays
                size = struct.calcsize(_SCALARS[item])
                data = self.take(size * count, where)
                if count > 4096:
                    return _Skipped(count)
                return list(struct.unpack(f"<{count}{_SCALARS[item][1]}", data))
            values = [self.value(item, where) for _ in range(count)]
            return _Skipped(count) if count > 4096 else values
        raise self.error(where, f"unknown GGUF value type {kind}")


class _Skipped(list[Any]):
    """A long array (a tokenizer's vocabulary) of which only the length is kept."""

    def __init__(self, count: int):
        super().__init__()
        self.length = count

    def __len__(self) -> int:
        return self.length


def read_gguf_header(path: str | Path) -> GgufHeader:
    """Metadata and tensor infos of a GGUF file, reading the header only.

    Raises
    ------
    ConfigError
        Not a GGUF file (magic), an unsupported version, a truncated header or an unknown
        GGML tensor type, naming the file.
    """
    path = Path(path)
    try:
        stream = path.open("rb")
    except OSError as exc:
        raise ConfigError(path, "(file)", f"cannot read: {exc.strerror or exc}") from None
    with stream:
        r = _Reader(stream, str(path))
        magic = r.take(4, "magic")
        if magic != b"GGUF":
            raise r.error("magic", f"expected b'GGUF', got {magic!r}: not a GGUF file")
        version = r.unpack("<I", "version")
        if version not in (2, 3):
            raise r.error("version", f"GGUF version {version} is not supported (2 or 3)")
        n_tensors, n_kv = r.unpack("<Q", "tensor_count"), r.unpack("<Q", "metadata_kv_count")
        metadata: dict[str, Any] = {}
        for i in range(n_kv):
            key = r.string(f"metadata[{i}].key")
            metadata[key] = r.value(r.unpack("<I", key), key)
        tensors = []
        for i in range(n_tensors):
            name = r.string(f"tensor[{i}].name")
            dims = r.unpack("<I", name)
            if not 1 <= dims <= 4:
                raise r.error(name, f"{dims} dimensions (1 to 4 allowed)")
            shape = tuple(r.unpack("<Q", name) for _ in range(dims))
            kind = r.unpack("<I", name)
            r.unpack("<Q", name)  # data offset
            if kind not in GGML_TYPE_IDS:
                raise r.error(name, f"unknown GGML type id {kind}; known: {sorted(GGML_TYPE_IDS)}")
            tensors.append((name, shape, GGML_TYPE_IDS[kind]))
    return GgufHeader(str(path), version, metadata, tensors)


def tensor_group(name: str, shape: tuple[int, ...]) -> str:
    """The weight group of a GGUF tensor name (``blk.3.ffn_down_exps.weight`` -> experts)."""
    if name.startswith(("token_embd", "position_embd", "token_types", "per_layer_token_embd")):
        return "embedding"
    if name == "output.weight":
        return "lm_head"
    if "ffn_gate_inp" in name or "exp_probs_b" in name:
        return "router"
    if "_exps" in name:
        return "experts"
    if "_shexp" in name:
        return "shared_experts"
    if "norm" in name:
        return "norms"
    if ".ffn_" in name:  # dense MLP matrices and their biases
        return "mlp"
    if len(shape) < 2 or name.startswith("blk.") and ".attn_" in name and name.endswith(".bias"):
        return "norms"
    return "attention"


# GGUF general.architecture -> (HF model_type, extra config keys)
_ARCHITECTURES = {
    "llama": "llama", "mistral": "mistral", "qwen2": "qwen2", "qwen3": "qwen3", "qwen2moe": "qwen2_moe",
    "qwen3moe": "qwen3_moe", "gemma": "gemma", "gemma2": "gemma2", "gemma3": "gemma3_text", "phi3": "phi3",
    "deepseek2": "deepseek_v3", "gpt-oss": "gpt_oss", "gpt2": "gpt2",
    "olmo": "olmo", "olmo2": "olmo2", "granite": "granite", "command-r": "cohere", "cohere2": "cohere2",
    "starcoder2": "starcoder2", "smollm3": "smollm3", "phi2": "phi", "falcon": "falcon",
    "mamba2": "mamba2", "qwen3next": "qwen3_next", "granitehybrid": "granitemoehybrid", "glm4moe": "glm4_moe",
    "falcon-h1": "falcon_h1", "nemotron_h": "nemotron_h", "nemotron_h_moe": "nemotron_h",
    "jamba": "jamba", "llama4": "llama4_text", "gptj": "gptj",
}


def _config(header: GgufHeader) -> dict[str, Any]:
    """A Hugging Face style config dict from the GGUF metadata and tensor shapes."""
    meta, path = header.metadata, header.path
    arch = meta.get("general.architecture")
    if arch not in _ARCHITECTURES:
        raise ConfigError(path, "general.architecture",
                          f"unsupported architecture {arch!r}; supported: {', '.join(sorted(_ARCHITECTURES))}")
    shapes = {name: shape for name, shape, _ in header.tensors}

    def get(key: str, default: Any = None) -> Any:
        value = meta.get(f"{arch}.{key}", default)
        if isinstance(value, list) and value and key in ("feed_forward_length", "attention.head_count_kv",
                                                         "attention.head_count"):
            return max(value)  # per-layer arrays (OpenELM-style): not supported beyond the max
        return value

    def need(key: str) -> Any:
        value = get(key)
        if value is None:
            raise ConfigError(path, f"{arch}.{key}", "required metadata key is missing")
        return value

    if "token_embd.weight" not in shapes:
        raise ConfigError(path, "token_embd.weight", "required tensor is missing")
    vocab = get("vocab_size") or shapes["token_embd.weight"][1]
    config: dict[str, Any] = {
        "model_type": _ARCHITECTURES[arch],
        "hidden_size": need("embedding_length"),
        "num_hidden_layers": need("block_count"),
        "num_attention_heads": get("attention.head_count") if arch == "mamba2" else need("attention.head_count"),
        "num_key_value_heads": get("attention.head_count_kv") or get("attention.head_count"),
        "intermediate_size": get("feed_forward_length", 0),
        "vocab_size": vocab,
        "max_position_embeddings": get("context_length"),
        "tie_word_embeddings": "output.weight" not in shapes,
    }
    key_length = get("attention.key_length")
    if key_length:
        config["head_dim"] = key_length
    if get("attention.sliding_window"):
        config["sliding_window"] = get("attention.sliding_window")
    if "blk.0.attn_q.bias" in shapes:
        config["attention_bias"] = True
    experts = get("expert_count", 0)
    if experts:
        config.update(num_experts_per_tok=need("expert_used_count"), num_experts=experts, num_local_experts=experts,
                      n_routed_experts=experts,
                      moe_intermediate_size=get("expert_feed_forward_length") or config["intermediate_size"])
        if arch == "llama":
            config["model_type"] = "mixtral"
            config["intermediate_size"] = config["moe_intermediate_size"]
        shared = get("expert_shared_feed_forward_length") or 0
        config["shared_expert_intermediate_size"] = shared * (get("expert_shared_count") or 1) if shared else 0
    if arch == "deepseek2":
        rope = need("rope.dimension_count")
        config.update(kv_lora_rank=need("attention.kv_lora_rank"), q_lora_rank=get("attention.q_lora_rank") or None,
                      qk_rope_head_dim=rope, qk_nope_head_dim=need("attention.key_length") - rope,
                      v_head_dim=need("attention.value_length"), first_k_dense_replace=get("leading_dense_block_count", 0),
                      n_shared_experts=get("expert_shared_count", 0))
        config.pop("head_dim", None)
    if arch in ("qwen3", "qwen3moe") and "head_dim" not in config:
        config["head_dim"] = config["hidden_size"] // config["num_attention_heads"]
    if arch == "qwen2moe":
        config["shared_expert_intermediate_size"] = get("expert_shared_feed_forward_length", 0)
    if arch in ("gemma2", "gemma3"):
        config.setdefault("head_dim", config["hidden_size"] // config["num_attention_heads"])
    if arch == "falcon":  # one KV head: Falcon-7B's multi-query layers; more: the new decoder (40B, 180B)
        kv = config["num_key_value_heads"]
        config.update(multi_query=kv == 1, new_decoder_architecture=kv > 1, num_kv_heads=kv,
                      ffn_hidden_size=config["intermediate_size"] or None, bias="blk.0.attn_qkv.bias" in shapes)
    if arch == "glm4moe":  # block_count includes the MTP (NextN) layers, which do not decode
        config.update(num_hidden_layers=config["num_hidden_layers"] - get("nextn_predict_layers", 0),
                      first_k_dense_replace=get("leading_dense_block_count", 0),
                      n_shared_experts=get("expert_shared_count", 0),
                      use_qk_norm="blk.0.attn_q_norm.weight" in shapes)
    if arch == "starcoder2":
        config["use_bias"] = "blk.0.attn_q.bias" in shapes
    if arch == "command-r":
        config["use_qk_norm"] = "blk.0.attn_q_norm.weight" in shapes
    if arch == "llama4":  # feed_forward_length: the dense layers; expert_feed_forward_length: experts and shared
        config.update(intermediate_size=need("expert_feed_forward_length"), intermediate_size_mlp=need("feed_forward_length"),
                      interleave_moe_layer_step=get("interleave_moe_layer_step", 1),
                      attention_chunk_size=get("attention.chunk_size"))
    if arch == "jamba":
        config.update(_jamba_layers(meta, shapes, config["num_hidden_layers"], need, path))
    if arch in ("nemotron_h", "nemotron_h_moe"):
        config.update(_nemotron_pattern(meta, arch, shapes, config["num_hidden_layers"], path))
    if arch in ("mamba2", "qwen3next", "granitehybrid", "falcon-h1", "nemotron_h", "nemotron_h_moe"):
        config.update(_ssm_config(arch, need, shapes, config["hidden_size"], path))
    if arch == "granitehybrid":  # a per-layer head_count_kv: 0 marks the Mamba-2 layers
        kv = meta.get(f"{arch}.attention.head_count_kv")
        layers = config["num_hidden_layers"]
        kinds = kv if isinstance(kv, list) and len(kv) == layers else [config["num_key_value_heads"]] * layers
        config.update(layer_types=["attention" if n else "mamba" for n in kinds], num_local_experts=experts,
                      intermediate_size=get("expert_feed_forward_length") or config["intermediate_size"],
                      shared_intermediate_size=get("expert_shared_feed_forward_length") or config["intermediate_size"])
    if arch == "gptj":
        config.update(n_embd=config["hidden_size"], n_layer=config["num_hidden_layers"],
                      n_head=config["num_attention_heads"], n_inner=config["intermediate_size"] or None)
    if arch == "gpt2":
        config.update(n_embd=config["hidden_size"], n_layer=config["num_hidden_layers"],
                      n_head=config["num_attention_heads"], n_inner=config["intermediate_size"],
                      n_positions=shapes.get("position_embd.weight", (0, config["max_position_embeddings"]))[1])
    return config


def _ssm_config(arch: str, need: Callable[[str], Any], shapes: dict[str, tuple[int, ...]],
                hidden: int, path: str) -> dict[str, Any]:
    """The recurrent-mixer keys from llama.cpp's ``ssm.*`` metadata: Mamba-2 (``time_step_rank``
    = heads, ``group_count`` = groups, ``inner_size`` = d_in) or Gated DeltaNet (``group_count``
    = key heads, ``time_step_rank`` = value heads, ``state_size`` = head width)."""
    inner, state, heads = need("ssm.inner_size"), need("ssm.state_size"), need("ssm.time_step_rank")
    groups, kernel = need("ssm.group_count"), need("ssm.conv_kernel")
    if arch == "qwen3next":
        return {"linear_num_key_heads": groups, "linear_num_value_heads": heads, "linear_key_head_dim": state,
                "linear_value_head_dim": state, "linear_conv_kernel_dim": kernel,
                "full_attention_interval": need("full_attention_interval")}
    if (inner % hidden and arch in ("mamba2", "granitehybrid")) or inner % heads:
        raise ConfigError(path, f"{arch}.ssm.inner_size", f"{inner} is not a multiple of embedding_length {hidden} "
                                                        f"and of ssm.time_step_rank {heads}")
    # a conv1d weight without a bias tensor: no bias (llama.cpp writes both when there is one)
    bias = "blk.0.ssm_conv1d.weight" not in shapes or "blk.0.ssm_conv1d.bias" in shapes
    if arch in ("nemotron_h", "nemotron_h_moe"):
        return {"mamba_num_heads": heads, "mamba_head_dim": inner // heads, "n_groups": groups,
                "ssm_state_size": state, "conv_kernel": kernel, "use_conv_bias": bias}
    if arch == "falcon-h1":  # attention and Mamba-2 side by side in each block
        return {"mamba_d_ssm": inner, "mamba_n_heads": heads, "mamba_d_head": inner // heads, "mamba_n_groups": groups,
                "mamba_d_state": state, "mamba_d_conv": kernel, "mamba_conv_bias": bias,
                "mamba_rms_norm": "blk.0.ssm_norm.weight" in shapes}
    if arch == "granitehybrid":
        return {"mamba_expand": inner // hidden, "mamba_n_heads": heads, "mamba_d_head": inner // heads,
                "mamba_n_groups": groups, "mamba_d_state": state, "mamba_d_conv": kernel, "mamba_conv_bias": bias}
    return {"expand": inner // hidden, "num_heads": heads, "head_dim": inner // heads, "n_groups": groups,
            "state_size": state, "conv_kernel": kernel, "use_conv_bias": bias}


def _jamba_layers(meta: dict[str, Any], shapes: dict[str, tuple[int, ...]], layers: int,
                  need: Callable[[str], Any], path: str) -> dict[str, Any]:
    """Jamba's periods and offsets from llama.cpp's per-layer ``head_count_kv`` (attention where
    non-zero) and the router tensors (MoE layers), and its Mamba (v1) mixer from ``ssm.*``
    (``time_step_rank`` = dt rank)."""
    kv = meta.get("jamba.attention.head_count_kv")
    if not isinstance(kv, list) or len(kv) != layers:
        raise ConfigError(path, "jamba.attention.head_count_kv", f"expected one entry per layer ({layers}), got {kv!r}")
    out: dict[str, Any] = {}
    for name, where in (("attn", [i for i in range(layers) if kv[i]]),
                        ("expert", [i for i in range(layers) if f"blk.{i}.ffn_gate_inp.weight" in shapes])):
        period = where[1] - where[0] if len(where) > 1 else layers
        if not where or where != list(range(where[0], layers, period)):
            raise ConfigError(path, "jamba.attention.head_count_kv" if name == "attn" else "blk.*.ffn_gate_inp.weight",
                              f"{name} layers {where} are not every n-th layer from an offset")
        out.update({f"{name}_layer_period": period, f"{name}_layer_offset": where[0]})
    hidden = need("embedding_length")
    inner = need("ssm.inner_size")
    if inner % hidden:
        raise ConfigError(path, "jamba.ssm.inner_size", f"{inner} is not a multiple of embedding_length {hidden}")
    out.update(mamba_expand=inner // hidden, mamba_d_state=need("ssm.state_size"), mamba_d_conv=need("ssm.conv_kernel"),
               mamba_dt_rank=need("ssm.time_step_rank"),
               mamba_conv_bias="blk.0.ssm_conv1d.weight" not in shapes or "blk.0.ssm_conv1d.bias" in shapes)
    return out


def _nemotron_pattern(meta: dict[str, Any], arch: str, shapes: dict[str, tuple[int, ...]], blocks: int,
                      path: str) -> dict[str, Any]:
    """Nemotron-H's ``hybrid_override_pattern`` from llama.cpp's per-block arrays: KV heads mark
    attention (``*``), a feed-forward width an MLP (``-``), expert tensors an MoE (``E``), the
    rest Mamba-2 (``M``)."""
    kv, ff = meta.get(f"{arch}.attention.head_count_kv"), meta.get(f"{arch}.feed_forward_length")
    if not isinstance(kv, list) or len(kv) != blocks:
        raise ConfigError(path, f"{arch}.attention.head_count_kv", f"expected one entry per block ({blocks}), got {kv!r}")
    widths = ff if isinstance(ff, list) and len(ff) == blocks else [0] * blocks
    pattern = "".join("*" if kv[i] else "E" if f"blk.{i}.ffn_up_exps.weight" in shapes else "-" if widths[i] else "M"
                      for i in range(blocks))
    dense = [widths[i] for i in range(blocks) if pattern[i] == "-"]
    out: dict[str, Any] = {"hybrid_override_pattern": pattern, "intermediate_size": max(dense, default=0)}
    if "E" in pattern:
        out["moe_shared_expert_intermediate_size"] = meta.get(f"{arch}.expert_shared_feed_forward_length", 0)
    return out


def model_from_gguf(path: str | Path, name: str | None = None, **overrides: Any) -> Model:
    """A :class:`Model` from a GGUF file's header: its architecture and, per weight group, the
    exact bytes of the tensors in their GGML types.

    Examples
    --------
    See ``docs/your-model-file.md``; the tests write small GGUF files with the ``gguf``
    package's writer.
    """
    from ..specs.model import Model

    header = read_gguf_header(path)
    config = _config(header)
    label = name or header.metadata.get("general.name") or Path(path).stem
    # tensors of layers past num_hidden_layers (an MTP module) take no part in decoding
    layers = config["num_hidden_layers"]

    def decodes(name: str) -> bool:
        block = name.split(".")[1] if name.startswith("blk.") and name.count(".") > 1 else ""
        return not (isinstance(layers, int) and block.isdigit() and int(block) >= layers)

    tensors = [TensorInfo(n, shape, tensor_group(n, shape)) for n, shape, _ in header.tensors if decodes(n)]
    types = {n: kind for n, _, kind in header.tensors}
    for tensor in tensors:
        try:
            GGML_TYPES[types[tensor.name]].tensor_bytes(tensor.elements)
        except ValueError as exc:
            raise ConfigError(header.path, tensor.name, str(exc)) from None
    groups = group_formats_from_tensors(tensors, types, Path(path).stem)
    fields: dict[str, Any] = {"weight_format": groups.get("attention") or groups["embedding"]}
    fields.update(overrides)
    model = Model.from_hf_config(config, name=label, **fields)
    formats: dict[str, str | NumberFormat] = {
        g: fmt for g in ("embedding", "lm_head", "attention", "mlp", "experts", "shared_experts", "router", "norms")
        if (fmt := groups.get(g)) is not None
    }
    if model.tie_word_embeddings:
        formats.pop("lm_head", None)
    if "weight_format" not in overrides:
        model = model.with_precision(weights=formats)
    return model.replace(source=str(path))
