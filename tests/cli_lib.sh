# Helpers for the end-to-end CLI tests (sourced, not a test itself).
set -u
fails=0
check() {  # check "description" expected_exit command...   (output to $out / $err when set)
  local what=$1 want=$2 o=${out:-/tmp/vramdoc-test.out} e=${err:-/tmp/vramdoc-test.err}; shift 2
  "$@" >"$o" 2>"$e"
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what: exit $got, wanted $want"; cat "$o" "$e"; fails=$((fails + 1))
  fi
}
contains() {  # contains "description" file pattern
  if ! grep -q -- "$3" "$2"; then echo "FAIL: $1: '$3' not in output"; cat "$2"; fails=$((fails + 1)); fi
}
finish() { if [[ $fails -gt 0 ]]; then echo "$fails check(s) failed"; exit 1; fi; echo "all checks passed"; }
