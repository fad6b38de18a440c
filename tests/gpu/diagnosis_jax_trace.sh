# Issue 15, points 3 and 4 on the GPU: (1) a JAX job with its default preallocation that keeps
# 64 MiB a step is a leak when its step marks carry JAX's bytes_in_use, and "inconclusive" naming the
# preallocation and XLA_PYTHON_CLIENT_PREALLOCATE=false when they do not;
# with XLA_PYTHON_CLIENT_PREALLOCATE=false (recorded in the header) the marks' bytes decide: a leak; with
# XLA_PYTHON_CLIENT_ALLOCATOR=platform (bytes_in_use is 0 there) the driver sees every buffer: a leak; (2) a 0.4 s CUDA program leaking 40
# allocations is a leak under --trace (agreeing with the tracer's call site) and inconclusive
# without it. About 40 s on an H200.
source "$(dirname "$0")/../cli_lib.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU: skipped"; exit 77; fi
dir=${OUT:-$(mktemp -d)}/diagnosis
mkdir -p "$dir"
here=$(dirname "$0")
verdict() { "$VRAMDOC" analyze "$1" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])'; }

if python3 -c "import jax; assert jax.devices()[0].platform == 'gpu'" 2>/dev/null; then
  # The job logs JAX's bytes_in_use in its step marks: through the preallocated pool those decide (a leak),
  # the pool still named. Without them (--no-bytes) the driver only sees the pool: inconclusive, naming the setting.
  check "jax, default preallocation" 0 timeout 120 "$VRAMDOC" run --out "$dir/jax.jsonl" -- python3 "$here/diagnosis_jax.py"
  contains "names the preallocation" "$err" "preallocated"
  v=$(verdict "$dir/jax.jsonl"); echo "jax default, bytes in the marks: $v"
  [[ $v == leak ]] || { echo "FAIL: jax default with step-end bytes: $v"; fails=$((fails + 1)); }
  check "jax, default preallocation, plain marks" 0 timeout 120 "$VRAMDOC" run --out "$dir/jax_plain.jsonl" -- \
    python3 "$here/diagnosis_jax.py" --no-bytes
  contains "names the preallocation" "$err" "preallocated"
  contains "says how to see through it" "$err" "XLA_PYTHON_CLIENT_PREALLOCATE=false"
  v=$(verdict "$dir/jax_plain.jsonl"); echo "jax default, plain marks: $v"
  [[ $v == inconclusive ]] || { echo "FAIL: jax default without step-end bytes: $v"; fails=$((fails + 1)); }
  check "jax, no preallocation" 0 env XLA_PYTHON_CLIENT_PREALLOCATE=false timeout 120 "$VRAMDOC" run --out "$dir/jax_noprealloc.jsonl" \
    -- python3 "$here/diagnosis_jax.py"
  contains "the setting is in the header" "$dir/jax_noprealloc.jsonl" '"XLA_PYTHON_CLIENT_PREALLOCATE":"false"'
  v=$(verdict "$dir/jax_noprealloc.jsonl"); echo "jax PREALLOCATE=false: $v"
  [[ $v == leak ]] || { echo "FAIL: jax without preallocation (step-end bytes in the marks): $v"; fails=$((fails + 1)); }
  check "jax, platform allocator" 0 env XLA_PYTHON_CLIENT_ALLOCATOR=platform timeout 120 "$VRAMDOC" run --out "$dir/jax_platform.jsonl" \
    -- python3 "$here/diagnosis_jax.py"
  v=$(verdict "$dir/jax_platform.jsonl"); echo "jax ALLOCATOR=platform: $v"
  [[ $v == leak ]] || { echo "FAIL: jax with the platform allocator: $v"; fails=$((fails + 1)); }
else
  echo "no JAX with a GPU: the JAX part is skipped"
fi

nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
if [[ -x $nvcc && -f $BUILD/libvramdoc-tracer.so ]]; then
  "$nvcc" -g -O0 -o "$dir/short_leak" "$here/short_leak.cu" || { echo "FAIL: nvcc"; exit 1; }
  check "short leak, traced" 0 "$VRAMDOC" run --trace --out "$dir/short_trace.jsonl" -- "$dir/short_leak"
  contains "traced: a leak" "$err" "verdict: leak"
  contains "traced: the call site" "$err" "keep_buffer"
  if grep -q "Nothing leaks" "$err"; then echo "FAIL: 'Nothing leaks' beside the tracer's leaks"; fails=$((fails + 1)); fi
  check "short leak, untraced" 0 "$VRAMDOC" run --out "$dir/short.jsonl" -- "$dir/short_leak"
  contains "untraced: inconclusive" "$err" "verdict: inconclusive"
else
  echo "no nvcc or no tracer: the short-program part is skipped"
fi
finish
