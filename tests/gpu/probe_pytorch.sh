# vramdoc probe on a real PyTorch training job (GPU machine): the largest batch found is the
# largest that really runs (its neighbour fails), the recommended batch runs 10x the steps, a
# leaking job is reported as a leak, and a bad flag as another failure, not an OOM.
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "SKIP: no NVIDIA GPU (nvidia-smi -L found none)"; exit 77; }
python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null || { echo "SKIP: no PyTorch with CUDA"; exit 77; }
source "$(dirname "$0")/../cli_lib.sh"
job="python3 $SRC/tests/gpu/probe_train.py"
dir=${OUT:-/tmp}/probe
mkdir -p "$dir"

# 1. the largest batch on a tenth of the card (about 14 GiB on an H200): --gpu-memory holds the
# job to it (the step hook caps PyTorch's allocator at that less the context), so the margin means
# the same as on a real card of that size. The job runs 3 steps and ends by itself: that counts as
# settled. The checks run the job under the same cap (VRAMDOC_GPU_MEMORY_BYTES, as probe's trials).
card_mib=$(( $(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1) / 10 ))
"$VRAMDOC" probe --cmd "$job --batch-size {batch} --steps 3" --max 256 --gpu-memory "${card_mib}MiB" --json > "$dir/probe.json" 2> "$dir/probe.log"
cat "$dir/probe.log"
read -r verdict largest recommended outside < <(python3 -c "
import json; j = json.load(open('$dir/probe.json')); print(j['verdict'], j['largest_ok'], j['recommended'], j['outside_allocator_bytes'] or '')")
echo "verdict=$verdict largest=$largest recommended=$recommended outside=$outside"
[[ $verdict == fits_up_to ]] || { echo "FAIL: verdict $verdict"; fails=$((fails + 1)); }
held=(env VRAMDOC_GPU_MEMORY_BYTES=$((card_mib << 20)) VRAMDOC_GPU_OUTSIDE_BYTES=$outside "$VRAMDOC" run --no-report --out "$dir/check.jsonl" --)
check "the largest batch runs" 0 "${held[@]}" $job --batch-size "$largest" --steps 3
check "the next batch does not" 1 "${held[@]}" $job --batch-size $((largest + 1)) --steps 3
contains "and it is an OOM" "$err" "out of memory"
check "the recommended batch runs 10x the steps" 0 "${held[@]}" $job --batch-size "$recommended" --steps 30

# 2. a leaking job is a leak, not "max batch N"
"$VRAMDOC" probe --cmd "$job --batch-size {batch} --steps 12 --leak" --steps 12 --max 256 --json > "$dir/leak.json" 2>>"$dir/probe.log"
v=$(python3 -c "import json; print(json.load(open('$dir/leak.json'))['verdict'])")
[[ $v == leak ]] || { echo "FAIL: leaking job gave $v"; fails=$((fails + 1)); }

# 3. a bad flag is another failure
"$VRAMDOC" probe --cmd "$job --batch-sise {batch}" --max 8 --json > "$dir/bad.json" 2>>"$dir/probe.log"
v=$(python3 -c "import json; print(json.load(open('$dir/bad.json'))['verdict'])")
[[ $v == other_failure ]] || { echo "FAIL: bad flag gave $v"; fails=$((fails + 1)); }
finish
