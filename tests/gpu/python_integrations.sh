# vramdoc's Python integrations in real loops under `vramdoc run`: a Hugging Face Trainer and a
# Lightning Trainer mark their steps and evaluation phases in the timeline, and an OOM in a
# Trainer prints vramdoc's verdict from the callback. About a minute on an H200. Skipped without
# a GPU, PyTorch, transformers or lightning (each part on its own).
source "$(dirname "$0")/../cli_lib.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then echo "no PyTorch with CUDA: skipped"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
export PYTHONPATH=$SRC/python VRAMDOC_BINARY=$VRAMDOC
job=$(dirname "$0")/integration_jobs.py
marks() { python3 -c 'import json,sys
for line in open(sys.argv[1]):
    d = json.loads(line) if line.startswith("{") else {}
    if "mark" in d: print(d["mark"])' "$1"; }
ran=0
if python3 -c "import transformers" 2>/dev/null; then
  ran=1
  check "a Trainer under vramdoc run" 0 "$VRAMDOC" run --out "$tmp/hf.jsonl" -- python3 "$job" hf
  marks "$tmp/hf.jsonl" > "$tmp/hf.marks"; echo "== Trainer marks:"; tr '\n' ';' < "$tmp/hf.marks"; echo
  contains "step 12 marked" "$tmp/hf.marks" "^step 12"
  contains "evaluation marked" "$tmp/hf.marks" "^eval begin"
  contains "evaluation end marked" "$tmp/hf.marks" "^eval end"
  check "an OOM in a Trainer" 1 "$VRAMDOC" run --out "$tmp/hf-oom.jsonl" -- python3 "$job" hf-oom
  contains "the callback's verdict" "$err" "vramdoc: out of memory. verdict: insufficient"
else
  echo "transformers missing: the Trainer part skipped"
fi
if python3 -c "import lightning" 2>/dev/null || python3 -c "import pytorch_lightning" 2>/dev/null; then
  ran=1
  check "a Lightning loop under vramdoc run" 0 "$VRAMDOC" run --out "$tmp/pl.jsonl" -- python3 "$job" lightning
  marks "$tmp/pl.jsonl" > "$tmp/pl.marks"; echo "== Lightning marks:"; tr '\n' ';' < "$tmp/pl.marks"; echo
  contains "step 10 marked" "$tmp/pl.marks" "^step 10"
  contains "validation marked" "$tmp/pl.marks" "^eval begin"
  [[ $(grep -c '^step 5' "$tmp/pl.marks") == 1 ]] || { echo "FAIL: step 5 marked more than once"; fails=$((fails + 1)); }
else
  echo "lightning missing: the Lightning part skipped"
fi
((ran)) || { echo "neither transformers nor lightning: skipped"; exit 77; }
finish
