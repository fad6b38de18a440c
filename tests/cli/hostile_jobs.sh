# Issue 25, hostile inputs III: a job never dies because of vramdoc. Each case as the issue tried
# it, through `vramdoc run` (no driver: the recorder keeps marks and messages); a hang (the old
# behaviour of several) is exit 124 under `timeout`, not a pass.
source "$(dirname "$0")/../cli_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
cd "$tmp" || exit 1
fast() { check "$1" "$2" timeout -k 5 20 "${@:3}"; }  # a hang that ignores SIGTERM (the old bugs) ends too
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --step-regex on a 60 KB line: std::regex recursed per character and segfaulted (the job then
# died of SIGPIPE, the timeline had no end). A longer line is matched on its first 64 KiB.
python3 -c "print('x' * 60000 + ' step 5'); print('y' * 200000 + ' step 6'); print('step 7')" >long.txt
fast "step regex on a 60 KB line" 0 "$VRAMDOC" run --no-report --out long.jsonl --step-regex '.*step (\d+)' -- cat long.txt
contains "the long line's step is marked" long.jsonl '"mark":"step 5"'
contains "and the next line's" long.jsonl '"mark":"step 7"'
contains "the timeline has its end" long.jsonl '"end"'
[[ $(wc -c <"$out") -gt 260000 ]] || fail "the job's output was not passed through whole"

# '(a+)+$' on a 31-character line: exponential backtracking that ignored SIGTERM.
printf '%s!\n' "$(printf 'a%.0s' {1..31})" >a31.txt
fast "nested quantifiers" 0 "$VRAMDOC" run --no-report --out a.jsonl --step-regex '(a+)+$' -- cat a31.txt
fast "a backreference is a clear error" 2 "$VRAMDOC" run --step-regex '(step) \1' -- true
contains "names the option and why" $err "--step-regex '(step) \\\\1' is not a valid regular expression: backreferences"
fast "probe refuses it too" 2 "$VRAMDOC" probe --cmd 'true {batch}' --gpu-memory 1GiB --step-regex '(?=x)'
contains "probe names the option" $err "--step-regex '(?=x)' is not a valid regular expression: lookaround"

# The job replaces its mark file with a link to /dev/zero, then with a FIFO: the file was
# reopened by path every tick and read forever. It is read through the descriptor vramdoc made.
fast "mark file replaced by /dev/zero" 0 "$VRAMDOC" run --no-report --out zero.jsonl -- sh -c \
  'echo "step 1" >>"$VRAMDOC_MARK_FILE"; sleep 0.2; rm -f "$VRAMDOC_MARK_FILE"; ln -s /dev/zero "$VRAMDOC_MARK_FILE"; sleep 0.3'
contains "the mark written before is kept" zero.jsonl '"mark":"step 1"'
fast "mark file replaced by a FIFO" 0 "$VRAMDOC" run --no-report --out fifo.jsonl -- sh -c \
  'rm -f "$VRAMDOC_MARK_FILE"; mkfifo "$VRAMDOC_MARK_FILE"; sleep 0.3'

# A background child of the job outlives it: it died of SIGPIPE about a second after the main
# process exited (vramdoc stopped reading its pipe); without vramdoc it survives. Now a relay
# passes its output on; run still ends when the job does.
start=$SECONDS
fast "a job that leaves a child behind" 0 "$VRAMDOC" run --no-report --out bg.jsonl -- sh -c \
  "(sleep 2; echo late from the child; touch '$tmp/alive') & echo main done"
[[ $((SECONDS - start)) -le 2 ]] || fail "run waited for the background child ($((SECONDS - start)) s)"
for _ in $(seq 60); do [[ -e alive ]] && break; sleep 0.1; done
[[ -e alive ]] || fail "the background child died (SIGPIPE) after the job ended"
sleep 0.2
contains "its late output reached our stdout" $out "late from the child"
contains "and the main process's" $out "main done"

# A 250-character program name: the default timeline name was longer than a file name may be,
# and the job was refused. The name is cut.
long=$(printf 'p%.0s' {1..250})
ln -s "$(type -P true)" "$tmp/$long"
fast "a 250-character program name" 0 "$VRAMDOC" run --no-report -- "$tmp/$long"
ls vramdoc-ppp*.jsonl >/dev/null 2>&1 || fail "no default timeline for the long program name"
name=$(ls vramdoc-ppp*.jsonl 2>/dev/null | head -n 1)
[[ ${#name} -le 100 ]] || fail "default timeline name of ${#name} characters: $name"

# A TensorFlow OOM line whose shape holds a 400-digit number: std::stod threw, run died
# ("internal error: stod") taking the job's pipe with it, and analyze called the timeline invalid.
python3 -c "print('ResourceExhaustedError: OOM when allocating tensor with shape[' + '9' * 400 + '] and type float')" >tf.txt
fast "an absurd OOM shape in the job's output" 0 "$VRAMDOC" run --no-report --out tf.jsonl -- cat tf.txt
contains "recorded as an OOM message" tf.jsonl '"oom_message"'
check "and analysed (it was: not a valid timeline (stod))" 0 "$VRAMDOC" analyze tf.jsonl
contains "the message read" $out "tensorflow message"

# Misleading: "cannot run 'train.py': No such file or directory" while train.py is right here.
printf 'print(1)\n' >train.py
check "a script in the current folder, not in PATH" 127 "$VRAMDOC" run -- train.py
contains "says how to run it" $err "cannot run 'train.py': no command 'train.py' in PATH; the file train.py here is run as ./train.py (executable), or python3 train.py"
check "a script that is not executable" 126 "$VRAMDOC" run -- ./train.py
contains "says chmod" $err "./train.py is not executable (chmod +x ./train.py, or run it as python3 ./train.py)"

# SIGTERM ends vramdoc with its report written, and never the job: the job goes on (it used to
# get the signal too), the report says so (tests/cli/run_signals.sh has the rest).
"$VRAMDOC" run --out term.jsonl -- sleep 30 >term.out 2>term.err & pid=$!
for _ in $(seq 50); do grep -q '"vramdoc_timeline"' term.jsonl 2>/dev/null && break; sleep 0.1; done
sleep 0.3
kill -TERM $pid
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then fail "vramdoc did not end after SIGTERM"; kill -KILL $pid; fi
wait $pid; status=$?
[[ $status == 143 ]] || fail "after SIGTERM: exit $status, wanted 143"
contains "the report is written" term.err "SIGTERM stopped the recording; the job (pid"
contains "the timeline has its end" term.jsonl '"outcome":"detached"'
job=$(sed -n 's/.*the job (pid \([0-9]*\)).*/\1/p' term.err | head -n 1)
if [[ -n $job ]] && kill -0 "$job" 2>/dev/null; then kill "$job"; else fail "the job did not survive vramdoc's SIGTERM"; fi
finish
