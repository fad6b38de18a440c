#!/usr/bin/env bash
# analyze --trace-dir (issue 6): a recorded H200 timeline with a recorded H200 trace beside it.
# The traced bytes appear in the text, in the JSON's "trace" object and as a second line of the
# HTML chart; without --trace-dir nothing changes; a trace dir of garbage gives a clear message
# and the driver's report still comes out. The timeline leaks: analyze exits 1 (docs/cli.md).
source "$SRC/tests/cli_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out" "$err"' EXIT
timeline=$SRC/tests/data/timelines/trace_leak_mid.json
mkdir "$work/trace"
cp "$SRC/tests/data/traces/h200_pytorch_leak.vdt" "$work/trace/trace.4242.vdt"

check "driver only" 1 "$VRAMDOC" analyze "$timeline"
cp "$out" "$work/driver_only.txt"
if grep -q "Traced allocations" "$out"; then echo "FAIL: driver only: trace section without --trace-dir"; fails=$((fails + 1)); fi

# The whole text report with the trace: tests/golden/analyze/trace-dir.txt.
check "text" 1 "$VRAMDOC" analyze "$timeline" --trace-dir "$work/trace"
contains "text: driver report kept" "$out" "$(head -1 "$work/driver_only.txt")"

check "json" 1 "$VRAMDOC" analyze "$timeline" --trace-dir "$work/trace" --json
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
t = j["trace"]
assert j["verdict"], "verdict kept"
assert t["peak_bytes"] > 0 and t["live_bytes_at_end"] >= 0, t
assert 2 <= len(t["timeline"]) <= 500, len(t["timeline"])
assert all(len(p) == 2 for p in t["timeline"])
assert max(b for _, b in t["timeline"]) == t["peak_bytes"]
assert isinstance(t["top_call_sites"], list) and len(t["top_call_sites"]) <= 5
assert t["pytorch"] is True
PY
check "json driver only" 1 "$VRAMDOC" analyze "$timeline" --json
if grep -q '"trace"' "$out"; then echo "FAIL: json driver only: has a trace object"; fails=$((fails + 1)); fi

check "html" 1 "$VRAMDOC" analyze "$timeline" --trace-dir "$work/trace" --html "$work/r.html"
contains "html: second series" "$work/r.html" '<polyline class="mark traced"'
contains "html: legend" "$work/r.html" "traced bytes (allocation tracer)"
contains "html: pytorch note" "$work/r.html" "id='pytorch-note'"
check "html driver only" 1 "$VRAMDOC" analyze "$timeline" --html "$work/d.html"
if grep -q 'class="mark traced"' "$work/d.html"; then echo "FAIL: html driver only: has the traced line"; fails=$((fails + 1)); fi

# Hostile input: garbage trace files, a missing directory, an empty one.
mkdir "$work/bad"
head -c 5000 /dev/urandom >"$work/bad/trace.1.vdt"
printf 'VDTRACE\0' >"$work/bad/trace.2.vdt"
check "garbage" 1 "$VRAMDOC" analyze "$timeline" --trace-dir "$work/bad"
contains "garbage: message" "$err" "trace.1.vdt: not a vramdoc trace"
contains "garbage: driver alone" "$err" "the report below is the driver's alone"
contains "garbage: driver report" "$out" "$(head -1 "$work/driver_only.txt")"
check "missing dir" 1 "$VRAMDOC" analyze "$timeline" --trace-dir "$work/none"
contains "missing dir: message" "$err" "cannot read the trace directory $work/none"
mkdir "$work/empty"
check "empty dir" 1 "$VRAMDOC" analyze "$timeline" --trace-dir "$work/empty" --json
contains "empty dir: message" "$err" "no readable trace.\*.vdt in $work/empty"
contains "empty dir: json" "$out" '"verdict"'
finish
