# Issue 13's command-line conventions: usage lines, labels, "did you mean", help COMMAND, -V,
# the exit codes, the default model, JSON schemas and integer bytes, unit switching, colour, and
# what run and bench say without a driver.
source "$(dirname "$0")/../cli_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 VRAMDOC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
timelines=$SRC/tests/data/timelines

# Help: one "Usage: vramdoc COMMAND" line per command; values labelled by kind, no parser internals.
for c in info estimate bench watch run analyze probe trace; do
  check "$c --help" 0 "$VRAMDOC" $c --help
  [[ $(grep -c "^Usage:" $out) == 1 ]] || { echo "FAIL: $c: not one Usage line"; cat $out; fails=$((fails + 1)); }
  contains "$c: usage names vramdoc" $out "^Usage: vramdoc $c "
  # A value labelled TEXT says nothing of its kind (watch --web-config was): FILE, N, NAME, ...
  internals='(^| )(U?INT|FLOAT|TEXT)( |$)| in \['  # whole words: "SIGINT" in watch's key help is no parser type
  if grep -qE "$internals" $out; then echo "FAIL: $c --help shows parser internals"; grep -E "$internals" $out; fails=$((fails + 1)); fi
  check "help $c" 0 "$VRAMDOC" help $c
  contains "help $c is $c --help" $out "^Usage: vramdoc $c "
done
check "estimate --help" 0 "$VRAMDOC" estimate --help
contains "--batch is a number" $out "--batch N=1"
contains "--zero is a number" $out "--zero N "
contains "--gpu-memory is a size" $out "--gpu-memory SIZE"
if grep -qE "^  --(batch|seq|lora-rank|gpus|tp|zero|new-tokens|fsdp-version|shard-group|rank|zero-[a-z-]+) TEXT" $out; then
  echo "FAIL: a numeric option labelled TEXT"; grep -E " TEXT" $out; fails=$((fails + 1))
fi
check "run --help" 0 "$VRAMDOC" run --help
contains "run's usage has the job" $out "^Usage: vramdoc run \[OPTIONS\] -- COMMAND \[ARGS...\]$"
check "probe --help" 0 "$VRAMDOC" probe --help
contains "--start is a number" $out "--start N"

# "did you mean", the bad name first.
check "misspelt option" 2 "$VRAMDOC" estimate --bach 4
[[ $(head -1 $err) == "vramdoc estimate: unknown option '--bach'; did you mean '--batch'?" ]] || { echo "FAIL: misspelt option"; cat $err; fails=$((fails + 1)); }
check "misspelt option=value" 2 "$VRAMDOC" watch --intervall=1s
contains "with a value" $err "unknown option '--intervall'; did you mean '--interval'?"
check "misspelt option, no file given" 2 "$VRAMDOC" analyze --jsn
[[ $(head -1 $err) == "vramdoc analyze: unknown option '--jsn'; did you mean '--json'?" ]] || { echo "FAIL: the misspelt option is not said first"; cat $err; fails=$((fails + 1)); }
check "misspelt command" 2 "$VRAMDOC" estimte
contains "command guessed" $err "^vramdoc: unknown command 'estimte'; did you mean 'estimate'?"
check "help of a misspelt command" 2 "$VRAMDOC" help anlyze
contains "help guesses too" $err "did you mean 'analyze'?"
check "a value that is not a number" 2 "$VRAMDOC" watch --device x
contains "the option first, no parser internals" $err "^vramdoc watch: --device: 'x' is not a valid value$"
check "-V" 0 "$VRAMDOC" -V
contains "-V is --version" $out "^vramdoc [0-9]"

# The exit codes: one table in --help; 1 is "no", 2 an error.
check "--help" 0 "$VRAMDOC" --help
contains "exit table" $out "^  1  the answer is no"
contains "exit table: 2" $out "^  2  error: bad usage or input"
check "fits: 0" 0 "$VRAMDOC" estimate --model gpt2 --gpu H100
check "does not fit: 1" 1 "$VRAMDOC" estimate --model llama-3-70b --gpu "RTX 4090"
contains "does not fit said" $out "^DOES NOT FIT on RTX 4090"
check "does not fit, --json: 1" 1 "$VRAMDOC" estimate --model llama-3-70b --gpu "RTX 4090" --json
check "analyze leak: 1" 1 "$VRAMDOC" analyze "$timelines/leak_tensor.json"
check "analyze stable: 0" 0 "$VRAMDOC" analyze "$timelines/stable.json"
check "analyze missing file: 2" 2 "$VRAMDOC" analyze "$tmp/none.json"

# estimate --gpu X alone: the built-in default model, as plain `estimate`.
check "estimate --gpu alone" 0 "$VRAMDOC" estimate --gpu B200 --mode lora
contains "the default model named" $err "no --config or --model: estimating the built-in llama-2-7b"
contains "the default model used" $out "^llama-2-7b"

