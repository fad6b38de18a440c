# Issue 13's table of hostile and careless inputs, each tried as the issue tried it: every one is
# a clear message and the exit code of docs/cli.md, never a hang, a crash or a silent wrong answer.
source "$(dirname "$0")/../cli_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1  # no driver: the same answer on every machine
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
cfg=$SRC/tests/data/estimator/configs/llama-160m.json
timeline=$SRC/tests/data/timelines/stable.json
once() {  # once "description" count file pattern: the pattern is said exactly `count` times
  local n
  n=$(grep -c -- "$4" "$3")
  [[ $n == "$2" ]] || { echo "FAIL: $1: '$4' said $n times, wanted $2"; cat "$3"; fails=$((fails + 1)); }
}
fast() {  # fast "description" expected_exit command...: a hang (the old behaviour) is exit 124, not a pass
  check "$1" "$2" timeout 60 "${@:3}"
}

# analyze /dev/zero, a FIFO nobody writes: refused at once (it hung, growing past 8 GB).
fast "analyze /dev/zero" 2 "$VRAMDOC" analyze /dev/zero
contains "/dev/zero named" $err "/dev/zero is a character device"
mkfifo "$tmp/fifo"
fast "analyze a FIFO" 2 "$VRAMDOC" analyze "$tmp/fifo"
contains "FIFO named" $err "fifo is a FIFO"
fast "estimate --config /dev/zero" 2 "$VRAMDOC" estimate --config /dev/zero
fast "estimate --config - < /dev/zero: read with a cap" 2 sh -c "'$VRAMDOC' estimate --config - < /dev/zero"
contains "cap named" $err "standard input is larger than 16.00 MiB"

# A symlink loop: the file named, exit 2 (it was "internal error: filesystem error", exit 1).
ln -s "$tmp/LOOP" "$tmp/LOOP"
check "estimate --config LOOP" 2 "$VRAMDOC" estimate --config "$tmp/LOOP"
contains "loop named" $err "cannot read $tmp/LOOP: Too many levels of symbolic links"
check "analyze LOOP" 2 "$VRAMDOC" analyze "$tmp/LOOP"

# --gpu-memory without a unit, or 0 (24 was 24 bytes: "DOES NOT FIT on 0.00 GiB").
check "--gpu-memory 24" 2 "$VRAMDOC" estimate --model gpt2 --gpu-memory 24
contains "asks for a unit" $err "'24' has no unit: write e.g. 24GiB (binary) or 24GB (decimal)"
check "--gpu-memory 0" 2 "$VRAMDOC" estimate --model gpt2 --gpu-memory 0
check "--gpu-memory 0GiB" 2 "$VRAMDOC" estimate --model gpt2 --gpu-memory 0GiB
contains "zero refused" $err "no memory at all"
check "--gpu-memory 24GiB" 0 "$VRAMDOC" estimate --model gpt2 --gpu-memory 24GiB
contains "target in its unit" $out "FITS on 24.00 GiB"
check "probe --gpu-memory 24" 2 "$VRAMDOC" probe --cmd 'true {batch}' --gpu-memory 24

# run --out /dev/full: the job runs, the lost timeline is said at once and at the end, exit non-zero.
check "run --out /dev/full" 2 "$VRAMDOC" run --out /dev/full -- sh -c 'echo job ran'
contains "the job ran" $out "^job ran$"
once "said when it happened and at the end" 2 $err "WARNING: cannot write the timeline /dev/full: No space left on device"
contains "the report says no timeline" $err "timeline: none (not written)"
check "run --out /dev/full, job fails: the job's status" 3 "$VRAMDOC" run --out /dev/full -- sh -c 'exit 3'

# A result that cannot be written is an error (estimate > /dev/full was exit 0).
for args in "estimate --model gpt2" "estimate --model gpt2 --json" "estimate --list-gpus" "analyze $timeline" "info" "--help" "--version"; do
  # shellcheck disable=SC2086
  check "$args > /dev/full" 2 sh -c "'$VRAMDOC' $args > /dev/full"
  contains "$args: the failed write named" $err "cannot write the output to standard output: No space left on device"
done

# Durations: overflow-safe, with a maximum (5000000h gave no wait: 1.2 million lines in 3 s).
check "watch --interval 5000000h" 2 "$VRAMDOC" watch --log "$tmp/w.csv" --interval 5000000h
contains "too long" $err "duration too long: '5000000h' (at most 100 days)"
check "watch --interval 25h" 2 "$VRAMDOC" watch --log "$tmp/w.csv" --interval 25h
contains "24h maximum" $err "24h is the maximum"
check "watch --duration 1000d" 2 "$VRAMDOC" watch --log "$tmp/w.csv" --duration 1000d
check "run --interval 5000000h" 2 "$VRAMDOC" run --interval 5000000h -- true
check "probe --budget 5000000h" 2 "$VRAMDOC" probe --cmd 'true {batch}' --budget 5000000h

