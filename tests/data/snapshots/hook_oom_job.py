# A job that runs out of memory under vramdoc's --trace-python hook: 2 GiB of "weights" kept at
# a known line, then 1 GiB more per step until the allocator gives up; the error is caught so the
# exit record is written too.
import torch

weights = [torch.empty(1 << 30, dtype=torch.uint8, device="cuda") for _ in range(2)]  # line 6: weights
kept = []
try:
    while True:
        kept.append(torch.empty(1 << 30, dtype=torch.uint8, device="cuda"))  # line 10: the leak
except torch.OutOfMemoryError as e:
    print("OOM after", len(kept), "GiB:", str(e).splitlines()[0])
kept.clear()
