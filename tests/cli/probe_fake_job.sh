# vramdoc probe against a stand-in job: finds the exact largest batch, tells an OOM from another
# failure, stops on --max, and handles bad options.
source "$(dirname "$0")/../cli_lib.sh"
job="bash $SRC/tests/cli/data/fake_job.sh"
keep=$(mktemp -d)
trap 'rm -rf "$keep" "$out" "$err"' EXIT

LIMIT=37 check "fits up to 37" 0 "$VRAMDOC" probe --cmd "$job {batch}" --keep "$keep" --json
python3 - "$out" <<'PY' || { echo "FAIL: probe JSON"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "fits_up_to", j["verdict"]
assert j["largest_ok"] == 37 and j["smallest_oom"] == 38, (j["largest_ok"], j["smallest_oom"])
values = [t["value"] for t in j["trials"]]
assert values[:7] == [1, 2, 4, 8, 16, 32, 64], values
assert all(t["outcome"] == ("ok" if t["value"] <= 37 else "oom") for t in j["trials"]), j["trials"]
assert j["recommended"] is not None and j["recommended"] <= 37
PY
contains "a progress line per trial" "$err" "batch 38: oom"
[[ -f $keep/trial-37.jsonl && -f $keep/trial-37.log ]] || { echo "FAIL: --keep keeps trial files"; fails=$((fails + 1)); }

LIMIT=0 check "too big at 1" 1 "$VRAMDOC" probe --cmd "$job {batch}" --keep "$keep"
contains "says too big" "$out" "too big even at batch 1"

LIMIT=100 check "a bad flag is not an OOM" 1 "$VRAMDOC" probe --cmd "$job x{batch}" --keep "$keep"
contains "says other failure" "$out" "failed for a reason other than memory at batch 1"
contains "with the job's own error" "$err" "invalid int value"

# The trial's outcome comes from the timeline's end record, its reason from the job's output,
# even when the job prints what run's own report would say (regression: probe searched the log
# for "vramdoc run: the job exited" and took the line before it).
check "a job that prints run's words" 1 "$VRAMDOC" probe --keep "$keep" \
  --cmd "echo 'vramdoc run: the job exited with status 0; timeline: x'; echo 'real error {batch}' >&2; exit 4"
contains "its own last line is the reason" "$err" "real error 1"
contains "counted as another failure" "$out" "failed for a reason other than memory at batch 1"

LIMIT=1000 check "--max stops the doubling" 0 "$VRAMDOC" probe --cmd "$job {batch}" --max 20 --keep "$keep"
contains "fits up to --max" "$out" "fits up to the --max batch 20"

LIMIT=1000 check "--steps stops a long trial" 0 "$VRAMDOC" probe --cmd "$job {batch} 100000" --steps 2 --max 2 --keep "$keep"
check "no placeholder" 2 "$VRAMDOC" probe --cmd "$job 8"
contains "names the placeholder" "$err" "{batch} or {seq}"
check "--cmd is required" 2 "$VRAMDOC" probe
check "bad --budget" 2 "$VRAMDOC" probe --cmd "$job {batch}" --budget soon
check "--start above --max" 2 "$VRAMDOC" probe --cmd "$job {batch}" --start 9 --max 4
check "--config that does not exist" 2 "$VRAMDOC" probe --cmd "$job {batch}" --config "$keep/none.json" --seq 512
contains "names the config" "$err" "none.json"
check "--config without the other value" 2 "$VRAMDOC" probe --cmd "$job {batch}" --config "$SRC/tests/cli/data/llama_h1024_l8.json"
contains "asks for --seq" "$err" "needs the job's --seq"
LIMIT=37 check "--config with the card unknown: the plain search, the same answer" 0 "$VRAMDOC" probe --cmd "$job {batch}" \
  --config "$SRC/tests/cli/data/llama_h1024_l8.json" --seq 512 --json
contains "fits up to 37" "$out" '"largest_ok": 37'
finish
