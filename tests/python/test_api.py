"""vramdoc's Python API against the binary it wraps: the same JSON as the CLI, the same errors.

Run by tests/cli/python_api.sh with VRAMDOC_BINARY (the build's binary) and PYTHONPATH=python/.
"""
import json
import os
import subprocess
from pathlib import Path

import pytest

import vramdoc
from vramdoc._api import options_to_argv

SRC = Path(__file__).resolve().parents[2]
DATA = SRC / "tests" / "data"
CONFIG = DATA / "estimator" / "configs" / "llama-160m.json"


def cli_json(*argv):
    out = subprocess.run([vramdoc.binary_path(), *argv], stdout=subprocess.PIPE, text=True)
    return json.loads(out.stdout)


def test_estimate_equals_the_cli_json():
    api = vramdoc.estimate(config=str(CONFIG), mode="train", precision="amp-bf16", batch=8, seq=1024,
                           grad_checkpointing=True)
    cli = cli_json("estimate", "--json", "--config", str(CONFIG), "--mode", "train", "--precision", "amp-bf16",
                   "--batch", "8", "--seq", "1024", "--grad-checkpointing")
    assert api == cli
    assert api["process_bytes"] > api["peak_allocated_bytes"] > 0


def test_estimate_preset_and_path_like():
    assert vramdoc.estimate(model="llama-3-8b", mode="lora", batch=2, seq=512) == cli_json(
        "estimate", "--json", "--model", "llama-3-8b", "--mode", "lora", "--batch", "2", "--seq", "512")
    assert vramdoc.estimate(CONFIG, mode="infer") == cli_json("estimate", "--json", "--config", str(CONFIG),
                                                               "--mode", "infer")


def test_estimate_from_a_dict_and_a_config_object():
    fields = json.loads(CONFIG.read_text())
    by_path = vramdoc.estimate(config=str(CONFIG), batch=2, seq=256)

    class ConfigLike:  # what transformers' PretrainedConfig offers: to_dict() and model_type
        model_type = fields["model_type"]

        def to_dict(self):
            return {k: v for k, v in fields.items() if k != "model_type"}

    for config in (fields, ConfigLike()):
        got = vramdoc.estimate(config=config, batch=2, seq=256)
        assert got["process_bytes"] == by_path["process_bytes"]
        assert got["breakdown"] == by_path["breakdown"]


def test_model_id_from_the_local_cache(tmp_path, monkeypatch):
    snapshot = tmp_path / "hub" / "models--acme--tiny-llama" / "snapshots" / "0123abcd"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(CONFIG.read_text())
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    by_id = vramdoc.estimate(config="acme/tiny-llama", batch=2, seq=256)
    assert by_id["process_bytes"] == vramdoc.estimate(config=str(CONFIG), batch=2, seq=256)["process_bytes"]
    with pytest.raises(vramdoc.VramdocError) as missing:
        vramdoc.estimate(config="acme/not-cached")
    assert "not in the local Hugging Face cache" in missing.value.message


def test_usage_errors_raise_with_vramdoc_message():
    with pytest.raises(vramdoc.VramdocError) as bad:
        vramdoc.estimate(config=str(CONFIG), mode="nonsense")
    assert bad.value.exit_code == 2
    assert "nonsense" in bad.value.message


def test_analyze_gives_the_verdict():
    assert vramdoc.analyze(DATA / "timelines" / "leak_tensor.json")["verdict"] == "leak"
    assert vramdoc.analyze(str(DATA / "timelines" / "stable.json"))["verdict"] == "stable"


def test_keyword_arguments_become_options():
    argv = options_to_argv({"batch": 4, "grad_checkpointing": True, "max_batch": False, "gpu": None,
                            "lora_targets": "q_proj,v_proj", "path": Path("/tmp/x")})
    assert argv == ["--batch", "4", "--grad-checkpointing", "--lora-targets", "q_proj,v_proj", "--path", "/tmp/x"]
    assert options_to_argv({"only": [1, 2]}) == ["--only", "1", "--only", "2"]


def test_version_names_the_binary():
    assert vramdoc.version().startswith("vramdoc ")


def test_binary_override_must_be_a_native_program(tmp_path, monkeypatch):
    script = tmp_path / "vramdoc"
    script.write_text("#!/bin/sh\necho not me\n")
    script.chmod(0o755)
    real = vramdoc.binary_path()
    monkeypatch.setenv("VRAMDOC_BINARY", str(script))
    monkeypatch.setenv("PATH", f"{tmp_path}:{os.path.dirname(real)}")
    assert vramdoc.binary_path() == real  # a launcher script is never taken for the binary
