# Helpers for the end-to-end CLI tests (sourced, not a test itself).
set -u
fails=0
# Each script gets its own output files (ctest runs scripts in parallel); a script may still
# point $out / $err elsewhere after sourcing this file.
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
check() {  # check "description" expected_exit command...   (stdout in $out, stderr in $err)
  local what=$1 want=$2; shift 2
  "$@" >"$out" 2>"$err"
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: $what: exit $got, wanted $want"; cat "$out" "$err"; fails=$((fails + 1))
  fi
}
contains() {  # contains "description" file pattern
  if ! grep -q -- "$3" "$2"; then echo "FAIL: $1: '$3' not in output"; cat "$2"; fails=$((fails + 1)); fi
}
finish() { if [[ $fails -gt 0 ]]; then echo "$fails check(s) failed"; exit 1; fi; echo "all checks passed"; exit 0; }
