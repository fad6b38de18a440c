#!/usr/bin/env python3
"""Writes a synthetic version-2 timeline of a long job (docs/streaming.md, the benchmark).

Every tick's values change (the worst case for the recorder, which leaves unchanged ticks out),
one process on one GPU, a step mark with the framework's figures every --mark-every samples.
--kind leak: the step-end bytes grow by --leak-bytes per step; stable: they stay level.
The values are a fixed pseudo-random sequence (seeded), so two runs write the same file.

  scripts/gen_long_timeline.py --samples 13000000 --mark-every 50 --kind leak --out /tmp/13m.jsonl
"""
import argparse
import json
import random
import sys

GIB = 1 << 30
MIB = 1 << 20


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--samples", type=int, required=True)
    p.add_argument("--mark-every", type=int, default=50, help="a step mark every N samples (0: none)")
    p.add_argument("--kind", choices=["leak", "stable"], default="leak")
    p.add_argument("--interval", type=float, default=0.02, help="seconds between samples")
    p.add_argument("--leak-bytes", type=int, default=64 * 1024, help="bytes kept per step (leak)")
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--out", default="-")
    a = p.parse_args()
    rng = random.Random(a.seed)
    out = sys.stdout if a.out == "-" else open(a.out, "w", buffering=1 << 20)
    total = 141 * GIB
    pid = 4242
    header = {"columns": ["t", "process_used", "device_used", "series", "gpu_used"], "command": ["python3", "train.py"],
              "device": "NVIDIA H200", "gpus": [{"index": 0, "name": "NVIDIA H200", "total": total, "uuid": "GPU-synthetic-0"}],
              "heartbeat_s": 1.0, "host": "synthetic", "interval_s": a.interval, "name": "python3",
              "start_unix_s": 1796000000.0, "total": total, "vramdoc_timeline": 2}
    w = out.write
    w(json.dumps(header, separators=(",", ":"), sort_keys=True) + "\n")
    w(json.dumps({"series": {"command": "python3", "gpu": 0, "id": 0, "pid": pid, "rank": 0}}, separators=(",", ":")) + "\n")
    base = 20 * GIB          # weights, optimizer state, the context
    working = 6 * GIB        # a step's activations: up during the step, down at its end
    allocated0 = 18 * GIB
    per = a.mark_every if a.mark_every > 0 else 50  # samples per step (marked or not)
    for i in range(a.samples):
        t = i * a.interval
        step = i // per
        kept = a.leak_bytes * step if a.kind == "leak" else 0
        phase = (i % per) / per
        # within a step: rising activations, then freed; a little noise so no two ticks are alike
        used = base + kept + int(working * phase) + rng.randrange(1, 4 * MIB)
        device = used + 600 * MIB + rng.randrange(0, MIB)
        w(f"[{t:.4f},{used},{device},[{used}],[{device}]]\n")
        if a.mark_every > 0 and i % a.mark_every == a.mark_every - 1:
            allocated = allocated0 + kept + rng.randrange(0, MIB)
            w(f'{{"allocated":{allocated},"mark":"step {step}","pid":{pid},"reserved":{allocated + 2 * GIB},"t":{t:.4f}}}\n')
    end_t = max(0, a.samples - 1) * a.interval
    w(json.dumps({"end": {"exit_status": 0, "outcome": "ok", "t": round(end_t, 4), "total": total}}, separators=(",", ":")) + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
