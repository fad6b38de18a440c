#!/usr/bin/env python3
"""The tables of docs/estimator.md, "Every model kind": build/vramdoc estimate on every case of
tests/data/estimator/pytorch-h200-kinds.jsonl (issue 28's H200 measurements), |error| % per family
(held out marked) and per kind, and --max-batch against the largest batch that ran.
--data NAME (repeatable) picks the record sets. The newest round among them (pytorch-h200-kinds,
-kinds-b, -kinds-c, ...: the last in name order) is the fresh one: every other set's cases count as
dev (their held-out families are seen now), and the fresh set's held-out cases (kept out while
modelling) are evaluated only with --held-out. A case vramdoc refuses (an exit status other than 0
or 1) is listed and counted, never dropped silently.

Usage: scripts/eval_estimator_kinds.py [--vramdoc PATH] [--data NAME]... [--held-out] [--cases]"""
import argparse, collections, json, os, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA_DIR = os.path.join(HERE, "..", "tests", "data", "estimator")


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p * (len(v) - 1))))]


def config(tmp, r, data):
    path = os.path.join(tmp, f"{os.path.basename(data)}.{r['model']}.{r['task']}.json")
    if not os.path.exists(path):
        json.dump(json.load(open(os.path.join(data + ".models", f"{r['model']}.{r['task']}.json")))["config"], open(path, "w"))
    return path


