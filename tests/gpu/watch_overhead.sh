# On a GPU machine: the CPU cost of `vramdoc watch --log` at 10 Hz for 10 s against the real
# driver (every GPU, all of NVML's per-sample queries), as a share of one core; under 1 %.
set -u
nvidia-smi -L >/dev/null 2>&1 || { echo "no NVIDIA GPU (nvidia-smi -L failed): skipped"; exit 77; }
dir=$(mktemp -d); trap 'rm -rf "$dir"' EXIT
python3 "$SRC/tests/watch_cpu.py" --max-percent 1 --min-samples 80 --log "$dir/log.csv" -- \
  "$VRAMDOC" watch --log "$dir/log.csv" --interval 100ms --duration 10s
rc=$?
echo "GPUs: $(nvidia-smi -L | wc -l); samples in the log: $(cut -d, -f1 "$dir/log.csv" | sort -u | grep -c '^[0-9]')"
exit $rc
