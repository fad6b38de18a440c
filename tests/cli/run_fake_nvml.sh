# vramdoc run against the fake NVML: it samples while the job runs and writes the samples, the
# device, the capacity and the GPUs into the timeline (version 2). The fake's process lists come
# from a file the job appends "GPU PID BYTES" lines to, so the job holds what it says.
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
printf 'devices=1\nused=4194304000\nprocesses_file=%s\n' "$tmp/procs" >"$tmp/nvml.conf"
export FAKE_NVML_CONFIG=$tmp/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 PROCS=$tmp/procs

# The job grows by 1 MiB ten times, 50 ms apart, then holds 10 MiB for 0.3 s.
grow='i=1; while [ $i -le 10 ]; do echo "0 $$ $((i * 1048576))" >>"$PROCS"; sleep 0.05; i=$((i + 1)); done; sleep 0.3; echo done'
check "run with a driver" 0 "$VRAMDOC" run --interval 10ms --out "$tmp/t.jsonl" --html "$tmp/t.html" -- sh -c "$grow"
contains "job output" $out "^done$"
if grep -q "sampling unavailable" $err; then echo "FAIL: sampling should be available"; fails=$((fails + 1)); fi
contains "device named in the header" "$tmp/t.jsonl" '"device":"NVIDIA H200"'
contains "capacity in the header" "$tmp/t.jsonl" '"total":150754820096'
contains "the GPU in the header" "$tmp/t.jsonl" '"gpus":\[{"index":0,"name":"NVIDIA H200","pci_bus_id":"00000000:19:00.0","total":150754820096,"uuid":"GPU-fake0000-0000-0000-0000-000000000000"}\]'
contains "a sample: the job's bytes, the device, the series (the same), the GPU" "$tmp/t.jsonl" '^\[[0-9.]*,\([1-9][0-9]*\),4194304000,\[\1\],\[4194304000\]\]$'
contains "the job at its last level, 10 MiB" "$tmp/t.jsonl" "^\[[0-9.]*,10485760,4194304000,\[10485760\],"
n=$(grep -c '^\[' "$tmp/t.jsonl")
[[ $n -ge 3 && $n -le 40 ]] || { echo "FAIL: $n sample lines for 10 levels over 0.8 s at 10 ms (each level's ends, not every tick)"; fails=$((fails + 1)); }
contains "the diagnosis is printed" $err "verdict: "
contains "HTML report written" "$tmp/t.html" "<svg"

# The process query fails while a flag file exists (from the job's second half): those readings are
# left out, never written as a false 0, and the run goes on. Each half lasts 0.6 s, so the 0.2 s
# bounds below hold on a loaded machine too (the suite failed it once while a second build ran).
printf 'devices=1\nused=4194304000\nprocesses_file=%s\nfail=nvmlDeviceGetComputeRunningProcesses_v3:999\nfail_when_exists=%s\n' \
  "$tmp/procs2" "$tmp/flag" >"$tmp/nvml.conf"
check "NVML failing mid-run" 4 env PROCS="$tmp/procs2" "$VRAMDOC" run --interval 10ms --out "$tmp/f.jsonl" -- \
  sh -c "echo \"0 \$\$ 1073741824\" >>\"\$PROCS\"; sleep 0.6; touch '$tmp/flag'; sleep 0.6; exit 4"
# A reading of 0 before the job's first line reached the file is true (the first tick can beat the
# job's echo: CI saw one at 0.0008 s); after the 1 GiB appears, every reading must be the 1 GiB.
grep '^\[' "$tmp/f.jsonl" | sed -n '/^\[[0-9.]*,1073741824,/,$p' | grep -qv '^\[[0-9.]*,1073741824,' &&
  { echo "FAIL: a reading other than the job's 1 GiB was written after it appeared"; grep '^\[' "$tmp/f.jsonl"; fails=$((fails + 1)); }
grep -q '^\[[0-9.]*,1073741824,' "$tmp/f.jsonl" || { echo "FAIL: the job's 1 GiB never read"; fails=$((fails + 1)); }
last=$(grep '^\[' "$tmp/f.jsonl" | tail -1 | sed 's/^\[\([0-9.]*\),.*/\1/')
end=$(grep '"end"' "$tmp/f.jsonl" | sed 's/.*"t":\([0-9.]*\).*/\1/')
python3 -c "import sys; sys.exit(0 if 0.2 < float(sys.argv[1]) < float(sys.argv[2]) - 0.2 else 1)" "$last" "$end" ||
  { echo "FAIL: the last sample at $last s of $end s: wanted one from the job's first half"; fails=$((fails + 1)); }
contains "end line" "$tmp/f.jsonl" '"exit_status":4'
finish
