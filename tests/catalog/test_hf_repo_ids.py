"""Hugging Face repository ids of the bundled models are accepted wherever a model id is (issue 28, item 5)."""

from __future__ import annotations

import json

import pytest

import roofline_decode as rd
from roofline_decode.catalog import bundled_id_of_repo
from roofline_decode.cli import main
from roofline_decode.errors import UnknownIdError


@pytest.mark.parametrize("model_id", rd.list_models())
def test_each_bundled_model_is_found_by_its_repository(model_id):
    repo = rd.model_metadata(model_id)["hf_repo"]
    assert bundled_id_of_repo(repo) == model_id
    assert bundled_id_of_repo(repo.upper()) == model_id  # the hub's ids are case-insensitive


@pytest.mark.parametrize(("repo", "model_id"), [
    ("meta-llama/Llama-3.1-8B-Instruct", "llama-3.1-8b"),
    ("meta-llama/Llama-2-7b-chat-hf", "llama-2-7b"),           # bundled from Llama-2-7b-hf
    ("mistralai/Mistral-7B-Instruct-v0.1", "mistral-7b-v0.1"),  # the suffix before the version
    ("google/gemma-3-12b-pt", "gemma-3-12b"),                   # bundled from gemma-3-12b-it
    ("moonshotai/Kimi-K2-Base", "kimi-k2"),                     # bundled from Kimi-K2-Instruct
    ("moonshotai/Kimi-K2.5", "kimi-k2.5"),
])
def test_chat_instruct_and_base_checkpoints_share_the_architecture(repo, model_id):
    assert bundled_id_of_repo(repo) == model_id


@pytest.mark.parametrize("repo", ["Qwen/Qwen3-8B-FP8", "TheBloke/Llama-2-7B-GGUF", "nobody/Qwen3-8B", "Qwen3-8B",
                                  "moonshotai/Kimi-K2-Thinking", "moonshotai/Kimi-K2-Instruct-0905", "a/b/c", "meta-llama/Llama-3.1-8B/config.json"])
def test_other_formats_owners_and_paths_are_not_matched(repo):
    assert bundled_id_of_repo(repo) is None


def test_a_bundled_fp8_checkpoint_is_matched_to_itself_not_to_its_bf16_original():
    assert bundled_id_of_repo("Qwen/Qwen3-32B-FP8") == "qwen3-32b-fp8"
    assert bundled_id_of_repo("Qwen/Qwen3-32B") == "qwen3-32b"


def test_load_model_and_the_floor_take_a_repository_id():
    assert rd.load_model("meta-llama/Llama-3.1-8B") is rd.load_model("llama-3.1-8b")
    by_repo = rd.decode_floor("meta-llama/Llama-3.1-8B-Instruct", "h100-sxm", batch=1, context=4096)
    assert float(by_repo.step_time_s) == float(rd.decode_floor("llama-3.1-8b", "h100-sxm", 1, 4096).step_time_s)
    with pytest.raises(UnknownIdError, match="unknown model id 'meta-llama/Llama-9'"):
        rd.load_model("meta-llama/Llama-9")


def test_a_local_folder_of_that_name_wins(tmp_path, monkeypatch):
    """A downloaded snapshot at ./org/name is read from disk, not replaced by the bundled copy."""
    folder = tmp_path / "meta-llama" / "Llama-3.1-8B"
    folder.mkdir(parents=True)
    config = {k: v for k, v in json.loads(rd.catalog._MODEL_DIR.joinpath("llama-3.1-8b.json").read_text()).items()
              if k != "_roofline"}
    config["num_hidden_layers"] = 2
    (folder / "config.json").write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    assert rd.load_model("meta-llama/Llama-3.1-8B").num_layers == 2


def test_the_cli_takes_a_repository_id(capsys):
    assert main(["floor", "--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100-sxm", "--batch", "1",
                 "--context", "4096"]) == 0
    assert "Llama-3.1-8B on h100-sxm" in capsys.readouterr().out
