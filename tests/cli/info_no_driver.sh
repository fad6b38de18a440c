# `vramdoc info` without an NVIDIA driver: the host part and one line naming the missing library, exit 0.
source "$(dirname "$0")/../cli_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 VRAMDOC_CUDA_LIBRARY=/nonexistent/libcuda.so.1

check "info without a driver exits 0" 0 "$VRAMDOC" info
contains "the host part" $out "^Host: .*RAM [0-9]"
contains "one line names the library" $out "^no GPU information: /nonexistent/libnvidia-ml.so.1 not found"
if [[ $(wc -l <$out) != 2 ]]; then echo "FAIL: wanted 2 lines"; cat $out; fails=$((fails + 1)); fi
check "--json without a driver exits 0" 0 "$VRAMDOC" info --json
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["gpus"] == [], j["gpus"]
assert "libnvidia-ml.so.1 not found" in j["problems"][0], j["problems"]
assert j["host"]["ram_total_bytes"] > 0
assert j["host"]["ram_bandwidth_bytes_per_s"] is None
assert j["driver"]["driver_version"] is None
' $out || { echo "FAIL: --json without a driver"; cat $out; fails=$((fails + 1)); }
check "--device without a driver is an error" 2 "$VRAMDOC" info --device 0
contains "it says why" $err "^vramdoc info: --device 0: no GPU information: .*not found"
finish
