#!/usr/bin/env bash
# The benchmark of docs/streaming.md: analyze on synthetic 3-day-class timelines (values changing
# every tick, a step mark every 50 samples; scripts/gen_long_timeline.py), wall, CPU and peak RSS
# from /usr/bin/time -v, one row per size.
#   scripts/bench_streaming.sh build/vramdoc /tmp/streambench [1000000 4000000 13000000]
set -eu
vramdoc=$1 dir=$2
shift 2
[[ $# -gt 0 ]] && sizes=("$@") || sizes=(1000000 4000000 13000000)
mkdir -p "$dir"
echo "| samples | file | verdict | wall | CPU (user + sys) | peak RSS |"
echo "|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
  f=$dir/leak_$n.jsonl
  [[ -f $f ]] || python3 "$(dirname "$0")/gen_long_timeline.py" --samples "$n" --mark-every 50 --kind leak --out "$f"
  /usr/bin/time -v "$vramdoc" analyze "$f" --json >"$dir/out_$n.json" 2>"$dir/time_$n.txt" || true
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time_$n.txt")
  user=$(sed -n 's/.*User time (seconds): //p' "$dir/time_$n.txt")
  sys=$(sed -n 's/.*System time (seconds): //p' "$dir/time_$n.txt")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time_$n.txt")
  verdict=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["verdict"])' "$dir/out_$n.json" 2>/dev/null || echo error)
  size=$(( $(stat -c %s "$f") / 1000000 ))
  echo "| $n | $size MB | $verdict | $wall | $(python3 -c "print(f'{$user + $sys:.1f} s')") | $((rss / 1024)) MB |"
done
