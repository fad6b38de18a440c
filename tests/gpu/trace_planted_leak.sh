#!/usr/bin/env bash
# The allocation tracer on a planted-leak program (CUDA runtime linked statically): its leaks
# and call sites must match compute-sanitizer --leak-check full exactly, and a program killed
# with SIGKILL must still leave its trace up to the last flush interval.
# Env (ctest sets them): SRC (source tree), BUILD (holds libvramdoc-tracer.so), VRAMDOC (the binary).
# OUT (optional): a folder that keeps the reports.
set -u
cuda=${CUDA_HOME:-/usr/local/cuda}
nvcc=$(command -v nvcc || echo "$cuda/bin/nvcc")
sanitizer=$(command -v compute-sanitizer || echo "$cuda/bin/compute-sanitizer")
tracer=$BUILD/libvramdoc-tracer.so
report() { "${VRAMDOC:-$BUILD/vramdoc}" trace "$@"; }
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU here: skipped"; exit 77; fi
if [[ ! -f $tracer ]]; then echo "vramdoc was built without CUPTI (no $tracer): skipped"; exit 77; fi
if [[ ! -x $nvcc ]]; then echo "no nvcc: skipped"; exit 77; fi
work=${OUT:-$(mktemp -d)}/planted
mkdir -p "$work"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$nvcc" -g -O0 -o "$work/planted_leak" "$SRC/tests/gpu/planted_leak.cu" || { echo "FAIL: nvcc"; exit 1; }

# 1. Traced run: the report must name the three planted call sites.
rm -rf "$work/trace" && mkdir -p "$work/trace"
start=$(date +%s%N)
CUDA_INJECTION64_PATH=$tracer VRAMDOC_TRACE_DIR=$work/trace "$work/planted_leak" || fail "traced run"
echo "traced run: $(( ($(date +%s%N) - start) / 1000000 )) ms"
report "$work/trace" >"$work/report.txt" || fail "report"
report --json "$work/trace" >"$work/report.json" || fail "json report"
cat "$work/report.txt"
python3 "$SRC/tests/gpu/trace_compare_leaks.py" "$work/report.json" --expect \
  leak_site_a=3x1048576 leak_site_b=1x5242880 leak_site_c_inner=1x3145728 || fail "leaks differ from the planted ones"

# 2. compute-sanitizer on the same binary: the same leaks at the same call sites.
if [[ -x $sanitizer ]]; then
  "$sanitizer" --leak-check full "$work/planted_leak" >"$work/sanitizer.txt" 2>&1
  grep -E "Leaked|LEAK SUMMARY|ERROR SUMMARY|Host Frame" "$work/sanitizer.txt" | head -40
  python3 "$SRC/tests/gpu/trace_compare_leaks.py" "$work/report.json" "$work/sanitizer.txt" || fail "tracer and compute-sanitizer disagree"
else
  echo "no compute-sanitizer: comparison skipped"
fi

# 3. Killed with SIGKILL: the periodic flush (100 ms here) kept the leaks.
rm -rf "$work/killed" && mkdir -p "$work/killed"
CUDA_INJECTION64_PATH=$tracer VRAMDOC_TRACE_DIR=$work/killed VRAMDOC_TRACE_FLUSH_MS=100 \
  "$work/planted_leak" hang >"$work/killed.out" &
pid=$!
for _ in $(seq 100); do grep -q planted_leak "$work/killed.out" && break; sleep 0.1; done
sleep 0.5
kill -9 $pid; wait $pid 2>/dev/null
report --json "$work/killed" >"$work/killed.json" || fail "report of the killed run"
python3 "$SRC/tests/gpu/trace_compare_leaks.py" "$work/killed.json" --expect \
  leak_site_a=3x1048576 leak_site_b=1x5242880 leak_site_c_inner=1x3145728 || fail "killed run lost events"

# 4. The user's path, end to end: `vramdoc run --trace` around the same program must set up the
# tracer itself and report the three planted call sites after the driver's diagnosis, with the
# traced bytes drawn in the HTML chart.
if [[ -x ${VRAMDOC:-} ]]; then
  "$VRAMDOC" run --trace --out "$work/run.jsonl" --html "$work/run.html" -- "$work/planted_leak" \
    >"$work/run.out" 2>"$work/run.err" || fail "vramdoc run --trace exit status"
  cat "$work/run.err"
  sed -n '/Alive at exit/,/stack:/p' "$work/run.err" >"$work/run.leaks"
  for row in '5\.00 MiB +1 +device +leak_site_b\(\) \(planted_leak\.cu:33\)' \
             '3\.00 MiB +3 +device +leak_site_a\(\) \(planted_leak\.cu:25\)' \
             '3\.00 MiB +1 +device +leak_site_c_inner\(\) \(planted_leak\.cu:40\)'; do
    grep -qE "$row" "$work/run.leaks" || fail "run --trace: no leak row like $row"
  done
  grep -q "Traced allocations" "$work/run.err" || fail "run --trace: no traced-bytes section"
  grep -q 'class="mark traced"' "$work/run.html" || fail "run --trace: no traced line in the HTML chart"
  ls "$work/run.trace"/trace.*.vdt >/dev/null 2>&1 || fail "run --trace: no trace file next to the timeline"
else
  echo "VRAMDOC not set: the run --trace check is skipped"
fi

if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
