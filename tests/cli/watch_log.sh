# vramdoc watch --log FILE.csv|.jsonl: sample count at --interval, columns, a GPU failing mid-run,
# SIGTERM ends the log cleanly.
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir" "$out" "$err"' EXIT
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
cat >"$dir/fake.conf" <<CONF
devices=2
processes=$$:1073741824,4194303:na
fail=nvmlDeviceGetMemoryInfo_v2:15
fail_device=1
fail_when_exists=$dir/gpu1-lost
CONF

check "CSV log for 1 s at 100 ms" 0 "$VRAMDOC" watch --log "$dir/log.csv" --interval 100ms --duration 1s
check "CSV: header, 8-11 samples of 2 GPUs + 2 processes each, equal columns" 0 python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
header, body = rows[0], rows[1:]
assert header[:5] == ["t_unix_s", "kind", "gpu", "uuid", "pid"], header
assert all(len(r) == len(header) for r in body), [r for r in body if len(r) != len(header)]
samples = len({r[0] for r in body})
assert 8 <= samples <= 11, samples
assert len(body) == samples * 6, (len(body), samples)
na = [r for r in body if r[4] == "4194303"]
assert all(r[header.index("used_bytes")] == "" for r in na), na[:1]   # unknown: empty, not 0
' "$dir/log.csv"

# JSONL; GPU 1 is lost after 0.6 s: it gets an error, GPU 0 keeps being logged.
"$VRAMDOC" watch --log "$dir/log.jsonl" --interval 100ms --duration 1.5s 2>"$err" &
pid=$!
sleep 0.6; touch "$dir/gpu1-lost"
wait $pid; rc=$?
[[ $rc == 0 ]] || { echo "FAIL: JSONL run exit $rc"; cat "$err"; fails=$((fails + 1)); }
check "JSONL: every line parses; GPU 1 fails mid-run, GPU 0 goes on" 0 python3 -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) >= 10, len(lines)
gpu1 = [l["gpus"][1] for l in lines]
assert gpu1[0]["error"] is None and gpu1[0]["memory"]["used_bytes"] > 0
assert gpu1[-1]["error"] and "GPU is lost" in gpu1[-1]["error"], gpu1[-1]
assert "memory" not in gpu1[-1]
assert all(l["gpus"][0]["error"] is None and l["gpus"][0]["memory"]["used_bytes"] > 0 for l in lines)
' "$dir/log.jsonl"

# Without --duration: SIGTERM stops it, exit 0, the file ends with a whole line.
rm -f "$dir/gpu1-lost"
"$VRAMDOC" watch --log "$dir/term.csv" --interval 50ms &
pid=$!
sleep 0.5; kill -TERM $pid; wait $pid; rc=$?
[[ $rc == 0 ]] || { echo "FAIL: SIGTERM exit $rc, wanted 0"; fails=$((fails + 1)); }
[[ $(tail -c 1 "$dir/term.csv" | od -An -c | tr -d ' ') == '\n' ]] || { echo "FAIL: log ends mid-line"; fails=$((fails + 1)); }
check "unwritable log" 1 "$VRAMDOC" watch --log /nonexistent/dir/x.csv --duration 1s
contains "names the file" $err "cannot write the log /nonexistent/dir/x.csv"
finish
