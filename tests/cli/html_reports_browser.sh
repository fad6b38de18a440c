# Every kind of HTML report (leak, insufficient, two ranks, snapshot, trace, probe) laid out by a
# real browser at 1400 and 400 px (issue 32, point 2): headless Chromium loads a copy of each page
# with a small check appended, and the page must not scroll sideways, every chart shown must fit
# the window and draw data (its elements of class "mark"), its text must stay readable, and each
# kind must show what its verdict rests on (a leak: the step-end bytes, the fit, the capacity, the
# projected OOM or a note saying where it is). Skipped (77) where Chromium is not installed
# (scripts/deps.sh --test installs it). VRAMDOC_SCREENSHOTS=DIR keeps a PNG of each page there.
source "$(dirname "$0")/../cli_lib.sh"
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then echo "SKIP: chromium not installed (scripts/deps.sh --test installs it)"; exit 77; fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
data=$SRC/tests/data

check "leak report" 1 "$VRAMDOC" analyze "$data/timelines/leak_tensor.json" --html "$tmp/leak.html"
check "insufficient report" 1 "$VRAMDOC" analyze "$data/timelines/issue15_insufficient.jsonl" --html "$tmp/insufficient.html"
check "two-rank report" 1 "$VRAMDOC" analyze "$data/timelines/h200_two_ranks_leak.jsonl" --html "$tmp/ranks.html"
check "snapshot report" 1 "$VRAMDOC" analyze "$data/snapshots/h200_leak.pickle" --html "$tmp/snapshot.html"
check "trace page" 0 "$VRAMDOC" trace "$data/traces/issue15_short_leak" --html "$tmp/trace.html"
# probe on the fake job with the fake NVML's process file (a trial without memory readings recommends
# nothing, issue 30): batch 5 holds 95 % of the fake H200, batch 6 runs out, as tests/golden/cases.sh's probe case.
printf 'devices=1\nprocesses_file=%s\n' "$tmp/procs" >"$tmp/nvml.conf"
FAKE_NVML_CONFIG=$tmp/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 PROCS=$tmp/procs \
  LIMIT=5 PER_ITEM=$((150754820096 * 95 / 100 / 5)) check "probe page" 0 "$VRAMDOC" probe \
  --cmd "bash $SRC/tests/cli/data/fake_job.sh {batch}" --max 16 --html "$tmp/probe.html"

# The check, appended to a copy of the page (the reports themselves carry no script): one JSON line.
cat >"$tmp/check.js" <<'JS'
(function () {
  const shown = e => { const r = e.getBoundingClientRect(); return getComputedStyle(e).display !== 'none' && r.width > 0 && r.height > 0; };
  const svgs = [...document.querySelectorAll('svg')].filter(s => !s.parentElement.closest('svg') && shown(s));
  const res = {width: innerWidth, scroll: document.documentElement.scrollWidth, charts: svgs.length, empty: [], cut: [], small: [], count: {}};
  for (const s of svgs) {
    const name = s.id || s.getAttribute('class');
    const marks = [...s.querySelectorAll('.mark')].filter(m => { const b = m.getBBox(); return b.width > 0 || b.height > 0; });
    if (!marks.length) res.empty.push(name);
    const r = s.getBoundingClientRect();
    if (r.left < -0.5 || r.right > innerWidth + 0.5) res.cut.push(name);
    for (const t of s.querySelectorAll('text')) {
      const h = t.getBoundingClientRect().height;
      if (h > 0 && h < 8) { res.small.push(name + ': ' + t.textContent + ' ' + h.toFixed(1) + 'px'); break; }
    }
  }
  const outer = e => { let s = e.closest('svg'); while (s && s.parentElement && s.parentElement.closest('svg')) s = s.parentElement.closest('svg'); return s || e; };
  for (const c of ['basis', 'fit', 'capacity', 'projected-oom', 'warmup', 'oom', 'band', 'traced', 'trials-ok', 'trials-oom', 'segments'])
    res.count[c] = [...document.getElementsByClassName(c)].filter(e => shown(outer(e))).length;
  res.projection_note = [...document.querySelectorAll('.notes')].some(n => shown(n) && /run out of memory at/.test(n.textContent));
  document.body.insertAdjacentHTML('beforeend', '<pre id="vramdoc-check">' + JSON.stringify(res) + '</pre>');
})();
JS

