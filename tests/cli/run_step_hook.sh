# vramdoc run's default step hook (issue 15, point 5): in every Python process that imports torch
# and initialises CUDA, each optimizer step appends "step N allocated=... reserved=... peak=... pid=..." to
# the marker file, and the timeline carries those marks; the classifier then reads the bytes still
# allocated at each step's end. PyTorch is the stand-in of tests/fakes/python (its optimizer calls
# the global step post-hooks as torch 2.x does); the fake NVML sees what the job says it holds.
source "$(dirname "$0")/../cli_lib.sh"
command -v python3 >/dev/null || { echo "no python3: skipped"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir" "$out" "$err"' EXIT
export PYTHONDONTWRITEBYTECODE=1 PROCS=$dir/procs TMPDIR=$dir/tmp
mkdir "$TMPDIR"
printf 'devices=1\nprocesses_file=%s\n' "$PROCS" >"$dir/nvml.conf"
export FAKE_NVML_CONFIG=$dir/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1
fake=$SRC/tests/fakes/python

cat >"$dir/job.py" <<'PY'
import os, sys, time
import torch

opt = torch.optim.SGD([])
other = torch.optim.SGD([])  # a second optimizer: its steps are not the job's steps
opt.step()  # before CUDA is initialised: no mark
kept = []
weights = torch.empty_cuda(64 << 20)
for i in range(int(sys.argv[1])):
    kept.append(torch.empty_cuda(3 << 20))  # the leak: 3 MiB a step
    with open(os.environ["PROCS"], "a") as f:
        f.write("0 %d %d\n" % (os.getpid(), (600 << 20) + torch.cuda.memory_reserved()))
    opt.step()
    other.step()
    time.sleep(0.08)
print("job done")
PY

check "the step hook by default" 0 env PYTHONPATH="$fake" "$VRAMDOC" run --interval 10ms --out "$dir/a.jsonl" -- python3 "$dir/job.py" 30
contains "the job ran" "$out" "job done"
contains "step 0 with torch's figures, the allocator's peak and the pid" "$dir/a.jsonl" '"allocated":70254592,"mark":"step 0","peak":70254592,"pid":[0-9]*,"reserved":71303168'
contains "step 29" "$dir/a.jsonl" '"mark":"step 29"'
n=$(grep -c '"mark":"step' "$dir/a.jsonl")
[[ $n == 30 ]] || { echo "FAIL: $n step marks, wanted 30 (one per step of the first optimizer)"; fails=$((fails + 1)); }
contains "the trend is read on the step-end bytes" "$err" "trend measured on .*framework-allocated bytes at each step end"
contains "the leak from them" "$err" "verdict: leak: memory grows step after step, about 3.00 MiB per step"
[[ -z $(ls -A "$TMPDIR") ]] || { echo "FAIL: left behind in TMPDIR: $(ls -A "$TMPDIR")"; fails=$((fails + 1)); }

check "--no-step-hook" 0 env PYTHONPATH="$fake" "$VRAMDOC" run --no-step-hook --out "$dir/b.jsonl" -- python3 "$dir/job.py" 3
if grep -q '"mark"' "$dir/b.jsonl"; then echo "FAIL: marks with --no-step-hook"; fails=$((fails + 1)); fi

check "--trace-python and the step hook together" 0 env PYTHONPATH="$fake" "$VRAMDOC" run --trace-python --out "$dir/c.jsonl" -- python3 "$dir/job.py" 3
contains "step marks" "$dir/c.jsonl" '"mark":"step 2"'
contains "and the Python lines" "$err" "3  job.py:10 <module>"

# Nothing happens in Python that never imports torch, nor in torch without CUDA; a vramdoc run
# inside another one marks each step once; the user's own sitecustomize still runs.
check "no torch" 0 "$VRAMDOC" run --out "$dir/d.jsonl" -- python3 -c 'print("plain")'
contains "plain Python runs" "$out" "plain"
check "torch without CUDA" 0 env PYTHONPATH="$fake" "$VRAMDOC" run --out "$dir/e.jsonl" -- python3 -c 'import torch; o = torch.optim.SGD([]); o.step(); o.step(); print("cpu")'
contains "torch ran" "$out" "cpu"
if grep -q '"mark"' "$dir/d.jsonl" "$dir/e.jsonl"; then echo "FAIL: marks without torch or CUDA"; fails=$((fails + 1)); fi
mkdir "$dir/site"
echo 'print("the user sitecustomize ran")' >"$dir/site/sitecustomize.py"
check "nested run, the user's sitecustomize" 0 env PYTHONPATH="$dir/site:$fake" "$VRAMDOC" run --out "$dir/f.jsonl" -- "$VRAMDOC" run --out "$dir/g.jsonl" -- python3 "$dir/job.py" 3
contains "the user's sitecustomize ran" "$out" "the user sitecustomize ran"
n=$(grep -c '"mark":"step' "$dir/g.jsonl")
[[ $n == 3 ]] || { echo "FAIL: $n step marks in the inner run, wanted 3"; fails=$((fails + 1)); }
# A job that marks its own steps (vramdoc.mark_step, or an integration's callback): the hook stands
# down in that process from the job's first own mark on (a callback claims the steps when it is
# made; mark_step() called after the first optimizer step leaves that one step marked by both).
cat >"$dir/manual.py" <<'PY'
import torch
import vramdoc

opt = torch.optim.SGD([])
kept = [torch.empty_cuda(1 << 20)]
for i in range(4):
    opt.step()
    vramdoc.mark_step()
PY
check "steps marked by the job itself" 0 env PYTHONPATH="$fake:$SRC/python" "$VRAMDOC" run --out "$dir/m.jsonl" -- python3 "$dir/manual.py"
n=$(grep -c '"mark":"step' "$dir/m.jsonl")
[[ $n == 5 ]] || { echo "FAIL: $n step marks, wanted 4 of the job's and the hook's first"; grep mark "$dir/m.jsonl"; fails=$((fails + 1)); }

# No folder for temporary files: the job runs without the step hook (and the marker file), and
# vramdoc says so.
check "TMPDIR missing" 0 env TMPDIR="$dir/none" "$VRAMDOC" run --out "$dir/h.jsonl" -- sh -c 'echo ran'
contains "the job ran" "$out" "^ran$"
contains "says why there are no step marks" "$err" "running without the marker file and the step hook: no folder for temporary files"
finish
