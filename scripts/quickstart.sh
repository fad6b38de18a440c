#!/usr/bin/env bash
# The README's first command: install what is missing, build, run the main job on a built-in default.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
scripts/build.sh -DVRAMDOC_TESTS=OFF
exec build/vramdoc estimate
