#!/usr/bin/env bash
# h17 (issue 17: PyTorch memory snapshots). ONE GPU (GPU 0). About 4-5 minutes, every step under
# `timeout`; one failing case does not stop the others. Writes under OUTDIR only small files
# (< 12 MiB in all); the large snapshots live in a temporary folder and are deleted at the end.
#  1. small real snapshots (record_snapshots.py): leak (default recording, C++ stacks too),
#     leak_python, stable, oom_leak, oom_big, fragmented, expandable (expandable_segments:True)
#  2. vramdoc's --trace-python hook (hook/sitecustomize.py, the new OOM record: a snapshot pickle)
#     on a job that runs out of memory
#  3. inspect_snapshot.py: protocol, opcodes, what memo references point at, keys, actions
#  4. long training loops with full history: ~10 MB, ~100 MB, ~1 GB snapshots (sizes, record and
#     dump times), Python's own pickle.load time and peak RSS on each; the ~10 MB one comes back
#     xz-compressed (for replication into larger files), the others only as numbers
set -u
OUT=${1:?usage: bash run.sh OUTDIR}
mkdir -p "$OUT/small" "$OUT/hook"
here=$(pwd)
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
big=$(mktemp -d /tmp/h17big.XXXX)
trap 'rm -rf "$big"' EXIT
log() { echo "[h17 $(date +%T)] $*" | tee -a "$OUT/log.txt"; }
nvidia-smi >"$OUT/nvidia-smi.txt" 2>&1
python3 -c "import torch, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'gpus', torch.cuda.device_count())" 2>&1 | tee -a "$OUT/log.txt"

scenario() {  # scenario NAME [ENV=...]
  local name=$1; shift
  log "scenario $name"
  timeout 120 env "$@" python3 "$here/record_snapshots.py" "${name}" "$OUT/small/$name.pickle" \
    >>"$OUT/small/$name.log" 2>&1
  log "scenario $name: exit $? $(ls -la "$OUT/small/$name"*.pickle 2>/dev/null | awk '{print $5, $9}' | tr '\n' ' ')"
}
scenario leak
scenario leak_python
scenario stable
scenario oom_leak
scenario oom_big
scenario fragmented
scenario expandable PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True

log "hook: OOM job under the --trace-python hook"
timeout 120 env PYTHONPATH="$here/hook" VRAMDOC_PYTHON_TRACE_DIR="$OUT/hook" python3 "$here/hook_oom_job.py" \
  >"$OUT/hook/job.log" 2>&1
log "hook: exit $?; $(ls -la "$OUT/hook" | awk '{print $5, $9}' | tr '\n' ' ')"

log "inspect"
timeout 120 python3 "$here/inspect_snapshot.py" "$OUT"/small/*.pickle "$OUT"/hook/*.pickle >"$OUT/inspect.json" 2>"$OUT/inspect.err"
log "inspect: exit $?"

long() {  # long NAME ITERS TIMEOUT
  log "long $1: $2 iterations"
  timeout "$3" python3 "$here/record_snapshots.py" long "$big/$1.pickle" --iters="$2" >>"$OUT/long.log" 2>&1
  log "long $1: exit $? $(ls -la "$big/$1.pickle" 2>/dev/null | awk '{print $5}') bytes"
  cp "$big/$1.meta.json" "$OUT/long_$1.meta.json" 2>/dev/null
}
python_load() {  # python_load NAME: Python's pickle.load of the file, time and peak RSS
  [ -f "$big/$1.pickle" ] || return
  timeout 150 python3 -c "
import pickle, resource, sys, time, json
t0 = time.perf_counter(); s = pickle.load(open(sys.argv[1], 'rb')); t = time.perf_counter() - t0
print(json.dumps({'file': sys.argv[1], 'pickle_load_seconds': t, 'peak_rss_kib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                  'entries': sum(len(d) for d in s['device_traces'])}))" "$big/$1.pickle" >>"$OUT/python_load.jsonl" 2>>"$OUT/long.log"
  log "python load $1: $(tail -1 "$OUT/python_load.jsonl")"
}
long calibrate 2000 90
per_iter=$(python3 -c "import json; m = json.load(open('$big/calibrate.meta.json')); print(max(1, m['bytes'] // m['iters']))" 2>/dev/null || echo 2000)
log "bytes per iteration: $per_iter"
long 10mb $((10000000 / per_iter)) 90
long 100mb $((100000000 / per_iter)) 120
t100=$(python3 -c "import json; m = json.load(open('$OUT/long_100mb.meta.json')); print(int(m['seconds']))" 2>/dev/null || echo 999)
if ((t100 < 14)); then long 1gb $((1000000000 / per_iter)) 170; else log "long 1gb skipped: 100 MB took ${t100}s (1 GB would take > 2.5 min)"; fi
python_load 10mb
python_load 100mb
python_load 1gb
if [ -f "$big/10mb.pickle" ]; then
  xz -T0 -9 -c "$big/10mb.pickle" >"$OUT/long_10mb.pickle.xz" 2>/dev/null ||
    python3 -c "import lzma, sys; open(sys.argv[2], 'wb').write(lzma.compress(open(sys.argv[1], 'rb').read(), preset=9))" "$big/10mb.pickle" "$OUT/long_10mb.pickle.xz"
fi
log "done; OUT holds $(du -sh "$OUT" | cut -f1)"
