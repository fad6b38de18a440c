# vramdoc probe against a stand-in job: finds the exact largest batch, tells an OOM from another
# failure, stops on --max, and handles bad options. The job's memory comes from the fake NVML
# (tests/fakes): the job writes what it holds into its process file.
source "$(dirname "$0")/../cli_lib.sh"
job="bash $SRC/tests/cli/data/fake_job.sh"
keep=$(mktemp -d)
trap 'rm -rf "$keep" "$out" "$err"' EXIT
printf 'devices=1\nprocesses_file=%s\n' "$keep/procs" >"$keep/nvml.conf"
with_driver() { FAKE_NVML_CONFIG=$keep/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 PROCS=$keep/procs "$@"; }
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1  # no driver unless a case gives one
card=150754820096  # the fake H200's memory

# Batch 37 holds 97 % of the card, 38 runs out.
LIMIT=37 PER_ITEM=$((card * 97 / 100 / 37)) check "fits up to 37" 0 with_driver "$VRAMDOC" probe --cmd "$job {batch}" --keep "$keep" --json
python3 - "$out" $card <<'PY' || { echo "FAIL: probe JSON"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
card = int(sys.argv[2])
assert j["verdict"] == "fits_up_to", j["verdict"]
assert j["largest_ok"] == 37 and j["smallest_oom"] == 38, (j["largest_ok"], j["smallest_oom"])
assert len(j["trials"]) <= 8, [t["value"] for t in j["trials"]]
assert all(t["outcome"] == ("ok" if t["value"] <= 37 else "oom") for t in j["trials"]), j["trials"]
assert j["trials"][-1]["confirmation"] and j["trials"][-1]["value"] == 37 and j["confirmed"] == 37, j["trials"][-1]
ran = {t["value"]: t for t in j["trials"] if t["outcome"] == "ok"}
# The fake job ends by itself after 3 steps: it ran to its end, which counts as settled (H200,
# 2026-12-02: a 3-step job never settled with K = 5).
assert all(t["ran_to_end"] and t["settled_at"] is not None for t in ran.values()), ran
assert j["untried"] is None, j["untried"]
# The largest batch whose peak keeps 10 % of the card: 34 x 97/37 % = 89.1 %, 35: 91.8 %; it may
# lie between two batches that ran, never above the largest.
assert j["recommended"] == 34 and any(v > 34 for v in ran) and any(v <= 34 for v in ran), (j["recommended"], sorted(ran))
PY
contains "the verdict says it ran to its end" "$out" '"summary": "fits up to batch 37 (ran 3 steps to the job.s end, flat from step [0-9]); batch 38 ran out of memory at step 1"'
contains "a progress line per trial" "$err" "batch 38: oom"
contains "the confirmation is announced" "$err" "confirming batch 37 for 50 steps"
[[ -f $keep/trial-37.jsonl && -f $keep/trial-37.log ]] || { echo "FAIL: --keep keeps trial files"; fails=$((fails + 1)); }

# A long job: each trial stops once its memory has been flat for --settle-steps steps, the
# confirmation runs --confirm-steps whatever it shows.
LIMIT=1000 check "a trial stops when its memory settled" 0 with_driver "$VRAMDOC" probe --cmd "$job {batch} 100000" --max 2 \
  --confirm-steps 12 --keep "$keep" --json
python3 - "$out" <<'PY' || { echo "FAIL: settled trials"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "fits_up_to_max", j["verdict"]
for t in j["trials"]:
    if t["confirmation"]:
        assert t["steps"] >= 12, t
    else:
        assert t["settled_at"] is not None and 6 <= t["steps"] <= 30, t
PY
contains "the verdict says how long it ran" "$out" '"summary": "fits up to the --max batch 2 (ran 1[0-9] steps, settled at step [0-9]*); no out-of-memory found"'

# Issue 30 / 32 item 3: without the driver's readings a trial cannot be said to fit.
LIMIT=37 check "no memory readings: nothing recommended" 1 "$VRAMDOC" probe --cmd "$job {batch}" --gpu-memory 80GiB --keep "$keep"
contains "says what could not be measured" "$out" "the driver gave no memory readings"
contains "recommends nothing" "$out" "nothing is recommended"

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

LIMIT=1000 check "--max stops the doubling" 0 with_driver "$VRAMDOC" probe --cmd "$job {batch}" --max 20 --keep "$keep"
contains "fits up to --max" "$out" "fits up to the --max batch 20"

LIMIT=1000 check "--max-steps stops a long trial" 0 with_driver "$VRAMDOC" probe --cmd "$job {batch} 100000" --max-steps 3 --max 2 \
  --confirm-steps 3 --keep "$keep"
contains "not settled in 3 steps" "$out" "memory not settled"
check "no placeholder" 2 "$VRAMDOC" probe --cmd "$job 8"
contains "names the placeholder" "$err" "{batch} or {seq}"
check "--cmd is required" 2 "$VRAMDOC" probe
check "bad --budget" 2 "$VRAMDOC" probe --cmd "$job {batch}" --budget soon
check "--start above --max" 2 "$VRAMDOC" probe --cmd "$job {batch}" --start 9 --max 4
check "--config that does not exist" 2 "$VRAMDOC" probe --cmd "$job {batch}" --config "$keep/none.json" --seq 512
contains "names the config" "$err" "none.json"
check "--config without the other value" 2 "$VRAMDOC" probe --cmd "$job {batch}" --config "$SRC/tests/cli/data/llama_h1024_l8.json"
contains "asks for --seq" "$err" "needs the job's --seq"
# An estimator curve of another model (a Llama config for a job that is not one) misleads the
# first jumps: within 8 trials the bracket is right but wide; without the cap, the exact answer.
LIMIT=37 PER_ITEM=$((card * 97 / 100 / 37)) check "--config: a wrong curve, the cap keeps a right bracket" 0 with_driver \
  "$VRAMDOC" probe --cmd "$job {batch}" --config "$SRC/tests/cli/data/llama_h1024_l8.json" --seq 512 --json
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['largest_ok'] <= 37 < j['smallest_oom'] and len(j['trials']) <= 8, j['summary']" "$out" ||
  { echo "FAIL: the capped bracket"; fails=$((fails + 1)); }
LIMIT=37 PER_ITEM=$((card * 97 / 100 / 37)) check "--config with no trial cap: the exact answer" 0 with_driver \
  "$VRAMDOC" probe --cmd "$job {batch}" --config "$SRC/tests/cli/data/llama_h1024_l8.json" --seq 512 --max-trials 0 --json
contains "fits up to 37" "$out" '"largest_ok": 37'
# the estimator's model kinds reach probe's prior too (an encoder-decoder's --task and --target-seq)
t5=$SRC/scripts/gpu/probe_configs/t5-base.json
LIMIT=37 PER_ITEM=$((card * 97 / 100 / 37)) check "--config of an encoder-decoder with --task seq2seq" 0 with_driver \
  "$VRAMDOC" probe --cmd "$job {batch}" --config "$t5" --seq 512 --task seq2seq --target-seq 128 --json
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['largest_ok'] <= 37 < j['smallest_oom'], j['summary']" "$out" ||
  { echo "FAIL: the seq2seq prior's bracket"; fails=$((fails + 1)); }
check "--task the model cannot run" 2 "$VRAMDOC" probe --cmd "$job {batch}" --config "$t5" --seq 512 --task image-cls
check "bad --target-seq" 2 "$VRAMDOC" probe --cmd "$job {batch}" --config "$t5" --seq 512 --target-seq none
finish
