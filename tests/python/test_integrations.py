"""The training-loop integrations with stand-in transformers / lightning base classes (the real
libraries are exercised by tests/gpu/python_integrations.sh on the GPU machine), and the
out-of-memory advice against the real vramdoc binary."""
import importlib
import io
import os
import sys
import types

import pytest

from vramdoc import _marks
from vramdoc.integrations import OomAdvisor, is_out_of_memory

MiB = 1 << 20


class FakeCuda:
    def __init__(self):
        self.allocated, self.reserved = 512 * MiB, 1024 * MiB

    def is_initialized(self):
        return True

    def memory_allocated(self):
        return self.allocated

    def memory_reserved(self):
        return self.reserved

    def current_device(self):
        return 0

    def get_device_properties(self, index):
        return types.SimpleNamespace(total_memory=80 * 1024 * MiB)


@pytest.fixture
def torch(monkeypatch):
    module = types.ModuleType("torch")
    module.cuda = FakeCuda()

    class OutOfMemoryError(RuntimeError):
        pass

    module.OutOfMemoryError = OutOfMemoryError
    monkeypatch.setitem(sys.modules, "torch", module)
    return module


@pytest.fixture
def marker(monkeypatch, tmp_path):
    importlib.reload(_marks)
    path = tmp_path / "marks"
    path.write_text("")
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(path))
    monkeypatch.delenv("VRAMDOC_TIMELINE", raising=False)
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    yield path
    importlib.reload(_marks)


def stub_module(monkeypatch, name, **attributes):
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def labels(path):
    return [line.split(" allocated=")[0] for line in path.read_text().splitlines()]


def test_huggingface_callback_marks_steps_and_eval(monkeypatch, torch, marker):
    stub_module(monkeypatch, "transformers", TrainerCallback=type("TrainerCallback", (), {}))
    monkeypatch.delitem(sys.modules, "vramdoc.integrations.huggingface", raising=False)
    from vramdoc.integrations.huggingface import VramdocCallback

    callback, state = VramdocCallback(), types.SimpleNamespace(global_step=0)
    callback.on_train_begin(None, state, None)
    assert sys.excepthook == callback._excepthook
    for step in (1, 2):
        state.global_step = step
        callback.on_step_end(None, state, None)
    callback.on_prediction_step(None, state, None)
    callback.on_prediction_step(None, state, None)
    callback.on_evaluate(None, state, None)
    state.global_step = 3
    callback.on_step_end(None, state, None)
    callback.on_train_end(None, state, None)
    assert sys.excepthook != callback._excepthook
    assert labels(marker) == ["step 1", "step 2", "eval begin", "eval end", "step 3"]


def test_lightning_callback_marks_each_optimizer_step_once(monkeypatch, torch, marker):
    callbacks = stub_module(monkeypatch, "lightning.pytorch.callbacks", Callback=type("Callback", (), {}))
    stub_module(monkeypatch, "lightning.pytorch", callbacks=callbacks)
    stub_module(monkeypatch, "lightning")
    monkeypatch.delitem(sys.modules, "vramdoc.integrations.lightning", raising=False)
    from vramdoc.integrations.lightning import VramdocCallback

    callback, trainer = VramdocCallback(), types.SimpleNamespace(global_step=0)
    callback.on_train_start(trainer, None)
    # Gradient accumulation, two batches a step: global_step after each batch (Lightning 2.x).
    for batch_index, step in enumerate([0, 1, 1, 2, 2]):
        trainer.global_step = step
        callback.on_train_batch_end(trainer, None, None, None, batch_index)
    callback.on_validation_start(trainer, None)
    callback.on_validation_end(trainer, None)
    assert labels(marker) == ["step 1", "step 2", "eval begin", "eval end"]
    resumed = VramdocCallback()  # from a checkpoint at step 1000: its first batch takes no step yet
    trainer.global_step = 1000
    resumed.on_train_start(trainer, None)
    for batch_index, step in enumerate([1000, 1001]):
        trainer.global_step = step
        resumed.on_train_batch_end(trainer, None, None, None, batch_index)
    assert labels(marker)[-1] == "step 1001" and "step 1000" not in labels(marker)
    stream = io.StringIO()
    callback.advisor.stream = stream
    callback.on_exception(trainer, None, ValueError("not memory"))
    assert stream.getvalue() == ""


def oom(torch):
    return torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 20.00 GiB. GPU 0 has a total capacity "
                                  "of 79.11 GiB of which 1.50 GiB is free.")


def test_out_of_memory_is_recognised(torch):
    assert is_out_of_memory(oom(torch))
    assert is_out_of_memory(RuntimeError("CUDA error: out of memory"))
    assert not is_out_of_memory(ValueError("shape mismatch"))


def test_advice_for_a_leak(torch, marker):
    advisor, stream = OomAdvisor(), io.StringIO()
    advisor.stream = stream
    for step in range(60):
        torch.cuda.allocated = 512 * MiB + step * 64 * MiB
        torch.cuda.reserved = torch.cuda.allocated + 256 * MiB
        advisor.record_step(step)
    diagnosis = advisor.report(oom(torch))
    assert diagnosis["verdict"] == "leak", diagnosis
    assert "verdict: leak" in stream.getvalue()
    assert advisor.report(oom(torch)) is None  # once per process


def test_advice_for_insufficient_memory(torch, marker):
    advisor, stream = OomAdvisor(), io.StringIO()
    advisor.stream = stream
    torch.cuda.allocated, torch.cuda.reserved = 70 * 1024 * MiB, 72 * 1024 * MiB
    for step in range(3):  # level from the first step: too big, not growing
        advisor.record_step(step)
    diagnosis = advisor.report(oom(torch))
    assert diagnosis["verdict"] == "insufficient", diagnosis
    assert "remedies" in diagnosis and diagnosis["remedies"]
    assert "  - " in stream.getvalue()


def test_without_readings_it_says_how_to_get_them(torch, marker):
    advisor, stream = OomAdvisor(), io.StringIO()
    advisor.stream = stream
    assert advisor.report(oom(torch)) is None
    assert "vramdoc run" in stream.getvalue()
