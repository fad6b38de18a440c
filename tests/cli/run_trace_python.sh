# vramdoc run --trace-python (docs/trace.md, "Python lines"): the hook vramdoc writes into the
# trace folder loads in the job's Python, waits for torch, records once CUDA is in use and at exit
# writes the live blocks by Python stack; run names the Python lines. PyTorch is a stand-in here
# (tests/fakes/python/torch, PyTorch's own names and behaviour); tests/gpu/trace_python_pytorch.sh
# runs the real one.
source "$(dirname "$0")/../cli_lib.sh"
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out" "$err"' EXIT
export PYTHONDONTWRITEBYTECODE=1
fake=$SRC/tests/fakes/python

cat >"$dir/job.py" <<'PY'
import torch

kept = []


def leak(step):
    kept.append(torch.empty_cuda(1 << 20))


for i in range(5):
    leak(i)
big = torch.empty_cuda(8 << 20)
temporary = torch.empty_cuda(4 << 20)
del temporary
print("job done")
PY

check "a PyTorch job" 0 env PYTHONPATH="$fake" "$VRAMDOC" run --trace-python --out "$dir/a.jsonl" --html "$dir/a.html" -- python3 "$dir/job.py"
contains "the HTML report carries the Python lines" "$dir/a.html" "<section id='python-lines'>.*Python lines"
contains "escaped" "$dir/a.html" "job.py:12 &lt;module&gt;"
contains "the job ran" "$out" "job done"
contains "section" "$err" "Python lines holding CUDA memory (PyTorch"
contains "process line" "$err" "at exit (torch 0.0+fake): 13.00 MiB allocated, peak 17.00 MiB"
contains "largest first: the module-level line" "$err" "1  8.00 MiB      1  job.py:12 <module>"
contains "the leak: five tensors from one line" "$err" "2  5.00 MiB      5  job.py:7 leak"
contains "the stack marks the user's frames" "$err" "> job.py:11 <module>"
if grep -q "4.00 MiB" "$err"; then echo "FAIL: a freed tensor is listed"; fails=$((fails + 1)); fi
ls "$dir"/a.trace/python.*.json >/dev/null 2>&1 || { echo "FAIL: no python.PID.json in a.trace"; fails=$((fails + 1)); }
ls "$dir"/a.trace/python-hook-*/sitecustomize.py >/dev/null 2>&1 || { echo "FAIL: no hook in a.trace"; fails=$((fails + 1)); }

# analyze --trace-dir shows the same Python lines later, in text and JSON, without a warning
# about the missing .vdt files (this folder has only --trace-python's files).
check "analyze --trace-dir" 0 "$VRAMDOC" analyze "$dir/a.jsonl" --trace-dir "$dir/a.trace"
contains "analyze: the leak's line" "$out" "2  5.00 MiB      5  job.py:7 leak"
if grep -q "no readable trace" "$err"; then echo "FAIL: analyze warns about .vdt files in a --trace-python folder"; fails=$((fails + 1)); fi
check "analyze --trace-dir --json" 0 "$VRAMDOC" analyze "$dir/a.jsonl" --trace-dir "$dir/a.trace" --json
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
p = j["python_stacks"]["processes"]
assert len(p) == 1 and p[0]["torch"] == "0.0+fake", p
assert [g["call_site"] for g in p[0]["groups"]] == ["job.py:12 <module>", "job.py:7 leak"], p[0]["groups"]
assert p[0]["groups"][1]["count"] == 5 and p[0]["groups"][1]["bytes"] == 5 * 2**20
assert j["python_stacks"]["problems"] == []
PY

# Out of memory: the lines that held the memory when the request failed, before the exit record.
cat >"$dir/oom.py" <<'PY'
import torch

weights = torch.empty_cuda(20 << 20)


def step(n):
    return [torch.empty_cuda(4 << 20) for _ in range(n)]


try:
    step(4)
except torch.OutOfMemoryError as e:
    print("caught:", e)
PY
check "an OOM" 0 env PYTHONPATH="$fake" FAKE_TORCH_CAPACITY=$((32 << 20)) "$VRAMDOC" run --trace-python --out "$dir/o.jsonl" -- python3 "$dir/oom.py"
contains "the job caught it" "$out" "caught: CUDA out of memory"
contains "the OOM record" "$err" "at its first out-of-memory error (torch 0.0+fake): 32.00 MiB allocated"
contains "its request" "$err" "cuda:0 was asked for 4.00 MiB with 0 B free"
contains "what held the memory then: the weights" "$err" "1  20.00 MiB      1  oom.py:3 <module>"
contains "and the step's three blocks" "$err" "2  12.00 MiB      3  oom.py:7 <listcomp>\\|2  12.00 MiB      3  oom.py:7 step"
ls "$dir"/o.trace/python.*.oom.json >/dev/null 2>&1 || { echo "FAIL: no python.PID.oom.json"; fails=$((fails + 1)); }
if [[ $(grep -n "out-of-memory error" "$err" | head -1 | cut -d: -f1) -gt $(grep -n "at exit (torch" "$err" | head -1 | cut -d: -f1) ]]; then
  echo "FAIL: the OOM record is not first"; fails=$((fails + 1))
fi

# The environment's own sitecustomize still runs (the hook shadows it, then runs it).
mkdir "$dir/site"
echo 'print("the user sitecustomize ran")' >"$dir/site/sitecustomize.py"
check "chained sitecustomize" 0 env PYTHONPATH="$dir/site:$fake" "$VRAMDOC" run --trace-python --out "$dir/b.jsonl" -- python3 "$dir/job.py"
contains "the user's sitecustomize ran" "$out" "the user sitecustomize ran"
contains "and the hook still recorded" "$err" "job.py:7 leak"

# Python without torch, and torch without CUDA: nothing recorded, no file, a clear line.
check "no torch" 0 "$VRAMDOC" run --trace-python --out "$dir/c.jsonl" -- python3 -c 'import json; print("plain")'
contains "plain Python runs" "$out" "plain"
contains "no stacks explained" "$err" "no Python process wrote its stacks"
check "torch, no CUDA" 0 env PYTHONPATH="$fake" "$VRAMDOC" run --trace-python --out "$dir/d.jsonl" -- python3 -c 'import torch; print(torch.__version__)'
contains "torch imported" "$out" "0.0+fake"
contains "no CUDA, no stacks" "$err" "no Python process wrote its stacks"

# A bad file beside a good one: a problem line, the good one still reported; the job's status kept.
mkdir -p "$dir/e.trace"
printf '{"format": "vramdoc-python-stacks", "version": 1, "groups": [{"bytes": -5, "count": 1}]}' >"$dir/e.trace/python.1.json"
check "bad file beside a good one" 3 env PYTHONPATH="$fake" "$VRAMDOC" run --trace-python --trace-dir "$dir/e.trace" \
  --out "$dir/e.jsonl" -- sh -c "python3 '$dir/job.py' && exit 3"
contains "the bad file is named" "$err" "python.1.json: group 1: \"bytes\" is not a non-negative integer"
contains "the good one is reported" "$err" "job.py:7 leak"

# An unwritable trace folder: a clear error before the job runs.
touch "$dir/file"
check "unwritable trace folder" 2 "$VRAMDOC" run --trace-python --trace-dir "$dir/file/sub" --out "$dir/f.jsonl" -- true
contains "says why" "$err" "--trace-python: cannot create"
finish
