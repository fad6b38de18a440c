# One job report for run and analyze (core/report): run's text is its exit line and what analyze
# says of the same timeline; run --json is analyze's JSON plus a "run" object, on stdout after the
# job's own output; analyze --trace-dir adds the traced bytes, then the call sites as `vramdoc
# trace` reports them (text, JSON, HTML). The fake NVML samples (without a driver run's verdict
# says why it cannot tell, which analyze of the file cannot know: tests/cli/cli_conventions.sh).
source "$(dirname "$0")/../cli_lib.sh"
printf 'devices=1\nused=4194304000\nprocesses=1:1073741824\n' >"$(dirname "$out")/nvml.$$.conf"
export FAKE_NVML_CONFIG=$(dirname "$out")/nvml.$$.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1
work=$(mktemp -d)
trap 'rm -rf "$work" "$out" "$err" "$FAKE_NVML_CONFIG"' EXIT
cd "$work"

check "run" 3 "$VRAMDOC" run --out t.jsonl -- sh -c 'echo job line; exit 3'
contains "the job's output" "$out" "^job line$"
sed -n '/^vramdoc run: the job exited/,$p' "$err" >run_report.txt
check "analyze the same timeline" 0 "$VRAMDOC" analyze t.jsonl
{ echo "vramdoc run: the job exited with status 3; timeline: t.jsonl"
  cat "$out"; } >want.txt
diff -u want.txt run_report.txt || { echo "FAIL: run's report is not its exit line + analyze's"; fails=$((fails + 1)); }

check "run --json" 3 "$VRAMDOC" run --json --out j.jsonl -- sh -c 'echo job line; exit 3'
if grep -q "diagnosis of" "$err"; then echo "FAIL: run --json also printed the text report"; fails=$((fails + 1)); fi
"$VRAMDOC" analyze j.jsonl --json >analyze.json
python3 - "$out" analyze.json <<'PY' || fails=$((fails + 1))
import json, sys
text = open(sys.argv[1]).read()
assert text.startswith("job line\n{"), text[:40]  # the job's output first, then the report
report = json.loads(text[len("job line\n"):])
assert report.pop("run") == {"timeline_file": "j.jsonl", "sampled": True, "detached": None}
assert report.pop("schema") == "vramdoc.run/1"
assert report["exit_status"] == 3 and report["outcome"] == "failed", report
analyzed = json.load(open(sys.argv[2]))
assert analyzed.pop("schema") == "vramdoc.analyze/1"
assert report == analyzed, "run --json is analyze --json plus run"
PY

# analyze --trace-dir: the driver's report, the traced bytes, then the call sites of `vramdoc trace`.
timeline=$SRC/tests/data/timelines/trace_leak_mid.json
mkdir trace
python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.77.vdt
"$VRAMDOC" analyze "$timeline" >driver.txt
"$VRAMDOC" trace trace >sites.txt
check "analyze --trace-dir (a leak: exit 1)" 1 "$VRAMDOC" analyze "$timeline" --trace-dir trace
python3 - "$out" driver.txt sites.txt <<'PY' || fails=$((fails + 1))
import sys
report, driver, sites = (open(f).read() for f in sys.argv[1:])
# The diagnosis comes first (its verdict weighs the trace, so its text may differ from the
# driver's alone), then the traced bytes, then the call sites as vramdoc trace prints them.
assert report.startswith(driver.split("\n")[0] + "\n"), report[:80]
traced = report[report.index("\nTraced allocations (1 process):\n"):]
assert "what to do:" in report[:len(report) - len(traced)], "the diagnosis before the traced bytes"
assert traced.endswith("\n" + sites), "the call sites close the report, as vramdoc trace prints them"
PY
check "analyze --trace-dir --json" 1 "$VRAMDOC" analyze "$timeline" --trace-dir trace --json
"$VRAMDOC" analyze "$timeline" --json >driver.json
"$VRAMDOC" trace --json trace >sites.json
python3 - "$out" driver.json sites.json <<'PY' || fails=$((fails + 1))
import json, sys
report, driver, sites = (json.load(open(f)) for f in sys.argv[1:])
assert report.pop("trace")["peak_bytes"] > 0
assert report.pop("call_sites")["processes"] == sites["processes"]
assert report.keys() == driver.keys(), "the rest is the diagnosis's object"
assert report["name"] == driver["name"] and report["outcome"] == driver["outcome"]
PY
check "analyze --trace-dir --html" 1 "$VRAMDOC" analyze "$timeline" --trace-dir trace --html r.html
contains "html: call sites section" r.html "<section id='call-sites'><h2>Call sites (allocation tracer)</h2><pre>vramdoc trace: process 77"
finish
