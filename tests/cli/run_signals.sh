# Issue 25: "SIGTERM ends vramdoc with its report written, and never the job". vramdoc run used to
# forward SIGTERM to the job's process group: a scheduler or a user stopping the watcher killed the
# training. Now SIGTERM detaches: the timeline gets its end ("detached"), the report is written, the
# job goes on with its output still passed through (a relay), and vramdoc exits 143. Signals vramdoc
# was started ignoring (nohup: SIGHUP) stay ignored, for it and for the job, as without vramdoc.
source "$(dirname "$0")/../cli_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
cd "$tmp" || exit 1
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
wait_for() { for _ in $(seq 100); do [[ -e $1 ]] && return 0; sleep 0.1; done; return 1; }

# The job: marks a step, says it started, then works on for 4 s after vramdoc is told to stop,
# printing as it goes, and leaves a file when it finished by itself.
cat >job.sh <<'EOF'
echo "step 1" >>"$VRAMDOC_MARK_FILE"
touch started
while [ ! -e stop-sent ]; do sleep 0.05; done
for i in 1 2 3 4 5 6 7 8; do echo "after the stop $i"; sleep 0.5; done
touch finished
EOF

"$VRAMDOC" run --out term.jsonl --json -- sh job.sh >term.out 2>term.err &
pid=$!
wait_for started || fail "the job did not start"
sleep 0.3
kill -TERM "$pid"
touch stop-sent
# Timed in milliseconds against the job's 4 s after the stop: whole seconds ($SECONDS) read a 1.05 s exit under
# load as 2 s, and the 2 s job it was judged against then looked waited for (CI, 2026-12-03).
start=$(date +%s%N)
timeout 10 tail --pid="$pid" -f /dev/null
wait "$pid"
status=$?
took=$((($(date +%s%N) - start) / 1000000))
[[ $status == 143 ]] || fail "vramdoc's exit status after SIGTERM: $status, wanted 143 (128 + SIGTERM)"
((took < 2500)) || fail "vramdoc waited for the job after SIGTERM ($took ms; the job works 4 s on)"
[[ -e finished ]] && fail "the job had finished before vramdoc ended: the test proves nothing"
wait_for finished || fail "the job died with vramdoc (SIGTERM was passed on, or its output pipe broke)"
sleep 0.3
contains "the timeline has its end, detached" term.jsonl '"outcome":"detached"'
contains "the mark before the stop is kept" term.jsonl '"mark":"step 1"'
contains "the JSON report was written" term.out '"detached"'
contains "it names the job that goes on" term.out "\"job_pid\""
contains "the job's output after the stop still came through" term.out "after the stop 8"
contains "stderr says what happened" term.err "SIGTERM"
check "analyze reads a detached timeline" 0 "$VRAMDOC" analyze term.jsonl
contains "and says the recording stopped while the job went on" $out "detached"

# The text report says it too.
rm -f started stop-sent finished
"$VRAMDOC" run --out text.jsonl -- sh job.sh >text.out 2>text.err &
pid=$!
wait_for started || fail "the job did not start (text)"
kill -TERM "$pid"
touch stop-sent
wait "$pid"
contains "the text report says the job goes on" text.err "goes on"
wait_for finished || fail "the job died with vramdoc (text report)"

# --sigterm forward (what probe's trials use): the job gets SIGTERM, as it did before.
"$VRAMDOC" run --sigterm forward --out fwd.jsonl -- sh -c 'trap "echo got TERM; exit 7" TERM; echo ready; while :; do sleep 0.05; done' >fwd.out 2>&1 &
pid=$!
for _ in $(seq 100); do grep -qs ready fwd.out && break; sleep 0.05; done
kill -TERM "$pid"
wait "$pid"
status=$?
[[ $status == 7 ]] || fail "--sigterm forward: status $status, wanted the job's 7"
contains "the job saw SIGTERM" fwd.out "got TERM"
contains "its timeline ends as a failed job" fwd.jsonl '"outcome":"failed"'
check "--sigterm takes detach or forward" 2 "$VRAMDOC" run --sigterm kill -- true
contains "names the choices" $err "detach"

# Started ignoring SIGHUP (nohup): vramdoc forwarded SIGHUP to the job anyway, and the job was
# spawned with SIGHUP back at its default, so a hang-up killed it. Both keep ignoring it now.
cat >hup.sh <<'EOF'
awk '/^SigIgn:/ { print "ignored mask " $2 }' /proc/self/status
touch started
sleep 1
touch finished
EOF
rm -f started finished
(trap '' HUP; exec "$VRAMDOC" run --no-report --out hup.jsonl -- sh hup.sh >hup.out 2>hup.err) &
pid=$!
wait_for started || fail "the nohup job did not start"
kill -HUP "$pid"
wait "$pid"
status=$?
[[ $status == 0 ]] || fail "under nohup, SIGHUP ended the run: status $status"
[[ -e finished ]] || fail "under nohup, SIGHUP reached the job"
mask=$(awk '{print $3}' hup.out)
(( (0x$mask & 1) == 1 )) || fail "the job does not ignore SIGHUP as it would under nohup without vramdoc (SigIgn $mask)"

# SIGINT (Ctrl-C) still goes to the job: that is the user stopping it.
cat >int.sh <<'EOF'
touch started
sleep 5
touch finished
EOF
rm -f started finished
# A script's `cmd &` starts cmd with SIGINT ignored (and vramdoc now keeps it so): put it back first.
python3 -c 'import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])' \
  "$VRAMDOC" run --no-report --out int.jsonl -- sh int.sh >int.out 2>int.err &
pid=$!
wait_for started || fail "the SIGINT job did not start"
kill -INT "$pid"
wait "$pid"
status=$?
[[ $status == 130 ]] || fail "SIGINT: status $status, wanted the job's 130"
[[ -e finished ]] && fail "SIGINT did not reach the job"
contains "the interrupted job's timeline has its end" int.jsonl '"end"'
finish
