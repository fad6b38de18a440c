#!/usr/bin/env bash
# h15b (issue 15, points 2 and 5). NEEDS TWO GPUs (GPU 0 and GPU 1): a 2-rank torchrun job.
# About 3 minutes. Writes everything under OUTDIR; one failing case does not stop the others.
#  a) vramdoc run around torchrun --nproc-per-node 2, rank 1 keeps 62.5 MiB a step, rank 0 stable
#  b) the same, both ranks stable (DDP)
#  c) the step hook's overhead: small fast steps, hook on/off (one GPU)
#  d) a single-process loop under vramdoc run with the step hook: its marks
#  e) single-GPU recordings with step marks: a 2 MiB/step leak, a stable job with a large eval
#     spike, a periodic eval leak (outputs kept with their graph every 5 steps)
# Beside each vramdoc recording, nvml_sampler.py (pynvml) records every process on every GPU.
set -u
OUT=${1:?usage: bash run.sh OUTDIR}
mkdir -p "$OUT"
here=$(pwd)
export NCCL_NVLS_ENABLE=0 PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
V=$here/vramdoc
log() { echo "[h15b $(date +%T)] $*"; }
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
python3 -c "import torch; print('torch', torch.__version__, 'gpus', torch.cuda.device_count())" 2>&1 | tee "$OUT/torch.txt"
# The step hook: this vramdoc injects it itself when it knows --no-step-hook; otherwise it is put
# on PYTHONPATH here (vramdoc run sets VRAMDOC_MARK_FILE either way).
if [[ ! -x $V ]]; then hook=(PYTHONPATH="$here/hook" VRAMDOC_STEP_HOOK=1); log "no vramdoc here: jobs run bare, marks to NAME.marks"
elif "$V" run --help 2>/dev/null | grep -q -- --no-step-hook; then hook=(); log "vramdoc injects the step hook"
else hook=(PYTHONPATH="$here/hook" VRAMDOC_STEP_HOOK=1); log "step hook through PYTHONPATH"; fi
if command -v torchrun >/dev/null; then trun=(torchrun); else trun=(python3 -m torch.distributed.run); fi

record() {  # record NAME COMMAND...: vramdoc run with the NVML sampler beside it, then analyze
  local name=$1; shift
  log "$name: $*"
  rm -f "$OUT/$name.stop"
  python3 "$here/nvml_sampler.py" "$OUT/$name.nvml.jsonl" "$OUT/$name.stop" 0.02 2>"$OUT/$name.sampler.err" &
  local sampler=$!
  sleep 0.5
  if [[ -x $V ]]; then
    timeout 150 env "${hook[@]}" "$V" run --interval 20ms --out "$OUT/$name.jsonl" --html "$OUT/$name.html" -- "$@" \
      >"$OUT/$name.out" 2>"$OUT/$name.err"
  else
    timeout 150 env "${hook[@]}" VRAMDOC_MARK_FILE="$OUT/$name.marks" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  fi
  echo "exit $?" >"$OUT/$name.rc"
  touch "$OUT/$name.stop"; sleep 0.3; kill "$sampler" 2>/dev/null; wait "$sampler" 2>/dev/null
  if [[ -x $V ]]; then
    timeout 60 "$V" analyze "$OUT/$name.jsonl" >"$OUT/$name.analyze.txt" 2>&1
    timeout 60 "$V" analyze "$OUT/$name.jsonl" --json >"$OUT/$name.analyze.json" 2>&1
  fi
  log "$name: $(cat "$OUT/$name.rc"); $(grep -m1 -i 'verdict' "$OUT/$name.err")"
}

mkdir -p "$OUT/a-truth" "$OUT/b-truth" "$OUT/d-truth" "$OUT/e-truth"
record a_two_ranks_leak "${trun[@]}" --standalone --nproc-per-node 2 "$here/job_ranks.py" --steps 80 --leak-rank 1 --truth "$OUT/a-truth"
record b_two_ranks_stable "${trun[@]}" --standalone --nproc-per-node 2 "$here/job_ranks.py" --steps 80 --truth "$OUT/b-truth"

log "c: step hook overhead"
marks=$(mktemp)
for i in 1 2; do
  env CUDA_VISIBLE_DEVICES=0 PYTHONPATH="$here/hook" VRAMDOC_STEP_HOOK=1 VRAMDOC_MARK_FILE="$marks" timeout 120 python3 "$here/bench_step_hook.py" --mode paired >>"$OUT/c_bench.jsonl" 2>>"$OUT/c_bench.err"
  env CUDA_VISIBLE_DEVICES=0 PYTHONPATH="$here/hook" VRAMDOC_STEP_HOOK=1 VRAMDOC_MARK_FILE="$marks" timeout 120 python3 "$here/bench_step_hook.py" --mode paired --width 4096 --batch 512 --blocks 20 >>"$OUT/c_bench.jsonl" 2>>"$OUT/c_bench.err"
  env CUDA_VISIBLE_DEVICES=0 timeout 120 python3 "$here/bench_step_hook.py" --mode plain >>"$OUT/c_bench.jsonl" 2>>"$OUT/c_bench.err"
  env CUDA_VISIBLE_DEVICES=0 PYTHONPATH="$here/hook" VRAMDOC_STEP_HOOK=1 VRAMDOC_MARK_FILE="$marks" timeout 120 python3 "$here/bench_step_hook.py" --mode plain >>"$OUT/c_bench.jsonl" 2>>"$OUT/c_bench.err"
done
wc -l <"$marks" >"$OUT/c_marks_lines.txt"; head -3 "$marks" >>"$OUT/c_marks_lines.txt"; rm -f "$marks"
cat "$OUT/c_bench.jsonl"

export CUDA_VISIBLE_DEVICES=0
record d_single_hook python3 "$here/job_ranks.py" --steps 60 --truth "$OUT/d-truth"
record e_slow_leak python3 "$here/job_ranks.py" --steps 150 --step-sleep 0.02 --slow-leak-mib 2
record e_eval_spike python3 "$here/job_ranks.py" --steps 100 --step-sleep 0.02 --eval-every 10 --eval-spike-mib 2048
record e_periodic_eval_leak python3 "$here/job_ranks.py" --steps 60 --step-sleep 0.02 --eval-every 5 --eval-keep
log "done"
