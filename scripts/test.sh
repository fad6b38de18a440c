#!/usr/bin/env bash
# The README's second command: install what is missing, build, run the whole test suite.
# GPU tests (label gpu) skip themselves where no GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh --test
scripts/build.sh -DVRAMDOC_TESTS=ON
cd build && ctest --output-on-failure --parallel "$(nproc)" --timeout 600
