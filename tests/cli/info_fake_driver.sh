# `vramdoc info` against the fake NVML and CUDA driver: the hierarchy report, --device, bad indices.
source "$(dirname "$0")/../cli_lib.sh"
conf=$(mktemp -d)
trap 'rm -rf "$conf" "$out" "$err"' EXIT
printf 'devices=2\nbus=0x19\n' >"$conf/nvml.conf"
printf 'devices=2\nbus=0x19\n' >"$conf/cuda.conf"
export FAKE_NVML_CONFIG=$conf/nvml.conf FAKE_CUDA_CONFIG=$conf/cuda.conf
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 VRAMDOC_CUDA_LIBRARY=$FAKES/cuda_basic/libcuda.so.1

# The whole report with this driver (both GPUs, text and JSON): tests/golden/info/fake-driver.*.

check "--device 1" 0 "$VRAMDOC" info --device 1
contains "only GPU 1" $out "^GPU 1: "
if grep -q "^GPU 0: " $out; then echo "FAIL: --device 1 shows GPU 0"; fails=$((fails + 1)); fi
contains "GPU 1's bus id" $out "PCI 00000000:1A:00.0"

check "--device 2 does not exist" 2 "$VRAMDOC" info --device 2
contains "the error names the index and the range" $err "^vramdoc info: --device 2: no such GPU; this machine has 2 GPUs (indices 0 to 1)"
check "--device -1 is a usage error" 2 "$VRAMDOC" info --device -1
check "--device x is a usage error" 2 "$VRAMDOC" info --device x
check "an unknown flag is a usage error" 2 "$VRAMDOC" info --frobnicate

# The CUDA device on another bus is not this GPU: its facts must not be borrowed.
printf 'devices=1\nbus=0x40\n' >"$conf/cuda.conf"
check "CUDA device on another bus" 0 "$VRAMDOC" info --device 0
contains "on-chip facts stay unknown" $out "L2 cache  *n/a"

# An old driver: only v1 symbols, so reserved memory and the PCIe link are unknown.
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_old/libnvidia-ml.so.1
check "old driver" 0 "$VRAMDOC" info
contains "reserved is n/a with v1" $out "n/a reserved by the driver"
finish