def command(vramdoc, cfg, r):
    cmd = [vramdoc, "estimate", "--config", cfg, "--mode", r["mode"], "--precision", r["precision"].replace("_", "-"),
           "--seq", str(r["seq"]), "--task", r["task"], "--json"]
    if r.get("generate"):
        cmd += ["--new-tokens", str(r["generate"])]
    if r.get("target_seq"):
        cmd += ["--target-seq", str(r["target_seq"])]
    if r.get("image_size"):
        cmd += ["--image-size", str(r["image_size"])]
    # the attention the case ran (transformers' pick: eager where the class has no SDPA), passed either way so a
    # stand-in's eager default never decides it; a max-batch scenario's is its model's cases' (main() fills it in)
    if r.get("attn_implementation") == "eager" or r.get("attention"):
        cmd += ["--attention", "eager"]
    elif r.get("attn_implementation") == "sdpa":
        cmd += ["--attention", "sdpa"]
    if r.get("kind") == "maxbatch":
        return cmd + ["--gpu-memory", f"{r['card_mib']}MiB", "--max-batch"]
    cmd += ["--batch", str(r["batch"])]
    if r["grad_checkpointing"]:
        cmd.append("--grad-checkpointing")
    if r.get("optimizer"):
        cmd += ["--optimizer", r["optimizer"]]
    if r.get("lora"):
        cmd += ["--lora-targets", ",".join(r["lora"]["targets"])]
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vramdoc", default=os.path.join(HERE, "..", "build", "vramdoc"))
    ap.add_argument("--cases", action="store_true", help="print every case")
    ap.add_argument("--data", action="append", help="a record set under tests/data/estimator/ (default: pytorch-h200-kinds)")
    ap.add_argument("--held-out", action="store_true", help="include the held-out cases of round 2's records")
    args = ap.parse_args()
    sets = args.data or ["pytorch-h200-kinds"]
    fresh = max(sets) if len(sets) > 1 else None  # the newest round: its held-out cases are the held-out set
    rows, scenarios, refused = [], [], []
    lines = [(n, l) for n in sets for l in open(os.path.join(DATA_DIR, n) + ".jsonl")]
    ran = {}  # (set, model) -> the attn_implementation its cases record (a max-batch scenario's record may lack it)
    for name, line in lines:
        r = json.loads(line)
        if r.get("attn_implementation") and r.get("model"):
            ran.setdefault((name, r["model"]), r["attn_implementation"])
    with tempfile.TemporaryDirectory() as tmp:
        for name, line in lines:
            data = os.path.join(DATA_DIR, name)
            r = json.loads(line)
            if r.get("kind") == "maxbatch" and "attn_implementation" not in r and (name, r.get("model")) in ran:
                r["attn_implementation"] = ran[(name, r["model"])]
            if fresh and name != fresh:
                r["held_out"] = False  # seen now
            elif fresh and r.get("held_out") and not args.held_out:
                continue
            if r.get("kind") == "maxbatch" and r["largest_batch"]:
                out = subprocess.run(command(args.vramdoc, config(tmp, r, data), r), capture_output=True, text=True)
                found = json.loads(out.stdout).get("max_batch") if out.stdout and out.returncode in (0, 1) else None
                if found is None:
                    refused.append((f"max-batch {r['model']} {r['task']}", out.stderr.strip()[:200]))
                scenarios.append((r, (found or {}).get("value")))
            if "case_id" not in r or "error" in r or r.get("kind") in ("maxbatch", "maxbatch-trial", "env"):
                continue
            out = subprocess.run(command(args.vramdoc, config(tmp, r, data), r), capture_output=True, text=True)
            if out.returncode not in (0, 1):
                refused.append((r["case_id"], out.stderr.strip()[:200]))
                continue
            e = json.loads(out.stdout)
            a = (e["peak_allocated_bytes"] - r["peak_allocated"]) / r["peak_allocated"] * 100
            p = (e["process_bytes"] - r["driver_process_used"]) / r["driver_process_used"] * 100
            rows.append((r, a, p))
            if args.cases:
                print(f"{r['case_id']:58} allocated {a:+6.1f} %  process {p:+6.1f} %{'  (held out)' if r['held_out'] else ''}")
    print("\n| family | held out | cases | allocated median % | allocated p95 % | process median % | process p95 % |")
    print("|---|---|---|---|---|---|---|")
    groups = collections.defaultdict(list)
    for r, a, p in rows:
        groups[(r["arch"], r["held_out"])].append((abs(a), abs(p)))
    for (fam, held), v in sorted(groups.items()):
        a, p = [x[0] for x in v], [x[1] for x in v]
        print(f"| {fam} | {'yes' if held else ''} | {len(v)} | {statistics.median(a):.2f} | {q(a, .95):.2f} | "
              f"{statistics.median(p):.2f} | {q(p, .95):.2f} |")
    print("\n| kind | held out | cases | allocated median / p95 % | process median / p95 % | bar met |")
    print("|---|---|---|---|---|---|")
    for kind in ("decoder", "encoder / enc-dec / vision"):
        for held in (False, True):
            v = [(abs(a), abs(p)) for r, a, p in rows if (r["task"] == "causal-lm") == (kind == "decoder") and r["held_out"] == held]
            if not v:
                continue
            a, p = [x[0] for x in v], [x[1] for x in v]
            met = statistics.median(a) <= 1 and q(a, .95) <= 4 and statistics.median(p) <= 2 and q(p, .95) <= 6
            print(f"| {kind} | {'yes' if held else ''} | {len(v)} | {statistics.median(a):.2f} / {q(a, .95):.2f} | "
                  f"{statistics.median(p):.2f} / {q(p, .95):.2f} | {'yes' if met else 'no'} |")
    print(f"\nRefused by vramdoc: {len(refused)}")
    for what, why in refused:
        print(f"- {what}: {why}")
    print("\n| model | task | mode | card | largest batch that ran | --max-batch | false fits |")
    print("|---|---|---|---|---|---|---|")
    for r, predicted in scenarios:
        print(f"| {r['model']}{' (held out)' if r['held_out'] else ''} | {r['task']} | {r['mode']} {r['precision']} seq {r['seq']} | "
              f"{r['card_mib']} MiB | {r['largest_batch']} | {predicted} | {'YES' if predicted and predicted > r['largest_batch'] else 'no'} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
