"""The cost of vramdoc's step hook (h15b). Run with the hook on PYTHONPATH (VRAMDOC_STEP_HOOK=1,
VRAMDOC_MARK_FILE set) for --mode paired, and with or without it for --mode plain.
paired: one process; blocks of --block steps alternate with the hook registered and removed
  (torch.optim.optimizer._global_optimizer_post_hooks), a CUDA sync at each block's end only;
  the median per-step time of each state, and the hook call's own cost (direct calls), and the
  cost of memory_allocated()+memory_reserved() against one memory_stats_as_nested_dict().
plain: the median per-step time of blocks, as it is (the end-to-end comparison of two processes).
Prints one JSON line."""
import argparse, json, statistics, time

import torch
import torch.nn as nn
import torch.optim.optimizer as om

p = argparse.ArgumentParser()
p.add_argument("--mode", default="paired")
p.add_argument("--width", type=int, default=512)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--blocks", type=int, default=40)
p.add_argument("--block", type=int, default=50)
a = p.parse_args()
dev = torch.device("cuda", 0)
model = nn.Sequential(nn.Linear(a.width, a.width), nn.ReLU(), nn.Linear(a.width, a.width), nn.ReLU(), nn.Linear(a.width, 16)).to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
x = torch.randn(a.batch, a.width, device=dev)


def run_block(n):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e3


run_block(200)  # warm-up: cuBLAS, the optimizer's state
hooks = dict(om._global_optimizer_post_hooks)
out = {"mode": a.mode, "width": a.width, "batch": a.batch, "block": a.block, "torch": torch.__version__,
       "device": torch.cuda.get_device_name(0), "hooks_registered": len(hooks)}
if a.mode == "plain":
    out["median_step_ms"] = statistics.median(run_block(a.block) for _ in range(a.blocks))
else:
    on, off = [], []
    for i in range(a.blocks):
        for state in ((True, False) if i % 2 == 0 else (False, True)):
            om._global_optimizer_post_hooks.clear()
            if state:
                om._global_optimizer_post_hooks.update(hooks)
            (on if state else off).append(run_block(a.block))
    om._global_optimizer_post_hooks.update(hooks)
    out.update({"median_step_ms_hook": statistics.median(on), "median_step_ms_no_hook": statistics.median(off),
                "min_step_ms_hook": min(on), "min_step_ms_no_hook": min(off)})
    n = 20000
    for key, fn in (("hook_call_us", lambda: [h(opt, (opt,), {}) for h in hooks.values()]),
                    ("allocated_plus_reserved_us", lambda: (torch.cuda.memory_allocated(), torch.cuda.memory_reserved())),
                    ("nested_dict_us", lambda: torch.cuda.memory_stats_as_nested_dict())):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        out[key] = (time.perf_counter() - t) / n * 1e6
print(json.dumps(out), flush=True)