look() {  # look NAME WIDTH: the check's JSON line on stdout (and a screenshot with VRAMDOC_SCREENSHOTS)
  # Headless Chromium's window is at least 500 px wide: the page is laid out in an iframe WIDTH px
  # wide (its own viewport, media queries included), and the outer page copies the check's result.
  local checked=$tmp/$1-checked.html outer=$tmp/$1-$2.html
  { sed 's#</body></html>##' "$tmp/$1.html"; printf '<script>\n'; cat "$tmp/check.js"; printf '</script></body></html>\n'; } >"$checked"
  cat >"$outer" <<HTML
<!DOCTYPE html><html><body style="margin:0"><iframe id="page" src="$1-checked.html" style="width:$2px;height:4000px;border:0"></iframe>
<script>document.getElementById('page').onload = () => { const d = document.getElementById('page').contentDocument;
const pre = document.createElement('pre'); pre.id = 'vramdoc-result';
pre.textContent = d && d.getElementById('vramdoc-check') ? d.getElementById('vramdoc-check').textContent : ''; document.body.append(pre); };</script></body></html>
HTML
  local flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
               --disable-component-update --disable-sync --allow-file-access-from-files --user-data-dir="$tmp/profile-$1-$2")
  timeout 120 "$browser" "${flags[@]}" --window-size=1500,1000 --dump-dom "file://$outer" 2>/dev/null |
    sed -n 's#.*<pre id="vramdoc-result">\(.*\)</pre>.*#\1#p'
  if [[ -n ${VRAMDOC_SCREENSHOTS:-} ]]; then
    mkdir -p "$VRAMDOC_SCREENSHOTS"
    timeout 120 "$browser" "${flags[@]}" --window-size="$(($2 > 500 ? $2 : 500)),3000" --screenshot="$VRAMDOC_SCREENSHOTS/$1-$2.png" "file://$outer" >/dev/null 2>&1
  fi
}

judge() {  # judge NAME WIDTH JSON: the rules for every page, and what each kind must show
  python3 - "$@" <<'PY'
import json, sys
name, width, line = sys.argv[1], int(sys.argv[2]), sys.argv[3]
if not line:
    print(f"FAIL: {name} at {width} px: the browser gave no result"); sys.exit(1)
r = json.loads(line.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"'))
bad = []
if r["scroll"] > r["width"]: bad.append(f"the page is {r['scroll']} px wide in a {r['width']} px window")
if r["charts"] == 0: bad.append("no chart shown")
for key, what in (("empty", "draws no data"), ("cut", "is cut by the window"), ("small", "has text under 8 px")):
    for s in r[key]: bad.append(f"chart {s} {what}")
c = r["count"]
need = {
    "leak": ["basis", "fit", "warmup"],
    "insufficient": ["capacity", "oom"],
    "ranks": ["basis", "fit"],
    "snapshot": ["band", "segments"],
    "trace": ["traced"],
    "probe": ["trials-ok", "trials-oom"],
}[name]
for k in need:
    if not c.get(k): bad.append(f"shows no '{k}'")
if name == "leak" and not (c.get("projected-oom") and c.get("capacity")) and not r["projection_note"]:
    bad.append("a leak must show the capacity and the projected OOM, or say where the OOM would be")
if name == "ranks" and r["charts"] < 2: bad.append(f"{r['charts']} chart(s) for two ranks")
for b in bad: print(f"FAIL: {name} at {width} px: {b}")
sys.exit(1 if bad else 0)
PY
}

for name in leak insufficient ranks snapshot trace probe; do
  for width in 1400 400; do
    judge "$name" "$width" "$(look "$name" "$width")" || fails=$((fails + 1))
  done
done
finish
