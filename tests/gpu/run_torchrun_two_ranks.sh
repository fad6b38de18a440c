#!/usr/bin/env bash
# `vramdoc run` around a real 2-process torchrun job on two GPUs (issue 15, point 2): rank 1 keeps
# 62.5 MiB a step, rank 0 is stable. The report must name rank 1 with its own growth (from the
# step hook's marks) and judge each process against its own GPU, not the sum; a stable DDP job of
# two ranks is stable. Needs two GPUs (skipped with a message otherwise). NCCL_NVLS_ENABLE=0.
# Env (ctest sets them): SRC, VRAMDOC. OUT (optional): a folder that keeps the results.
set -u
job=$SRC/tests/gpu/ranks_job.py
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [[ $gpus -lt 2 ]]; then echo "needs two NVIDIA GPUs, found ${gpus:-0}: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.device_count() >= 2" 2>/dev/null; then echo "no PyTorch with two CUDA devices: skipped"; exit 77; fi
if command -v torchrun >/dev/null; then trun=(torchrun); else trun=(python3 -m torch.distributed.run); fi
export NCCL_NVLS_ENABLE=0
work=${OUT:-$(mktemp -d)}/torchrun-two-ranks
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

echo "1. rank 1 keeps 62.5 MiB a step"
timeout 300 "$VRAMDOC" run --out "$work/leak.jsonl" --html "$work/leak.html" -- \
  "${trun[@]}" --standalone --nproc-per-node 2 "$job" --steps 80 --leak-rank 1 >"$work/leak.out" 2>"$work/leak.err" ||
  fail "run around torchrun: exit status $?"
sed -n '/^diagnosis of/,/what to do/p' "$work/leak.err"
grep -qE 'verdict: leak: rank 1 \(pid [0-9]+, GPU [0-9]+\) leaks 62\.50 MiB per step; rank 0 stable\.' "$work/leak.err" ||
  fail "the leaking rank is not named with 62.50 MiB per step"
python3 - "$work/leak.jsonl" <<'PY' || fail "the timeline lacks per-rank series or step marks"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines[0]["vramdoc_timeline"] == 2 and len(lines[0]["gpus"]) >= 2, lines[0]
series = [l["series"] for l in lines if isinstance(l, dict) and "series" in l]
ranks = sorted(s["rank"] for s in series if s["rank"] is not None)
assert ranks == [0, 1], series
assert len({s["gpu"] for s in series}) == 2, series
pids = {s["pid"] for s in series}
marks = [l for l in lines if isinstance(l, dict) and "mark" in l and l["mark"].startswith("step ")]
assert {m.get("pid") for m in marks} == pids, (pids, {m.get("pid") for m in marks})
assert all("allocated" in m and "reserved" in m for m in marks)
print("series", series, "step marks", len(marks))
PY
"$VRAMDOC" analyze "$work/leak.jsonl" --json >"$work/leak.analyze.json"
rc=$?
[[ $rc == 1 ]] || fail "analyze exit status $rc, wanted 1 (a leak is analyze's 'no', docs/cli.md)"
python3 - "$work/leak.analyze.json" <<'PY' || fail "analyze disagrees"
import json, sys
j = json.load(open(sys.argv[1]))
p = j["processes"]
assert j["verdict"] == "leak" and [x["verdict"] for x in p["processes"]] == ["stable", "leak"], p
cap = p["processes"][0]["capacity_bytes"]
assert cap and cap < 200 * 2**30, cap  # one GPU's capacity, not the sum of two
print(p["summary"])
PY

echo "2. a stable DDP job of two ranks"
timeout 300 "$VRAMDOC" run --out "$work/stable.jsonl" -- "${trun[@]}" --standalone --nproc-per-node 2 "$job" --steps 80 \
  >"$work/stable.out" 2>"$work/stable.err" || fail "stable run: exit status $?"
grep -E '^  verdict:' "$work/stable.err"
grep -qE 'verdict: stable: ranks 0-1 stable\.' "$work/stable.err" || fail "the stable job is not stable on both ranks"
[[ $fails -eq 0 ]] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
