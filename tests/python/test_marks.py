"""mark_step() and mark(): the marker lines `vramdoc run` reads, and nothing outside it."""
import importlib
import os
import sys
import types

import pytest

import vramdoc
from vramdoc import _marks


@pytest.fixture
def fresh_marks(monkeypatch):
    importlib.reload(_marks)
    monkeypatch.setattr(vramdoc, "mark_step", _marks.mark_step)
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        monkeypatch.delenv(name, raising=False)
    yield _marks
    importlib.reload(_marks)


def fake_torch(allocated, reserved, peak=None):
    """torch with CUDA initialised, its memory_stats() as torch 1.13+ names them (no GPU needed)."""
    stats = {"allocated_bytes.all.current": allocated, "reserved_bytes.all.current": reserved}
    if peak is not None:
        stats["allocated_bytes.all.peak"] = peak
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_initialized=lambda: True, memory_stats=lambda: dict(stats))
    return torch


def test_outside_vramdoc_run_nothing_is_written(fresh_marks, monkeypatch, tmp_path):
    monkeypatch.delenv("VRAMDOC_MARK_FILE", raising=False)
    fresh_marks.mark_step()
    fresh_marks.mark("eval begin")
    assert list(tmp_path.iterdir()) == []


def test_step_lines_in_the_hook_format(fresh_marks, monkeypatch, tmp_path):
    marks = tmp_path / "marks"
    marks.write_text("")
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(marks))
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setitem(sys.modules, "torch", fake_torch(1048576, 2097152, 3145728))
    fresh_marks.mark_step()
    fresh_marks.mark_step()
    fresh_marks.mark_step(10)
    fresh_marks.mark("eval   begin\n")
    pid = os.getpid()
    # The step hook's format (src/backends/run/sitecustomize.py): peak= is the allocator's peak of
    # allocated bytes (memory_stats()["allocated_bytes.all.peak"]), what `vramdoc probe` reads.
    assert marks.read_text().splitlines() == [
        f"step 0 allocated=1048576 reserved=2097152 peak=3145728 pid={pid} rank=3",
        f"step 1 allocated=1048576 reserved=2097152 peak=3145728 pid={pid} rank=3",
        f"step 10 allocated=1048576 reserved=2097152 peak=3145728 pid={pid} rank=3",
        f"eval begin allocated=1048576 reserved=2097152 peak=3145728 pid={pid} rank=3",
    ]
    assert fresh_marks.manual_steps  # vramdoc's automatic step hook stands down in this process


def test_stats_without_a_peak_leave_peak_out(fresh_marks, monkeypatch, tmp_path):
    marks = tmp_path / "marks"
    marks.write_text("")
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(marks))
    monkeypatch.setitem(sys.modules, "torch", fake_torch(1048576, 2097152))
    fresh_marks.mark_step(2)
    assert marks.read_text() == f"step 2 allocated=1048576 reserved=2097152 pid={os.getpid()}\n"


def test_without_cuda_the_line_has_no_bytes(fresh_marks, monkeypatch, tmp_path):
    marks = tmp_path / "marks"
    marks.write_text("")
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(marks))
    monkeypatch.delitem(sys.modules, "torch", raising=False)
    fresh_marks.mark_step(5)
    assert marks.read_text() == f"step 5 pid={os.getpid()}\n"


def test_a_missing_or_linked_marker_file_is_never_created(fresh_marks, monkeypatch, tmp_path):
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(tmp_path / "absent"))
    fresh_marks.mark_step()
    assert not (tmp_path / "absent").exists()
    target = tmp_path / "target"
    target.write_text("")
    (tmp_path / "link").symlink_to(target)
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(tmp_path / "link"))
    fresh_marks.mark_step()
    assert target.read_text() == ""


def test_a_broken_torch_never_breaks_the_job(fresh_marks, monkeypatch, tmp_path):
    marks = tmp_path / "marks"
    marks.write_text("")
    monkeypatch.setenv("VRAMDOC_MARK_FILE", str(marks))
    torch = types.ModuleType("torch")
    torch.cuda = types.SimpleNamespace(is_initialized=lambda: 1 / 0)
    monkeypatch.setitem(sys.modules, "torch", torch)
    fresh_marks.mark_step(1)
    assert marks.read_text() == f"step 1 pid={os.getpid()}\n"
