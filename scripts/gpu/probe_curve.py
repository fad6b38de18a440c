"""Peak memory against batch size of tests/gpu/probe_train.py's model, in one process, for the
probe-search simulations (issue 15, point 7): doubling from 1 until CUDA OOM, then bisecting to
the exact largest batch. Prints one JSON line per batch:
{"batch", "max_reserved", "max_allocated", "oom"}; the CUDA context is not included.
"""
import json
import sys

import torch

hidden, seq, blocks = 2048, int(sys.argv[1]) if len(sys.argv) > 1 else 1024, 8
torch.manual_seed(0)
layers = []
for _ in range(blocks):
    layers += [torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(), torch.nn.Linear(4 * hidden, hidden)]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)


def trial(b):
    torch.cuda.empty_cache()
    torch.cuda.reset_peak_memory_stats()
    try:
        for _ in range(2):
            x = torch.randn(b, seq, hidden, device="cuda")
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = model(x).float().pow(2).mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del x, loss
        torch.cuda.synchronize()
        r = {"batch": b, "max_reserved": torch.cuda.max_memory_reserved(), "max_allocated": torch.cuda.max_memory_allocated(), "oom": False}
    except torch.OutOfMemoryError:
        opt.zero_grad(set_to_none=True)
        r = {"batch": b, "max_reserved": torch.cuda.max_memory_reserved(), "max_allocated": torch.cuda.max_memory_allocated(), "oom": True}
    print(json.dumps(r), flush=True)
    return not r["oom"]


ok, bad, b = 0, None, 1
while bad is None and b <= 4096:
    if trial(b):
        ok, b = b, b * 2
    else:
        bad = b
for extra in (3, 6, 12, 24, 48, 96, 192):  # more points on the curve below the limit
    if extra < ok:
        trial(extra)
while bad is not None and bad - ok > 1:
    mid = (ok + bad) // 2
    if trial(mid):
        ok = mid
    else:
        bad = mid
print(json.dumps({"largest_ok": ok, "smallest_oom": bad, "total": torch.cuda.mem_get_info()[1]}), flush=True)
