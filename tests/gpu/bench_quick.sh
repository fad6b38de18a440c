# vramdoc bench --quick on a real GPU: every suite runs, verifies and gives a plausible number.
source "$(dirname "$0")/../cli_lib.sh"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no GPU: skipped"; exit 77; fi
if "$VRAMDOC" --version | grep -q "CUDA kernels: no"; then echo "built without CUDA: skipped"; exit 77; fi
svg=$(mktemp --suffix=.svg)
start=$(date +%s)
check "bench --quick --json" 0 "$VRAMDOC" bench --quick --json --svg "$svg"
elapsed=$(( $(date +%s) - start ))
[[ $elapsed -lt 60 ]] || { echo "FAIL: --quick took ${elapsed}s"; fails=$((fails + 1)); }
contains "schema" $out '"schema": "vramdoc.bench/1"'
contains "device copy measured" $out '"measure": "copy"'
contains "latency curve" $out '"cycles"'
contains "svg written" "$svg" "<svg"
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
r = json.load(open(sys.argv[1]))
bad = [m for m in r["measures"] if "error" in m]
assert not bad, f"failed measures: {bad}"
for m in r["measures"]:
    if m["level"] == "device" and "median" in m:
        assert 10 < m["percent_of_peak"] <= 105, m
PY
rm -f "$svg"
finish
