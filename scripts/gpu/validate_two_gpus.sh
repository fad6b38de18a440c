#!/usr/bin/env bash
# The whole GPU suite on a machine with two GPUs in one call: scripts/gpu/validate.sh in phases.
# Quiet phase first (measurements against nvidia-smi and watch's CPU cost, alone on the machine),
# then the two-GPU tests, then two lanes of one-GPU tests in parallel (GPU 0 and GPU 1).
# Usage (on the GPU machine, from the repository root, after scripts/gpu/bundle.sh here):
#   scripts/gpu/validate_two_gpus.sh BUDGET_S "quiet tests" "two-GPU tests" "GPU 0 tests" "GPU 1 tests"
# Test names are substrings as validate.sh takes them. Logs go to /tmp/val/<phase>/ and, packed
# into one val.tgz, to $OUT (few files: the device tool brings back only a few).
set -u
budget=$1 quiet=$2 two=$3 lane0=$4 lane1=$5
start=$(date +%s)
mkdir -p /tmp/val "$OUT"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1
left() { echo $((budget - ($(date +%s) - start))); }
phase() { # name cuda_visible_devices|all tests...
  local n=$1 g=$2 l
  shift 2
  (($#)) || return 0
  l=$(left)
  ((l > 15)) || { echo "=== phase $n skipped: no time"; return; }
  echo "=== phase $n (GPUs $g, ${l}s left) $(date +%T)"
  if [[ $g == all ]]; then timeout -k 5 "$l" bash scripts/gpu/validate.sh .device/build /tmp/val/$n "$@" > /tmp/val/$n.log 2>&1
  else CUDA_VISIBLE_DEVICES=$g timeout -k 5 "$l" bash scripts/gpu/validate.sh .device/build /tmp/val/$n "$@" > /tmp/val/$n.log 2>&1; fi
  echo "=== phase $n rc=$? $(date +%T)"
  cat /tmp/val/$n/summary.txt 2>/dev/null
}
nvidia-smi > /tmp/val/nvidia-smi-full.txt 2>&1
python3 -c 'import sys, torch; print(sys.version, torch.__version__, torch.cuda.device_count())' > /tmp/val/python.txt 2>&1
# shellcheck disable=SC2086  # the test lists are words
phase quiet all $quiet
# shellcheck disable=SC2086
phase two all $two
# shellcheck disable=SC2086
phase lane0 0 $lane0 &
# shellcheck disable=SC2086
phase lane1 1 $lane1 &
wait
echo "=== done $(date +%T), $(($(date +%s) - start)) s"
tar -C /tmp -czf "$OUT/val.tgz" val
