# Issue 15, point 1 on the GPU: a training loop that evaluates every 5 steps without
# torch.no_grad() and keeps the outputs, recorded three times by `vramdoc run` (from outside, no
# marks: --no-step-hook, so the driver's number alone is judged): the same verdict, "leak", each
# time, and never "new input shapes".
# Then the loop with a large evaluation that keeps nothing: never "leak". About 50 s on an H200.
source "$(dirname "$0")/../cli_lib.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then echo "no PyTorch with CUDA: skipped"; exit 77; fi
dir=${OUT:-$(mktemp -d)}/periodic
mkdir -p "$dir"
jobs=$(dirname "$0")/diagnosis_jobs.py

verdicts=()
for i in 1 2 3; do
  check "run periodic_eval $i" 0 timeout 120 "$VRAMDOC" run --no-step-hook --out "$dir/periodic_eval_$i.jsonl" -- python3 "$jobs" periodic_eval
  cp "$err" "$dir/periodic_eval_$i.err"
  "$VRAMDOC" analyze "$dir/periodic_eval_$i.jsonl" --json >"$dir/periodic_eval_$i.json"
  v=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$dir/periodic_eval_$i.json")
  echo "recording $i: $v ($(grep -m1 'verdict:' "$err"))"
  verdicts+=("$v")
  if grep -q "new, larger input shapes" "$dir/periodic_eval_$i.json"; then echo "FAIL: recording $i claims new input shapes"; fails=$((fails + 1)); fi
done
for v in "${verdicts[@]}"; do
  [[ $v == leak ]] || { echo "FAIL: verdicts ${verdicts[*]}: wanted leak three times"; fails=$((fails + 1)); break; }
done

check "run eval_spike" 0 timeout 120 "$VRAMDOC" run --no-step-hook --out "$dir/eval_spike.jsonl" -- python3 "$jobs" eval_spike
v=$("$VRAMDOC" analyze "$dir/eval_spike.jsonl" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
echo "eval spike: $v"
[[ $v != leak ]] || { echo "FAIL: a large evaluation that keeps nothing was called a leak"; fails=$((fails + 1)); }
finish
