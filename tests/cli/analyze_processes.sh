# vramdoc analyze on the two-rank recordings of an H200 pair (tests/data/README.md): torchrun with
# rank 1 keeping 62.5 MiB a step is a leak of rank 1, with rank 0 stable, each judged against its
# own GPU; the stable DDP job is stable on both ranks; the single-process loop is judged on the
# step hook's step-end bytes. Two files are one job. A leak is analyze's "no": exit 1 (docs/cli.md).
source "$(dirname "$0")/../cli_lib.sh"
data=$SRC/tests/data/timelines

check "two ranks, one leaking" 1 "$VRAMDOC" analyze "$data/h200_two_ranks_leak.jsonl"
contains "the leaking rank named" "$out" "verdict: leak: rank 1 (pid 5209, GPU 1) leaks 62.50 MiB per step; rank 0 stable\."
contains "rank 0 against its own GPU" "$out" "rank 0 (pid 5208, GPU 0)  python   stable .* of 140.40 GiB"
contains "the evidence is rank 1's" "$out" "diagnosis of torchrun: rank 1 (pid 5209, GPU 1)"
contains "from the step-end bytes" "$out" "trend measured on .*framework-allocated bytes at each step end"
check "--json" 1 "$VRAMDOC" analyze "$data/h200_two_ranks_leak.jsonl" --json
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
p = j["processes"]
assert j["verdict"] == "leak" and p["verdict"] == "leak" and p["worst"] == 1, p
assert [(x["rank"], x["gpu"], x["verdict"]) for x in p["processes"]] == [(0, 0, "stable"), (1, 1, "leak")], p
assert all(x["capacity_bytes"] == 150754820096 for x in p["processes"])  # each GPU's, not the sum
assert p["processes"][1]["growth_bytes_per_step"] == 65536000, p["processes"][1]
assert p["processes"][1]["gpu_uuid"] == "GPU-00423770-42fe-f531-b48b-a7a705fa6ccf"
PY

check "two ranks, both stable" 0 "$VRAMDOC" analyze "$data/h200_two_ranks_stable.jsonl"
contains "stable on both" "$out" "verdict: stable: ranks 0-1 stable\."
check "one process with the step hook" 0 "$VRAMDOC" analyze "$data/h200_step_hook_single.jsonl"
contains "one process: the usual report" "$out" "verdict: stable"
contains "on the step-end bytes" "$out" "trend measured on .*framework-allocated bytes at each step end"
if grep -q "processes (" "$out"; then echo "FAIL: a one-process job got the processes' table"; fails=$((fails + 1)); fi

check "two files, one job" 1 "$VRAMDOC" analyze "$data/h200_two_ranks_leak.jsonl" "$data/h200_two_ranks_stable.jsonl"
contains "four processes" "$out" "processes (4;"
contains "the leaking rank among them" "$out" "verdict: leak: rank 1 (pid 5209, GPU 1) leaks 62.50 MiB per step; ranks 0-1 stable\."
contains "aligned" "$out" "time axes aligned by each file's wall-clock start"
finish
