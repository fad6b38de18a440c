# No secret of a job's command line or of its out-of-memory line reaches `run`'s timeline (users
# attach it to bug reports), its report and HTML report, nor `analyze`'s text, JSON and HTML; a
# timeline written elsewhere with secrets in it is redacted when read (docs/security.md).
source "$(dirname "$0")/../cli_lib.sh"
source "$(dirname "$0")/../secrets_lib.sh"
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
cd "$tmp"
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# The job prints an OOM line that quotes a credential, then fails.
job="echo \"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB while loading https://alice:$PW@hf.co/x?token=$HF\"; exit 1"
check "run" 1 "$VRAMDOC" run --out t.jsonl --html r.html -- sh -c "$job" job "${SECRET_ARGS[@]}"
contains "the OOM line is recorded, redacted" t.jsonl '"oom_message":"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB while loading https://alice:\*\*\*@hf.co/x?token=\*\*\*"'
contains "the header keeps the arguments" t.jsonl '"command":\["sh","-c",.*"--token=\*\*\*","--api-key","\*\*\*"'
no_secrets "the timeline" t.jsonl
no_secrets "run's report" $err
no_secrets "run's HTML report" r.html
contains "the HTML report has the OOM line" r.html "CUDA out of memory"

check "analyze" 0 "$VRAMDOC" analyze t.jsonl
no_secrets "analyze" $out $err
check "analyze --json" 0 "$VRAMDOC" analyze t.jsonl --json
no_secrets "analyze --json" $out
check "analyze --html" 0 "$VRAMDOC" analyze t.jsonl --html a.html
no_secrets "analyze --html" a.html

# A timeline with secrets in it (another tool's, or an older vramdoc's): its reports have none.
cat >old.jsonl <<JSONL
{"vramdoc_timeline": 1, "name": "train.py --token=$HF", "device": null, "total": null, "columns": ["t", "process_used"], "command": ["python", "--token=$HF"], "interval_s": 0.02}
[0.0, 1048576]
[0.1, 2097152]
{"t": 0.1, "mark": "step 1 key=$RANDOM32"}
{"t": 0.1, "oom_message": "CUDA out of memory. Tried to allocate 20.00 MiB; Authorization: Bearer $GH"}
{"end": {"t": 0.1, "outcome": "oom", "exit_status": 1}}
JSONL
check "analyze an old timeline" 0 "$VRAMDOC" analyze old.jsonl --html old.html
contains "the name is shown, redacted" $out "diagnosis of train.py --token=\*\*\*"
contains "the OOM line is shown, redacted" old.html "Authorization: Bearer \*\*\*"
no_secrets "analyze of an unredacted timeline" $out $err old.html
check "analyze an old timeline, JSON" 0 "$VRAMDOC" analyze old.jsonl --json
no_secrets "analyze --json of an unredacted timeline" $out

# The default timeline name is vramdoc's choice: a new private file, never a planted link.
check "default timeline" 0 "$VRAMDOC" run -- true
file=$(ls vramdoc-true-*.jsonl | head -1)
[[ $(stat -c %a "$file") == 600 ]] || fail "the default timeline is $(stat -c %a "$file"), wanted 600"
finish
