"""How the settling rule's K and tolerance behave on recorded trials (docs/probe.md, "Settling").

    python3 scripts/gpu/probe_settle_analysis.py RESULTS_DIR [--k 2,3,4,5,6,8,10] [--tol 0.001,0.002,0.005]

RESULTS_DIR holds probe_compare.py's probe-*/ folders (probe --keep: trial-N.jsonl, the timelines
`vramdoc run` wrote, with the step hook's marks). For each trial that ran at least 12 steps, and
each (K, tolerance share), the rule is applied to every prefix of its step-end readings: the first
step where it says "settled", and whether the memory rose past the tolerance later in the same
run (a false "settled"). Prints one line per (K, tolerance): trials judged, settled, false settles,
median steps to settle. Plain Python, no vramdoc needed.
"""
import argparse
import glob
import json
import os
import statistics

FLOOR = 8 << 20


def readings(path):
    """Per pid: (reserved at each step end, driver's number at each step end)."""
    samples, marks = [], []
    for line in open(path):
        line = line.strip()
        if not line:
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, list):  # [t, process_used, device_used, [per process...], ...]
            samples.append((rec[0], rec[1]))
        elif isinstance(rec, dict) and "mark" in rec:
            marks.append(rec)
    out = {}
    for m in marks:
        label = m.get("mark", "")
        if not label.startswith("step ") or "reserved" not in m:
            continue
        pid = m.get("pid", 0)
        t = m.get("t", 0)
        before = [b for (ts, b) in samples if ts <= t]
        r, d = out.setdefault(pid, ([], []))
        r.append(m["reserved"])
        if before:
            d.append(before[-1])
    return out


def flat_tail(series, share):
    lo = hi = series[-1]
    n = 1
    for x in reversed(series[:-1]):
        nlo, nhi = min(lo, x), max(hi, x)
        if nhi - nlo > max(FLOOR, share * nhi):
            break
        lo, hi, n = nlo, nhi, n + 1
    return n


def settled_at(r, d, k, share):
    after = 0
    for s in (r, d):
        if s:
            after = max(after, len(s) - flat_tail(s, share))
    shortest = min(len(r), len(d)) if d else len(r)
    return after + 1 if shortest - after >= k + 1 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--k", default="2,3,4,5,6,8,10")
    ap.add_argument("--tol", default="0.001,0.002,0.005,0.01")
    a = ap.parse_args()
    runs = []
    for path in sorted(glob.glob(os.path.join(a.results, "probe-*", "trial-*.jsonl"))):
        for pid, (r, d) in readings(path).items():
            if len(r) >= 12:
                runs.append((os.path.relpath(path, a.results), r, d))
    print("%d recorded runs with >= 12 steps" % len(runs))
    for share in [float(x) for x in a.tol.split(",")]:
        for k in [int(x) for x in a.k.split(",")]:
            settled, false, steps = 0, [], []
            for name, r, d in runs:
                for n in range(k + 1, len(r) + 1):
                    at = settled_at(r[:n], d[: min(n, len(d))], k, share)
                    if at is None:
                        continue
                    settled += 1
                    steps.append(n)
                    level = max(r[n - 1], max(r[at - 1:n]))
                    later = max(r[n:], default=level)
                    if later - level > max(FLOOR, share * level):
                        false.append("%s: settled at %d (stopped at %d), rose %.0f MiB by step %d" % (
                            name, at, n, (later - level) / 2**20, len(r)))
                    break
            med = statistics.median(steps) if steps else float("nan")
            print("tol %.3f K %2d: %d/%d settled, %d false, median stop at step %s" % (share, k, settled, len(runs), len(false), med))
            for f in false[:4]:
                print("    " + f)


if __name__ == "__main__":
    main()
