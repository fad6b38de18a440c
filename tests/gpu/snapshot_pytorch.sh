#!/usr/bin/env bash
# `vramdoc analyze snap.pickle` on snapshots PyTorch writes on this machine (docs/snapshots.md):
#  - a loop that keeps 1 MiB per step (scripts/gpu/record_snapshots.py leak_python): verdict leak,
#    the line that keeps the memory named with its 100 allocations;
#  - a job that runs out of memory under `vramdoc run --trace-python`: the hook pickles PyTorch's
#    snapshot at the OOM (python.PID.oom.pickle) and the report names what held the memory.
# About 30 s. Env (ctest sets them): SRC, VRAMDOC. OUT (optional): a folder that keeps the results.
set -u
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU here: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then echo "no PyTorch with CUDA: skipped"; exit 77; fi
work=${OUT:-$(mktemp -d)}/snapshots
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

timeout 120 python3 "$SRC/scripts/gpu/record_snapshots.py" leak_python "$work/leak.pickle" >"$work/leak.log" 2>&1 || fail "recording the leaking loop"
line=$(python3 -c "import json; print(json.load(open('$work/leak.meta.json'))['leak_line'])" 2>/dev/null)
"$VRAMDOC" analyze "$work/leak.pickle" >"$work/leak.txt" 2>&1
rc=$?; [[ $rc == 1 ]] || fail "analyze exit status $rc, wanted 1 (a leak is analyze's 'no', docs/cli.md)"
"$VRAMDOC" analyze "$work/leak.pickle" --json --html "$work/leak.html" >"$work/leak.json" 2>&1
rc=$?; [[ $rc == 1 ]] || fail "analyze --json --html exit status $rc, wanted 1"
sed -n '1,12p' "$work/leak.txt"
grep -q "verdict: leak" "$work/leak.txt" || fail "the leaking loop is not a leak"
grep -qE "100\.00 MiB +100 .*record_snapshots\.py:$line leak_loop" "$work/leak.txt" || fail "the leaking line (record_snapshots.py:$line) is not named"
python3 -c "import torch; print('torch', torch.__version__)" | tee "$work/torch.txt"

timeout 120 "$VRAMDOC" run --trace-python --out "$work/oom.jsonl" -- python3 "$SRC/tests/data/snapshots/hook_oom_job.py" \
  >"$work/oom.out" 2>"$work/oom.err" || fail "run --trace-python exit status"
sed -n "/PyTorch's memory snapshot at/,/segments at/p" "$work/oom.err"
grep -q "PyTorch's memory snapshot at the process's first out-of-memory error" "$work/oom.err" || fail "no OOM snapshot section"
grep -qE "GiB +[0-9]+ +hook_oom_job\.py:10 <module>" "$work/oom.err" || fail "the OOM's holder (hook_oom_job.py:10) is not named"
ls "$work"/oom.trace/python.*.oom.pickle >/dev/null 2>&1 || fail "no python.PID.oom.pickle"
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
