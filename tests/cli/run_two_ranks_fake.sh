# vramdoc run around a job of two "ranks" on two GPUs of the fake NVML (its process lists read
# from a file the ranks append to): the timeline is version 2 with a series per rank, and the
# report names the rank that keeps 62.5 MiB a step instead of judging the sum of both (issue 15).
# analyze gives the same (a leak: exit 1, docs/cli.md), and takes two files (two "nodes") as one job.
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
printf 'devices=2\nused=4194304000\nprocesses_file=%s\n' "$tmp/procs" >"$tmp/nvml.conf"
export FAKE_NVML_CONFIG=$tmp/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 PROCS=$tmp/procs
# One rank: 1 GiB on GPU $LOCAL_RANK, and with LEAK=1 64 MiB more each step (62.5 MiB allocated);
# it marks each step as vramdoc's step hook does.
cat >"$tmp/rank.sh" <<'SH'
i=0
while [ $i -lt 40 ]; do
  echo "$LOCAL_RANK $$ $((1073741824 + ${LEAK:-0} * i * 67108864))" >>"$PROCS"
  echo "step $i allocated=$((536870912 + ${LEAK:-0} * i * 65536000)) reserved=$((1073741824 + ${LEAK:-0} * i * 67108864)) pid=$$ rank=$RANK" >>"$VRAMDOC_MARK_FILE"
  sleep 0.05
  i=$((i + 1))
done
SH
job() {  # job FIRST_RANK: two ranks, the second one leaking
  echo "RANK=$1 LOCAL_RANK=0 sh '$tmp/rank.sh' & RANK=$(($1 + 1)) LOCAL_RANK=1 LEAK=1 sh '$tmp/rank.sh' & wait"
}

check "run around two ranks" 0 "$VRAMDOC" run --interval 10ms --out "$tmp/a.jsonl" --html "$tmp/a.html" -- sh -c "$(job 0)"
contains "version 2" "$tmp/a.jsonl" '"vramdoc_timeline":2'
contains "the host in the header" "$tmp/a.jsonl" "\"host\":\"$(hostname)\""
contains "GPU 1's UUID in the header" "$tmp/a.jsonl" '"uuid":"GPU-fake0000-0000-0000-0000-000000000001"'
contains "rank 1's series" "$tmp/a.jsonl" '{"series":{"command":"sh","gpu":1,"id":[01],"local_rank":1,"pid":[0-9]*,"rank":1}}'
contains "a step mark with the allocator's figures" "$tmp/a.jsonl" '"allocated":536870912,"mark":"step 0","pid":[0-9]*,"reserved":1073741824'
contains "the leaking rank named" "$err" "verdict: leak: rank 1 (pid [0-9]*, GPU 1) leaks 62.50 MiB per step; rank 0 stable\."
contains "the processes' table" "$err" "processes (2; the job's verdict is the worst of theirs)"
contains "each against its own GPU" "$err" "rank 0 (pid [0-9]*, GPU 0) .*stable  *1.00 GiB of 140.40 GiB"
contains "the HTML report's processes" "$tmp/a.html" "<section id='processes'>"
lines=$(wc -l <"$tmp/a.jsonl")
[[ $lines -lt 200 ]] || { echo "FAIL: $lines lines for 2 s at 10 ms: unchanged samples are not left out"; fails=$((fails + 1)); }

check "analyze the same file" 1 "$VRAMDOC" analyze "$tmp/a.jsonl" --json
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "leak", j["verdict"]
p = j["processes"]
assert [x["rank"] for x in p["processes"]] == [0, 1], p
assert [x["verdict"] for x in p["processes"]] == ["stable", "leak"], p
assert abs(p["processes"][1]["growth_bytes_per_step"] - 65536000) < 1e5, p["processes"][1]
assert p["processes"][1]["gpu_uuid"].endswith("1") and p["worst"] == 1
PY

# A second "node": ranks 2 and 3. Both files, one job, one time axis.
check "run the second node" 0 "$VRAMDOC" run --interval 10ms --out "$tmp/b.jsonl" -- sh -c "$(job 2)"
check "analyze both files" 1 "$VRAMDOC" analyze "$tmp/a.jsonl" "$tmp/b.jsonl"
contains "four processes" "$out" "processes (4;"
contains "both leaking ranks, the stable ones as ranges" "$out" "rank 1 (pid [0-9]*, GPU 1) leaks 62.50 MiB per step; rank 3 (pid [0-9]*, GPU 1) leaks 62.50 MiB per step; ranks 0, 2 stable"
contains "aligned" "$out" "note: time axes aligned by each file's wall-clock start"
check "--trace-dir with two files" 2 "$VRAMDOC" analyze "$tmp/a.jsonl" "$tmp/b.jsonl" --trace-dir "$tmp"
contains "says why" "$err" "--trace-dir goes with one timeline file"
check "a missing second file" 2 "$VRAMDOC" analyze "$tmp/a.jsonl" "$tmp/none.jsonl"
contains "names it" "$err" "none.jsonl"
finish
