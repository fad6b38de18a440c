#!/usr/bin/env bash
# Runs `vramdoc bench` (full suite, --json) and the public anchors (../shared/anchors) in ONE
# command on the same GPU, then prints the side-by-side table that goes into docs/bench-h200.md.
# Usage: scripts/gpu/bench_vs_anchors.sh OUTDIR   (from the repository root, after a build)
# Env: VRAMDOC (default build/vramdoc); ANCHORS (the anchors folder); ONLY (the anchors to run,
# default "babelstream nvbandwidth gpu-stream gpu-l2-cache gpu-cache": gpu-latency takes 4 minutes,
# so latency is compared with the numbers in the anchors' README; ONLY=all runs every anchor,
# about 10 minutes); COMPARE_ONLY=1 (only print the table from OUTDIR's files).
set -uo pipefail
export PATH=$PATH:/usr/local/cuda/bin  # the anchors are built with nvcc
out=${1:?usage: $0 OUTDIR}
mkdir -p "$out"
here=$(cd "$(dirname "$0")/../.." && pwd)
vramdoc=${VRAMDOC:-$here/build/vramdoc}
anchors=${ANCHORS:-}
for d in "$here/../shared/anchors" "$here/../anchors" "$here/.anchors"; do
  [[ -z $anchors && -f $d/run-anchors.sh ]] && anchors=$d
done
[[ -n $anchors ]] || { echo "bench_vs_anchors: no anchors folder (set ANCHORS)" >&2; exit 2; }
if [[ -z ${COMPARE_ONLY:-} ]]; then
  echo "=== $(date -u '+%F %T UTC') $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
  echo "=== vramdoc bench --json (full suite)"
  "$vramdoc" bench --json --svg "$out/vramdoc-bench.svg" > "$out/vramdoc-bench.json" 2> "$out/vramdoc-bench.progress"
  echo "vramdoc bench exit $?, $(tail -1 "$out/vramdoc-bench.progress")"
  echo "=== anchors"
  only=${ONLY:-"babelstream nvbandwidth gpu-stream gpu-l2-cache gpu-cache"}
  [[ $only == all ]] && only=""
  ONLY=$only bash "$anchors/run-anchors.sh" "$out/anchors" > "$out/anchors.log" 2>&1
  echo "anchors done"
fi
python3 - "$out" <<'PY'
import json, re, sys, os
out = sys.argv[1]
a = os.path.join(out, "anchors")
def text(name):
    p = os.path.join(a, name)
    return open(p, errors="replace").read() if os.path.exists(p) else ""
r = json.load(open(os.path.join(out, "vramdoc-bench.json")))
ours = {(m["level"], m["measure"]): m for m in r["measures"]}
def mine(level, name, stat="median"):
    m = ours.get((level, name))
    return m.get(stat) if m else None
peak = next((m["peak"] for m in r["measures"] if m["level"] == "device" and "peak" in m), None)
link_peak = next((m["peak"] for m in r["measures"] if m["level"] == "host link" and "peak" in m), None)
bs = {}
for line in text("babelstream.txt").splitlines():
    f = line.split()
    if len(f) >= 2 and f[0] in ("Copy", "Mul", "Add", "Triad", "Dot"):
        bs[f[0]] = float(f[1]) / 1000  # MB/s -> GB/s (their best sample)
nvb = {}
for line in text("nvbandwidth.txt").splitlines():
    m = re.match(r"SUM (\S+)\s+([\d.]+)", line)
    if m: nvb[m.group(1)] = float(m.group(2))
init = [float(l.split("GB/s:")[1].split()[0]) for l in text("gpu-stream.txt").splitlines() if "GB/s:" in l and len(l.split("GB/s:")[1].split()) > 0]
l2rows = []  # (footprint kB, GB/s)
for line in text("gpu-l2-cache.txt").splitlines():
    f = line.split()
    if len(f) >= 8 and f[1] == "kB" and f[3] == "kB" and f[7] == "GB/s": l2rows.append((float(f[2]), float(f[6])))
l1rows = []
for line in text("gpu-cache.txt").splitlines():
    f = line.split()
    if len(f) >= 6 and f[1] == "kB" and f[5] == "GB/s": l1rows.append((float(f[0]), float(f[4])))
l2_bytes = max([p["footprint_bytes"] for p in r["l2_sweep"]] or [0]) / 2
dram_read = [(kb, bw) for kb, bw in l2rows if kb * 1024 >= 3 * l2_bytes]
rows = []
# Like for like: BabelStream, gpu-l2-cache and gpu-cache print their fastest sample, gpu-stream and
# nvbandwidth a median; each is compared with the same statistic of ours (both of ours are shown).
# The %-of-peak bar is judged on our median.
def row(what, med, best, theirs, tool, stat, bar=1.0, pk=None, min_pct=0):
    mine_v = best if stat == "best" and best else med
    ratio = mine_v / theirs if mine_v and theirs else None
    ok = "" if ratio is None else ("yes" if ratio >= bar and (not pk or 100 * med / pk >= min_pct) else "NO")
    pct = f"{100 * med / pk:.1f}" if med and pk else ""
    fmt = lambda v: "n/a" if v is None else f"{v:.1f}"
    rows.append(f"| {what} | {fmt(med)} | {fmt(best)} | {fmt(theirs)} ({tool}, {stat}) | {fmt(pk) if pk else ''} | {pct} | "
                f"{'' if ratio is None else f'{ratio:.3f}'} | >= {bar:g}x{f' and >= {min_pct} % of peak' if min_pct else ''}: {ok} |")
