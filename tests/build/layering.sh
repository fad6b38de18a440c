#!/usr/bin/env bash
# The layering of docs/architecture.md, enforced by the build: each library's include root
# (BUILD/layers/TARGET) reaches the src/ folders it may include and no other, so a header of an
# outer layer does not compile there; and no source reaches around the roots with "../".
# Usage (ctest): layering.sh CXX SRC BUILD
set -u
cxx=$1 src=$2 build=$3
fails=0
probe=$(mktemp --suffix=.cpp)
trap 'rm -f "$probe"' EXIT
compiles() {  # compiles TARGET HEADER: whether "#include HEADER" compiles with TARGET's root alone
  echo "#include \"$2\"" >"$probe"
  "$cxx" -std=c++20 -fsyntax-only -I"$build/layers/$1" "$probe" 2>/dev/null
}
may() { compiles "$1" "$2" || { echo "FAIL: $1 cannot include $2"; fails=$((fails + 1)); }; }
may_not() { ! compiles "$1" "$2" || { echo "FAIL: $1 can include $2"; fails=$((fails + 1)); }; }

may vramdoc_core core/result.hpp
for h in backends/host.hpp kernels/runner.hpp cli/command.hpp tracer/recorder/recorder.hpp tls/tls_server.hpp; do may_not vramdoc_core "$h"; done
may vramdoc_backends backends/host.hpp
for h in kernels/runner.hpp cli/command.hpp tracer/recorder/recorder.hpp tls/tls_server.hpp; do may_not vramdoc_backends "$h"; done
if [[ -d $build/layers/vramdoc_kernels ]]; then
  for h in cli/command.hpp tracer/recorder/recorder.hpp; do may_not vramdoc_kernels "$h"; done
fi
if [[ -d $build/layers/vramdoc_tls ]]; then
  may vramdoc_tls backends/watch/socket_stream.hpp
  for h in cli/command.hpp kernels/runner.hpp; do may_not vramdoc_tls "$h"; done
fi
may vramdoc_trace_recorder core/trace/format.hpp
for h in backends/host.hpp cli/command.hpp; do may_not vramdoc_trace_recorder "$h"; done

# A relative include could reach another layer's folder from the including file's own directory.
if grep -rnE '#include *"\.\./' "$src/src"; then echo "FAIL: an #include with ../"; fails=$((fails + 1)); fi
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