# JSON: a schema on every document; byte counts are integers.
check "estimate --json" 0 "$VRAMDOC" estimate --model gpt2 --json
cp $out "$tmp/estimate.json"
check "analyze --json" 1 "$VRAMDOC" analyze "$timelines/leak_tensor.json" --json
cp $out "$tmp/analyze.json"
check "analyze --json, two ranks" 1 "$VRAMDOC" analyze "$timelines/h200_two_ranks_leak.jsonl" --json
cp $out "$tmp/analyze-ranks.json"
check "info --json" 0 "$VRAMDOC" info --json
cp $out "$tmp/info.json"
python3 - "$tmp" <<'PY' || { echo "FAIL: JSON schemas / integer bytes"; fails=$((fails + 1)); }
import json, sys
def walk(v, path=""):
    if isinstance(v, dict):
        for k, x in v.items():
            if "bytes" in k and x is not None and not isinstance(x, (dict, list)):
                assert isinstance(x, int), f"{path}.{k} = {x!r} is not an integer"
            walk(x, f"{path}.{k}")
    elif isinstance(v, list):
        for x in v: walk(x, path)
for name, schema in [("estimate", "vramdoc.estimate/1"), ("analyze", "vramdoc.analyze/1"), ("analyze-ranks", "vramdoc.analyze/1"),
                     ("info", "vramdoc.info/1")]:
    j = json.load(open(f"{sys.argv[1]}/{name}.json"))
    assert list(j)[0] == "schema" and j["schema"] == schema, (name, list(j)[:3])
    walk(j, name)
PY

# Large numbers switch unit (it printed "5584716796.88 GiB").
check "absurd batch" 0 "$VRAMDOC" estimate --model gpt2 --batch 1000000000000 --seq 1
if grep -qE "[0-9]{5,}\.[0-9]+" $out; then echo "FAIL: a huge number in GiB"; grep -E "[0-9]{5,}\." $out; fails=$((fails + 1)); fi
contains "a large unit" $out "PiB\|EiB"
check "absurd batch: the remedies' savings" 0 "$VRAMDOC" estimate --model llama-2-7b --batch 100000 --seq 4096
contains "the saving switches unit" $out "saves [0-9.]* PiB)$"
if grep -q "iB GiB" $out; then echo "FAIL: two units"; grep "iB GiB" $out; fails=$((fails + 1)); fi

# Colour: never on a pipe unless asked; --color always paints the verdicts; NO_COLOR wins over auto.
check "plain on a pipe" 1 "$VRAMDOC" estimate --model llama-3-70b --gpu "RTX 4090"
if grep -q $'\x1b' $out; then echo "FAIL: colour on a pipe"; fails=$((fails + 1)); fi
check "--color always" 1 "$VRAMDOC" estimate --model llama-3-70b --gpu "RTX 4090" --color always
contains "verdict painted" $out $'\x1b\\[1;31mDOES NOT FIT'
check "--color always, analyze" 1 "$VRAMDOC" analyze "$timelines/leak_tensor.json" --color always
contains "leak painted" $out $'verdict: \x1b\\[1;31mleak'
check "--color sometimes" 2 "$VRAMDOC" analyze "$timelines/stable.json" --color sometimes
if command -v script >/dev/null; then
  script -qec "'$VRAMDOC' analyze '$timelines/stable.json'" /dev/null > "$tmp/tty.txt" 2>&1
  grep -q $'\x1b\\[32mstable' "$tmp/tty.txt" || { echo "FAIL: no colour on a terminal"; cat -v "$tmp/tty.txt" | head; fails=$((fails + 1)); }
  NO_COLOR=1 script -qec "'$VRAMDOC' analyze '$timelines/stable.json'" /dev/null > "$tmp/tty.txt" 2>&1
  if grep -q $'\x1b' "$tmp/tty.txt"; then echo "FAIL: colour despite NO_COLOR"; fails=$((fails + 1)); fi
fi

# Without a driver: run says once why it cannot sample, and its diagnosis says that is why it cannot tell.
check "run without a driver" 0 "$VRAMDOC" run --out "$tmp/t.jsonl" -- sh -c 'sleep 0.1'
[[ $(grep -c "sampling unavailable" $err) == 1 ]] || { echo "FAIL: sampling unavailable not said once"; cat $err; fails=$((fails + 1)); }
contains "the diagnosis says why" $err "verdict: inconclusive: no GPU memory was sampled (/nonexistent/libnvidia-ml.so.1 not found: no NVIDIA driver), so vramdoc cannot tell"
[[ $(grep -c "cannot open shared object file" $err) == 1 ]] || { echo "FAIL: the loader's message not said once"; cat $err; fails=$((fails + 1)); }
if grep -qi "record longer" $err; then echo "FAIL: 'record longer' without a driver"; cat $err; fails=$((fails + 1)); fi
check "bench without a driver" 2 "$VRAMDOC" bench --quick
if ! grep -q "built without CUDA" $err; then
  [[ $(grep -c "libcuda.so.1 not found (is the NVIDIA driver installed?)" $err) == 1 ]] || { echo "FAIL: bench's no-driver message"; cat $err; fails=$((fails + 1)); }
  if grep -qi "insufficient" $err; then echo "FAIL: bench says insufficient"; cat $err; fails=$((fails + 1)); fi
fi
finish
