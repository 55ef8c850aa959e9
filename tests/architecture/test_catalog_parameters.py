"""Every bundled model loads, and its parameter count matches the publisher's figure.

One test per model.  Each row cites where the stated figure comes from (the same source is in
the model's ``_roofline`` block and in ``model_configs/SOURCES.md``); the test also checks the
bundled metadata still says the same number, so the citation cannot drift from the data.

Active-parameter conventions (MoE):

* ``"all"``: every parameter one token uses, input embedding and lm_head included
  (Mistral, Qwen);
* ``"no_input_embedding"``: as "all" without the input embedding table, which is a gather and
  not a matrix product.  The gpt-oss model card (Table 1) states this convention; DeepSeek's
  figures fit it and not the other (DeepSeek-V3: 36.63B rounds to the stated 37B, 37.55B with
  the embedding does not);
* ``"no_embeddings"``: without the input embedding and without the lm_head.  GLM counts this
  way (GLM-4.5-Air 12.18B, stated 12B); so does Qwen3-Next's "3B activated" (3.25B; with the
  embeddings, Qwen's convention for Qwen3-30B-A3B, it would be 3.87B).
"""

from __future__ import annotations

import pytest

import roofline_decode as rd
from roofline_decode.catalog import model_metadata

# id: (stated total, stated active or None, active convention, source of the figures)
PUBLISHED = {
    "deepseek-v2-lite": (15.7e9, 2.4e9, "no_input_embedding", "https://arxiv.org/abs/2405.04434 (DeepSeek-V2 paper, V2-Lite: 15.7B / 2.4B)"),
    "deepseek-v3": (671e9, 37e9, "no_input_embedding", "https://arxiv.org/abs/2412.19437 (abstract: 671B total, 37B activated; MTP module excluded)"),
    "gemma-2-27b": (27.2e9, None, None, "https://arxiv.org/abs/2408.00118 (Gemma 2 report, Table 1)"),
    "gemma-2-9b": (9.24e9, None, None, "https://arxiv.org/abs/2408.00118 (Gemma 2 report, Table 1)"),
    "gemma-3-1b": (1.0e9, None, None, "https://arxiv.org/abs/2503.19786 (Gemma 3 report, Table 1: 302M + 698M)"),
    "gemma-7b": (8.54e9, None, None, "https://arxiv.org/abs/2403.08295 (Gemma report, Table 2: 786.8M + 7751.2M)"),
    "gpt-oss-120b": (117e9, 5.1e9, "no_input_embedding", "https://openai.com/index/introducing-gpt-oss/ (model card Table 1: 116.83B / 5.13B)"),
    "gpt-oss-20b": (21e9, 3.6e9, "no_input_embedding", "https://openai.com/index/introducing-gpt-oss/ (model card Table 1: 20.91B / 3.61B)"),
    "gpt2": (124e6, None, None, "https://huggingface.co/openai-community/gpt2 (model card: 124M)"),
    "llama-2-13b": (13.0e9, None, None, "https://arxiv.org/abs/2307.09288 (Llama 2 paper)"),
    "llama-2-70b": (69.0e9, None, None, "https://arxiv.org/abs/2307.09288 (Llama 2 paper)"),
    "llama-2-7b": (6.74e9, None, None, "https://arxiv.org/abs/2307.09288 (Llama 2 paper)"),
    "llama-3.1-405b": (405.9e9, None, None, "https://ai.meta.com/blog/meta-llama-3-1/ (405B; 405.9B on the model card)"),
    "llama-3.1-70b": (70.6e9, None, None, "https://ai.meta.com/blog/meta-llama-3-1/ (70B; 70.6B on the model card)"),
    "llama-3.1-8b": (8.03e9, None, None, "https://ai.meta.com/blog/meta-llama-3-1/ (8B; 8.03B on the model card)"),
    "llama-3.2-1b": (1.23e9, None, None, "https://huggingface.co/meta-llama/Llama-3.2-1B (model card table: 1.23B)"),
    "llama-3.2-3b": (3.21e9, None, None, "https://huggingface.co/meta-llama/Llama-3.2-3B (model card table: 3.21B)"),
    "mistral-7b-v0.1": (7.24e9, None, None, "https://mistral.ai/news/announcing-mistral-7b (7.3B; 7.24B exact)"),
    "mixtral-8x22b": (141e9, 39e9, "all", "https://mistral.ai/news/mixtral-8x22b (141B total, 39B active)"),
    "mixtral-8x7b": (46.7e9, 12.9e9, "all", "https://mistral.ai/news/mixtral-of-experts (46.7B total, 12.9B per token)"),
    "opt-6.7b": (6.7e9, None, None, "https://arxiv.org/abs/2205.01068 (OPT paper, Table 1)"),
    "phi-3-mini-4k": (3.8e9, None, None, "https://arxiv.org/abs/2404.14219 (Phi-3 report: 3.8B)"),
    "qwen1.5-moe-a2.7b": (14.3e9, 2.7e9, "all", "https://huggingface.co/Qwen/Qwen1.5-MoE-A2.7B (model card: 14.3B / 2.7B)"),
    "qwen2.5-72b": (72.7e9, None, None, "https://huggingface.co/Qwen/Qwen2.5-72B (model card: 72.7B)"),
    "qwen2.5-7b": (7.61e9, None, None, "https://huggingface.co/Qwen/Qwen2.5-7B (model card: 7.61B)"),
    "qwen3-30b-a3b": (30.5e9, 3.3e9, "all", "https://huggingface.co/Qwen/Qwen3-30B-A3B (model card: 30.5B / 3.3B)"),
    "qwen3-8b": (8.2e9, None, None, "https://huggingface.co/Qwen/Qwen3-8B (model card: 8.2B)"),
    # issue 14: new architectures
    "qwen3-next-80b-a3b": (80e9, 3e9, "no_embeddings", "https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct (model card: 80B / 3B; 79,674,391,296 in the safetensors headers)"),
    "mamba-codestral-7b": (7285403648.0, None, None, "https://mistral.ai/news/codestral-mamba (7,285,403,648 parameters)"),
    "llama-4-maverick": (400e9, 17e9, "all", "https://ai.meta.com/blog/llama-4-multimodal-intelligence/ (400B total, 17B active)"),
    "deepseek-v3.2-exp": (671e9, 37e9, "no_input_embedding", "https://github.com/deepseek-ai/DeepSeek-V3.2-Exp (V3.1-Terminus architecture + DSA: 671B / 37B)"),
    "glm-4.5-air": (106e9, 12e9, "no_embeddings", "https://huggingface.co/zai-org/GLM-4.5-Air (106B total, 12B active)"),
    "olmo-2-7b": (7.3e9, None, None, "https://huggingface.co/allenai/OLMo-2-1124-7B (7.3B)"),
    "command-r": (35e9, None, None, "https://huggingface.co/CohereForAI/c4ai-command-r-v01 (35 billion parameters)"),
    "gpt-j-6b": (6053381344.0, None, None, "https://huggingface.co/EleutherAI/gpt-j-6b (n_parameters 6,053,381,344)"),
    "granite-3.1-8b": (8.1e9, None, None, "https://huggingface.co/ibm-granite/granite-3.1-8b-base (architecture table: 8.1B)"),
    "qwen3-235b-a22b": (235e9, 22e9, "all", "https://huggingface.co/Qwen/Qwen3-235B-A22B (model card: 235B / 22B)"),
    "qwen3-32b": (32.8e9, None, None, "https://huggingface.co/Qwen/Qwen3-32B (model card: 32.8B)"),
    "qwen2.5-32b": (32.5e9, None, None, "https://huggingface.co/Qwen/Qwen2.5-32B (model card: 32.5B)"),
    "jamba-v0.1": (52e9, 12e9, "all", "https://arxiv.org/abs/2403.19887 (Jamba paper: 12B active of 52B)"),
    "qwen2.5-3b": (3.09e9, None, None, "https://huggingface.co/Qwen/Qwen2.5-3B (model card: 3.09B)"),
    "qwen2.5-14b": (14.7e9, None, None, "https://huggingface.co/Qwen/Qwen2.5-14B (model card: 14.7B)"),
    "gemma-3-27b": (27.016e9, None, None, "https://arxiv.org/abs/2503.19786 (Gemma 3 report Table 1: 1,416M embedding + 25,600M non-embedding)"),
    "gemma-3-12b": (11.771e9, None, None, "https://arxiv.org/abs/2503.19786 (Gemma 3 report Table 1: 1,012M embedding + 10,759M non-embedding)"),
    "deepseek-r1": (671e9, 37e9, "no_input_embedding", "https://huggingface.co/deepseek-ai/DeepSeek-R1 (671B / 37B, DeepSeek-V3 architecture)"),
    "falcon-180b": (180e9, None, None, "https://arxiv.org/abs/2311.16867 (The Falcon Series of Open Language Models: 180B)"),
    "granite-4.0-h-small": (32e9, 9e9, "all", "https://huggingface.co/ibm-granite/granite-4.0-h-small (model card: 32B total, 9B active)"),
    "nemotron-3-nano-30b-a3b": (31.6e9, 3.2e9, "no_input_embedding", "https://huggingface.co/nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16 (31.6B total, 3.2B active; 3.6B including embeddings)"),
    "command-a": (111e9, None, None, "https://huggingface.co/CohereLabs/c4ai-command-a-03-2025 (model card: 111 billion parameters)"),
    "gemma-3-4b": (3.884e9, None, None, "https://arxiv.org/abs/2503.19786 (Gemma 3 report Table 1: 675M embedding + 3,209M non-embedding; 417M vision encoder not decoded)"),
    # issue 28: new model types and checkpoints as published
    "minimax-m2.5": (230e9, 10e9, "no_embeddings", "https://huggingface.co/MiniMaxAI/MiniMax-M2.5 (MiniMax-M2 model card: 230B total, 10B active; 229B on the model page)"),
    "qwen3.5-397b-a17b": (397e9, 17e9, "all", "https://huggingface.co/Qwen/Qwen3.5-397B-A17B (model card: 397B total, 17B activated)"),
    "glm-5": (744e9, 40e9, "no_embeddings", "https://huggingface.co/docs/transformers/model_doc/glm_moe_dsa (GLM-5: 744B parameters, 40B active)"),
    "glm-4.7-flash": (30e9, 3e9, "no_embeddings", "https://huggingface.co/zai-org/GLM-4.7-Flash (model card: a 30B-A3B MoE model)"),
    "qwen3-32b-fp8": (32.8e9, None, None, "https://huggingface.co/Qwen/Qwen3-32B (model card: 32.8B; the FP8 checkpoint has the same architecture)"),
    "olmo-2-32b": (32e9, None, None, "https://huggingface.co/allenai/OLMo-2-0325-32B (model card size table: OLMo 2-32B)"),
    # issue 28/26: Kimi-K2 and Kimi-K2.5 (see ROUNDED_TOTAL for the total's tolerance)
    "kimi-k2": (1e12, 32e9, "no_input_embedding", "https://huggingface.co/moonshotai/Kimi-K2-Instruct (model card: 1T total, 32B activated)"),
    "kimi-k2.5": (1e12, 32e9, "no_input_embedding", "https://huggingface.co/moonshotai/Kimi-K2.5 (model card: 1T total, 32B activated)"),
}

