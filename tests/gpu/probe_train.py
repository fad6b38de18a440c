"""A small PyTorch training job for `vramdoc probe` on a GPU: memory grows linearly with the batch.

    python3 probe_train.py --batch-size B [--steps N] [--seq S] [--leak] [--memory-fraction F]

--memory-fraction caps PyTorch's allocator (torch.cuda.set_per_process_memory_fraction), so a
probe of a "smaller card" finishes in a few trials; --leak keeps one activation alive per step.
Prints "step N" after each step. Plain PyTorch, no downloads.
"""
import argparse
import torch

p = argparse.ArgumentParser()
p.add_argument("--batch-size", type=int, required=True)
p.add_argument("--steps", type=int, default=5)
p.add_argument("--seq", type=int, default=1024)
p.add_argument("--hidden", type=int, default=2048)
p.add_argument("--layers", type=int, default=8)
p.add_argument("--leak", action="store_true")
p.add_argument("--memory-fraction", type=float, default=None)
a = p.parse_args()

if a.memory_fraction:
    torch.cuda.set_per_process_memory_fraction(a.memory_fraction)
torch.manual_seed(0)
layers = []
for _ in range(a.layers):
    layers += [torch.nn.Linear(a.hidden, 4 * a.hidden), torch.nn.GELU(), torch.nn.Linear(4 * a.hidden, a.hidden)]
model = torch.nn.Sequential(*layers).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
kept = []
for step in range(a.steps):
    x = torch.randn(a.batch_size, a.seq, a.hidden, device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if a.leak:
        kept.append(torch.empty(a.batch_size * 64 * 1024 * 1024 + 1, device="cuda"))  # 256 MiB x batch
    torch.cuda.synchronize()
    print(f"step {step} loss {loss.item():.4f}", flush=True)