# --list-models / --list-gpus --json: JSON documents (--json was ignored).
check "--list-models --json" 0 "$VRAMDOC" estimate --list-models --json
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["schema"]=="vramdoc.models/1"; assert any(m["name"]=="gpt2" for m in j["models"])' $out \
  || { echo "FAIL: --list-models --json"; cat $out; fails=$((fails + 1)); }
check "--list-gpus --json" 0 "$VRAMDOC" estimate --list-gpus --json
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "vramdoc.gpus/1"
names = {g["name"]: g for g in j["gpus"]}
for n in ["A10G", "L4", "L40S", "RTX 3080", "RTX 3090", "RTX 4070", "RTX 4080", "RTX 4090", "RTX 5090", "A100 40GB SXM",
          "A100 80GB SXM", "A100 40GB PCIe", "A100 80GB PCIe", "H100 PCIe", "H100 SXM", "H100 NVL", "H200", "B200", "GB200", "MI300X"]:
    assert n in names, n
assert names["MI300X"]["vendor"] == "amd"
assert all(isinstance(g["total_bytes"], int) for g in j["gpus"])
' $out || { echo "FAIL: --list-gpus --json"; cat $out; fails=$((fails + 1)); }

# The names nvidia-smi prints (the 4090's was refused).
check "--gpu 'NVIDIA GeForce RTX 4090'" 0 "$VRAMDOC" estimate --model gpt2 --gpu "NVIDIA GeForce RTX 4090"
contains "matched" $out "FITS on RTX 4090"
check "--gpu 'NVIDIA A100-SXM4-80GB'" 0 "$VRAMDOC" estimate --model gpt2 --gpu "NVIDIA A100-SXM4-80GB"
check "--gpu MI300X" 0 "$VRAMDOC" estimate --model gpt2 --gpu MI300X
contains "AMD said" $err "MI300X is an AMD GPU: this estimate holds for PyTorch on ROCm, but vramdoc's CUDA tools"

# An unknown model_type: the warning first, on stderr (it came after the table, on stdout); an
# encoder-only config is estimated as an encoder (issue 28; it was refused, and before that
# estimated as a llama-style decoder).
sed 's/"model_type": *"llama"/"model_type": "frobnet"/' "$cfg" > "$tmp/frobnet.json"
check "unknown model_type: the warning first" 0 sh -c "'$VRAMDOC' estimate --config '$tmp/frobnet.json' 2>&1"
[[ $(head -1 $out) == "vramdoc estimate: warning: unknown model_type 'frobnet'"* ]] || { echo "FAIL: the warning is not first"; head -3 $out; fails=$((fails + 1)); }
check "unknown model_type: stdout has no warning" 0 "$VRAMDOC" estimate --config "$tmp/frobnet.json"
if grep -q "frobnet'" $out; then echo "FAIL: the warning is on stdout"; fails=$((fails + 1)); fi
sed 's/"model_type": *"llama"/"model_type": "bert"/' "$cfg" > "$tmp/bert.json"
check "encoder-only config" 0 "$VRAMDOC" estimate --config "$tmp/bert.json" --json
contains "estimated as BERT" $out '"family":"bert"'

# NaN / Infinity in a timeline: the line and the reason (it was "line N is not JSON").
printf '{"vramdoc_timeline": 1, "columns": ["t", "process_used"]}\n[0, 1]\n[0.1, NaN]\n[0.2, 3]\n' > "$tmp/nan.jsonl"
check "analyze NaN" 2 "$VRAMDOC" analyze "$tmp/nan.jsonl"
contains "NaN explained" $err "nan.jsonl: line 3: NaN is not a number of bytes"
printf '{"columns": ["t", "process_used"], "samples": [[0, 1],\n[1, -Infinity]]}\n' > "$tmp/inf.json"
check "analyze Infinity" 2 "$VRAMDOC" analyze "$tmp/inf.json"
contains "Infinity explained" $err "inf.json: line 2: Infinity is not a number of bytes"

# "-" reads standard input where a file is read.
check "analyze -" 0 sh -c "'$VRAMDOC' analyze - --json < '$timeline'"
contains "stdin analysed" $out '"verdict": "stable"'
check "analyze - -: standard input once" 2 sh -c "'$VRAMDOC' analyze - - < '$timeline'"
contains "said, not 'the file is empty'" $err "standard input (-) is read once"
check "analyze - --config -" 2 sh -c "'$VRAMDOC' analyze - --config - --batch 1 --seq 8 < '$timeline'"
check "estimate --config -" 0 sh -c "'$VRAMDOC' estimate --config - --json < '$cfg'"
contains "stdin config" $out '"schema":"vramdoc.estimate/1"'
finish