# Totals stated with one significant digit and further than 1% from the count (DESIGN.md section 4
# asks for 1%): the count must round to the stated figure at its precision, and the gap is said here.
#   kimi-k2, kimi-k2.5: 1,026.41B counted -> rounds to "1T", 2.6% above it.  The technical report's
#                       1.04T (arXiv:2507.20534) is 1.3% above the count; the hub's safetensors count of
#                       Kimi-K2-Instruct, 1026.5B, is the count plus the FP8 block scales (test below).
ROUNDED_TOTAL = {"kimi-k2": 1e12, "kimi-k2.5": 1e12}

# Stated with two significant digits and not within 1% of any convention's count; the count
# must still lie within one unit of the stated figure's last digit (the publisher's precision).
#   deepseek-v2-lite: 2.451B without the input embedding (2.661B with it) -> "2.4B" is 2.1% low;
#   deepseek-v3:      36.63B without the input embedding (37.55B with it) -> "37B" is 1.0% high;
#   qwen3-30b-a3b:    3.353B with the embeddings (3.042B without the input one) -> "3.3B" is 1.6% low.
#   llama-4-maverick: 17.19B with the embeddings (16.15B without the input one) -> "17B" is 1.1% low;
#   deepseek-v3.2-exp: 37.48B without the input embedding (V3 + the 0.85B indexer) -> "37B" is 1.3% low.
# Stated with one or two significant digits, further from the count than 1% under every
# convention: the count without both embedding matrices must round to the stated figure.
#   qwen3-next-80b-a3b: 3.253B without the embeddings (3.564B without the input one, 3.875B with
#                       both) -> rounds to "3B" (the "A3B" of the name), 8.4% over it;
#   glm-4.5-air:        12.18B without the embeddings (12.80B without the input one) -> rounds to
#                       "12B", 1.5% over it.
#   granite-4.0-h-small: 8.80B with the (tied) embedding matrix -> rounds to "9B", 2.2% under it.
#   minimax-m2.5:       9.80B without the embeddings (10.42B without the input one) -> rounds to
#                       "10B", 2.0% under it.
#   glm-4.7-flash:      3.26B without the embeddings (3.58B without the input one) -> rounds to "3B"
#                       (the "A3B" of the name), 8.7% over it.
#   qwen3.5-397b-a17b:  17.35B with the embeddings (16.33B without the input one) -> "17B" is 2.0% low.
ROUNDED_ACTIVE = {"qwen3-next-80b-a3b": 1e9, "glm-4.5-air": 1e9, "granite-4.0-h-small": 1e9, "minimax-m2.5": 1e9,
                  "glm-4.7-flash": 1e9}
