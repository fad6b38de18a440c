# Trace reports and the files of `run --trace-python` (docs/security.md): no secret of the job's
# command line or of a hook's error text reaches the report, the HTML report or analyze; the trace
# folder is private, the hook is a new private file in a fresh private folder, and a trace folder
# another user could write, or a link, is refused before the job runs.
source "$(dirname "$0")/../cli_lib.sh"
source "$(dirname "$0")/../secrets_lib.sh"
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 PYTHONDONTWRITEBYTECODE=1
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out" "$err"' EXIT
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
mode() { stat -c %a "$1"; }

printf 'import torch\nkept = [torch.empty_cuda(1 << 20) for _ in range(3)]\nprint("job done")\n' >"$dir/job.py"
check "a traced job with secrets on its command line" 0 env PYTHONPATH="$SRC/tests/fakes/python" \
  "$VRAMDOC" run --trace-python --out "$dir/a.jsonl" --html "$dir/a.html" -- python3 "$dir/job.py" "${SECRET_ARGS[@]}"
contains "the Python lines are reported" $err "job.py:2 <listcomp>\|job.py:2 <module>"
no_secrets "run --trace-python's report" $err "$dir/a.html" "$dir/a.jsonl"
[[ $(mode "$dir/a.trace") == 700 ]] || fail "the trace folder is $(mode "$dir/a.trace"), wanted 700"
hook=$(ls -d "$dir"/a.trace/python-hook-* | head -1)
[[ $(mode "$hook") == 700 ]] || fail "the hook folder is $(mode "$hook"), wanted 700"
[[ $(mode "$hook/sitecustomize.py") == 600 ]] || fail "the hook is $(mode "$hook/sitecustomize.py"), wanted 600"

# A hook whose error text quotes a credential: analyze --trace-dir shows it redacted.
printf '{"format": "vramdoc-python-stacks", "version": 1, "pid": 7, "error": "RuntimeError: cannot reach https://alice:%s@hf.co/?token=%s"}' \
  "$PW" "$HF" >"$dir/a.trace/python.7.json"
check "analyze --trace-dir" 0 "$VRAMDOC" analyze "$dir/a.jsonl" --trace-dir "$dir/a.trace"
contains "the hook's error, redacted" $out "https://alice:\*\*\*@hf.co/?token=\*\*\*"
no_secrets "analyze --trace-dir" $out $err
check "analyze --trace-dir --json" 0 "$VRAMDOC" analyze "$dir/a.jsonl" --trace-dir "$dir/a.trace" --json
no_secrets "analyze --trace-dir --json" $out

# Trace folders another user could plant code in are refused, before the job runs.
mkdir -m 777 "$dir/shared"
check "a folder others can write" 2 "$VRAMDOC" run --trace-python --trace-dir "$dir/shared" --out "$dir/b.jsonl" -- touch "$dir/ran"
contains "says why" $err "writable by group or others"
[[ -e $dir/ran ]] && fail "the job ran with an unsafe trace folder"
mkdir "$dir/real" && ln -s "$dir/real" "$dir/link"
check "a link" 2 "$VRAMDOC" run --trace-python --trace-dir "$dir/link" --out "$dir/c.jsonl" -- true
contains "says it is a link" $err "is a symbolic link"
if [[ $(id -u) == 0 ]] && id nobody >/dev/null 2>&1; then
  mkdir -m 755 "$dir/theirs" && chown nobody "$dir/theirs"
  check "a folder of another user" 2 "$VRAMDOC" run --trace-python --trace-dir "$dir/theirs" --out "$dir/d.jsonl" -- true
  contains "says whose" $err "belongs to another user"
fi
finish
