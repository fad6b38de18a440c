#!/usr/bin/env bash
# Issue 15 (points 1, 3, 4, 6, 7): real GPU-memory timelines recorded with vramdoc run ($VRAMDOC,
# default build/vramdoc) for the classifier's tests (tests/data/timelines/issue15_*). ONE GPU: the
# first of CUDA_VISIBLE_DEVICES (GPU 0 by default). About 3 minutes; each case has a timeout and a
# failing case does not stop the others. Usage: bash scripts/gpu/record_diagnosis.sh OUTDIR
#   (a) periodic eval leak (eval every 5 steps without no_grad, outputs kept) recorded 3 times
#   (b) a stable loop with a large eval spike every 10 steps   (c) a 2 MiB/step leak inside the cache
#   (d) JAX keeping 64 MiB a step: default preallocation, PREALLOCATE=false, ALLOCATOR=platform
#   (e) a 0.4 s CUDA program leaking 40 allocations (70 MiB), under --trace and without
#   (f) an insufficient Llama job (needs ~200 GiB) and its peaks at smaller batches (ground truth)
#   (g) the probe model's peak against batch, to the exact largest batch (probe simulations)
set -u
OUT=${1:?usage: bash run.sh OUTDIR}
mkdir -p "$OUT"
HERE=$(cd "$(dirname "$0")/../.." && pwd)/tests/gpu
V=${VRAMDOC:-$(cd "$(dirname "$0")/../.." && pwd)/build/vramdoc}
visible=${CUDA_VISIBLE_DEVICES:-0}
export CUDA_VISIBLE_DEVICES=${visible%%,*}
export NCCL_NVLS_ENABLE=0
start=$(date +%s)
log() { echo "[$(( $(date +%s) - start ))s] $*"; }
# case NAME TIMEOUT COMMAND...: stdout/stderr to OUT/NAME.out/.err, the status into the log
case_() {
  local name=$1 limit=$2; shift 2
  log "$name: $*"
  timeout -k 5 "$limit" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  local rc=$?
  log "$name: exit $rc"
  echo "$name $rc" >>"$OUT/status.txt"
  grep -E "verdict:|^vramdoc run: the job exited" "$OUT/$name.err" | head -3
}
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
python3 -c "import torch, jax, transformers; print('torch', torch.__version__, 'jax', jax.__version__, 'transformers', transformers.__version__)" >"$OUT/versions.txt" 2>&1
"$V" --version >>"$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"
J=$HERE/diagnosis_jobs.py

for i in 1 2 3; do
  case_ periodic_eval_$i 60 "$V" run --out "$OUT/periodic_eval_$i.jsonl" -- python3 "$J" periodic_eval
done
case_ eval_spike 60 "$V" run --out "$OUT/eval_spike.jsonl" -- python3 "$J" eval_spike
case_ slow_leak 60 "$V" run --out "$OUT/slow_leak.jsonl" -- python3 "$J" slow_leak

case_ jax_prealloc 60 "$V" run --out "$OUT/jax_prealloc.jsonl" -- python3 "$HERE/diagnosis_jax.py"
case_ jax_noprealloc 60 env XLA_PYTHON_CLIENT_PREALLOCATE=false "$V" run --out "$OUT/jax_noprealloc.jsonl" -- python3 "$HERE/diagnosis_jax.py"
case_ jax_platform 60 env XLA_PYTHON_CLIENT_ALLOCATOR=platform "$V" run --out "$OUT/jax_platform.jsonl" -- python3 "$HERE/diagnosis_jax.py"

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if "$nvcc" -g -O0 -o "$OUT/short_leak" "$HERE/short_leak.cu" >"$OUT/nvcc.log" 2>&1; then
  case_ short_leak_trace 60 "$V" run --trace --out "$OUT/short_leak_trace.jsonl" -- "$OUT/short_leak"
  case_ short_leak 60 "$V" run --out "$OUT/short_leak.jsonl" -- "$OUT/short_leak"
else
  log "nvcc failed: $(tail -3 "$OUT/nvcc.log")"
fi

B=128  # the estimator: about 208 GiB (vramdoc estimate --config diagnosis_llama.json --batch 128 --seq 2048)
case_ insufficient 90 "$V" run --out "$OUT/insufficient.jsonl" --config "$HERE/diagnosis_llama.json" --batch $B --seq 2048 \
  -- python3 "$J" insufficient $B
case_ need 120 python3 "$J" need $((B / 16)) $((B / 8)) $((B / 4)) $((B / 2))
cat "$OUT/need.out"

case_ probe_curve 120 python3 "$HERE/../../scripts/gpu/probe_curve.py"
tail -3 "$OUT/probe_curve.out"
rm -f "$OUT/short_leak"
log "all done"
