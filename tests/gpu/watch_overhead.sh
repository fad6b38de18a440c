# On a GPU machine: the CPU cost of `vramdoc watch --log` at 10 Hz for 10 s against the real
# driver (every GPU, all of NVML's per-sample queries), as a share of one core: under 1 % per GPU
# (the cost is NVML's per-GPU queries, mostly system time: 0.73 % on one H200, 1.04 % on two).
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU (nvidia-smi -L failed): skipped"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
gpus=$(nvidia-smi -L | grep -c '^GPU')
python3 "$SRC/tests/watch_cpu.py" --max-percent "$gpus" --min-samples 80 --log "$dir/log.csv" -- \
  "$VRAMDOC" watch --log "$dir/log.csv" --interval 100ms --duration 10s
rc=$?
echo "GPUs: $gpus (bound: $gpus % of one core); samples in the log: $(cut -d, -f1 "$dir/log.csv" | sort -u | grep -c '^[0-9]')"
exit $rc
