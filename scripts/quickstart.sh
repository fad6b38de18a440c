#!/usr/bin/env bash
# The README's first command: install what is missing, build what `vramdoc estimate` needs (the
# C++ binary, without the CUDA kernels and the tracer), print the estimate of the built-in
# default, then build the rest (CUDA benchmarks and the allocation tracer, when nvcc is found).
# The first build is optimised less (-O1, no debug info: half the compiler's time, measured per
# file) so that the answer comes first; scripts/build.sh and scripts/test.sh rebuild at -O2 -g.
# Measured on a 2-core machine with an empty compiler cache: docs/cli.md, "The quick start".
# Usage: scripts/quickstart.sh [--estimate-only]   (--estimate-only: stop after the estimate)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
quick=(-DVRAMDOC_TESTS=OFF -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG")
start=$SECONDS
echo "vramdoc quickstart: building the binary without CUDA first (the estimate needs no GPU)" >&2
scripts/build.sh --target vramdoc "${quick[@]}" -DVRAMDOC_CUDA=OFF
echo "vramdoc quickstart: built in $((SECONDS - start)) s" >&2
build/vramdoc estimate
[[ ${1:-} == --estimate-only ]] && exit 0
if ! command -v nvcc >/dev/null && [[ ! -x /usr/local/cuda/bin/nvcc ]]; then
  echo "vramdoc quickstart: no nvcc: the CUDA benchmarks and the allocation tracer are not built (install the CUDA toolkit, then scripts/build.sh)" >&2
  exit 0
fi
echo "vramdoc quickstart: now the CUDA benchmarks and the allocation tracer (nvcc found; Ctrl-C skips, scripts/build.sh builds them later)" >&2
scripts/build.sh "${quick[@]}" -DVRAMDOC_CUDA=AUTO
