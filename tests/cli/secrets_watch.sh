# No secret of a process's command line reaches any output of `vramdoc watch` (docs/security.md):
# the table, --once --json, the CSV and JSONL logs, the exporter (by default it publishes the
# program's name only; --export-command the redacted command line), the full-screen view.
source "$(dirname "$0")/../cli_lib.sh"
source "$(dirname "$0")/../secrets_lib.sh"
dir=$(mktemp -d)
# Two jobs with secrets on their command lines: one as arguments, one inside an sh -c script.
sh -c 'sleep 30' job "${SECRET_ARGS[@]}" </dev/null >/dev/null 2>&1 & first=$!
sh -c "sleep 30; python3 train.py --hub_token $HF --db postgres://alice:$PW@db/x" </dev/null >/dev/null 2>&1 & second=$!
server=
trap 'pkill -P $first; pkill -P $second; kill $first $second $server 2>/dev/null; tmux -L vramdoc-secrets-$$ kill-server 2>/dev/null; rm -rf "$dir" "$out" "$err"' EXIT
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
printf 'devices=1\nprocesses=%s:1073741824,%s:2147483648\n' "$first" "$second" >"$dir/fake.conf"
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# Until both have exec'd: a forked child shows its parent's command line until then.
for _ in $(seq 100); do
  grep -q job /proc/$first/cmdline 2>/dev/null && grep -q train.py /proc/$second/cmdline 2>/dev/null && break
  sleep 0.05
done

check "the table" 0 "$VRAMDOC" watch --once
contains "the job is listed" $out "sh -c sleep 30 job --token=\*\*\*"
no_secrets "watch --once" $out
check "JSON" 0 "$VRAMDOC" watch --once --json
contains "redacted in place" $out '"command": "sh -c sleep 30 job --token=\*\*\* --api-key \*\*\* https://alice:\*\*\*@github.com'
contains "the script too" $out "sleep 30; python3 train.py --hub_token \*\*\* --db postgres://alice:\*\*\*@db/x"
no_secrets "watch --once --json" $out
check "CSV and JSONL logs" 0 "$VRAMDOC" watch --log "$dir/w.csv" --interval 100ms --duration 500ms
check "JSONL log" 0 "$VRAMDOC" watch --log "$dir/w.jsonl" --interval 100ms --duration 500ms
contains "CSV has the processes" "$dir/w.csv" ",process,0,"
no_secrets "watch --log CSV" "$dir/w.csv"
no_secrets "watch --log JSONL" "$dir/w.jsonl"

# The exporter: the executable by default; the redacted command line only with --export-command.
# Each server its own stderr file: with one file, the second call's wait could read the first server's
# line (the background job truncates the file only once it starts) and scrape its closed port (CI, 2026-12-03).
serves=0
serve() {
  serves=$((serves + 1))
  local log=$dir/serve.$serves.err
  "$VRAMDOC" watch --serve 127.0.0.1:0 --interval 100ms "$@" 2>"$log" & server=$!
  for _ in $(seq 50); do grep -q "serving http" "$log" && break; sleep 0.1; done
  port=$(sed -n 's|.*serving http://127.0.0.1:\([0-9]*\)/metrics.*|\1|p' "$log")
  curl -sS -f --max-time 5 "http://127.0.0.1:$port/metrics" >"$dir/metrics" || fail "scrape $*"
  kill -TERM $server; wait $server
}
serve
contains "executable label" "$dir/metrics" "vramdoc_process_info{gpu=\"0\",uuid=\"[^\"]*\",pid=\"$first\",user=\"[^\"]*\",executable=\"sh\",container=\"\",pod_uid=\"\",namespace=\"\"} 1"
grep -q 'command=' "$dir/metrics" && fail "the command line is published without --export-command"
no_secrets "metrics" "$dir/metrics"
serve --export-command
contains "command label, redacted" "$dir/metrics" "command=\"sh -c sleep 30 job --token=\*\*\* --api-key \*\*\*"
no_secrets "metrics --export-command" "$dir/metrics"

# The full-screen view (through tmux, where it is installed).
if command -v tmux >/dev/null; then
  tm() { tmux -L vramdoc-secrets-$$ "$@"; }
  tm new-session -d -s view -x 250 -y 40 "env VRAMDOC_NVML_LIBRARY=$VRAMDOC_NVML_LIBRARY FAKE_NVML_CONFIG=$FAKE_NVML_CONFIG $VRAMDOC watch --interval 100ms"
  for _ in $(seq 100); do tm capture-pane -p -t view >"$dir/screen"; grep -q -- "--token=" "$dir/screen" && break; sleep 0.1; done
  contains "the view shows the redacted command" "$dir/screen" "--token=\*\*\*"
  no_secrets "the full-screen view" "$dir/screen"
  tm send-keys -t view q
else
  echo "tmux not installed: the full-screen view is not checked"
fi
finish
