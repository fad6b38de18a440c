# vramdoc run against the fake NVML: it samples while the job runs and writes the samples, the
# device and the capacity into the timeline. (The fake's process list is fixed before the job
# starts, so the job itself holds no GPU memory here: its per-process number is a known 0.)
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
printf 'devices=1\nused=4194304000\nprocesses=1:1073741824\n' >"$tmp/nvml.conf"
export FAKE_NVML_CONFIG=$tmp/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1

check "run with a driver" 0 "$VRAMDOC" run --interval 10ms --out "$tmp/t.jsonl" --html "$tmp/t.html" -- sh -c 'sleep 0.5; echo done'
contains "job output" $out "^done$"
if grep -q "sampling unavailable" $err; then echo "FAIL: sampling should be available"; fails=$((fails + 1)); fi
contains "device named in the header" "$tmp/t.jsonl" '"device":"NVIDIA H200"'
contains "capacity in the header" "$tmp/t.jsonl" '"total":150754820096'
contains "samples: job holds 0, device 4194304000" "$tmp/t.jsonl" '^\[[0-9.]*,0,4194304000\]$'
n=$(grep -c '^\[' "$tmp/t.jsonl")
[[ $n -ge 10 ]] || { echo "FAIL: only $n samples in 0.5 s at 10 ms"; fails=$((fails + 1)); }
contains "the diagnosis is printed" $err "verdict: "
contains "HTML report written" "$tmp/t.html" "<svg"

# The process query fails while a flag file exists (from the job's second half): those readings are
# left out, never written as a false 0, and the run goes on.
printf 'devices=1\nused=4194304000\nprocesses=1:1073741824\nfail=nvmlDeviceGetComputeRunningProcesses_v3:999\nfail_when_exists=%s\n' "$tmp/flag" >"$tmp/nvml.conf"
check "NVML failing mid-run" 4 "$VRAMDOC" run --interval 10ms --out "$tmp/f.jsonl" -- sh -c "sleep 0.3; touch '$tmp/flag'; sleep 0.3; exit 4"
before=$(grep -c '^\[' "$tmp/f.jsonl")
[[ $before -ge 5 && $before -le 45 ]] || { echo "FAIL: $before samples: wanted those of the first half only"; fails=$((fails + 1)); }
contains "end line" "$tmp/f.jsonl" '"exit_status":4'
finish
