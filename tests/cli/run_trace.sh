# vramdoc run --trace: sets up the tracer for the job and reports after it (no GPU: no traces).
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out" "$err"' EXIT
if [[ ! -e $BUILD/libvramdoc-tracer.so ]]; then
  check "--trace without the tracer is a clear error" 2 "$VRAMDOC" run --trace --out "$dir/t.jsonl" -- true
  contains "says how to get it" "$err" "tracer"
  finish
fi
check "--trace passes the injection to the job" 0 "$VRAMDOC" run --trace --out "$dir/t.jsonl" -- \
  sh -c 'echo "inj=$CUDA_INJECTION64_PATH dir=$VRAMDOC_TRACE_DIR"'
contains "CUDA_INJECTION64_PATH is the tracer" "$out" "inj=.*/libvramdoc-tracer.so"
contains "the trace folder defaults to the timeline's name" "$out" "dir=$dir/t.trace"
contains "no trace: said, as analyze says it (one report builder)" "$err" "vramdoc run: --trace: no readable trace.\*.vdt in .*; the report below is the driver's alone"
check "--trace-dir" 0 "$VRAMDOC" run --trace-dir "$dir/elsewhere" --out "$dir/u.jsonl" -- sh -c 'echo "dir=$VRAMDOC_TRACE_DIR"'
contains "--trace-dir is used" "$out" "dir=$dir/elsewhere"
check "job's exit status is kept" 3 "$VRAMDOC" run --trace --out "$dir/v.jsonl" -- sh -c 'exit 3'
finish
