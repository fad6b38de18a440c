# vramdoc analyze on the recorded timelines, whole and reduced to t + process_used with no marks
# (what `run` sees from outside), --json's verdict field, and bad input: clear errors, exit 2.
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
timelines=$SRC/tests/data/timelines ours=$SRC/tests/data/timelines

verdict_is() {  # verdict_is FILE VERDICT   (exit 1 for a verdict that names a problem)
  local code=0
  [[ $2 == leak || $2 == insufficient || $2 == fragmentation ]] && code=1
  check "analyze $(basename "$1")" $code "$VRAMDOC" analyze "$1" --json
  local got
  got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$out")
  [[ $got == "$2" ]] || { echo "FAIL: $1: verdict $got, wanted $2"; fails=$((fails + 1)); }
}
reduce() {  # reduce IN OUT: keep t and process_used, drop the marks
  python3 - "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
i, j = d["columns"].index("t"), d["columns"].index("process_used")
d["samples"] = [[s[i], s[j]] for s in d["samples"]]
d["columns"] = ["t", "process_used"]
d.pop("marks", None)
json.dump(d, open(sys.argv[2], "w"))
PY
}
while read -r file want; do
  verdict_is "$file" "$want"
  reduce "$file" "$tmp/reduced.json"
  verdict_is "$tmp/reduced.json" "$want"
done <<EOF_LIST
$timelines/stable.json stable
$timelines/leak_tensor.json leak
$timelines/oom_insufficient.json insufficient
$ours/trace_leak_to_oom.json leak
$ours/trace_leak_mid.json leak
$ours/trace_plateau_varseq_shared.json plateau
$ours/trace_plateau_varseq.json plateau
$ours/trace_batch_ramp_oom.json insufficient
$ours/trace_fragmentation.json fragmentation
EOF_LIST
# Issue 15's H200 recordings (vramdoc run's own format), with their step marks and without.
while read -r file want; do
  verdict_is "$ours/$file" "$want"
  grep -v '"mark"' "$ours/$file" >"$tmp/unmarked.jsonl"
  verdict_is "$tmp/unmarked.jsonl" "$want"
done <<EOF_LIST
issue15_periodic_eval_1.jsonl leak
issue15_periodic_eval_2.jsonl leak
issue15_periodic_eval_3.jsonl leak
issue15_short_leak.jsonl inconclusive
issue15_insufficient.jsonl insufficient
EOF_LIST
# From outside (no marks) the rises' spacing decides; with the marks' allocated= (issue 32) the step-end bytes do.
check "periodic leak, marked" 1 "$VRAMDOC" analyze "$ours/issue15_periodic_eval_1.jsonl"
contains "the step-end bytes decide" $out "rule 'step-end bytes grow'"
grep -v '"mark"' "$ours/issue15_periodic_eval_1.jsonl" >"$tmp/unmarked.jsonl"
check "periodic leak report" 1 "$VRAMDOC" analyze "$tmp/unmarked.jsonl"
contains "regular rises, not new shapes" $out "leak: memory grows in regular rises, one every 0.4 s"
contains "the rule is named" $out "rule 'regular rises'"
# Issue 32: with its marks' bytes_in_use the JAX job's leak shows; without them the pool hides it.
verdict_is "$ours/issue15_jax_prealloc.jsonl" leak
grep -v '"mark"' "$ours/issue15_jax_prealloc.jsonl" >"$tmp/unmarked.jsonl"
verdict_is "$tmp/unmarked.jsonl" inconclusive
check "preallocation report" 0 "$VRAMDOC" analyze "$tmp/unmarked.jsonl"
contains "names JAX's pool" $out "JAX/XLA preallocated 75 % of the card"
contains "how to see through it" $out "XLA_PYTHON_CLIENT_PREALLOCATE=false"
check "short leak with its trace" 1 "$VRAMDOC" analyze "$ours/issue15_short_leak_trace.jsonl" --trace-dir "$SRC/tests/data/traces/issue15_short_leak"
contains "a leak, as the tracer says" $out "verdict: leak: the allocation tracer saw 70.00 MiB never freed"
check "insufficient with the estimator" 1 "$VRAMDOC" analyze "$ours/issue15_insufficient.jsonl" --config "$SRC/tests/gpu/diagnosis_llama.json" --batch 128 --seq 2048
contains "the whole job's need" $out "it needs about 20[0-9]\.[0-9]* GiB on a 140.40 GiB card (the estimator's peak"
contains "what gets it under the card" $out "Under the card: "

check "text report" 1 "$VRAMDOC" analyze "$timelines/leak_tensor.json"
contains "verdict line" $out "verdict: leak: memory grows step after step, about 8"
contains "remedy: keep numbers, not tensors" $out "loss.item()"
check "insufficient report" 1 "$VRAMDOC" analyze "$timelines/oom_insufficient.json"
contains "how much is needed" $out "it needs more than the 139.80 GiB card offers"
contains "remedy: smaller batch" $out "Lower the batch size"
check "fragmentation report" 1 "$VRAMDOC" analyze "$ours/trace_fragmentation.json"
contains "remedy: expandable segments" $out "expandable_segments:True"

check "missing file" 2 "$VRAMDOC" analyze "$tmp/nope.json"
contains "missing file named" $err "^vramdoc analyze: cannot read $tmp/nope.json"
: > "$tmp/empty.json"
check "empty file" 2 "$VRAMDOC" analyze "$tmp/empty.json"
contains "empty said" $err "empty"
head -c 3000 "$timelines/stable.json" > "$tmp/cut.json"
check "truncated file" 2 "$VRAMDOC" analyze "$tmp/cut.json"
contains "truncated file named" $err "$tmp/cut.json: not a timeline"
check "binary file" 2 "$VRAMDOC" analyze "$VRAMDOC"
check "a directory" 2 "$VRAMDOC" analyze "$tmp"
echo '{"columns": ["t", "process_used"], "samples": [[0, "many"]]}' > "$tmp/typed.json"
check "wrongly typed value" 2 "$VRAMDOC" analyze "$tmp/typed.json"
contains "the place is named" $err "sample 0 process_used is not a number"
echo '{"columns": ["t", "process_used"], "samples": [[0, 1], [0.1, 1]]}' > "$tmp/short.json"
check "too short to judge" 0 "$VRAMDOC" analyze "$tmp/short.json" --json
contains "inconclusive" $out '"verdict": "inconclusive"'
check "no file" 2 "$VRAMDOC" analyze
finish
