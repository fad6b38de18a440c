#!/usr/bin/env bash
# Packs (stripped) what a GPU machine needs to run the GPU tests into .device/ (git-ignored): the binaries of
# build/ (not its object files) and, when ../shared is beside the checkout, a copy of its anchors for
# scripts/gpu/bench_vs_anchors.sh. Then, on the GPU machine:
#   scripts/gpu/validate.sh .device/build $OUT
set -euo pipefail
cd "$(dirname "$0")/../.."
rm -rf .device/build .device/shared
mkdir -p .device/build/tests
for f in vramdoc libvramdoc-tracer.so; do
  [[ -e build/$f ]] && cp build/$f .device/build/ && [[ $f != *.so ]] && strip .device/build/$f
done
cp build/tests/unit_tests .device/build/tests/ && strip .device/build/tests/unit_tests
cp -r build/tests/fakes .device/build/tests/ && find .device/build/tests/fakes -name CMakeFiles -prune -exec rm -rf {} +
if [[ -d ../shared ]]; then cp -r ../shared .device/shared; fi
du -sh .device
