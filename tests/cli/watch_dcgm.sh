# vramdoc watch --serve: dcgm-exporter's names beside vramdoc's (--metrics), vramdoc_up 0 without a
# driver (the exporter keeps serving). The dashboard's and alert rules' metric names are checked in
# tests/unit/test_watch_dcgm.cpp.
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d)
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
printf 'devices=2\nprocesses=%s\n' "$$:1073741824" >"$dir/fake.conf"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$dir" "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# Starts an exporter on a free port with the given options; sets $url.
serve() {
  local log=$dir/serve.$#.$RANDOM
  "$VRAMDOC" watch --serve 127.0.0.1:0 --interval 100ms "$@" 2>"$log" &
  pids+=($!)
  for _ in $(seq 50); do grep -qs "serving http" "$log" && break; sleep 0.1; done
  local port
  port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$log")
  [[ -n $port ]] || { fail "no port announced for $*"; cat "$log"; finish; }
  url=http://127.0.0.1:$port
  cp "$log" "$dir/last.err"
}

NODE_NAME=gpu-node-7 serve
check "scrape both sets" 0 curl -sS -f --max-time 5 "$url/metrics"
cp "$out" "$dir/both.txt"
contains "dcgm fb used in MiB with dcgm's labels" "$dir/both.txt" \
  '^DCGM_FI_DEV_FB_USED{gpu="0",UUID="GPU-fake0000-0000-0000-0000-000000000000",pci_bus_id="[^"]*",device="nvidia0",modelName="[^"]*",Hostname="gpu-node-7"} 4000$'
contains "dcgm HELP" "$dir/both.txt" '^# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).$'
contains "vramdoc's families beside" "$dir/both.txt" '^vramdoc_gpu_memory_used_bytes{gpu="0",'
contains "vramdoc_up 1" "$dir/both.txt" '^vramdoc_up 1$'

serve --metrics vramdoc
check "scrape vramdoc only" 0 curl -sS -f --max-time 5 "$url/metrics"
grep -q '^DCGM_' "$out" && fail "--metrics vramdoc exports DCGM_ names"
contains "vramdoc only keeps vramdoc's" "$out" '^vramdoc_process_memory_used_bytes{'
serve --metrics dcgm
check "scrape dcgm only" 0 curl -sS -f --max-time 5 "$url/metrics"
grep -q '^vramdoc_gpu_' "$out" && fail "--metrics dcgm exports vramdoc_gpu_ names"
contains "dcgm only" "$out" '^DCGM_FI_DEV_GPU_TEMP{gpu="1",'

check "--metrics without --serve" 2 "$VRAMDOC" watch --once --metrics dcgm
contains "says why" "$err" "--metrics goes with --serve"
check "an unknown set" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --metrics dcgm,nvml
contains "names the set" "$err" "'nvml' is not a metric set"

# Without a driver the exporter serves vramdoc_up 0 (and says so once on stderr), never crash-loops.
VRAMDOC_NVML_LIBRARY=$dir/no-such-libnvidia-ml.so.1 serve
check "scrape without a driver" 0 curl -sS -f --max-time 5 "$url/metrics"
contains "vramdoc_up 0" "$out" '^vramdoc_up 0$'
grep -q '^DCGM_\|^vramdoc_gpu_' "$out" && fail "GPU samples made up without a driver"
sleep 0.5
check "still serving" 0 curl -sS -f --max-time 5 "$url/metrics"
contains "still down" "$out" '^vramdoc_up 0$'
contains "warned" "$dir/last.err" "warning: cannot read the GPUs: .*serving vramdoc_up 0"
kill -TERM "${pids[-1]}"; wait "${pids[-1]}"; rc=$?
[[ $rc == 0 ]] || fail "SIGTERM without a driver: exit $rc, wanted 0"
finish
