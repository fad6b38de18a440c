# The config estimator's CNN step (estimate --config, issue 28 round 4) against the script capture of the same
# classifiers shaped as transformers' modules (tests/data/estimator/cnn-jobs/hf_cnn.py) on the CPU with Debian's
# PyTorch: two models of one step, the capture replaying the ops PyTorch really ran, the estimator simulating
# them from the config alone. Peak allocated within 3 %. SGD (no foreach temporaries: PyTorch 1.13's AdamW
# keeps two lists of them, 2.x one). Skipped (77) where /usr/bin/python3 has no torch.
source "$(dirname "$0")/../cli_lib.sh"
py=/usr/bin/python3
if ! "$py" -c "import torch" 2>/dev/null; then echo "SKIP: $py has no torch (apt-get install python3-torch)"; exit 77; fi
data=$SRC/tests/data/estimator
cap=$(mktemp)
trap 'rm -f "$out" "$err" "$cap"' EXIT
for c in "resnet-18 4 128 fp32 train" "convnext-tiny 2 128 amp-bf16 train" "convnextv2-tiny 2 96 fp32 train" \
         "efficientnet-b0 4 128 fp32 train" "regnet-y-040 2 128 amp-bf16 train" "mobilenet-v2 4 128 fp32 infer" \
         "resnet-50 4 128 bf16 infer"; do
  read -r arch batch side precision mode <<<"$c"
  check "capture $c" 0 "$VRAMDOC" estimate --json -- "$py" "$data/cnn-jobs/hf_cnn.py" $arch $batch $side $precision $mode sgd
  cp "$out" "$cap"
  check "estimate --config $c" 0 "$VRAMDOC" estimate --config "$data/config-corpus/$arch.json" --batch $batch --image-size $side \
    --precision $precision --mode $mode --optimizer sgd --json
  "$py" - "$cap" "$out" "$c" <<'PY' || fails=$((fails + 1))
import json, sys
captured, estimated = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
c, e = captured["peak_allocated_bytes"], estimated["peak_allocated_bytes"]
error = (e - c) / c * 100
print(f"{sys.argv[3]}: captured {c / 2**20:.1f} MiB, estimated {e / 2**20:.1f} MiB ({error:+.2f} %)")
sys.exit(0 if abs(error) <= 3 else 1)
PY
done
finish
