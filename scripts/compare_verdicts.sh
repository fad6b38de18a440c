#!/usr/bin/env bash
# Proves "the same verdicts and evidence" (issue 31): analyses every recorded timeline under
# tests/data with two builds of vramdoc (e.g. main's and this branch's) and compares their whole
# --json reports, file by file, and each multi-file job (NAME_1 / NAME_2 ...) as one job.
#   scripts/compare_verdicts.sh /work/main/build/vramdoc build/vramdoc
# Exit 0 when every report is the same; otherwise the differences are printed.
set -u
old=$1 new=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
same=0 differ=0 skipped=0
compare() {  # compare NAME FILE...
  local name=$1; shift
  "$old" analyze "$@" --json >"$tmp/old.json" 2>"$tmp/old.err"; local old_rc=$?
  if [[ $old_rc == 2 ]]; then skipped=$((skipped + 1)); echo "skip  $name (not a timeline for $old)"; return; fi
  "$new" analyze "$@" --json >"$tmp/new.json" 2>"$tmp/new.err"; local new_rc=$?
  if [[ $old_rc == "$new_rc" ]] && cmp -s "$tmp/old.json" "$tmp/new.json" && cmp -s "$tmp/old.err" "$tmp/new.err"; then
    same=$((same + 1))
    echo "same  $name ($(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$tmp/new.json"))"
  else
    differ=$((differ + 1))
    echo "DIFF  $name (exit $old_rc -> $new_rc)"
    diff "$tmp/old.json" "$tmp/new.json" | head -40
    diff "$tmp/old.err" "$tmp/new.err" | head -10
  fi
}
cd "$src"
for f in tests/data/timelines/*.json tests/data/timelines/*.jsonl tests/data/insufficient/*.jsonl tests/data/probe/*.jsonl; do
  compare "$f" "$f"
done
for first in tests/data/timelines/*_1.jsonl; do
  base=${first%_1.jsonl}
  files=("$base"_[0-9].jsonl)
  [[ ${#files[@]} -gt 1 ]] && compare "${files[*]} (one job)" "${files[@]}"
done
echo "$same the same, $differ different, $skipped skipped"
[[ $differ == 0 ]]
