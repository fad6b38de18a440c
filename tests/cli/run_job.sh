# vramdoc run around small shell jobs: exit status, signals, missing commands, output passed
# through unchanged, step marks (regex and marker file), OOM messages, usage errors. No driver here:
# sampling is unavailable and says so, and the job still runs.
source "$(dirname "$0")/../cli_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
cd "$tmp"

check "exit status is the job's" 3 "$VRAMDOC" run --out t.jsonl -- sh -c 'exit 3'
contains "sampling unavailable is said" $err "GPU memory sampling unavailable"
contains "end line has the status" t.jsonl '"exit_status":3'
check "killed by a signal: 128+N" 143 "$VRAMDOC" run --out t.jsonl -- sh -c 'kill -TERM $$'
check "a command that does not exist" 127 "$VRAMDOC" run --out t.jsonl -- no-such-command-vramdoc
contains "missing command is named" $err "cannot run 'no-such-command-vramdoc'"
printf 'echo hi\n' > not-executable.sh
check "a command that cannot be executed" 126 "$VRAMDOC" run --out t.jsonl -- ./not-executable.sh

# Output passes through byte for byte, stdout to stdout and stderr to stderr.
job='printf "line one\nprogress 10%%\rprogress 100%%\nno newline at the end"; printf "to stderr\n" >&2'
sh -c "$job" > want.out 2> want.err
check "pass-through" 0 "$VRAMDOC" run --out t.jsonl -- sh -c "$job"
cmp -s "$out" want.out || { echo "FAIL: stdout differs"; od -c "$out" | head; fails=$((fails + 1)); }
contains "stderr passes through" $err "^to stderr$"

# Step marks from --step-regex (group 1 is the number) and from $VRAMDOC_MARK_FILE.
check "step marks" 0 "$VRAMDOC" run --out t.jsonl --step-regex 'iter ([0-9x]+) loss' -- \
  sh -c 'for i in 4 5 6; do echo "iter $i loss 2.0"; done; echo "step 7" >> "$VRAMDOC_MARK_FILE"; echo "iter x loss"'
for s in 4 5 6 7; do contains "mark step $s" t.jsonl "\"mark\":\"step $s\""; done
contains "a match without a number counts" t.jsonl '"mark":"step 3"'
check "the timeline reads back" 0 "$VRAMDOC" analyze t.jsonl --json
contains "analyze gives a verdict" $out '"verdict"'

# A PyTorch OOM message in the output is detected and its numbers kept.
msg='torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 139.80 GiB of which 17.12 MiB is free. Including non-PyTorch memory, this process has 139.78 GiB memory in use. Of the allocated memory 125.10 GiB is allocated by PyTorch, and 13.89 GiB is reserved by PyTorch but unallocated.'
check "OOM job exits 1" 1 "$VRAMDOC" run --out t.jsonl -- sh -c "echo 'Traceback (most recent call last):' >&2; echo '$msg' >&2; exit 1"
contains "oom message recorded" t.jsonl '"oom_message":"torch.OutOfMemoryError'
contains "outcome oom" t.jsonl '"outcome":"oom"'
contains "fragmentation from the message" $err "verdict: fragmentation"
contains "requested figure" $err "20.00 MiB"

# SIGINT, SIGHUP and SIGQUIT sent to vramdoc go to the job; vramdoc exits with the job's status
# (SIGTERM does not: tests/cli/run_signals.sh). A script's `cmd &` ignores SIGINT: put it back.
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
  "$VRAMDOC" run --out t.jsonl -- sh -c 'trap "echo got INT; exit 7" INT; trap "echo got HUP; exit 8" HUP; echo ready; while :; do sleep 0.05; done' > sig.out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -qs ready sig.out && break; sleep 0.05; done
kill -INT $pid
wait $pid
rc=$?
[[ $rc == 7 ]] || { echo "FAIL: forwarded INT: exit $rc, wanted 7"; cat sig.out; fails=$((fails + 1)); }
contains "the job saw INT" sig.out "got INT"

# Children of the job are waited for through the pipe: output of a grandchild still arrives.
check "grandchild output" 0 "$VRAMDOC" run --out t.jsonl -- sh -c '(sleep 0.1; echo from grandchild) & wait'
contains "grandchild line" $out "from grandchild"

# A background process that outlives the job and keeps its pipes: vramdoc returns with the job.
start=$(date +%s)
check "background process keeps the pipes" 5 "$VRAMDOC" run --out t.jsonl -- sh -c 'sleep 30 & echo started; exit 5'
(( $(date +%s) - start < 10 )) || { echo "FAIL: vramdoc waited for the background process"; fails=$((fails + 1)); }
contains "its output before the end" $out "^started$"

# Our stdout closed early (| head): the job sees its pipe closed, vramdoc still writes the end.
"$VRAMDOC" run --out t.jsonl -- sh -c 'i=0; while [ $i -lt 100000 ]; do echo line $i; i=$((i+1)); done' 2>/dev/null | head -1 > head.out
contains "head got the first line" head.out "^line 0$"
contains "the job died of SIGPIPE as it would alone" t.jsonl '"exit_status":141'

check "no command" 2 "$VRAMDOC" run --out t.jsonl
check "bad regex" 2 "$VRAMDOC" run --step-regex '(' -- true
contains "bad regex named" $err "not a valid regular expression"
check "bad interval" 2 "$VRAMDOC" run --interval 0ms -- true
check "unwritable --out" 2 "$VRAMDOC" run --out /nonexistent/dir/t.jsonl -- true
contains "unwritable file named" $err "cannot write /nonexistent/dir/t.jsonl"
finish
