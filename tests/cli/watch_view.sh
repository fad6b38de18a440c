# The full-screen view through tmux (capture-pane) against the fake NVML: keys, resize, a GPU
# lost mid-run, and the terminal restored after q, after SIGTERM and while stopped by Ctrl-Z.
source "$(dirname "$0")/../cli_lib.sh"
command -v tmux >/dev/null || { echo "tmux not installed (scripts/deps.sh --test installs it)"; exit 77; }
dir=$(mktemp -d)
sock=vramdoc-watch-test-$$
tm() { tmux -L "$sock" "$@"; }
trap 'tm kill-server 2>/dev/null; rm -rf "$dir" "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
cat >"$dir/fake.conf" <<CONF
devices=2
processes=$$:3221225472,4194303:1073741824
util_gpu=35
util_mem=92
fail=nvmlDeviceGetMemoryInfo_v2:15
fail_device=1
fail_when_exists=$dir/gpu1-lost
CONF
# The command of session $1: vramdoc, then its exit status into $dir/$1.status (tmux's own
# #{pane_dead_status} is sometimes left empty when the pty closes first).
run() {
  echo "env VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf" \
    "$VRAMDOC watch --interval 100ms; echo exit=\$? >$dir/$1.status"
}

# wait_for "pattern" [session]: until the pane shows it (10 s), else a failure with the screen.
wait_for() {
  for _ in $(seq 100); do
    tm capture-pane -p -t "${2:-view}" >"$dir/screen" 2>/dev/null
    grep -q -- "$1" "$dir/screen" && return 0
    sleep 0.1
  done
  fail "screen never showed '$1'"; cat "$dir/screen"; return 1
}
# check_exit session what: vramdoc exited 0 (within 10 s) and left the alternate screen.
check_exit() {
  for _ in $(seq 100); do [[ -s $dir/$1.status ]] && break; sleep 0.1; done
  [[ $(cat "$dir/$1.status" 2>/dev/null) == exit=0 ]] || fail "after $2: $(cat "$dir/$1.status" 2>/dev/null), wanted exit=0"
  [[ $(tm display -p -t "$1" '#{alternate_on}') == 0 ]] || fail "after $2: still on the alternate screen"
}

tm -f /dev/null new-session -d -s view -x 100 -y 30 "$(run view)"
tm set-option -t view remain-on-exit on >/dev/null
wait_for "vramdoc watch .* GPU 0 (1 of 2)  sort: memory"
wait_for "> 0 NVIDIA H200"
# One list of both GPUs' processes (the fake puts each process on every GPU).
contains "process of GPU 0" "$dir/screen" "^ *0 *$$  $(id -un) .*3.00 GiB"
contains "process of GPU 1" "$dir/screen" "^ *1 *$$  $(id -un) .*3.00 GiB"
contains "hint" "$dir/screen" "hint     bandwidth-bound"
first_line() { grep -n -- "$1" "$dir/screen" | head -n 1 | cut -d: -f1; }
last_line() { grep -n -- "$1" "$dir/screen" | tail -n 1 | cut -d: -f1; }
(($(last_line "$$  $(id -un)") < $(first_line " 4194303 "))) || fail "not sorted by memory"
tm send-keys -t view s; wait_for "sort: gpu"
(($(first_line "^ *1  ") > $(last_line "^ *0  "))) || fail "not sorted by GPU"
tm send-keys -t view s; wait_for "sort: pid"
(($(last_line "$$  $(id -un)") < $(first_line " 4194303 "))) || fail "not sorted by pid"
# A signal is asked for and cancelled by any key but y (the process is this test's shell).
tm send-keys -t view j; tm send-keys -t view T; wait_for "Send SIGTERM to PID $$ "
tm send-keys -t view n; sleep 0.3
tm capture-pane -p -t view >"$dir/screen"
grep -q "Send SIGTERM" "$dir/screen" && fail "the prompt stayed after n"
tm send-keys -t view 1; wait_for "GPU 1 (2 of 2)"
wait_for "> 1 NVIDIA H200"
tm send-keys -t view Right; wait_for "GPU 0 (1 of 2)"
tm send-keys -t view g; wait_for "GPU 1 (2 of 2)"

# Resize: every line fits the new width, the title is still there.
tm resize-window -t view -x 60 -y 12; sleep 0.3
wait_for "vramdoc watch"
python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > 60 for l in open(sys.argv[1], encoding="utf-8")))' "$dir/screen" ||
  fail "a line is wider than 60 columns after resize"
grep -q "^... [0-9]* more line(s)" "$dir/screen" || fail "12 rows: no note of the hidden lines"

# GPU 1 lost mid-run: a message for it; GPU 0 keeps its numbers.
tm resize-window -t view -x 120 -y 30
touch "$dir/gpu1-lost"
wait_for "1 NVIDIA H200 *not read: .*GPU is lost"
contains "GPU 0 still shown" "$dir/screen" "0 NVIDIA H200 *MEM \[#*\.*\] 3.91 GiB"
tm send-keys -t view q
check_exit view q

