#!/usr/bin/env bash
# Configures and builds vramdoc into build/ (CUDA kernels when nvcc is found).
# Usage: scripts/build.sh [--target NAME] [CMAKE_OPTION...]   e.g. --target vramdoc -DVRAMDOC_CUDA=OFF
set -euo pipefail
cd "$(dirname "$0")/.."
target=()
if [[ ${1:-} == --target ]]; then target=(--target "$2"); shift 2; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build --parallel "$(nproc)" "${target[@]}"
