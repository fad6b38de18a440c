"""Records more real GPU-memory timelines, beyond the three in shared/data/timelines/.

It uses the shared recorder's method (record_pytorch.py: a sampler thread reading NVML and the
PyTorch allocator every 20 ms, a small Llama-style model, marks at step ends) by importing it,
and adds the kinds the classifier must tell apart:

  leak_slow        keeps a 2 MiB GPU tensor alive per step (slow leak, finishes)
  leak_mid         keeps a 64 MiB GPU tensor alive per step (finishes)
  leak_to_oom      keeps a 1 GiB GPU tensor alive per step until CUDA OOM (a leak, not insufficient)
  plateau_varseq   sequence length 128..2048 varies per step: the cache grows, then levels off
  plateau_varseq_shared  the shared recorder's own train(vary_seq=True): 120 steps, 128..1024
  batch_ramp_oom   batch grows every step until CUDA OOM (the job outgrows the card)
  fragmentation    interleaved small tensors half freed, then one large request fails although
                   reserved-but-unallocated memory exceeds it

Usage: python3 scripts/gpu/record_timelines.py OUTDIR [SHARED_TIMELINES_DIR] [scenario...]
"""
import os
import sys

import torch

shared = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../../shared/data/timelines")
sys.path.insert(0, os.path.abspath(shared))
import record_pytorch as rp  # noqa: E402  the shared method: Sampler, model(), scenario()


def loop(s, steps, batch, seq, leak_bytes=0, vary_seq=False, ramp=0):
    """A training loop; `leak_bytes` kept alive per step, `ramp` added to the batch per step."""
    cfg, m = rp.model()
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5)
    kept, g = [], torch.Generator().manual_seed(1)
    for i in range(steps):
        L = int(torch.randint(128, seq + 1, (1,), generator=g)) if vary_seq else seq
        b = batch + ramp * i
        ids = torch.randint(0, cfg.vocab_size, (b, L), device="cuda")
        loss = m(input_ids=ids, labels=ids).loss
        loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
        if leak_bytes:
            kept.append(torch.empty(leak_bytes, dtype=torch.uint8, device="cuda"))
        torch.cuda.synchronize()
        s.mark(f"step {i}")
    return kept


def fragment(s):
    """Fills the card with 6 MiB tensors (three per 20 MiB allocator segment), frees two of each
    three so no segment can be returned, then asks for one block larger than any free hole."""
    free, total = torch.cuda.mem_get_info()
    n = int(free * 0.9) // (6 << 20)
    blocks = []
    for i in range(n):
        blocks.append(torch.empty(6 << 20, dtype=torch.uint8, device="cuda"))
        if i % 500 == 0:
            s.mark(f"step {i // 500}")
    for i in range(len(blocks)):
        if i % 3:
            blocks[i] = None
    torch.cuda.synchronize()
    s.mark("freed")
    big = torch.empty(int(free * 0.4), dtype=torch.uint8, device="cuda")
    return blocks, big


SCENARIOS = {
    "leak_slow": lambda s: loop(s, 150, 8, 1024, leak_bytes=2 << 20),
    "leak_to_oom": lambda s: loop(s, 400, 8, 1024, leak_bytes=1 << 30),
    "leak_mid": lambda s: loop(s, 120, 8, 1024, leak_bytes=64 << 20),
    "plateau_varseq": lambda s: loop(s, 150, 8, 2048, vary_seq=True),
    "plateau_varseq_shared": lambda s: rp.train(s, 120, 8, 1024, vary_seq=True, epoch_every=20),
    "batch_ramp_oom": lambda s: loop(s, 400, 8, 1024, ramp=8),
    "fragmentation": fragment,
}


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    names = sys.argv[3:] or list(SCENARIOS)
    for name in names:
        rp.scenario(name, SCENARIOS[name], outdir)


if __name__ == "__main__":
    main()
