#!/usr/bin/env bash
# vramdoc trace on traces written from docs/trace-format.md by an independent writer
# (data/make_trace.py; the whole text and JSON reports are golden cases, tests/golden/trace/
# make-trace-report.*): the HTML page, a killed process's truncated trace, hostile files, and the
# environment a traced job gets.
source "$SRC/tests/cli_lib.sh"
report() { "$VRAMDOC" trace "$@"; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir trace
python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.77.vdt

check "html page" 0 report trace --html page.html
contains "html: the report's text" page.html "train+0x32ff"
contains "html: a chart per process" page.html "<h2>Process 77: traced bytes over time</h2>"

# A killed process: its last record is cut; the report says so and keeps the rest.
python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.77.vdt --truncate 50
check "truncated trace" 0 report trace
contains "truncated: said" "$out" "the process was killed"
contains "truncated: rest kept" "$out" "allocations 5 = released 1 + still live 4; released but allocated before tracing 0"

# Version 2: the module's build-id. The file at its path (vramdoc itself here) names frames only
# when its build-id is the traced one (readelf's, independent of ours).
real_id=$(readelf -n "$BUILD/vramdoc" | sed -n 's/.*Build ID: *//p' | head -1)
if [[ -n $real_id ]]; then
  python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.77.vdt --module "$BUILD/vramdoc" --build-id "$real_id"
  check "build-id matches" 0 report trace
  [[ $(cat "$out") != *"changed since the trace"* ]] || { echo "FAIL: matching build-id reported as changed"; fails=$((fails + 1)); }
  python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.77.vdt --module "$BUILD/vramdoc" --build-id 00112233445566778899aabbccddeeff00112233
  check "build-id differs" 0 report trace
  contains "build-id differs: warned" "$out" "vramdoc changed since the trace (build-id $real_id, the traced process ran 00112233445566778899aabbccddeeff00112233)"
  contains "build-id differs: frames unnamed" "$out" "vramdoc+0x"
  check "build-id differs: json" 0 report --json trace
  contains "build-id differs: json warning" "$out" "changed since the trace"
else
  echo "note: $BUILD/vramdoc has no build-id (readelf found none); build-id checks skipped"
fi

printf 'VDTRACE\0\x04\0\0\0' >trace/trace.77.vdt; head -c 16 /dev/zero >>trace/trace.77.vdt
check "wrong version" 2 report trace
contains "wrong version: message" "$err" "version 4, this vramdoc reads versions 1 to 3"
head -c 5000 /dev/urandom >trace/trace.77.vdt
check "garbage" 2 report trace
contains "garbage: message" "$err" "trace.77.vdt: not a vramdoc trace"
check "missing directory" 2 report /nonexistent/dir
contains "missing directory: message" "$err" "cannot read the trace directory /nonexistent/dir"
check "usage" 2 report

# A bad file beside a good one: the good one is reported, the bad one named, exit 2 (bad input).
python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.78.vdt
check "bad beside good" 2 report trace
contains "bad beside good: message" "$err" "trace.77.vdt: not a vramdoc trace"
contains "bad beside good: report" "$out" "vramdoc trace: process 77 (trace/trace.78.vdt)"

# The environment for a traced job (needs the CUPTI build: the tracer beside the binary).
if [[ -f $BUILD/libvramdoc-tracer.so ]]; then
  check "env" 0 report --env "$work/jobtrace"
  contains "env: injection" "$out" "CUDA_INJECTION64_PATH=$BUILD/libvramdoc-tracer.so"
  contains "env: dir" "$out" "VRAMDOC_TRACE_DIR=$work/jobtrace"
  [[ -d $work/jobtrace ]] || { echo "FAIL: env did not create the directory"; fails=$((fails + 1)); }
else
  check "env without the tracer" 2 report --env "$work/jobtrace"
  contains "env: how to get it" "$err" "CUPTI"
fi
finish
