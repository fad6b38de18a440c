#!/usr/bin/env bash
# `vramdoc run` around a real torchrun job of one process per GPU on a machine of four or more GPUs
# (issue 33): the last rank keeps 62.5 MiB a step, the others are stable. The report must name that
# rank, judge every rank against its own GPU, and stay readable (the verdict on one line, no line of
# the text report over 100 columns). Skipped with a message on fewer than four GPUs. NCCL_NVLS_ENABLE=0.
# Env (ctest sets them): SRC, VRAMDOC. OUT (optional): a folder that keeps the results.
set -u
job=$SRC/tests/gpu/ranks_job.py
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
if [[ $gpus -lt 4 ]]; then echo "needs four or more NVIDIA GPUs, found ${gpus:-0}: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.device_count() >= 4" 2>/dev/null; then echo "no PyTorch with four CUDA devices: skipped"; exit 77; fi
if command -v torchrun >/dev/null; then trun=(torchrun); else trun=(python3 -m torch.distributed.run); fi
export NCCL_NVLS_ENABLE=0
last=$((gpus - 1))
work=${OUT:-$(mktemp -d)}/torchrun-many-ranks
rm -rf "$work" && mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

echo "rank $last of $gpus keeps 62.5 MiB a step"
timeout 400 "$VRAMDOC" run --out "$work/leak.jsonl" --html "$work/leak.html" -- \
  "${trun[@]}" --standalone --nproc-per-node "$gpus" "$job" --steps 80 --leak-rank "$last" >"$work/leak.out" 2>"$work/leak.err" ||
  fail "run around torchrun: exit status $?"
sed -n '/^diagnosis of/,/what to do/p' "$work/leak.err"
grep -qE "verdict: leak: rank $last \(pid [0-9]+, GPU [0-9]+\) leaks 62\.50 MiB per step; ranks 0-$((last - 1)) stable\." "$work/leak.err" ||
  fail "the leaking rank is not named with 62.50 MiB per step"
wide=$(awk 'length > 100' "$work/leak.err" | wc -l)
[[ $wide == 0 ]] || fail "$wide lines of the report are wider than 100 columns"
"$VRAMDOC" analyze "$work/leak.jsonl" --json >"$work/leak.analyze.json"
[[ $? == 1 ]] || fail "analyze did not answer 'no' (1) for a leak"
python3 - "$work/leak.analyze.json" "$gpus" <<'PY' || fail "analyze disagrees"
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
p = j["processes"]["processes"]
assert j["verdict"] == "leak" and [x["verdict"] for x in p] == ["stable"] * (n - 1) + ["leak"], [x["verdict"] for x in p]
assert len({x["gpu"] for x in p}) == n, p
PY
[[ $fails -eq 0 ]] && echo "all checks passed" || { echo "$fails check(s) failed"; exit 1; }
