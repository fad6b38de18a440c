#!/usr/bin/env bash
# The allocation tracer on a real PyTorch training loop:
#  - slowdown per step with the tracer (median step time, runs interleaved), target < 3 %;
#  - every allocation accounted for (allocations = releases + live, no release of an unknown
#    address) and the traced peak >= the peak PyTorch's allocator reserved;
#  - expandable segments (cuMemCreate / cuMemMap) are seen;
#  - a loop that keeps a 1 MiB tensor per step, run with PYTORCH_NO_CUDA_MEMORY_CACHING=1, shows
#    them as one accumulating group whose call site is torch.full (THPVariable_full).
# Env (ctest sets them): SRC, BUILD, VRAMDOC (default $BUILD/vramdoc). OUT (optional): a folder that keeps the results.
set -u
tracer=$BUILD/libvramdoc-tracer.so
report() { "${VRAMDOC:-$BUILD/vramdoc}" trace "$@"; }
loop=$SRC/tests/gpu/trace_pytorch_loop.py
steps=${TRACE_STEPS:-300}
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU here: skipped"; exit 77; fi
if [[ ! -f $tracer ]]; then echo "vramdoc was built without CUPTI (no $tracer): skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then echo "no PyTorch with CUDA: skipped"; exit 77; fi
work=${OUT:-$(mktemp -d)}/pytorch
mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
traced() {  # traced NAME [ENV=VALUE...] -- python args: runs the loop under the tracer into $work/NAME
  local name=$1; shift
  local envs=(); while [[ $1 != -- ]]; do envs+=("$1"); shift; done; shift
  rm -rf "$work/$name" && mkdir -p "$work/$name"
  env "${envs[@]}" CUDA_INJECTION64_PATH="$tracer" VRAMDOC_TRACE_DIR="$work/$name" python3 "$loop" "$@" >"$work/$name.json"
  report --json "$work/$name" >"$work/$name.report.json"
}

# 1. Slowdown: base, traced, base, traced; the best median of each.
for round in 1 2; do
  python3 "$loop" --steps "$steps" >"$work/base$round.json" || fail "untraced run"
  traced "traced$round" -- --steps "$steps" || fail "traced run"
done
# 2. Expandable segments (VMM), and a leaking loop seen tensor by tensor.
traced expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True -- --steps 50 || fail "expandable run"
traced leak PYTORCH_NO_CUDA_MEMORY_CACHING=1 -- --steps 100 --warmup 0 --leak || fail "leak run"

python3 - "$work" <<'PY' || fail "accounting or slowdown"
import json, sys
work = sys.argv[1]
load = lambda name: json.load(open(f"{work}/{name}"))
ok = True
def check(cond, what):
    global ok
    print(("ok   " if cond else "FAIL ") + what)
    ok &= bool(cond)
base = min(load(f"base{r}.json")["median_step_ms"] for r in (1, 2))
traced = min(load(f"traced{r}.json")["median_step_ms"] for r in (1, 2))
slowdown = (traced / base - 1) * 100
print(f"median step: {base:.4f} ms untraced, {traced:.4f} ms traced: {slowdown:+.2f} %")
check(slowdown < 3.0, "slowdown under 3 %")
for name in ("traced1", "traced2", "expandable", "leak"):
    run, rep = load(f"{name}.json"), load(f"{name}.report.json")["processes"]
    check(len(rep) == 1, f"{name}: one traced process")
    p = rep[0]
    print(f"  {name}: allocations {p['allocations']} releases {p['releases']} live {p['live']} "
          f"unmatched {p['unmatched_releases']} live_bytes {p['live_bytes']} peak {p['peak_bytes']} | "
          f"torch reserved {run['reserved_bytes']} max {run['max_reserved_bytes']} "
          f"segments {run['segments_allocated']}/{run['segments_freed']}")
    check(p["allocations"] == p["releases"] + p["live"], f"{name}: allocations = releases + live")
    check(p["unmatched_releases"] == 0, f"{name}: no release of an untraced address")
    check(p["peak_bytes"] >= run["max_reserved_bytes"], f"{name}: traced peak >= torch max reserved")
    check(p["pytorch"], f"{name}: PyTorch detected (caching-allocator note shown)")
exp = load("expandable.report.json")["processes"][0]
vmm = [g for g in exp["peak_contributors"] if g["kind"] == "vmm"]
check(vmm, "expandable: cuMemCreate allocations traced")
# Python's teardown frees the kept tensors before exit: the leak shows as accumulating.
grown = load("leak.report.json")["processes"][0]["accumulating"]
top = next((g for g in grown if g["count"] >= 90 and g["bytes"] == g["count"] << 20), {})
check(top, "leak: an accumulating group holds the kept tensors of 1 MiB")
check("THPVariable_full" in top.get("call_site", ""), "leak: its call site is torch.full's binding")
print("leak call site:", top.get("call_site"))
print("leak stack:", [f["function"] for f in top.get("stack", [])][:12])
sys.exit(0 if ok else 1)
PY
report "$work/leak" >"$work/leak.report.txt" && head -60 "$work/leak.report.txt"
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
