# vramdoc run around real PyTorch loops on the GPU: a leaking one must be diagnosed "leak", a
# stable one "stable" (or "plateau"), one too big for the card "insufficient". About a minute on
# an H200. Skipped where there is no NVIDIA GPU or no PyTorch.
source "$(dirname "$0")/../cli_lib.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no NVIDIA GPU: skipped"; exit 77; fi
if ! python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then echo "no PyTorch with CUDA: skipped"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
loop=$(dirname "$0")/leak_loop.py

verdict_of() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$1"; }
run_case() {  # run_case NAME WANT_EXIT WANTED_VERDICTS RUN_OPTIONS... -- ARGS
  local name=$1 want_exit=$2 wanted=$3; shift 3
  check "run $name" "$want_exit" "$VRAMDOC" run --out "$tmp/$name.jsonl" --html "$tmp/$name.html" "$@"
  echo "== $name: vramdoc run's diagnosis"; sed -n '/^diagnosis of/,$p' "$err"
  "$VRAMDOC" analyze "$tmp/$name.jsonl" --json > "$tmp/$name.json"
  local got; got=$(verdict_of "$tmp/$name.json")
  [[ " $wanted " == *" $got "* ]] || { echo "FAIL: $name: verdict $got, wanted one of: $wanted"; fails=$((fails + 1)); }
  # Unchanged samples are left out of the file (docs/timeline-format.md): judge the span recorded.
  local span; span=$(python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))["evidence"]; print(e["samples"], e["duration_s"])' "$tmp/$name.json")
  echo "== $name: samples and seconds $span, verdict $got"
  python3 -c 'import sys; n, s = sys.argv[1].split(); sys.exit(0 if int(n) >= 3 and float(s) >= 0.5 else 1)' "$span" ||
    { echo "FAIL: $name: only $span (samples, seconds) recorded"; fails=$((fails + 1)); }
}

run_case leak 0 "leak" -- python3 "$loop" leak 32
run_case stable 0 "stable plateau" --step-regex '^step ([0-9]+) ' -- python3 "$loop" stable
run_case too-big 1 "insufficient" -- python3 "$loop" too-big
contains "the OOM message was caught" "$tmp/too-big.jsonl" '"oom_message"'
finish
