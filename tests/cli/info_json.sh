# `vramdoc info --json` is valid JSON with every field; unknowns are null, never 0.
source "$(dirname "$0")/../cli_lib.sh"
conf=$(mktemp -d)
trap 'rm -rf "$conf" "$out" "$err"' EXIT
printf 'processes=1234:1048576\n' >"$conf/nvml.conf"
export FAKE_NVML_CONFIG=$conf/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_old/libnvidia-ml.so.1
export VRAMDOC_CUDA_LIBRARY=/nonexistent/libcuda.so.1

check "--json with an old driver and no libcuda" 0 "$VRAMDOC" info --json
python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
g = j["gpus"][0]
assert g["name"] == "NVIDIA H200", g["name"]
assert g["memory"]["reserved_bytes"] is None, "v1 memory has no reserved field"
assert g["memory"]["total_bytes"] == 150754820096
assert g["device_memory"]["bus_width_bits"] is None, "old NVML has no bus width: null, not 0"
assert g["device_memory"]["theoretical_bandwidth_bytes_per_s"] is None
assert g["on_chip"]["l2_bytes"] is None, "no libcuda: null"
assert g["host_link"]["pcie_gen_max"] is None
assert g["sm_count"] is None
assert any("libcuda.so.1 not found" in p for p in j["problems"]), j["problems"]
for section in ("device_memory", "on_chip", "host_link"):
    for key, value in g[section].items():
        assert value != 0, section + "." + key + " is 0"
' $out || { echo "FAIL: --json content"; cat $out; fails=$((fails + 1)); }
finish