# Issue 32: whole screens at 80x24 and 160x45 against golden captures (tests/golden/watch/tmux-*),
# once the plots are full (the fake's figures are constant); then help, reverse sort, the filter.
# Processes that do not exist here: their user and command are n/a on every machine.
cat >"$dir/still.conf" <<CONF
devices=2
processes=4194301:3221225472,4194303:1073741824
util_gpu=35
util_mem=92
CONF
still() {
  echo "env VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/still.conf" \
    "$VRAMDOC watch --interval 40ms $2; echo exit=\$? >$dir/$1.status"
}
normalize_screen() { sed -E '1s/^(vramdoc watch  )[0-9]{2}:[0-9]{2}:[0-9]{2}/\1HH:MM:SS/' "$1"; }  # the title's clock
compare_screen() {  # compare_screen NAME: the pane against tests/golden/watch/NAME.txt
  tm capture-pane -p -t "$1" >"$dir/screen"
  normalize_screen "$dir/screen" >"$dir/$1.txt"
  local golden=$SRC/tests/golden/watch/$1.txt
  if [[ ${VRAMDOC_UPDATE_GOLDEN:-} == 1 ]]; then cp "$dir/$1.txt" "$golden"; return; fi
  diff -u "$golden" "$dir/$1.txt" >"$dir/diff" || { fail "$1: the screen differs from $golden"; cat "$dir/diff"; }
}
for size in 80x24 160x45; do
  name=tmux-$size
  tm new-session -d -s "$name" -x "${size%x*}" -y "${size#*x}" "$(still "$name" "")"
  tm set-option -t "$name" remain-on-exit on >/dev/null
  wait_for "vramdoc watch" "$name"
  sleep 6  # the plots fill: one column per 40 ms sample (72 of them at 160 columns)
  compare_screen "$name"
  python3 -c 'import sys; sys.exit(any(len(l.rstrip("\n")) > int(sys.argv[2]) for l in open(sys.argv[1], encoding="utf-8")))' \
    "$dir/screen" "${size%x*}" || fail "$size: a line is wider than the terminal"
  contains "$size: the legend" "$dir/screen" "h help  q quit"
  contains "$size: power and temperature" "$dir/screen" "BUSY\|BW"
  tm send-keys -t "$name" q; check_exit "$name" q
done
tm new-session -d -s keys -x 80 -y 24 "$(still keys "--color never")"
tm set-option -t keys remain-on-exit on >/dev/null
wait_for "vramdoc watch" keys
tm capture-pane -p -e -t keys >"$dir/escapes"
grep -q $'\e\[[0-9;]*m' "$dir/escapes" && fail "--color never: the screen still has attributes (reverse title or colours)"
tm send-keys -t keys h; wait_for "vramdoc watch: keys" keys
tm send-keys -t keys x; wait_for "sort: memory   h help" keys
tm send-keys -t keys r; wait_for "sort: memory (reversed)" keys
(($(first_line " 4194301 ") > $(first_line " 4194303 "))) || fail "r: not in reverse order of memory"
tm send-keys -t keys / 4 1 9 4 3 0 1; wait_for "filter: 4194301_" keys
tm send-keys -t keys Enter; wait_for "filter: 4194301   h help" keys
grep -q " 4194303 " "$dir/screen" && fail "the filter left 4194303 shown"
tm send-keys -t keys / Escape; sleep 0.3; wait_for " 4194303 " keys
tm send-keys -t keys q; check_exit keys q

# SIGTERM: exits 0 and leaves the alternate screen too.
tm new-session -d -s term -x 80 -y 24 "$(run term)"
tm set-option -t term remain-on-exit on >/dev/null
wait_for "vramdoc watch" term  # drawn: the signal handlers are in place
kill -TERM "$(pgrep -P "$(tm display -p -t term '#{pane_pid}')")"  # vramdoc, the pane shell's child
check_exit term SIGTERM

# Ctrl-Z in an interactive shell: the shell gets its terminal back (main screen, canonical mode
# with echo), and `fg` brings the view back; q still exits 0. vramdoc is the job itself, as
# typed by a user; its status is read after it ends.
tm new-session -d -s tstp -x 100 -y 30 "env PS1='prompt> ' bash --norc --noprofile -i"
wait_for "prompt>" tstp
tm send-keys -t tstp "VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 FAKE_NVML_CONFIG=$dir/fake.conf $VRAMDOC watch --interval 100ms" Enter
wait_for "vramdoc watch .* GPU 0 (1 of 2)" tstp
tm send-keys -t tstp C-z
wait_for "Stopped" tstp
[[ $(tm display -p -t tstp '#{alternate_on}') == 0 ]] || fail "after Ctrl-Z: still on the alternate screen"
tm send-keys -t tstp "stty -a | tr ' ;' '\\n\\n' | grep -x -e icanon -e echo -e -icanon -e -echo | sort | tr '\\n' ,; echo" Enter
wait_for "^echo,icanon,$" tstp
tm send-keys -t tstp fg Enter
wait_for "vramdoc watch .* GPU 0 (1 of 2)" tstp
[[ $(tm display -p -t tstp '#{alternate_on}') == 1 ]] || fail "after fg: not on the alternate screen"
tm send-keys -t tstp q
for _ in $(seq 100); do [[ $(tm display -p -t tstp '#{alternate_on}') == 0 ]] && break; sleep 0.1; done
tm send-keys -t tstp "echo exit=\$? >$dir/tstp.status" Enter
for _ in $(seq 100); do [[ -s $dir/tstp.status ]] && break; sleep 0.1; done
[[ $(cat "$dir/tstp.status" 2>/dev/null) == exit=0 ]] || fail "after Ctrl-Z, fg, q: $(cat "$dir/tstp.status" 2>/dev/null), wanted exit=0"
finish
