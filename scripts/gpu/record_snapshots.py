#!/usr/bin/env python3
"""Records real PyTorch memory snapshots for `vramdoc analyze snap.pickle` (docs/snapshots.md).

    python3 record_snapshots.py SCENARIO OUT.pickle [--iters N]

One scenario per process (an OOM leaves the allocator in its own state; expandable segments are
chosen at start-up through PYTORCH_CUDA_ALLOC_CONF). Beside OUT.pickle it writes OUT.meta.json:
what the job knows (torch's own counters at the dump, the OOM message, the line that leaks), so
the analysis can be checked against the truth. Scenarios:
  leak        keeps 1 MiB per step (line marked LEAK_LINE), default recording (Python + C++ stacks)
  leak_python the same, Python stacks only
  stable      the same loop keeping nothing, Python stacks
  oom_leak    keeps 1 GiB per step until the card is full; snapshot taken in the OOM observer
              (OUT.pickle) and after the error (OUT.after.pickle, with the trace's oom entry)
  oom_big     20 GiB of weights, then one request larger than the card
  fragmented  one large cached segment cut into 768 / 256 MiB blocks, the 768 MiB ones freed,
              then a 2 GiB request: the free bytes are there, but not in one piece
  expandable  the leak loop with expandable segments (run with PYTORCH_CUDA_ALLOC_CONF set)
  long        a small training step and 32 short-lived tensors per iteration for --iters=N
              iterations (256 KiB kept every 200), history of every allocation kept: the large
              snapshots of the speed benchmark
"""
import json
import os
import pickle
import sys
import time

import torch

GIB = 1 << 30
MIB = 1 << 20
meta = {"torch": torch.__version__, "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")}


def line_of(marker):
    with open(__file__) as f:
        for number, text in enumerate(f, 1):
            if marker in text and "line_of(" not in text:
                return number
    return 0


def record(stacks="python", max_entries=200000):
    torch.cuda.memory._record_memory_history(enabled="all", context="all", stacks=stacks, max_entries=max_entries)


def counters():
    return {"allocated_bytes": torch.cuda.memory_allocated(), "reserved_bytes": torch.cuda.memory_reserved(),
            "max_allocated_bytes": torch.cuda.max_memory_allocated(),
            "max_reserved_bytes": torch.cuda.max_memory_reserved(), "device_free_bytes": torch.cuda.mem_get_info()[0],
            "device_total_bytes": torch.cuda.mem_get_info()[1]}


def dump(path):
    t0 = time.perf_counter()
    torch.cuda.memory._dump_snapshot(path)
    meta["dump_seconds"] = time.perf_counter() - t0
    meta["bytes"] = os.path.getsize(path)
    meta.update(counters())


def leak_loop(steps, keep):
    kept = []
    w = torch.randn(512, 512, device="cuda")
    for step in range(steps):
        x = torch.randn(256, 512, device="cuda")
        y = torch.relu(x @ w)
        torch.cuda.synchronize()
        if keep:
            kept.append(torch.empty(MIB, dtype=torch.uint8, device="cuda"))  # LEAK_LINE
        del x, y
        time.sleep(0.04)  # 100 steps of about 45 ms: a few seconds, like a real loop
    return kept


def scenario_leak(out, args):
    torch.cuda.memory._record_memory_history(max_entries=100000)  # the documented default call
    kept = leak_loop(100, True)
    meta["leak_line"] = line_of("# LEAK_LINE")
    meta["kept_tensors"] = len(kept)
    dump(out)


def scenario_leak_python(out, args):
    record()
    kept = leak_loop(100, True)
    meta["leak_line"] = line_of("# LEAK_LINE")
    meta["kept_tensors"] = len(kept)
    dump(out)


def scenario_stable(out, args):
    record()
    leak_loop(100, False)
    dump(out)


def oom_observer(path):
    def observe(device, requested, device_allocated, device_free):
        if "observer" in meta:
            return
        meta["observer"] = {"device": device, "requested_bytes": requested,
                            "device_allocated_bytes": device_allocated, "device_free_bytes": device_free}
        t0 = time.perf_counter()
        with open(path, "wb") as f:
            pickle.dump(torch.cuda.memory._snapshot(), f)
        meta["observer"]["dump_seconds"] = time.perf_counter() - t0
    torch._C._cuda_attach_out_of_memory_observer(observe)


