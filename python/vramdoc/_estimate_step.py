"""vramdoc.estimate_step: the capture of `vramdoc estimate -- python train.py`, for code in a
notebook. The step runs in a forked child with CUDA faked (vramdoc/_capture.py), so this process's
torch is left as it was; the binary replays the trace (`vramdoc estimate --from-trace`)."""
from __future__ import annotations

import os
import signal
import tempfile
import time
from typing import Any, Callable, Dict, Optional

from vramdoc._api import VramdocError, options_to_argv, run_json


def _child(path: str, step: Callable[..., Any], setup: Optional[Callable[[], Any]], steps: int) -> None:
    from vramdoc import _capture

    settings = _capture.settings_from_env()
    settings.update(steps=steps, exit_when_done=False)
    cap = _capture.start(path, settings)
    try:
        state = setup() if setup is not None else None
        for _ in range(steps):
            step(state) if setup is not None else step()
        cap.writer.comment("phase " + cap.phase)
        cap.finish("steps")
        code = 0
    except BaseException as e:  # the parent reads what was reached from the trace
        cap.writer.comment("error %s %s: %s" % (_capture._ME, type(e).__name__, e))
        cap.writer.comment("phase " + cap.phase)
        cap.finish("error")
        code = 1
    os._exit(code)


def estimate_step(step: Callable[..., Any], *, steps: int = 3, setup: Optional[Callable[[], Any]] = None,
                  timeout: float = 600, **options: Any) -> Dict[str, Any]:
    """What `vramdoc estimate -- python train.py` reports, for `step` run `steps` times on a faked GPU.

    step: one training (or inference) step; with `setup`, it is called as step(setup()'s result).
    setup: builds the model and optimizer once, before the steps (e.g. lambda: make_model().cuda()).
    Nothing of this process's GPU is used, and tensors already on a real GPU cannot be captured:
    build the model inside `setup` (or keep it on the CPU). Other keyword arguments are estimate's
    options: gpu="RTX 4090", gpu_memory="24GiB". Needs a system with fork() (Linux, macOS)."""
    if not hasattr(os, "fork"):
        raise VramdocError("estimate_step needs os.fork (Linux or macOS); run `vramdoc estimate -- python train.py` instead")
    with tempfile.TemporaryDirectory(prefix="vramdoc-step-") as tmp:
        path = os.path.join(tmp, "capture.trace")
        pid = os.fork()
        if pid == 0:
            _child(path, step, setup, steps)
        deadline = time.monotonic() + timeout
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                break
            time.sleep(0.05)
        if not os.path.exists(path):
            raise VramdocError("the capture wrote no trace (the step never imported torch?)")
        return run_json(["estimate", "--json", "--from-trace", path, "--steps", str(steps), *options_to_argv(options)])