def dev(name): return mine("device", name), mine("device", name, "max")
row("device copy (read+write)", *dev("copy"), bs.get("Copy"), "BabelStream Copy", "best", 1.05, pk=peak, min_pct=90)
best_read = max([(bs.get("Dot", 0), "BabelStream Dot")] + [(bw, f"gpu-l2-cache at {kb / 1024:.0f} MiB") for kb, bw in dram_read])
row("device read", *dev("read"), best_read[0] or None, "best of BabelStream Dot, gpu-l2-cache past 3 x L2: " + best_read[1], "best", pk=peak)
if l2rows:
    kb145, bw145 = min(l2rows, key=lambda x: abs(x[0] * 1024 - 145e6))
    row(f"device read vs gpu-l2-cache at {kb145 / 1024:.0f} MiB (the README's figure)", *dev("read"), bw145, "gpu-l2-cache", "best", pk=peak)
row("device write", *dev("write"), max(init) if init else None, "gpu-stream init", "median", pk=peak)
row("device triad", *dev("triad"), bs.get("Triad"), "BabelStream Triad", "best", pk=peak)
for p in r["l2_sweep"]:
    fp = p["footprint_bytes"]
    if fp > 0.6 * l2_bytes or not l2rows: continue
    kb, bw = min(l2rows, key=lambda x: abs(x[0] * 1024 - fp))
    row(f"L2 read, {fp / 2**20:.0f} MiB (theirs {kb / 1024:.1f} MiB)", p["gbps"], p.get("best_gbps"), bw, "gpu-l2-cache", "best")
for p in r["l1_sweep"]:
    fp = p["footprint_bytes"]
    if fp > 192 * 1024 or not l1rows: continue
    kb, bw = min(l1rows, key=lambda x: abs(x[0] * 1024 - fp))
    row(f"L1 read, {fp / 1024:.0f} KiB/SM (theirs {kb:.0f} kB)", p["gbps"], p.get("best_gbps"), bw, "gpu-cache", "best")
def link(name): return mine("host link", name), mine("host link", name, "max")
row("H2D pinned", *link("H2D pinned"), nvb.get("host_to_device_memcpy_ce"), "nvbandwidth CE", "median", pk=link_peak)
row("D2H pinned", *link("D2H pinned"), nvb.get("device_to_host_memcpy_ce"), "nvbandwidth CE", "median", pk=link_peak)
row("bidirectional (H2D while D2H)", *link("bidirectional pinned (H2D)"), nvb.get("host_to_device_bidirectional_memcpy_ce"), "nvbandwidth CE", "median", pk=link_peak)
# Latency: gpu-latency's plateaus from the anchors' README (same GPU kind, 2026-11-29). Far L2 is
# compared at gpu-latency's own footprint (35-40 MB): our far-L2 plateau sits further out.
def curve_at(lo, hi):
    pts = sorted(p["cycles"] for p in r["latency"] if lo <= p["footprint_bytes"] <= hi)
    return pts[len(pts) // 2] if pts else None
lat = [("L1", mine("latency", "L1"), 34), ("near L2", mine("latency", "near L2"), 282),
       ("far L2 at 35-40 MB", curve_at(35e6, 40e6), 445), ("device memory", mine("latency", "device memory"), 660)]
for name, m, theirs in lat:
    ratio = m / theirs if m else None
    ok = "" if ratio is None else ("yes" if abs(ratio - 1) <= 0.10 else "NO")
    rows.append(f"| latency {name} (cycles) | {'n/a' if m is None else f'{m:.0f}'} | | {theirs} (gpu-latency, README) | | | "
                f"{'' if ratio is None else f'{ratio:.3f}'} | within 10 %: {ok} |")
far = mine("latency", "far L2")
if far: rows.append(f"| latency far-L2 plateau (0.7-0.8 x L2) | {far:.0f} | | | | | | not in the anchors |")
print("| measure | vramdoc median | vramdoc best | anchor (their figure, statistic) | peak | % of peak (median) | ratio (like for like) | bar |")
print("|---|---|---|---|---|---|---|---|")
print("\n".join(rows))
print(f"\nvramdoc SM clock during the latency run: {r.get('sm_clock_mhz', 0):.0f} MHz; notes: {'; '.join(r['notes'])}")
PY
