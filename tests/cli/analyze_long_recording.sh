# A days-long job (issue 31): analyze streams a long recording into a fixed size. 1,000,000 samples
# (5.6 h at 20 ms, values changing every tick, a step mark every 50) analysed under a 1 GiB
# address-space limit: before streaming the 20,000 step floors' Theil-Sen slopes alone took
# 1.6 GB, and every sample was held. The verdict, the window (--since / --until) and the HTML
# report's size (bounded whatever the recording's length).
source "$(dirname "$0")/../cli_lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
python3 "$SRC/scripts/gen_long_timeline.py" --samples 1000000 --mark-every 50 --kind leak --leak-bytes 1048576 --out "$tmp/long.jsonl"
verdict() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$out"; }

check "analyze 1M samples within 1 GiB" 1 bash -c 'ulimit -v 1048576; exec "$0" analyze "$1" --json --html "$2"' \
  "$VRAMDOC" "$tmp/long.jsonl" "$tmp/long.html"
[[ $(verdict) == leak ]] || { echo "FAIL: verdict $(verdict), wanted leak"; fails=$((fails + 1)); }
contains "all samples counted" "$out" '"samples": 1000000'
size=$(stat -c %s "$tmp/long.html")
[[ $size -lt 1000000 ]] || { echo "FAIL: the HTML report is $size bytes"; fails=$((fails + 1)); }

# A window: the first hour alone (180,001 samples), the last 0.55 h (100,000); each a leak of 1 MiB a step.
check "analyze --until 1h" 1 "$VRAMDOC" analyze "$tmp/long.jsonl" --until 1h --json
contains "the window's samples" "$out" '"samples": 180001'
check "analyze --since 5h" 1 "$VRAMDOC" analyze "$tmp/long.jsonl" --since 5h --json
contains "the window's samples" "$out" '"samples": 100000'
check "analyze --since after --until" 2 "$VRAMDOC" analyze "$tmp/long.jsonl" --since 2h --until 1h
contains "an empty window" "$err" "is not before --until"
check "analyze --since nonsense" 2 "$VRAMDOC" analyze "$tmp/long.jsonl" --since soon
contains "the option named" "$err" "--since"
finish
