# vramdoc watch --once / --json / --device against the fake NVML: values, errors, a failing GPU.
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d); trap 'rm -rf "$dir" "$out" "$err"' EXIT
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
cat >"$dir/fake.conf" <<CONF
devices=2
used=21474836480
util_gpu=35
util_mem=92
processes=$$:1073741824:30:60,4194303:2147483648
CONF

check "--once" 0 "$VRAMDOC" watch --once
contains "GPU table" $out "^  0  NVIDIA H200  20.00 GiB  140.40 GiB  35%       92%"
contains "second GPU" $out "^  1  NVIDIA H200"
contains "this shell as a process, with its user and command" $out "^  0  *$$  $(id -un) .*bash"
contains "a PID /proc does not know is n/a" $out "4194303  n/a .*n/a *n/a$"
contains "bandwidth-bound hint" $out "GPU 0: bandwidth-bound: memory controller 92% busy"

check "--once --json" 0 "$VRAMDOC" watch --once --json
cp $out $dir/once.json
check "JSON values" 0 python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
g = d["gpus"][0]
assert len(d["gpus"]) == 2, d
assert g["memory"]["used_bytes"] == 21474836480, g["memory"]
assert g["sm_util_percent"] == 35 and g["mem_util_percent"] == 92
assert g["throttle_reasons"] == ["sw_power_cap"], g["throttle_reasons"]
p = {x["pid"]: x for x in g["processes"]}
assert p[int(sys.argv[2])]["used_bytes"] == 1073741824 and p[int(sys.argv[2])]["sm_util_percent"] == 30
assert p[4194303]["user"] is None and p[4194303]["sm_util_percent"] is None
' $dir/once.json $$

check "--device 1 watches one GPU" 0 "$VRAMDOC" watch --once --json --device 1
cp $out $dir/one.json
check "only GPU 1" 0 python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [g["index"] for g in d["gpus"]] == [1], d' $dir/one.json
check "--device past the last GPU" 2 "$VRAMDOC" watch --once --device 5
contains "says how many GPUs" $err "this machine has 2 GPU(s)"

# A GPU whose NVML calls fail: a message for it, the other GPU still shown, exit 0.
printf 'fail=nvmlDeviceGetMemoryInfo_v2:15\nfail_device=1\n' >>"$dir/fake.conf"
check "one GPU lost" 0 "$VRAMDOC" watch --once
contains "GPU 0 still shown" $out "^  0  NVIDIA H200  20.00 GiB"
contains "GPU 1 n/a" $out "^  1  NVIDIA H200 *n/a *n/a"
contains "GPU 1 message" $out "GPU 1: not read: .*GPU is lost"

check "no driver: a message, not a crash" 2 env VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 "$VRAMDOC" watch --once
contains "no driver message" $err "cannot read the GPUs: .*not found"
check "--json without --once" 2 "$VRAMDOC" watch --json
check "--log needs .csv or .jsonl" 2 "$VRAMDOC" watch --log "$dir/x.txt"
contains "log name message" $err "must end in .csv or .jsonl"
check "--interval too short" 2 "$VRAMDOC" watch --log "$dir/x.csv" --interval 1ms
check "--once with --serve" 2 "$VRAMDOC" watch --once --serve
check "not a terminal: one table" 0 "$VRAMDOC" watch
contains "table without --once" $out "^GPU  NAME"
finish
