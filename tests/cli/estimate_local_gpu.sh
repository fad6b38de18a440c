# vramdoc estimate without --gpu: the local GPU (here the fake driver's) is the target; without
# a driver --max-batch asks for a card.
source "$(dirname "$0")/../cli_lib.sh"
conf=$(mktemp)
trap 'rm -f "$conf" "$out" "$err"' EXIT
printf 'devices=1\n' >"$conf"
FAKE_NVML_CONFIG=$conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 \
  check "the local GPU is the target" 0 "$VRAMDOC" estimate --model gpt2 --max-batch
contains "names it" "$out" "FITS on local GPU 0: NVIDIA H200 (140.40 GiB)"
contains "and searches the batch on it" "$out" "largest batch that fits: [0-9]"
FAKE_NVML_CONFIG=$conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 \
  check "--gpu still wins" 0 "$VRAMDOC" estimate --model gpt2 --gpu T4
contains "on the T4" "$out" "on T4"
VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 check "no driver, no card" 2 "$VRAMDOC" estimate --model gpt2 --max-batch
contains "asks for a card" "$err" "need --gpu or --gpu-memory"
finish
