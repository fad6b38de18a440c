# Issue 25: nothing from another user, a driver or a file reaches the terminal raw. Any user's
# command line (exec -a $'\e]52;c;...\a\e[2J...\nforged row') reached watch's table and full
# screen as it was: OSC 52 writes the viewer's clipboard, a newline forges a row. Also raw were
# the GPU name in info, a config's model_type, a timeline's name / command / host, the Python
# stacks file's fields, a failed probe trial's last line. Each output is checked for the
# escape byte (and a bidi override); where it is JSON, for being JSON.
source "$(dirname "$0")/../cli_lib.sh"
dir=$(mktemp -d)
job=
trap 'kill $job 2>/dev/null; tmux -L vramdoc-hostile-$$ kill-server 2>/dev/null; rm -rf "$dir" "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
hostile=$'\e]52;c;aGFja2Vk\a\e[2J\e[Hpython\nforged row \xe2\x80\xae'  # OSC 52, clear screen, a new row, RLO
# raw FILE...: fails when a file holds ESC, BEL or U+202E (RIGHT-TO-LEFT OVERRIDE) as bytes.
raw() {
  local f
  for f in "$@"; do
    if grep -q $'\e\|\a\|\xe2\x80\xae' "$f"; then fail "a control character reached the terminal in $f"; cat -v "$f" | head -20; fi
  done
}
is_json() { python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$1" || fail "$2: not JSON"; }

# watch: a process of another user (here: ours) with a hostile argv[0], on the fake NVML.
bash -c "exec -a \"\$0\" sleep 30" "$hostile" </dev/null >/dev/null 2>&1 & job=$!
for _ in $(seq 100); do grep -q forged /proc/$job/cmdline 2>/dev/null && break; sleep 0.05; done
printf 'devices=1\nprocesses=%s:1073741824\nname=NVIDIA \033]52;c;aGk=\007H200 \377\n' "$job" >"$dir/fake.conf"
export VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf
check "watch --once" 0 "$VRAMDOC" watch --once
raw $out
contains "the command shown, escaped (cut at 60 bytes)" $out '\\x1b\]52;c;aGFja2Vk\\x07\\x1b\[2J\\x1b\[Hpython\\nforged row'
if grep -q "^forged row" $out; then fail "a newline in a command line forged a row"; fi
contains "the GPU name escaped" $out 'NVIDIA \\x1b\]52;c;aGk=\\x07H200 \\xff'
check "watch --once --json" 0 "$VRAMDOC" watch --once --json
is_json $out "watch --json"
check "watch --log CSV" 0 "$VRAMDOC" watch --log "$dir/w.csv" --interval 100ms --duration 300ms
raw "$dir/w.csv"
check "info" 0 "$VRAMDOC" info
raw $out
contains "info escapes the GPU name" $out '^GPU 0: NVIDIA \\x1b\]52;c;aGk=\\x07H200 \\xff'
check "info --json (was: an internal error on the invalid byte)" 0 "$VRAMDOC" info --json
is_json $out "info --json"

# The full-screen view (tmux renders what it is sent: a clear screen or a forged row would show).
if command -v tmux >/dev/null; then
  tm() { tmux -L vramdoc-hostile-$$ "$@"; }
  tm -f /dev/null new-session -d -s view -x 200 -y 30 \
    "env VRAMDOC_NVML_LIBRARY=$VRAMDOC_NVML_LIBRARY FAKE_NVML_CONFIG=$FAKE_NVML_CONFIG $VRAMDOC watch --interval 100ms"
  for _ in $(seq 100); do tm capture-pane -p -t view >"$dir/screen"; grep -q 'forged' "$dir/screen" && break; sleep 0.1; done
  contains "the view shows the command escaped" "$dir/screen" 'python\\nforged row \\u202e'
  contains "the view still has its title" "$dir/screen" "^vramdoc watch "
  if grep -q "^forged row" "$dir/screen"; then fail "the view shows a forged row"; fi
  tm send-keys -t view q
else
  echo "tmux not installed: the full-screen view is not checked"
fi
unset VRAMDOC_NVML_LIBRARY FAKE_NVML_CONFIG
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

# estimate: a config's model_type (JSON escapes hold any character).
python3 - "$SRC/tests/data/estimator/configs/llama-160m.json" "$dir/cfg.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["model_type"] = "\x1b]52;c;aGk=\x07\x1b[2Jllama\u202e\ufeff"
json.dump(c, open(sys.argv[2], "w"))
PY
check "estimate a hostile model_type" 0 "$VRAMDOC" estimate --config "$dir/cfg.json"
raw $out $err
contains "the warning shows the invisible" $err "unknown model_type '\\\\x1b\]52;c;aGk=\\\\x07\\\\x1b\[2Jllama\\\\u202e\\\\ufeff'"

# analyze: a timeline whose name, command and host say anything.
python3 - "$dir/t.jsonl" <<'PY'
import json, sys
bad = "\x1b]52;c;aGk=\x07\x1b[2J\nforged\u202e"
lines = [{"vramdoc_timeline": 2, "name": bad, "host": bad, "command": [bad, "--x"], "columns": ["t", "process_used", "device_used", "series", "gpu_used"],
          "gpus": [{"index": 0, "name": bad, "uuid": "GPU-1", "pci_bus_id": "0", "total": 80 << 30}], "interval_s": 0.1, "heartbeat_s": 1, "start_unix_s": 1, "device": bad, "total": None}]
lines.append({"series": {"id": 0, "pid": 7, "gpu": 0, "host": bad, "command": bad, "name": bad}})
rows = [[i * 0.1, 1 << 30, 1 << 30, [1 << 30], [1 << 30]] for i in range(60)]
lines += rows
lines.append({"t": 1.0, "mark": bad})
lines.append({"t": 2.0, "oom_message": "CUDA out of memory. " + bad})
lines.append({"end": {"t": 6.0, "outcome": "failed", "exit_status": 1}})
open(sys.argv[1], "w").write("\n".join(json.dumps(l) for l in lines) + "\n")
PY
"$VRAMDOC" analyze "$dir/t.jsonl" >"$out" 2>"$err"
[[ $? == 0 || $? == 1 ]] || fail "analyze of the hostile timeline: exit $?"
raw $out $err
contains "the name shown escaped" $out '\\x1b\]52;c;aGk=\\x07\\x1b\[2J\\nforged\\u202e'
"$VRAMDOC" analyze "$dir/t.jsonl" --json >"$out" 2>"$err"
is_json $out "analyze --json"

# The Python stacks file of --trace-python (python.PID.json): its file, function and torch fields.
mkdir -p "$dir/trace"
python3 - "$dir/trace/python.4242.json" <<'PY'
import json, sys
bad = "\x1b]52;c;aGk=\x07\x1b[2J\nforged\u202e"
json.dump({"when": "exit", "torch": bad, "allocated_bytes": 1 << 30, "peak_allocated_bytes": 1 << 31,
           "groups": [{"device": 0, "bytes": 1 << 30, "count": 1, "frames": [{"file": "/x/" + bad + ".py", "line": 3, "function": bad, "library": False}]}],
           "groups_left_out": 0, "format": "vramdoc-python-stacks", "version": 1, "pid": 4242}, open(sys.argv[1], "w"))
PY
"$VRAMDOC" analyze "$dir/t.jsonl" --trace-dir "$dir/trace" >"$out" 2>"$err"
raw $out $err
contains "the Python line shown escaped" $out 'forged\\u202e.py:3 \\x1b\]52'

# probe: a trial whose last line is an escape sequence and an invalid byte (probe --json threw).
check "probe, a failing trial's last line" 1 "$VRAMDOC" probe --cmd 'printf "\033]52;c;aGk=\007bad \377 {batch}\n"; exit 3' --gpu-memory 1GiB --max 2
raw $out $err
contains "the line shown escaped" $err '\\x1b\]52;c;aGk=\\x07bad \\xff 1'
check "probe --json" 1 "$VRAMDOC" probe --cmd 'printf "\033]52;c;aGk=\007bad \377 {batch}\n"; exit 3' --gpu-memory 1GiB --max 2 --json
is_json $out "probe --json"

# An error quoting a file's words: shown escaped too (a web config's unknown key).
printf 'tls_server_config:\n  \033]52;c;aGk=\007: x\n' >"$dir/web.yml"
check "web config error" 2 "$VRAMDOC" watch --serve 127.0.0.1:0 --web-config "$dir/web.yml"
raw $err

# An unknown option as given (a script passing a hostile name through): CLI11's message was printed
# raw, OSC 52 included. A file name with a newline: the message's second half stood on a line of
# its own, as if vramdoc had said it.
check "an unknown option with an escape" 2 "$VRAMDOC" estimate $'--bad\e]52;c;aGk\a'
raw $err
contains "the option shown escaped" $err "unknown option '--bad\\\\x1b\\]52;c;aGk\\\\x07'"
check "a file name with a newline" 2 "$VRAMDOC" analyze "$dir/none"$'\nvramdoc analyze: forged'
raw $err
[[ $(grep -c '^vramdoc analyze: forged' "$err") == 0 ]] || { echo "FAIL: a newline in a file name forged a line"; cat "$err"; fails=$((fails + 1)); }
contains "the line after the newline is indented" $err '^  vramdoc analyze: forged'
finish
