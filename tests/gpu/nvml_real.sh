# On a GPU machine: the NVML backend against the real driver (memory v2 adds up, static facts,
# a full sample) and, where nvcc can build tests/gpu/holder.cu, a process holding 1 GiB shows
# up in the process list with its memory. Exit 77 (skipped) without a GPU.
set -u
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: nvidia-smi -L finds no NVIDIA GPU"
  exit 77
fi
holder=${VRAMDOC_HOLDER:-$BUILD/gpu/holder}
if [[ ! -x $holder ]] && command -v nvcc >/dev/null 2>&1; then
  mkdir -p "$(dirname "$holder")" && nvcc -O2 -cudart static -o "$holder" "$SRC/tests/gpu/holder.cu"
fi
if [[ -x $holder ]]; then
  "$holder" &
  holder_pid=$!
  trap 'kill $holder_pid 2>/dev/null' EXIT
  sleep 3
  export VRAMDOC_HOLDER_PID=$holder_pid
else
  echo "note: no nvcc and no \$VRAMDOC_HOLDER: the process-list check is skipped"
fi
VRAMDOC_REAL_NVML=1 "$BUILD/tests/unit_tests" --gtest_filter='NvmlReal.*'
