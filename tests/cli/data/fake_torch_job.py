"""A stand-in training job on the stand-in PyTorch (tests/fakes/python): weights of 1 GiB, then
each step allocates $PER_ITEM bytes per batch item (default 100 MiB) through the allocator, so its
cap (set_per_process_memory_fraction) decides where it runs out of memory; it tells the fake NVML
(its process file, $PROCS) what the driver charges it: $FAKE_TORCH_CONTEXT plus the reserved bytes.
$CONTEXT_GROWTH bytes more context in the first step (kernels loaded lazily, as CUDA does).

    python3 fake_torch_job.py BATCH [STEPS]      (3 steps by default, then it exits by itself)
"""
import os
import sys
import time

import torch

batch = int(sys.argv[1])
steps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
per_item = int(os.environ.get("PER_ITEM", str(100 << 20)))
opt = torch.optim.SGD([])
weights = torch.empty_cuda(1 << 30)


def tell_driver():
    with open(os.environ["PROCS"], "a") as f:
        f.write("0 %d %d\n" % (os.getpid(), torch.cuda._CONTEXT + torch.cuda.memory_reserved()))


tell_driver()
time.sleep(0.05)
for step in range(steps):
    activations = torch.empty_cuda(batch * per_item)  # past the allocator's cap: torch.OutOfMemoryError
    if step == 0:
        torch.cuda._CONTEXT += int(os.environ.get("CONTEXT_GROWTH", "0"))
    tell_driver()
    time.sleep(0.05)  # longer than the sampling interval: each step end has its own reading
    opt.step()
    del activations
    print("step %d loss 1.0" % step, flush=True)
