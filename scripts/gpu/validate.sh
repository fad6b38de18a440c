#!/usr/bin/env bash
# Runs every GPU-labelled test (tests/gpu/*.sh) on a GPU machine against a build that was made
# elsewhere and carried along, the way ctest -L gpu would, and writes one log per test.
# Usage: scripts/gpu/validate.sh BUILD_DIR OUTDIR [test-name-substring...]
set -u
build=$(cd "$1" && pwd) out=$2; shift 2
mkdir -p "$out"
export VRAMDOC=$build/vramdoc SRC=$(cd "$(dirname "$0")/../.." && pwd) BUILD=$build FAKES=$build/tests/fakes OUT=$out
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used,clocks.sm,clocks.mem --format=csv | tee "$out/nvidia-smi.txt"
summary=()
for t in "$SRC"/tests/gpu/*.sh; do
  name=$(basename "$t" .sh)
  if (($#)); then match=0; for f in "$@"; do [[ $name == *"$f"* ]] && match=1; done; ((match)) || continue; fi
  start=$(date +%s%N)
  timeout 300 bash "$t" >"$out/$name.log" 2>&1
  rc=$?
  ms=$((($(date +%s%N) - start) / 1000000))
  case $rc in 0) verdict=passed ;; 77) verdict=skipped ;; *) verdict="FAILED ($rc)" ;; esac
  summary+=("$(printf '%-28s %-12s %6d ms' "$name" "$verdict" "$ms")")
  echo "=== $name: $verdict"; tail -25 "$out/$name.log"
done
echo; echo "GPU tests:"; printf '  %s\n' "${summary[@]}" | tee "$out/summary.txt"
