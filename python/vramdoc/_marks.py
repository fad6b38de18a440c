"""Step marks for `vramdoc run`: lines appended to the marker file it names in $VRAMDOC_MARK_FILE.

The line format is the one vramdoc's own step hook writes (docs/run-analyze.md, "Step marks"):
    step 12 allocated=1048576 reserved=2097152 peak=3145728 pid=4242 rank=1
(peak: torch.cuda.memory_stats()["allocated_bytes.all.peak"], the allocator's largest allocated bytes
since the process started or the job's own reset_peak_memory_stats(); never reset here. `vramdoc probe`
reads it as the trial's allocated peak, docs/probe.md "Round 5".)
Outside `vramdoc run` (no $VRAMDOC_MARK_FILE) every call returns at once and writes nothing.
"""
from __future__ import annotations

import os
import sys
from typing import Optional

_state = {"fd": -1, "pid": 0, "path": "", "step": 0, "tag": ""}

# Set once the job marks steps itself: vramdoc's automatic step hook (the optimizer post-hook that
# `vramdoc run` injects) then stays quiet in this process, so steps are not marked twice.
manual_steps = False


def _rank_tag() -> str:
    for name in ("RANK", "LOCAL_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return f" rank={value}"
    return ""


def _marker_fd() -> int:
    """The marker file, opened for appending once per process; -1 outside `vramdoc run`."""
    path = os.environ.get("VRAMDOC_MARK_FILE", "")
    pid = os.getpid()
    if _state["pid"] == pid and _state["path"] == path:
        return _state["fd"]
    _state.update(pid=pid, path=path, fd=-1, tag=f" pid={pid}" + _rank_tag())
    if path:
        try:
            # vramdoc run created the file (private, 0600); never create or follow a link here.
            _state["fd"] = os.open(path, os.O_WRONLY | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0))
        except OSError:
            _state["fd"] = -1
    return _state["fd"]


def _torch_bytes() -> str:
    """allocated= reserved= peak= from PyTorch's caching allocator, when torch has set up CUDA (the
    fields of vramdoc's own step hook, src/backends/run/sitecustomize.py), from one memory_stats()
    call (host-side counters: no CUDA synchronisation; a missing counter reads 0, as in
    memory_allocated()). peak= is left out when the stats lack it, and a torch without
    memory_stats() gives memory_allocated() and memory_reserved() alone."""
    torch = sys.modules.get("torch")
    try:
        if torch is None or not torch.cuda.is_initialized():
            return ""
        if not hasattr(torch.cuda, "memory_stats"):
            return f" allocated={torch.cuda.memory_allocated()} reserved={torch.cuda.memory_reserved()}"
        stats = torch.cuda.memory_stats()
        text = f" allocated={int(stats.get('allocated_bytes.all.current', 0))} reserved={int(stats.get('reserved_bytes.all.current', 0))}"
        peak = stats.get("allocated_bytes.all.peak")
        return text + (f" peak={int(peak)}" if peak is not None else "")
    except Exception:  # a broken or stand-in torch must never break the job
        pass
    return ""


def claim_steps() -> None:
    """Says that this process marks its steps itself (an integration's callback does it at
    construction, before the first step), so vramdoc's automatic step hook stays quiet."""
    global manual_steps
    manual_steps = True


def mark(label: str) -> None:
    """Appends a free-text mark ("eval begin", "epoch 3") with PyTorch's bytes, under vramdoc run."""
    fd = _marker_fd()
    if fd < 0:
        return
    text = " ".join(str(label).split())[:120] or "mark"
    try:
        os.write(fd, (text + _torch_bytes() + _state["tag"] + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


def mark_step(step: Optional[int] = None) -> None:
    """Marks the end of training step `step` (default: one more than the last) under vramdoc run.

    Call it after optimizer.step(); it records torch.cuda.memory_allocated(), memory_reserved()
    and max_memory_allocated() (from memory_stats(): host-side counters, no CUDA synchronisation).
    Outside vramdoc run it does nothing."""
    claim_steps()
    if _marker_fd() < 0:
        return
    n = _state["step"] if step is None else int(step)
    _state["step"] = n + 1
    mark(f"step {n}")
