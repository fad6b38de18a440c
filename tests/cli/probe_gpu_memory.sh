# vramdoc probe --gpu-memory holds a PyTorch job to a card of that size (issue 30, H200 2026-12-02:
# it only told probe the card, and the jobs reached 16.7 GiB of "16 GiB"): the step hook caps the
# allocator at the size less what the driver charges outside it (the CUDA context, measured by
# the trials), so the largest batch is the one a 16 GiB card holds; the recommendation keeps the
# margin on the allocator's part and may lie between two batches that ran. The stand-in PyTorch
# (tests/fakes/python) and the fake NVML (its process file) play the job and the driver.
source "$(dirname "$0")/../cli_lib.sh"
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out" "$err"' EXIT
export PYTHONDONTWRITEBYTECODE=1 PROCS=$dir/procs
printf 'devices=1\nprocesses_file=%s\n' "$PROCS" >"$dir/nvml.conf"
export FAKE_NVML_CONFIG=$dir/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1
# An 80 GiB device; 2 GiB outside the allocator; 1 GiB of weights and 100 MiB per batch item.
export PYTHONPATH=$SRC/tests/fakes/python FAKE_TORCH_TOTAL=$((80 << 30)) FAKE_TORCH_CONTEXT=$((2 << 30)) PER_ITEM=$((100 << 20))
job="python3 $SRC/tests/cli/data/fake_torch_job.py {batch}"

# On a 16 GiB card the allocator gets 16 - 2 = 14 GiB: 1024 + 100 b <= 14336 MiB, b <= 133.
check "held to 16 GiB" 0 "$VRAMDOC" probe --cmd "$job" --gpu-memory 16GiB --max 1024 --max-trials 0 --keep "$dir/k" --json
python3 - "$out" <<'PY' || { echo "FAIL: probe --gpu-memory 16GiB"; cat "$out"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "fits_up_to", j["summary"]
assert (j["largest_ok"], j["smallest_oom"]) == (133, 134), j["summary"]
peaks = [t["peak_bytes"] for t in j["trials"] if t["outcome"] == "ok"]
assert max(peaks) <= 16 << 30, max(peaks)  # the driver's number stays within the card told
assert all(t["ran_to_end"] for t in j["trials"] if t["outcome"] == "ok"), j["trials"]
# The margin on what the allocator controls: a peak of 16 - 0.1 x (16 - 2) = 14.6 GiB, 3072 + 100 b
# MiB: b <= 118 (10 % of the whole card, 14.4 GiB, gave 116), between batches that ran.
assert j["recommended"] == 118, (j["recommended"], j["recommendation_basis"])
PY
contains "the cap is in the timeline" "$dir/k/trial-133.jsonl" '"mark":"allocator fraction=0.175'
contains "the context is said" "$out" "2.00 GiB outside the allocator"

# Without --gpu-memory the job has the whole device: no cap.
check "not held without --gpu-memory" 0 "$VRAMDOC" probe --cmd "$job" --max 200 --max-trials 0 --keep "$dir/k2" --json
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['verdict'] == 'fits_up_to_max', j['summary']" "$out" ||
  { echo "FAIL: capped without --gpu-memory"; fails=$((fails + 1)); }
if grep -q 'allocator fraction' "$dir"/k2/*.jsonl; then echo "FAIL: a cap without --gpu-memory"; fails=$((fails + 1)); fi

# A job that sets its own, smaller fraction keeps it; a larger one is held to the card told (16
# GiB less the 2 GiB outside the allocator: 14 GiB).
hold=(env VRAMDOC_GPU_MEMORY_BYTES=$((16 << 30)) VRAMDOC_GPU_OUTSIDE_BYTES=$((2 << 30)))
cat >"$dir/own.py" <<'PY'
import sys, torch
torch.cuda.set_per_process_memory_fraction(float(sys.argv[1]))
torch.empty_cuda(int(sys.argv[2]) << 30)
print("fits")
PY
check "its own smaller cap" 1 "${hold[@]}" "$VRAMDOC" run --out "$dir/o1.jsonl" -- python3 "$dir/own.py" 0.1 9
contains "runs out at 8 GiB" "$err" "out of memory"
check "a larger one is held" 1 "${hold[@]}" "$VRAMDOC" run --out "$dir/o2.jsonl" -- python3 "$dir/own.py" 0.5 15
check "within the card told" 0 "${hold[@]}" "$VRAMDOC" run --out "$dir/o3.jsonl" -- python3 "$dir/own.py" 0.5 13
contains "it ran" "$out" "fits"

# The process measures what lies outside the allocator itself, at one instant (H200 2026-12-02:
# probe's sampled estimate of a trial near the cap was 1.66 GiB for a 0.6 GiB context, and the
# confirmations ran out of memory where their trials had run): an estimate larger than the
# process's own 2 GiB does not shrink the cap.
check "an inflated estimate is not the cap" 0 env VRAMDOC_GPU_MEMORY_BYTES=$((16 << 30)) VRAMDOC_GPU_OUTSIDE_BYTES=$((4 << 30)) \
  "$VRAMDOC" run --out "$dir/o4.jsonl" -- python3 "$dir/own.py" 0.5 13
contains "13 GiB fits in 16 - 2" "$out" "fits"
# A device another process shares (H200 2026-12-02: a T5 trial beside the comparison's other jobs was
# capped at 13.04 of 16 GiB, its 0.74 GiB context plus another job's 2.41 GiB): the device's used
# memory counts the others too, so probe's per-process estimate bounds what is this process's.
check "another process's memory is not this one's" 0 env FAKE_TORCH_OTHERS=$((2 << 30)) VRAMDOC_GPU_MEMORY_BYTES=$((16 << 30)) \
  VRAMDOC_GPU_OUTSIDE_BYTES=$((2 << 30)) "$VRAMDOC" run --out "$dir/o5.jsonl" -- python3 "$dir/own.py" 0.5 13
contains "13 GiB fits in 16 - 2 beside 2 GiB of another process" "$out" "fits"
# A context that grows in the first step (1 GiB of kernels loaded lazily) leaves the allocator
# 16 - 3 = 13 GiB from the next step on, as a real card would: 1024 + 100 b <= 13312 MiB, b <= 122.
grow=(env CONTEXT_GROWTH=$((1 << 30)) VRAMDOC_GPU_MEMORY_BYTES=$((16 << 30)) "$VRAMDOC" run --no-report)
check "133 fits before the context grows, not after" 1 "${grow[@]}" --out "$dir/g1.jsonl" -- python3 "$SRC/tests/cli/data/fake_torch_job.py" 133
contains "it ran out at the second step" "$out" "step 0 loss"
contains "with an OOM" "$err" "out of memory"
check "122 fits after it grew" 0 "${grow[@]}" --out "$dir/g2.jsonl" -- python3 "$SRC/tests/cli/data/fake_torch_job.py" 122
contains "all three steps" "$out" "step 2 loss"
finish