def until_oom(out, body):
    oom_observer(out)
    try:
        body()
    except torch.OutOfMemoryError as e:
        meta["oom_message"] = str(e)
    meta["bytes"] = os.path.getsize(out) if os.path.exists(out) else 0
    meta.update(counters())
    torch.cuda.memory._dump_snapshot(out.replace(".pickle", ".after.pickle"))


def scenario_oom_leak(out, args):
    record()
    kept = []

    def body():
        for step in range(100000):
            kept.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))  # OOM_LEAK_LINE
            meta["steps_before_oom"] = step + 1
    meta["leak_line"] = line_of("# OOM_LEAK_LINE")
    until_oom(out, body)


def scenario_oom_big(out, args):
    record()
    weights = [torch.empty(5 * GIB, dtype=torch.uint8, device="cuda") for _ in range(4)]  # WEIGHTS_LINE
    meta["weights_line"] = line_of("# WEIGHTS_LINE")

    def body():
        total = torch.cuda.mem_get_info()[1]
        meta["request_bytes"] = total + GIB
        torch.empty(total + GIB, dtype=torch.uint8, device="cuda")  # BIG_LINE
    meta["big_line"] = line_of("# BIG_LINE")
    until_oom(out, body)
    del weights


def scenario_fragmented(out, args):
    record()
    free = torch.cuda.mem_get_info()[0]
    filler = torch.empty(int(free * 0.10) // (2 * MIB) * (2 * MIB), dtype=torch.uint8, device="cuda")  # FILLER_LINE
    free = torch.cuda.mem_get_info()[0]
    size = (free - int(1.5 * GIB)) // GIB * GIB
    block = torch.empty(size, dtype=torch.uint8, device="cuda")
    del block  # one cached segment of `size` bytes
    pieces = []
    for i in range(2 * (size // GIB)):
        n = 768 * MIB if i % 2 == 0 else 256 * MIB
        pieces.append(torch.empty(n, dtype=torch.uint8, device="cuda"))  # PIECES_LINE
    kept = [p for p in pieces if p.numel() == 256 * MIB]
    del pieces
    meta.update(segment_bytes=size, kept_pieces=len(kept), filler_line=line_of("# FILLER_LINE"),
                pieces_line=line_of("# PIECES_LINE"), request_bytes=2 * GIB)

    def body():
        torch.empty(2 * GIB, dtype=torch.uint8, device="cuda")  # REQUEST_LINE
    meta["request_line"] = line_of("# REQUEST_LINE")
    until_oom(out, body)
    del filler, kept


def scenario_expandable(out, args):
    record()
    kept = leak_loop(60, True)
    big = [torch.empty((i + 1) * 64 * MIB, dtype=torch.uint8, device="cuda") for i in range(4)]
    del big[1]
    meta["leak_line"] = line_of("# LEAK_LINE")
    meta["kept_tensors"] = len(kept)
    dump(out)


def churn(n):
    for j in range(n):
        t = torch.empty(4096 * (1 + j % 8), device="cuda")  # CHURN_LINE
        del t


def scenario_long(out, args):
    record(max_entries=args.get("max_entries", 100_000_000))
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(64, 256, device="cuda")
    kept = []
    t0 = time.perf_counter()
    for step in range(args["iters"]):
        loss = model(x).square().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        churn(32)
        if step % 200 == 0:
            kept.append(torch.empty(64 * 1024, device="cuda"))  # LONG_KEEP_LINE
    torch.cuda.synchronize()
    meta["loop_seconds"] = time.perf_counter() - t0
    meta["iters"] = args["iters"]
    meta["leak_line"] = line_of("# LONG_KEEP_LINE")
    dump(out)


def main():
    name, out = sys.argv[1], sys.argv[2]
    args = {}
    for a in sys.argv[3:]:
        key, value = a.lstrip("-").split("=")
        args[key.replace("-", "_")] = int(value)
    meta["scenario"] = name
    t0 = time.perf_counter()
    try:
        globals()["scenario_" + name](out, args)
    finally:
        meta["seconds"] = time.perf_counter() - t0
        with open(out.replace(".pickle", ".meta.json"), "w") as f:
            json.dump(meta, f, indent=1)
        print(name, json.dumps({k: v for k, v in meta.items() if k != "oom_message"}), flush=True)


if __name__ == "__main__":
    main()
