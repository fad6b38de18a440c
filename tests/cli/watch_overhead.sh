# Sampling at 10 Hz costs under 1 % of one CPU core: 3 s of --log at 100 ms against the fake NVML
# (2 GPUs, 5 processes), the CPU time (user + system, from wait4) of the whole process, start-up
# included. The fake answers instantly: this measures vramdoc's own cost, not the driver's
# (tests/gpu/watch_overhead.sh measures that on a GPU machine).
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir" "$out" "$err"' EXIT
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
printf 'devices=2\nprocesses=%s:3221225472:10:20,1:1073741824,4194301:1,4194302:2,4194303:3\n' $$ >"$dir/fake.conf"
check "10 Hz for 3 s under 1 % of a core" 0 python3 "$SRC/tests/watch_cpu.py" --max-percent 1 --min-samples 25 \
  --log "$dir/log.csv" -- "$VRAMDOC" watch --log "$dir/log.csv" --interval 100ms --duration 3s
cat $out
finish
