#!/usr/bin/env bash
# Issue 30, round 3, on one GPU in one call of at most 420 s: the GPU test probe_pytorch alone
# first, then vramdoc probe beside Lightning's and accelerate's finders on probe_jobs.py's jobs
# (bert, bert-dyn, cnn, llama, and the held-out vit and gpt2m; llama's {seq} too), each on an
# emulated smaller card, every value found run again for 50 steps (scripts/gpu/probe_compare.py).
# Usage: scripts/gpu/probe_round3.sh OUT [BUILD_DIR (default .device/build)] [TOTAL_S (default 410)]
# Writes OUT/gpu-tests/ (validate.sh's logs), OUT/summary.json, OUT/table.md and
# OUT/compare-raw.tar.xz (each case's log, probe's kept trials: one file, so the copy back stays
# small). Needs no network: the models are built from configs.
set -u
out=$1 build=${2:-.device/build} total=${3:-410}
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
SECONDS=0
python3 -c "import torch, torchvision, transformers, lightning, accelerate; print('torch', torch.__version__, 'transformers', transformers.__version__, 'lightning', lightning.__version__, 'accelerate', accelerate.__version__)" 2>&1 | tee "$out/versions.txt"

# 1. the GPU test alone (about 160 s on the H200 on 2026-12-02), capped so the comparison keeps its time
timeout 220 bash "$src/scripts/gpu/validate.sh" "$build" "$out/gpu-tests" probe_pytorch
echo "probe_pytorch done after ${SECONDS} s"

# 2. the comparison in what is left, 10 s kept for the table
left=$((total - SECONDS - 10))
if ((left < 60)); then echo "only ${left} s left: comparison not run"; exit 1; fi
python3 "$src/scripts/gpu/probe_compare.py" "$build/vramdoc" "$out/compare" --deadline "$left" 2>&1 | tail -5
python3 "$src/scripts/gpu/probe_table.py" "$out/compare/summary.json" > "$out/table.md" && cat "$out/table.md"
cp "$out/compare/summary.json" "$out/summary.json" && tar -cJf "$out/compare-raw.tar.xz" -C "$out" compare && rm -rf "$out/compare"
echo "total ${SECONDS} s"
