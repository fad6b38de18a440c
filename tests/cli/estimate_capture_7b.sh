# The 7B LoRA step of issue 27: a Llama-shaped 6.7 B-parameter model with LoRA on q and v, captured
# on the CPU (Debian's torch for /usr/bin/python3) in a bounded time and in memory far below the
# model's 12.6 GiB of bf16 weights. The bar is 60 s on the 2-core build machine; this test allows
# 180 s so that a loaded CI machine does not fail it, and prints the time. Skipped (77) without torch.
source "$(dirname "$0")/../cli_lib.sh"
py=/usr/bin/python3
if ! "$py" -c "import torch" 2>/dev/null; then echo "SKIP: $py has no torch (apt-get install python3-torch)"; exit 77; fi
time_log=$(mktemp)
trap 'rm -f "$out" "$err" "$time_log"' EXIT
timer=(); [[ -x /usr/bin/time ]] && timer=(/usr/bin/time -v -o "$time_log")  # peak RSS, where GNU time is there
start=$("$py" -c "import time; print(time.time())")
check "the 7B LoRA step" 0 "${timer[@]}" "$VRAMDOC" estimate --json --gpu "A100 80GB" -- \
  "$py" "$SRC/tests/data/capture/llama7b_lora.py" --seq 512
wall=$("$py" -c "import time; print(round(time.time() - $start, 1))")
rss_kb=$(awk -F': ' '/Maximum resident/ {print $2}' "$time_log")
echo "7B LoRA capture: ${wall} s wall, ${rss_kb} KiB peak RSS"
"$py" - "$out" "$wall" "${rss_kb:-0}" <<'PY' || { echo "FAIL: 7B LoRA numbers"; fails=$((fails + 1)); }
import json, sys
j, wall, rss = json.load(open(sys.argv[1])), float(sys.argv[2]), int(sys.argv[3]) * 1024
params = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008 + 2 * 4096) + 2 * 32000 * 4096 + 4096
weights = params * 2  # bf16
assert j["capture"]["steps"] == 3 and j["capture"]["end"] == "steps", j["capture"]
assert weights < j["peak_allocated_bytes"] < 1.5 * weights, (j["peak_allocated_bytes"], weights)
assert wall < 180, wall
assert rss < weights / 8, rss  # the capture holds no weights: far below the model's size (0: not measured)
PY
finish
