#!/usr/bin/env bash
# Builds the wheel (binary included) into dist/, offline: scripts/build_wheel.sh [pip wheel options]
# VRAMDOC_PREBUILT_DIR=build takes an existing build instead of compiling (docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
exec python3 -m pip wheel --no-build-isolation --no-index --no-deps -w dist "$@" .
