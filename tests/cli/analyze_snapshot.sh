#!/usr/bin/env bash
# timeline by its first bytes whatever its name: the verdict, the leaking line, JSON with a
# schema and integer bytes, the HTML page with its charts; with a timeline, one report (the
# snapshot a section of it, with its own verdict); bad pickles give exit 2 naming the file.
source "$SRC/tests/cli_lib.sh"
work=$(mktemp -d)
trap 'rm -rf "$work" "$out" "$err"' EXIT
snap=$SRC/tests/data/snapshots/h200_leak_python.pickle
line=$(python3 -c "import json; print(json.load(open('$SRC/tests/data/snapshots/h200_leak_python.meta.json'))['leak_line'])")
cp "$snap" "$work/no-extension"

check "text" 1 "$VRAMDOC" analyze "$work/no-extension"
contains "text: the format" "$out" "PyTorch memory snapshot"
contains "text: verdict" "$out" "verdict: leak"
contains "text: the leaking line, growing" "$out" "100.00 MiB *100 .* record_snapshots.py:$line leak_loop"
contains "text: segments" "$out" "segments at the dump"

check "json" 1 "$VRAMDOC" analyze "$snap" --json
python3 - "$out" "$line" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "leak", j["verdict"]  # the job report's diagnosis, as for a timeline
s = j["snapshot"]
assert s["schema"] == "vramdoc.snapshot/1", s["schema"]
g = s["growing"][0]
assert g["where"] == "record_snapshots.py:%s leak_loop" % sys.argv[2] and g["count"] == 100, g
assert isinstance(s["alive_bytes"], int) and isinstance(s["fragmentation"]["reserved_bytes"], int)
assert len(s["chart"]["t_s"]) == len(s["chart"]["bands"][0]["bytes"])
PY

check "html" 1 "$VRAMDOC" analyze "$snap" --html "$work/r.html"
contains "html: verdict" "$work/r.html" "data-verdict='leak'"
contains "html: stacked chart" "$work/r.html" '<figure class="chart" id="snapshot-stacked">'
contains "html: segment map" "$work/r.html" "class='segments chart-wide'"
contains "html: the line" "$work/r.html" "record_snapshots.py:$line leak_loop"
if [[ $(grep -c "<polygon" "$work/r.html") -gt 20 ]]; then echo "FAIL: html: more polygons than bands"; fails=$((fails + 1)); fi

check "an OOM snapshot" 1 "$VRAMDOC" analyze "$SRC/tests/data/snapshots/h200_oom_big.pickle"
contains "oom: verdict" "$out" "verdict: insufficient"
contains "oom: the request" "$out" "asked for 140.80 GiB"

check "a stable snapshot" 0 "$VRAMDOC" analyze "$SRC/tests/data/snapshots/h200_stable.pickle"
contains "stable: verdict" "$out" "verdict: stable"

head -c 5000 "$snap" >"$work/cut.pickle"
check "truncated" 2 "$VRAMDOC" analyze "$work/cut.pickle"
contains "truncated: file named" "$err" "cut.pickle: at byte"
contains "truncated: said" "$err" "truncated"
python3 -c "import collections, pickle, sys; sys.stdout.buffer.write(pickle.dumps(collections.OrderedDict(a=1), protocol=2))" >"$work/code.pickle"
check "code in a pickle" 2 "$VRAMDOC" analyze "$work/code.pickle"
contains "code: refused" "$err" "would import or call Python code"
python3 -c "import pickle, sys; sys.stdout.buffer.write(pickle.dumps([1, 2, 3]))" >"$work/list.pickle"
check "not a snapshot" 2 "$VRAMDOC" analyze "$work/list.pickle"
contains "not a snapshot: said" "$err" "not a PyTorch memory snapshot"
check "--trace-dir with a snapshot" 2 "$VRAMDOC" analyze "$snap" --trace-dir "$work"
check "a job with a snapshot" 2 "$VRAMDOC" analyze "$snap" --model llama-2-7b --batch 1 --seq 128
contains "a job with a snapshot: said" "$err" "go with a timeline"

# A timeline and a snapshot: one report, the timeline's verdict first, the snapshot a section of it.
tl=$SRC/tests/data/timelines/leak_tensor.json
check "timeline + snapshot" 1 "$VRAMDOC" analyze "$tl" "$snap"
contains "both: the timeline's diagnosis" "$out" "diagnosis of leak_tensor"
contains "both: the snapshot's section" "$out" "PyTorch memory snapshot: $snap"
contains "both: the snapshot's own verdict" "$out" "its allocator history, judged alone: leak"
contains "both: the leaking line" "$out" "record_snapshots.py:$line leak_loop"
check "timeline + snapshot, json" 1 "$VRAMDOC" analyze "$snap" "$tl" --json
python3 - "$out" <<'PY' || fails=$((fails + 1))
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verdict"] == "leak" and j["evidence"]["steps"] == 120, (j["verdict"], j["evidence"]["steps"])  # the timeline's marked steps
assert j["snapshot"]["own_verdict"]["verdict"] == "leak", j["snapshot"].get("own_verdict")
PY
check "timeline + snapshot, html" 1 "$VRAMDOC" analyze "$tl" "$snap" --html "$work/both.html"
contains "both html: the section" "$work/both.html" "<section id='snapshot'>"
contains "both html: its own verdict" "$work/both.html" "class='own-verdict' data-verdict='leak'"
check "two snapshots" 2 "$VRAMDOC" analyze "$snap" "$work/no-extension"
contains "two snapshots: said" "$err" "one memory snapshot per report"
finish
