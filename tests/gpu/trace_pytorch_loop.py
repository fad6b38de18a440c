#!/usr/bin/env python3
"""A small PyTorch training loop for the tracer test (trace_pytorch.sh).

Prints one JSON line: the median step time over the timed steps, and the caching allocator's
own counts (reserved bytes, segments allocated and freed) to hold the trace against.
--leak keeps one 1 MiB tensor per step alive, allocated in leaky_cache_append().
"""
import argparse
import json
import statistics
import time

import torch

kept = []


def leaky_cache_append(step):
    kept.append(torch.full((256, 1024), float(step), device="cuda"))  # 1 MiB of float32


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--leak", action="store_true")
    args = ap.parse_args()
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 4096), torch.nn.GELU(),
        torch.nn.Linear(4096, 1024)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(512, 1024, device="cuda")
    y = torch.randn(512, 1024, device="cuda")
    times = []
    for step in range(args.warmup + args.steps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if args.leak:
            leaky_cache_append(step)
        torch.cuda.synchronize()
        if step >= args.warmup:
            times.append(time.perf_counter() - t0)
    stats = torch.cuda.memory_stats()
    print(json.dumps({
        "median_step_ms": statistics.median(times) * 1e3,
        "mean_step_ms": statistics.mean(times) * 1e3,
        "steps": args.steps,
        "reserved_bytes": torch.cuda.memory_reserved(),
        "max_reserved_bytes": torch.cuda.max_memory_reserved(),
        "segments_allocated": stats.get("segment.all.allocated", 0),
        "segments_freed": stats.get("segment.all.freed", 0),
        "kept_tensors": len(kept),
    }))


if __name__ == "__main__":
    main()
