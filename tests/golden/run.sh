#!/usr/bin/env bash
# The whole-output tests of the binary (tests/golden/README.md): every case of cases.sh run in a
# fresh folder, its output normalised (normalize.sed) and compared with tests/golden/COMMAND/CASE.
# Usage: run.sh check | update [CASE-PATTERN]   (env: VRAMDOC, SRC, BUILD, FAKES)
#   check:  a difference, a missing golden file or another exit status fails (what ctest runs)
#   update: writes the golden files instead (scripts/update_golden.sh)
set -u
mode=${1:?check or update} only=${2:-}
golden=$SRC/tests/golden data=$SRC/tests/data
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
fails=0 cases=0

# The one filter: the run's own folders by name, then normalize.sed (volatile fields), and for a
# live case (a real job under a real clock) normalize-live.sed too.
normalize() {  # normalize FILE LIVE
  local extra=()
  [[ $2 == live ]] && extra=(-f "$golden/normalize-live.sed")
  sed -e "s#$root/case#<work>#g" -e "s#$SRC#<src>#g" -e "s#$BUILD#<build>#g" -e "s#${TMPDIR:-/tmp}/vramdoc-[a-z]*-[A-Za-z0-9]\{6\}#<tmp>#g" \
    -f "$golden/normalize.sed" "${extra[@]}" "$1"
}

compare() {  # compare GOLDEN-FILE ACTUAL-FILE: a case that prints nothing has no golden file
  if [[ $mode == update ]]; then
    mkdir -p "$(dirname "$1")"
    if [[ -s $2 ]]; then cp "$2" "$1"; else rm -f "$1"; fi
  elif [[ ! -f $1 && ! -s $2 ]]; then
    return 0
  elif [[ ! -f $1 ]]; then
    echo "FAIL: ${1#$SRC/}: no golden file (scripts/update_golden.sh writes it)"; fails=$((fails + 1))
  elif ! diff -u --label "${1#$SRC/}" --label "actual" "$1" "$2"; then
    echo "FAIL: ${1#$SRC/} differs (above); if the change is meant: scripts/update_golden.sh"; fails=$((fails + 1))
  fi
}

# golden COMMAND/CASE.EXT EXIT [live] -- COMMAND...: one case, one file. EXT is json (stdout is
# one JSON document, stderr must be empty) or txt (stdout, then, when the case wrote to stderr, a
# line "--- stderr ---" and what it wrote there).
golden() {
  local name=$1 want=$2 live=; shift 2
  [[ $1 == live ]] && { live=live; shift; }
  [[ $1 == -- ]] && shift
  [[ -n $only && $name != *$only* ]] && return
  cases=$((cases + 1))
  rm -rf "$root/case" && mkdir "$root/case"
  (cd "$root/case" && "$@") >"$root/stdout" 2>"$root/stderr" </dev/null
  local got=$?
  if [[ $got != "$want" ]]; then
    echo "FAIL: $name: exit $got, wanted $want"; sed 's/^/  stderr: /' "$root/stderr" | head -20; fails=$((fails + 1))
  fi
  normalize "$root/stdout" "$live" >"$root/stdout.n"
  if [[ $name == *.txt && -s $root/stderr ]]; then
    [[ -s $root/stdout.n && $(tail -c 1 "$root/stdout.n") != "" ]] && printf '\n(no newline at the end of stdout)\n' >>"$root/stdout.n"
    echo "--- stderr ---" >>"$root/stdout.n"
    normalize "$root/stderr" "$live" >>"$root/stdout.n"
  fi
  if [[ $name == *.json ]]; then
    python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$root/stdout" 2>/dev/null ||
      { echo "FAIL: $name: stdout is not one JSON document"; fails=$((fails + 1)); }
    [[ -s $root/stderr ]] && { echo "FAIL: $name: a JSON case wrote to stderr (make it a .txt case):"; cat "$root/stderr"; fails=$((fails + 1)); }
  fi
  compare "$golden/$name" "$root/stdout.n"
}

# Cases that need the build to lack a feature (its error text) or to have it.
built_with() { "$VRAMDOC" --version | grep -q "$1: yes"; }

source "$golden/cases.sh"
echo "$cases case(s)"
if ((fails)); then echo "$fails check(s) failed"; exit 1; fi
echo "all checks passed"
