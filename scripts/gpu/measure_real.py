#!/usr/bin/env python3
"""One job measured on the GPU, unchanged, in this fresh process (the ground truth for the capture):
  python3 measure_real.py OUT.json OUT.txt.gz -- script.py ARGS...
MEASURE_CARD_BYTES (and MEASURE_OVERHEAD_BYTES, default 760 MiB) emulate a smaller card with
torch.cuda.set_per_process_memory_fraction: an out-of-memory error is recorded as error "oom".
OUT.json: peak_allocated / peak_reserved (torch.cuda.max_memory_*), driver_process_used (NVML's
number for this process at the end: segments are never returned, so it is the run's largest),
driver_after_init (right after the CUDA context exists), the phases; OUT.txt.gz: the caching
allocator's trace (alloc_trace.py's format, Python frames of blocks of 1 MiB and more) cut at the
same phase names as the capture's (stepN.forward / .backward / .optimizer / .zero_grad)."""
import json
import os
import runpy
import sys
import time
import traceback

import alloc_trace  # beside this file

import torch


def driver_used():
    """NVML's bytes for this process (pynvml, else nvidia-smi); None when neither tells."""
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(h):
            if p.pid == os.getpid() and p.usedGpuMemory is not None:
                return p.usedGpuMemory
    except Exception:
        pass
    try:
        import subprocess
        out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=20).stdout
        for line in out.splitlines():
            pid, mib = [x.strip() for x in line.split(",")]
            if int(pid) == os.getpid():
                return int(mib) << 20
    except Exception:
        pass
    return None


class Phases:
    """The capture's phase names, cut at allocation counts of the real allocator."""

    def __init__(self):
        self.base = self.count()
        self.cuts, self.phase, self.step, self.depth, self.in_backward = {}, "build", 0, 0, False
        self.first = None

    @staticmethod
    def count():
        return torch.cuda.memory_stats().get("allocation.all.allocated", 0)

    def mark(self, kind):
        name = "step%d.%s" % (self.step, kind)
        if name != self.phase:
            self.cuts.setdefault(self.count() - self.base, []).append(self.phase)
            self.phase = name

    def install(self):
        from torch.nn.modules import module as nn_module
        import torch.optim.optimizer as optim

        def pre(m, i):
            if self.in_backward:  # a checkpoint's recomputation: still the backward (as the capture counts it)
                return
            if self.depth == 0:
                self.mark("forward")
            self.depth += 1

        def post(m, i, o):
            if not self.in_backward:
                self.depth = max(0, self.depth - 1)

        nn_module.register_module_forward_pre_hook(pre)
        nn_module.register_module_forward_hook(post)

        def backward_of(original):
            def backward(*a, **k):
                self.depth = 0
                self.mark("backward")
                self.in_backward = True
                try:
                    return original(*a, **k)
                finally:
                    self.in_backward = False
            return backward

        torch.autograd.backward = backward_of(torch.autograd.backward)
        torch.autograd.grad = backward_of(torch.autograd.grad)

        def step_pre(o, a, k):
            self.depth = 0
            self.first = self.first if self.first is not None else id(o)
            self.mark("optimizer")

        def step_post(o, a, k):
            if id(o) == self.first:
                self.mark("zero_grad")
                self.step += 1

        optim.register_optimizer_step_pre_hook(step_pre)
        optim.register_optimizer_step_post_hook(step_post)


def main():
    out_json, out_trace, script = sys.argv[1], sys.argv[2], sys.argv[4]
    t0 = time.time()
    torch.cuda.init()
    torch.cuda.mem_get_info()  # the context
    card = int(os.environ.get("MEASURE_CARD_BYTES", "0") or 0)
    if card:  # a smaller card, emulated: the allocator may use the card's memory less the overhead
        overhead = int(os.environ.get("MEASURE_OVERHEAD_BYTES", str(760 << 20)))
        torch.cuda.set_per_process_memory_fraction((card - overhead) / torch.cuda.get_device_properties(0).total_memory)
    rec = dict(argv=sys.argv[4:], torch=torch.__version__, cuda=torch.version.cuda,
               cudnn=torch.backends.cudnn.version(), driver_after_init=driver_used())
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=4_000_000)
    phases = Phases()
    phases.install()
    sys.argv = sys.argv[4:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except torch.OutOfMemoryError as e:
        rec.update(error="oom", message=str(e)[:400])
    except SystemExit as e:
        if e.code not in (None, 0):
            rec.update(error="exit %s" % e.code)
    except BaseException as e:
        rec.update(error=type(e).__name__, message=str(e)[:400], tb=traceback.format_exc()[-2000:])
    torch.cuda.synchronize()
    phases.cuts.setdefault(phases.count() - phases.base, []).append(phases.phase)
    rec.update(peak_allocated=torch.cuda.max_memory_allocated(), peak_reserved=torch.cuda.max_memory_reserved(),
               allocated_end=torch.cuda.memory_allocated(), reserved_end=torch.cuda.memory_reserved(),
               driver_process_used=driver_used(), steps=phases.step, wall=time.time() - t0)
    try:
        snap = torch.cuda.memory._snapshot()
        events = snap.get("device_traces", [[]])[0]
        rec["trace_events"] = alloc_trace.write(out_trace, events, phases.cuts, frames=4)
    except Exception as e:
        rec["trace_error"] = "%s: %s" % (type(e).__name__, e)
    with open(out_json, "w") as f:
        json.dump(rec, f)
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
