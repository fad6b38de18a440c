#!/usr/bin/env bash
# Regenerates every golden file (tests/golden/README.md): the binary's cases (tests/golden/cases.sh)
# and the renderers' goldens of the unit tests. Review the diff (git diff tests/golden) before committing.
# Usage: scripts/update_golden.sh [BUILD]   (default: build; built with the tests, VRAMDOC_TESTS=ON)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
[[ -x $build/vramdoc && -x $build/tests/unit_tests ]] || { echo "update_golden.sh: build $build first (scripts/build.sh)" >&2; exit 2; }
VRAMDOC=$build/vramdoc SRC=$src BUILD=$build FAKES=$build/tests/fakes bash "$src/tests/golden/run.sh" update
VRAMDOC_UPDATE_GOLDEN=1 "$build/tests/unit_tests" --gtest_filter='*Golden*' >/dev/null
# The full-screen view's captures in tmux (tests/golden/watch/tmux-*.txt), where tmux is installed.
if command -v tmux >/dev/null; then
  VRAMDOC_UPDATE_GOLDEN=1 VRAMDOC=$build/vramdoc SRC=$src BUILD=$build FAKES=$build/tests/fakes bash "$src/tests/cli/watch_view.sh" >/dev/null
fi
echo "golden files rewritten; see: git -C $src status tests/golden"