ACTIVE_STATED_UNIT = {"deepseek-v2-lite": 0.1e9, "deepseek-v3": 1e9, "qwen3-30b-a3b": 0.1e9,
                      "llama-4-maverick": 1e9, "deepseek-v3.2-exp": 1e9, "deepseek-r1": 1e9, "qwen3.5-397b-a17b": 1e9}


def test_every_bundled_model_is_listed_here():
    assert sorted(PUBLISHED) == rd.list_models()


def _active(model: rd.Model, convention: str) -> int:
    if convention == "no_input_embedding":
        return model.active_parameter_count - model.vocab_size * model.hidden_size
    if convention == "no_embeddings":
        return model.active_parameter_count - 2 * model.vocab_size * model.hidden_size
    return model.active_parameter_count


@pytest.mark.parametrize("model_id", sorted(PUBLISHED))
def test_parameter_count_matches_the_publisher(model_id):
    total, active, convention, source = PUBLISHED[model_id]
    meta = model_metadata(model_id)
    assert meta["params_total"] == total, f"{model_id}: _roofline.params_total differs from the cited figure ({source})"
    assert meta["params_active"] == active
    model = rd.load_model(model_id)
    if model_id in ROUNDED_TOTAL:
        assert round(model.parameter_count / ROUNDED_TOTAL[model_id]) * ROUNDED_TOTAL[model_id] == total, source
        assert model.parameter_count == pytest.approx(total, rel=0.03), source
    else:
        assert model.parameter_count == pytest.approx(total, rel=0.01), source
    assert model.is_moe == (active is not None)
    if active is None:
        assert model.active_parameter_count == model.parameter_count
        return
    ours = _active(model, convention)
    if model_id in ROUNDED_ACTIVE:
        assert round(ours / ROUNDED_ACTIVE[model_id]) * ROUNDED_ACTIVE[model_id] == active, source
    elif model_id in ACTIVE_STATED_UNIT:
        assert abs(ours - active) < ACTIVE_STATED_UNIT[model_id], source
        assert ours == pytest.approx(active, rel=0.022), source
    else:
        assert ours == pytest.approx(active, rel=0.01), source


