"""A small PyTorch training loop for tests/gpu/run_pytorch.sh: stable, leaking, or too big.

  python3 leak_loop.py stable          300 steps, nothing kept between steps
  python3 leak_loop.py leak [MIB]      the same, keeping MIB (default 32) of GPU memory every step
  python3 leak_loop.py too-big         asks for 30 GiB blocks in its first step until CUDA OOM

Each step ends with "step N" on stdout and in $VRAMDOC_MARK_FILE when vramdoc run sets it.
"""
import os
import sys
import time

import torch

mode = sys.argv[1]
mark_file = os.environ.get("VRAMDOC_MARK_FILE")
torch.manual_seed(0)
layers = torch.nn.Sequential(*[torch.nn.Linear(4096, 4096) for _ in range(8)]).cuda().to(torch.bfloat16)
opt = torch.optim.AdamW(layers.parameters(), lr=1e-5)
kept = []
if mode == "too-big":
    blocks = [torch.empty(30 << 30, dtype=torch.uint8, device="cuda") for _ in range(100)]
leak_bytes = int(sys.argv[2] if len(sys.argv) > 2 else 32) << 20
for step in range(300):
    x = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    loss = layers(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if mode == "leak":
        kept.append(torch.empty(leak_bytes, dtype=torch.uint8, device="cuda"))
    torch.cuda.synchronize()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
    if mark_file:
        with open(mark_file, "a") as f:
            f.write(f"step {step}\n")
    time.sleep(0.03)
