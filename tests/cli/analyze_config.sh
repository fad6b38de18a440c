# analyze / run with --config or --model: the remedies quantified with the estimator. On the shared
# recorded OOM (an H200, batch 1024 x seq 4096 of a small Llama, bf16 + AdamW) the job needs more
# than the card, some remedies fit, and the largest batch that fits is given. Bad input: exit 2.
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
timeline=$SRC/tests/data/timelines/oom_insufficient.json config=$SRC/tests/cli/data/llama_h1024_l8.json
job=(--config "$config" --batch 1024 --seq 4096)

check "analyze --config (insufficient: exit 1)" 1 "$VRAMDOC" analyze "$timeline" "${job[@]}"
contains "the estimate beside the measurement" $out "estimated [0-9.]* [GT]iB, measured [0-9.]* GiB"
contains "the job does not fit" $out "does not fit"
contains "the table's header" $out "remedy.*change.*process GiB.*saves GiB.*fits"
contains "checkpointing is a row" $out "gradient checkpointing"
contains "some remedy fits" $out " yes *$"
contains "the largest batch" $out "largest batch that fits: [1-9][0-9]*"
if grep -q "not connected\|not in this build" $out $err; then echo "FAIL: the old hook message is still there"; fails=$((fails + 1)); fi

check "analyze --config --json" 1 "$VRAMDOC" analyze "$timeline" "${job[@]}" --json
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
d = json.load(open(sys.argv[1]))
q, rs = d["quantified"], d["remedies_quantified"]
cap = q["capacity_bytes"]
assert d["verdict"] == "insufficient", d["verdict"]
assert q["fits"] is False and q["estimated_bytes"] > cap, q
assert 0 < q["max_batch"] < 1024, q
names = {r["name"] for r in rs}
assert {"gradient checkpointing", "smaller micro-batch, same effective batch", "LoRA adapters"} <= names, names
for r in rs:
    assert set(r) >= {"name", "process_bytes", "saving_bytes", "fits"}, r
    # the allocator replay can leave reserved unchanged (an 8-bit state fits the activations' holes)
    assert r["saving_bytes"] >= 0, r
    assert r["saving_bytes"] == q["estimated_bytes"] - r["process_bytes"], r
    if r["fits"]:
        assert r["process_bytes"] < cap, r
assert any(r["fits"] for r in rs), rs
assert any(r["saving_bytes"] > 0 for r in rs), rs
PY

check "analyze --html with --config" 1 "$VRAMDOC" analyze "$timeline" "${job[@]}" --html "$tmp/r.html"
contains "the HTML table" "$tmp/r.html" "id='remedies-quantified'"

check "a preset instead of a config" 1 "$VRAMDOC" analyze "$timeline" --model llama-2-7b --mode lora --batch 1 --seq 512
contains "the preset is named" $out "llama-2-7b"

# Bad input: clear errors naming what is wrong, exit 2.
check "missing config" 2 "$VRAMDOC" analyze "$timeline" --config "$tmp/none.json" --batch 1 --seq 8
contains "missing config named" $err "$tmp/none.json"
printf '{"hidden_size": 1024,' > "$tmp/broken.json"
check "malformed config" 2 "$VRAMDOC" analyze "$timeline" --config "$tmp/broken.json" --batch 1 --seq 8
contains "malformed config named" $err "broken.json"
check "no --batch" 2 "$VRAMDOC" analyze "$timeline" --config "$config" --seq 8
contains "says --batch is missing" $err "needs the job's --batch$"
check "no --seq" 2 "$VRAMDOC" analyze "$timeline" --config "$config" --batch 8
contains "says --seq is missing" $err "needs the job's --seq$"
check "neither" 2 "$VRAMDOC" analyze "$timeline" --config "$config"
contains "says both are missing" $err "needs the job's --batch and --seq"
check "a bad precision name" 2 "$VRAMDOC" analyze "$timeline" "${job[@]}" --precision fp12
contains "lists the choices" $err "amp-bf16"
check "run checks the config before the job" 2 env VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  "$VRAMDOC" run --out "$tmp/t.jsonl" --config "$tmp/none.json" --batch 1 --seq 8 -- sh -c 'touch "$0"' "$tmp/ran"
[[ -e $tmp/ran ]] && { echo "FAIL: the job ran despite a bad --config"; fails=$((fails + 1)); }
check "run --config on a job (no driver: capacity unknown)" 0 env VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 \
  "$VRAMDOC" run --out "$tmp/t.jsonl" "${job[@]}" -- true
contains "run quantifies" $err "quantified with the estimator"
contains "run: unknown capacity is said" $err "card capacity unknown"
contains "run: nothing measured is not 0" $err "measured n/a"
finish