@pytest.mark.parametrize("model_id, exact", [
    ("llama-2-7b", 6_738_415_616),       # transformers' num_parameters() of Llama-2-7b-hf
    ("gpt2", 124_439_808),               # transformers' num_parameters() of gpt2 (tied lm_head once)
    ("gemma-3-1b", 999_885_952),         # keras-hub gemma3_1b preset
    ("gpt-oss-120b", 116_829_154_368),   # model card Table 1 116.83B (attention sinks, 2304, left out)
])
def test_exact_counts(model_id, exact):
    assert rd.load_model(model_id).parameter_count == exact


def test_gemma_7b_embedding_and_non_embedding_split():
    # Gemma paper Table 2: 7,751,248,896 non-embedding parameters (embedding uses vocab 256128,
    # the checkpoint 256000 rows)
    m = rd.load_model("gemma-7b")
    assert m.parameter_count - m.vocab_size * m.hidden_size == 7_751_248_896


def test_nemotron_3_nano_active_with_the_embeddings():
    # NVIDIA: "3.2B active parameters (3.6B including embeddings)": both conventions within 1%
    m = rd.load_model("nemotron-3-nano-30b-a3b")
    assert m.active_parameter_count == pytest.approx(3.6e9, rel=0.01)
    assert m.active_parameter_count - m.vocab_size * m.hidden_size == pytest.approx(3.2e9, rel=0.01)


