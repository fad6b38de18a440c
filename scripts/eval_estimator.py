#!/usr/bin/env python3
"""Runs build/vramdoc estimate over measured cases and prints per-case and summary errors.

Usage: scripts/eval_estimator.py [--vramdoc PATH] [--configs DIR] [--lomo] [FILE.jsonl ...]

FILE.jsonl: lines written by measure_pytorch.py (default: the shared calibration set) or by
scripts/gpu/measure_estimator_extra.py. A case's config.json is taken from, in order: the
record's "full_config" (the extra script stores it), DIR/<model>.json (--configs, default: the
"configs" folder beside the JSONL), or <JSONL>.configs/<model>.json. Cases that failed (oom,
errors) or lack a config are listed and skipped. Truth: a fresh process's peak allocated is
peak_allocated + the env line's warm_allocated (cuBLAS workspaces); reserved is peak_reserved;
the process is driver_process_used.

--lomo: leave-one-model-out check of the fitted constants: the process overhead beyond reserved
memory (CUDA context plus libraries, by inference / training / 16-bit fused-attention training),
refit as medians over the other models' cases, and the held-out model's errors with it (median
and p95 of allocated, reserved and process).
--lofo: the same, holding out whole families (the record's "arch").
--by-mode: with --lomo / --lofo, the held-out errors per mode as well (inference forward, with
generate(), fp8; LoRA; training per precision, checkpointed amp apart): a markdown table.

Records of scripts/gpu/measure_estimator_families.py (a fresh process per case) carry their
config in <JSONL>.models/<model>.json ("config"), and the extra fields generate (--new-tokens),
quant (--quant fp8) and alloc_conf (--expandable-segments).
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = os.path.join(HERE, "..", "..", "shared", "data", "estimator", "pytorch-h200-calibration.jsonl")
METRICS = [("peak_allocated", "peak_allocated_bytes"), ("peak_reserved", "peak_reserved_bytes"),
           ("process", "process_bytes")]


def load(path):
    env, cases = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                print(f"{path}:{n}: not JSON, skipped", file=sys.stderr)
                continue
            if rec.get("kind") == "env":
                env = rec
            else:
                cases.append((env, rec))
    return cases


def config_path(rec, jsonl, configs_dir, tmp):
    name = rec.get("model", "")
    if isinstance(rec.get("full_config"), dict):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(rec["full_config"], f)
        return path
    for d in [configs_dir or os.path.join(os.path.dirname(jsonl), "configs"), jsonl + ".configs"]:
        p = os.path.join(d, name + ".json")
        if os.path.exists(p):
            return p
    p = os.path.join(jsonl.replace(".jsonl", ".models"), name + ".json")
    if os.path.exists(p):
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(json.load(open(p))["config"], f)
        return path
    return None


def command(vramdoc, cfg, rec):
    cmd = [vramdoc, "estimate", "--config", cfg, "--mode", rec["mode"], "--precision",
           rec["precision"].replace("_", "-"), "--batch", str(rec["batch"]), "--seq", str(rec["seq"]),
           "--attention", rec.get("attention", "sdpa"), "--json"]
    if rec.get("optimizer"):
        cmd += ["--optimizer", rec["optimizer"]]
    if rec.get("grad_checkpointing"):
        cmd += ["--grad-checkpointing"]
    if rec.get("lora"):
        cmd += ["--lora-rank", str(rec["lora"].get("r", 16)), "--lora-targets", ",".join(rec["lora"]["targets"])]
    if rec.get("logits") == "last":
        cmd += ["--logits", "last"]
    if rec.get("generate"):
        cmd += ["--new-tokens", str(rec["generate"])]
    if rec.get("quant"):
        cmd += ["--quant", "fp8"]
    if rec.get("alloc_conf"):
        cmd += ["--expandable-segments"]
    return cmd


def pct(values, q):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))] if s else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="*", default=[DEFAULT])
    ap.add_argument("--vramdoc", default=os.path.join(HERE, "..", "build", "vramdoc"))
    ap.add_argument("--configs", default=None)
    ap.add_argument("--lomo", action="store_true")
    ap.add_argument("--lofo", action="store_true")
    ap.add_argument("--by-mode", action="store_true")
    args = ap.parse_args()
    rows, skipped = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for jsonl in args.files:
            for env, rec in load(jsonl):
                label = rec.get("model") or str(rec.get("case"))
                if "error" in rec or "peak_allocated" not in rec:
                    skipped.append(f"{label}: {rec.get('error', 'no peak_allocated')}")
                    continue
                cfg = config_path(rec, jsonl, args.configs, tmp)
                if not cfg:
                    skipped.append(f"{label}: no config.json found")
                    continue
                run = subprocess.run(command(args.vramdoc, cfg, rec), capture_output=True, text=True)
                if run.returncode != 0:
                    skipped.append(f"{label}: vramdoc exit {run.returncode}: {run.stderr.strip()}")
                    continue
                est = json.loads(run.stdout)
                truth = {"peak_allocated": rec["peak_allocated"] + env.get("warm_allocated", 0),
                         "peak_reserved": rec.get("peak_reserved"), "process": rec.get("driver_process_used")}
                rows.append((rec, est, truth))
    print(f"{'case':58} {'alloc %':>8} {'reserved %':>10} {'process %':>9}  peak phase")
    errors = {m: [] for m, _ in METRICS}
    for rec, est, truth in rows:
        cells = []
        for m, key in METRICS:
            if truth[m]:
                e = (est[key] - truth[m]) / truth[m] * 100
                errors[m].append(abs(e))
                cells.append(f"{e:+.1f}")
            else:
                cells.append("n/a")
        case = (f"{rec['model']} {rec['mode']} {rec['precision']} b{rec['batch']} s{rec['seq']}"
                f"{' ck' if rec.get('grad_checkpointing') else ''} {rec.get('optimizer') or ''} {rec.get('attention', '')}")
        print(f"{case:58} {cells[0]:>8} {cells[1]:>10} {cells[2]:>9}  {est['peak_phase']}")
    print()
    for m, _ in METRICS:
        v = errors[m]
        if v:
            print(f"{m:15} cases {len(v):3}  median |error| {statistics.median(v):5.2f} %  p95 {pct(v, 0.95):5.2f} %  max {max(v):5.2f} %")
    for s in skipped:
        print("skipped:", s)
    if args.lomo:
        lomo(rows, "model", args.by_mode)
    if args.lofo:
        lomo(rows, "arch", args.by_mode)
    return 0 if rows else 1


def category(rec):
    """Which process-overhead constant a case uses: inference, training, or 16-bit fused-attention training."""
    if rec["mode"] == "infer":
        return "infer"
    fused16 = rec["precision"] != "fp32" and rec.get("attention", "sdpa") != "eager"
    return "train-fused16" if fused16 else "train"


def mode_of(rec):
    """The mode a case belongs to in the per-mode table."""
    if rec["mode"] == "infer":
        return "infer fp8" if rec.get("quant") else "infer generate" if rec.get("generate") else "infer forward"
    if rec["mode"] != "train":
        return rec["mode"]
    precision = rec["precision"].replace("_", "-")
    return f"train {precision}" + (" ck" if rec.get("grad_checkpointing") else "")


def by_mode_table(held):
    """held: (mode, allocated %, reserved %, process %) of every held-out case."""
    print("\n| mode | cases | allocated median % | allocated p95 % | reserved median % | reserved p95 % | process median % | process p95 % |")
    print("|---|---|---|---|---|---|---|---|")
    for mode in sorted({h[0] for h in held}):
        a = [h[1] for h in held if h[0] == mode]
        r = [h[2] for h in held if h[0] == mode]
        p = [h[3] for h in held if h[0] == mode]
        print(f"| {mode} | {len(a)} | {statistics.median(a):.2f} | {pct(a, .95):.2f} | {statistics.median(r):.2f} | "
              f"{pct(r, .95):.2f} | {statistics.median(p):.2f} | {pct(p, .95):.2f} |")


def summary(alloc, reserved, proc):
    """One line of held-out |errors| in %: median and p95 of allocated, reserved and process."""
    return " | ".join(f"{name} median {statistics.median(v):5.2f} % p95 {pct(v, .95):5.2f} %"
                      for name, v in (("alloc", alloc), ("reserved", reserved), ("process", proc)))


def lomo(rows, key, by_mode=False):
    """Refits the process overhead per category on the other groups; errors on the held-out one."""
    print(f"\nleave-one-{key}-out (process overhead refit as medians on the other {key}s):")
    groups = sorted({r[0].get(key, r[0]["model"]) for r in rows})
    alloc_all, reserved_all, proc_all, per_case = [], [], [], []
    for held in groups:
        train = [r for r in rows if r[0].get(key) != held and r[2]["process"]]
        test = [r for r in rows if r[0].get(key) == held and r[2]["process"]]
        if not train or not test:
            continue
        overhead = {}
        for cat in ("infer", "train", "train-fused16"):
            v = [t["process"] - t["peak_reserved"] for rec, _, t in train if category(rec) == cat]
            overhead[cat] = statistics.median(v) if v else None
        alloc, reserved, proc = [], [], []
        for rec, e, t in test:
            o = overhead[category(rec)]
            if o is None:
                continue
            alloc.append(abs(e["peak_allocated_bytes"] - t["peak_allocated"]) / t["peak_allocated"] * 100)
            reserved.append(abs(e["peak_reserved_bytes"] - t["peak_reserved"]) / t["peak_reserved"] * 100)
            proc.append(abs(e["peak_reserved_bytes"] + o - t["process"]) / t["process"] * 100)
            per_case.append((mode_of(rec), alloc[-1], reserved[-1], proc[-1]))
        alloc_all += alloc
        reserved_all += reserved
        proc_all += proc
        print(f"  {held:16} cases {len(alloc):3} | {summary(alloc, reserved, proc)}")
    if alloc_all:
        print(f"  {'all held out':16} cases {len(alloc_all):3} | {summary(alloc_all, reserved_all, proc_all)}")
    if by_mode and per_case:
        by_mode_table(per_case)


if __name__ == "__main__":
    sys.exit(main())
