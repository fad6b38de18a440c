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


# Issue 32, point 6: the first thing a PyTorch user tries is analyze(torch.cuda.memory._snapshot()),
# a dict; it was read as a list of file names. A recorded snapshot, loaded as torch returns it,
# must give what its file gives.
def test_analyze_a_snapshot_dict_as_torch_returns_it():
    import pickle
    path = DATA / "snapshots" / "h200_leak.pickle"
    with open(path, "rb") as f:
        snapshot = pickle.load(f)  # plain dicts and lists, like torch.cuda.memory._snapshot()
    assert isinstance(snapshot, dict) and "segments" in snapshot
    by_dict, by_file = vramdoc.analyze(snapshot), vramdoc.analyze(path)
    assert by_dict["verdict"] == by_file["verdict"] == "leak"
    assert by_dict["name"] == by_dict["snapshot"]["source"] == "the snapshot dict (torch.cuda.memory._snapshot())"
    for report in (by_dict, by_file):  # the file's name, or the dict's
        report.pop("name"), report["snapshot"].pop("source")
    assert by_dict == by_file
    assert vramdoc.analyze([DATA / "timelines" / "leak_tensor.json", snapshot])["snapshot"]["own_verdict"]["verdict"]


def test_a_dict_that_is_not_a_snapshot_is_a_value_error():
    with pytest.raises(ValueError, match=r"^vramdoc.analyze\(\): a dict must be a PyTorch memory snapshot"):
        vramdoc.analyze({"model_type": "llama"})


# Regression: errors came back in command-line words ("unknown option '--bach'").
def test_an_unknown_keyword_is_a_type_error_in_python_words():
    with pytest.raises(TypeError) as bad:
        vramdoc.estimate(config=str(CONFIG), bach=4)
    assert str(bad.value) == "vramdoc.estimate() got an unexpected keyword argument 'bach'; did you mean 'batch'?"
    assert isinstance(bad.value, vramdoc.VramdocError) and bad.value.exit_code == 2
    assert "--bach" in bad.value.cli_message  # what the binary said is kept
    with pytest.raises(vramdoc.VramdocArgumentError, match="unexpected keyword argument 'trace_dirr'; did you mean 'trace_dir'"):
        vramdoc.analyze(DATA / "timelines" / "stable.json", trace_dirr="x")


def test_a_refused_value_names_the_keyword_not_the_option():
    with pytest.raises(ValueError) as bad:
        vramdoc.estimate(config=str(CONFIG), mode="nonsense")
    message = str(bad.value)
    assert message.startswith("vramdoc.estimate(): ") and "nonsense" in message
    assert "--" not in message, message
    with pytest.raises(vramdoc.VramdocValueError) as both:
        vramdoc.estimate(config=str(CONFIG), model="llama-3-8b")
    assert "config" in str(both.value) and "--config" not in str(both.value)


# Regression: max_batch was {"value": 0} when nothing fits, though unknown is null everywhere else.
def test_max_batch_is_none_when_nothing_fits():
    none = vramdoc.estimate(model="llama-3-70b", mode="train", gpu="RTX 3060 12GB", max_batch=True, max_seq=True)
    assert none["max_batch"] is None and none["max_seq"] is None
    some = vramdoc.estimate(model="gpt2", gpu="RTX 4090", max_batch=True)
    assert some["max_batch"]["value"] > 0
    assert "max_batch" not in vramdoc.estimate(model="gpt2")