def test_qwen_non_embedding_counts():
    # Qwen model cards state non-embedding totals: 6.53B (Qwen2.5-7B), 29.9B (Qwen3-30B-A3B)
    for model_id, stated in (("qwen2.5-7b", 6.53e9), ("qwen3-30b-a3b", 29.9e9), ("qwen3-8b", 6.95e9)):
        m = rd.load_model(model_id)
        assert m.parameter_count - 2 * m.vocab_size * m.hidden_size == pytest.approx(stated, rel=0.01), model_id


def test_kimi_k2_count_against_the_hub_and_the_report():
    # 1,026,408,209,408 counted (tests/architecture/test_hf_published.py derives it by hand); the hub's
    # safetensors total of moonshotai/Kimi-K2-Instruct is 1026.5B (as listed at
    # drose.io/aitools/tools/kimi-k2-instruct): the count plus one fp32 scale per 128 x 128 FP8 block
    k2, k25 = rd.load_model("kimi-k2"), rd.load_model("kimi-k2.5")
    assert k2.parameter_count == k25.parameter_count == 1_026_408_209_408
    assert k2.parameter_count == pytest.approx(1026.5e9, rel=2e-4)
    assert k2.parameter_count == pytest.approx(1.04e12, rel=0.014)   # technical report: 1.04T
    # the checkpoints as published: FP8 blocks (K2), int4 routed experts with the gate in bf16 (K2.5)
    assert k2.weight_format.name == "fp8_e4m3-b128x128" and k2.group_format("router").name == "bf16"
    assert k25.group_format("experts").name == "ct-int4-g32-sym" and k25.group_format("router").name == "bf16"
    assert (k2.max_position_embeddings, k25.max_position_embeddings) == (131072, 262144)
