# The "I got an OOM, start here" page (issue 32, point 7): the README links it before any other
# page, and every vramdoc command it tells a newcomer to run exists with the options it uses
# (each --option is in that command's --help).
source "$(dirname "$0")/../cli_lib.sh"
page=$SRC/docs/oom.md
[[ -f $page ]] || { echo "FAIL: docs/oom.md is missing"; exit 1; }
first=$(grep -o 'docs/[a-z0-9_-]*\.md' "$SRC/README.md" | head -1)
[[ $first == docs/oom.md ]] || { echo "FAIL: the README's first page link is $first, not docs/oom.md"; fails=$((fails + 1)); }
for word in 泄漏 不足 "Raise the batch until it breaks" "Watch the memory first"; do
  grep -q "$word" "$page" || { echo "FAIL: docs/oom.md does not say '$word'"; fails=$((fails + 1)); }
done
commands=0
while IFS= read -r line; do
  sub=$(awk '{print $2}' <<<"$line")
  "$VRAMDOC" "$sub" --help >"$out" 2>&1 || { echo "FAIL: docs/oom.md runs 'vramdoc $sub', which has no --help: $line"; fails=$((fails + 1)); continue; }
  commands=$((commands + 1))
  options=$(sed "s/'[^']*'//g; s/\"[^\"]*\"//g" <<<"${line%% -- *}")  # not the job's own, quoted or after --
  for opt in $(grep -o -- '--[a-z][a-z0-9-]*' <<<"$options" | sort -u); do
    grep -q -- "$opt\b" "$out" || { echo "FAIL: docs/oom.md: 'vramdoc $sub' has no option $opt: $line"; fails=$((fails + 1)); }
  done
done < <(grep -E '^    vramdoc [a-z]+' "$page" | sed 's/^    //')
[[ $commands -ge 5 ]] || { echo "FAIL: only $commands commands found in docs/oom.md"; fails=$((fails + 1)); }
finish
