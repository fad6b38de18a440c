# Issue 29 on the GPU: the six jobs of accounting_jobs.py (fraction OOM, an extension's raw
# cudaMalloc leak, helper processes, a serving loop, the Trainer's evaluation keeping logits,
# DataLoader workers with CUDA contexts), each recorded twice by `vramdoc run` with the step hook,
# all at once on the card: each verdict (and its rule) right, and the same both times. With nvcc
# and the tracer, the extension's leak under --trace names scratch_ext.cu, not cuda_runtime.h.
# About 60 s on an H200.
source "$(dirname "$0")/../cli_lib.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then echo "no PyTorch with CUDA: skipped"; exit 77; fi
here=$(cd "$(dirname "$0")" && pwd)
dir=${OUT:-$(mktemp -d)}/accounting
mkdir -p "$dir"
BUILD=$(dirname "$VRAMDOC")
export PYTHONUNBUFFERED=1
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
native=""
if [[ -f $here/libscratch_ext.so ]]; then native=$here/libscratch_ext.so
elif [[ -x $nvcc ]]; then
  "$nvcc" -shared -Xcompiler -fPIC -g -O1 -cudart static -o "$dir/libscratch_ext.so" "$here/scratch_ext.cu" && native=$dir/libscratch_ext.so
fi
kinds="fraction_oom ext_leak helpers serving trainer_eval workers"
python3 -c "import cupy" 2>/dev/null || { echo "no CuPy: ext_leak left out"; kinds=${kinds/ext_leak/}; }
python3 -c "import transformers" 2>/dev/null || { echo "no transformers: serving and trainer_eval left out"; kinds=${kinds/serving/}; kinds=${kinds/trainer_eval/}; }
record() {  # NAME KIND [run options]
  local name=$1 kind=$2; shift 2
  VRAMDOC_SCRATCH_EXT=$native timeout 200 "$VRAMDOC" run --interval 50ms --out "$dir/$name.jsonl" "$@" -- python3 "$here/accounting_jobs.py" "$kind" \
    >"$dir/$name.log" 2>&1
  "$VRAMDOC" analyze "$dir/$name.jsonl" --json >"$dir/$name.json" 2>"$dir/$name.analyze.err"
}
for i in 1 2; do
  for k in $kinds; do record "${k}_$i" "$k" & done
  if [[ -n $native && -f $BUILD/libvramdoc-tracer.so ]]; then record "ext_native_$i" ext_native --trace & fi
done
wait
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get(sys.argv[2]) or "")' "$1" "$2" 2>/dev/null; }
want() {  # KIND VERDICT RULE (the rule's name, or - for any)
  local kind=$1 verdict=$2 rule=$3 seen=()
  for i in 1 2; do
    local j=$dir/${kind}_$i.json
    local v r; v=$(field "$j" verdict); r=$(field "$j" rule)
    echo "$kind $i: $v (rule '$r')"
    seen+=("$v/$r")
    if [[ $v != "$verdict" ]] || [[ $rule != - && $r != "$rule"* ]]; then
      echo "FAIL: $kind recording $i: $v by '$r', wanted $verdict by '$rule'"; grep -m3 "verdict:\|Error" "$dir/${kind}_$i.log"; fails=$((fails + 1))
    fi
  done
  [[ ${seen[0]} == "${seen[1]}" ]] || { echo "FAIL: $kind: ${seen[0]} then ${seen[1]}"; fails=$((fails + 1)); }
}
[[ $kinds == *fraction_oom* ]] && want fraction_oom insufficient "OOM in the first step"
[[ $kinds == *ext_leak* ]] && want ext_leak leak "outside PyTorch's allocator"
[[ $kinds == *helpers* ]] && want helpers leak "processes accumulate"
if [[ $kinds == *serving* ]]; then
  for i in 1 2; do v=$(field "$dir/serving_$i.json" verdict); echo "serving $i: $v"
    [[ $v == plateau || $v == stable ]] || { echo "FAIL: serving $i: $v (a cache that grows for larger requests is no leak)"; fails=$((fails + 1)); }
  done
fi
[[ $kinds == *trainer_eval* ]] && want trainer_eval leak "evaluation accumulates"
if [[ $kinds == *workers* ]]; then
  want workers stable -
  for i in 1 2; do contains "workers $i names the other processes" "$dir/workers_$i.json" "besides the training loop"; done
fi
if [[ -f $dir/ext_native_1.jsonl ]]; then
  want ext_native leak -
  for i in 1 2; do
    contains "ext_native $i: the leak's frame is the caller's line" "$dir/ext_native_$i.log" "make_scratch (scratch_ext.cu"
    if grep -q "cuda_runtime.h:" "$dir/ext_native_$i.log"; then echo "FAIL: ext_native $i: a frame in cuda_runtime.h"; fails=$((fails + 1)); fi
  done
fi
finish
