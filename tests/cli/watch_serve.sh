# vramdoc watch --serve: the exporter with a real HTTP client (curl) on loopback: concurrent
# scrapes, bad requests, silent and non-reading clients, non-loopback warning, clean SIGTERM.
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d)
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
procs=$$:1073741824; for i in $(seq 1 200); do procs+=",$((4000000 + i)):$((i * 1048576))"; done
printf 'devices=2\nprocesses=%s\n' "$procs" >"$dir/fake.conf"
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

"$VRAMDOC" watch --serve 127.0.0.1:0 --interval 100ms 2>"$dir/serve.err" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$dir" "$out" "$err"' EXIT
for _ in $(seq 50); do grep -q "serving http" "$dir/serve.err" && break; sleep 0.1; done
port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$dir/serve.err")
[[ -n $port ]] || { fail "no port announced"; cat "$dir/serve.err"; finish; }
url=http://127.0.0.1:$port

check "GET /metrics" 0 curl -sS -f --max-time 5 -D "$dir/headers" "$url/metrics"
contains "content type" "$dir/headers" "Content-Type: text/plain; version=0.0.4"
contains "used bytes by gpu and uuid" $out '^vramdoc_gpu_memory_used_bytes{gpu="0",uuid="GPU-fake0000-0000-0000-0000-000000000000"} 4194304000$'
contains "HELP" $out "^# HELP vramdoc_gpu_memory_used_bytes "
contains "TYPE" $out "^# TYPE vramdoc_gpu_memory_used_bytes gauge"
contains "process memory by pid" $out "^vramdoc_process_memory_used_bytes{gpu=\"1\",uuid=\"[^\"]*\",pid=\"$$\"} 1073741824$"
grep -q "vramdoc_process_sm_utilization_ratio" $out && fail "per-process utilisation the driver did not report is written"
check "OpenMetrics on request" 0 curl -sS -f --max-time 5 -H "Accept: application/openmetrics-text; version=1.0.0" "$url/metrics"
[[ $(tail -n 1 $out) == "# EOF" ]] || fail "OpenMetrics does not end with # EOF"
check "index page" 0 curl -sS -f --max-time 5 "$url/"
contains "links /metrics" $out 'href="/metrics"'
check "404" 0 curl -sS --max-time 5 -o /dev/null -w "%{http_code}" "$url/nope"
contains "404 code" $out "^404$"
check "405 for POST" 0 curl -sS --max-time 5 -o /dev/null -w "%{http_code}" -X POST -d x=1 "$url/metrics"
contains "405 code" $out "^405$"

# Clients that never send, and clients that send but never read, hold connections open...
exec 5<>/dev/tcp/127.0.0.1/$port 6<>/dev/tcp/127.0.0.1/$port
for fd in 7 8 9; do eval "exec $fd<>/dev/tcp/127.0.0.1/$port"; printf 'GET /metrics HTTP/1.1\r\n\r\n' >&$fd; done
# ...while 20 concurrent scrapes all succeed, quickly.
start=$(date +%s%N)
for i in $(seq 20); do curl -sS -f --max-time 5 -o "$dir/scrape.$i" "$url/metrics" & done
wait_ok=0; for job in $(jobs -p); do [[ $job == "$server" ]] && continue; wait "$job" || wait_ok=1; done
elapsed_ms=$(( ($(date +%s%N) - start) / 1000000 ))
[[ $wait_ok == 0 ]] || fail "a concurrent scrape failed"
for i in $(seq 20); do grep -q '^vramdoc_gpu_up{gpu="1"' "$dir/scrape.$i" || fail "scrape $i incomplete"; done
((elapsed_ms < 3000)) || fail "20 scrapes beside stalled clients took ${elapsed_ms} ms"

# A malformed request line gets 400.
exec 4<>/dev/tcp/127.0.0.1/$port
printf 'this is not http\r\n\r\n' >&4
IFS= read -r -t 5 status <&4
[[ $status == "HTTP/1.1 400 Bad Request"* ]] || fail "malformed request: '$status'"
exec 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-

kill -TERM $server; wait $server; rc=$?
[[ $rc == 0 ]] || fail "SIGTERM exit $rc, wanted 0"
curl -s --max-time 2 "$url/metrics" >/dev/null && fail "still serving after SIGTERM"

# A non-loopback address is allowed when given explicitly, with a warning; host names are not.
"$VRAMDOC" watch --serve 0.0.0.0:0 2>"$dir/any.err" & any=$!
for _ in $(seq 50); do grep -q "serving http" "$dir/any.err" && break; sleep 0.1; done
kill -TERM $any; wait $any
contains "warning for 0.0.0.0" "$dir/any.err" "warning: serving on 0.0.0.0:0, reachable from other machines"
check "host name refused" 2 "$VRAMDOC" watch --serve example.com:9400
contains "numeric address" $err "not a numeric address"
finish
