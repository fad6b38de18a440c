# What a newcomer runs first (issue 32, points 5 and 7), compared whole with golden files in
# tests/golden/estimate/ (VRAMDOC_REGENERATE=1 rewrites them from this build): the quick start's
# table, readable at 100 columns; an ambiguous --gpu that asks which card; --model deepseek-v3 as
# the README promises; max_batch null when nothing fits.
source "$(dirname "$0")/../cli_lib.sh"
golden=$SRC/tests/golden/estimate

same() {  # same "description" FILE GOLDEN-NAME: FILE equals the golden file (or rewrites it)
  if [[ -n ${VRAMDOC_REGENERATE:-} ]]; then cp "$2" "$golden/$3"; return; fi
  if ! diff -u "$golden/$3" "$2"; then echo "FAIL: $1 differs from tests/golden/estimate/$3 (VRAMDOC_REGENERATE=1 rewrites it)"; fails=$((fails + 1)); fi
}

check "the quick start's estimate" 0 env NO_COLOR=1 "$VRAMDOC" estimate
same "the quick start's table" "$out" quick_start.txt
wide=$(awk 'length($0) > 100' "$out")
[[ -z $wide ]] || { echo "FAIL: quick start lines over 100 columns:"; echo "$wide"; fails=$((fails + 1)); }

# Regression: --gpu A100 silently took the 80 GB card.
check "--gpu A100 asks which" 2 "$VRAMDOC" estimate --model gpt2 --gpu A100
same "the ambiguous card's message" "$err" gpu_ambiguous.txt
check "--gpu 'A100 40GB' is one card" 0 "$VRAMDOC" estimate --model gpt2 --gpu "A100 40GB" --json
contains "the 40 GB card" "$out" '"name":"A100 40GB SXM"'

# Regression: the README lists DeepSeek V2/V3, but --model deepseek-v3 was unknown.
check "--model deepseek-v3" 0 env NO_COLOR=1 "$VRAMDOC" estimate --model deepseek-v3 --mode infer --batch 1 --seq 1024
same "deepseek-v3 inference" "$out" deepseek_v3_infer.txt
check "--model deepseek-v2-lite" 0 "$VRAMDOC" estimate --model deepseek-v2-lite --mode lora --json
check "both in --list-models" 0 "$VRAMDOC" estimate --list-models
contains "deepseek-v3 listed" "$out" "^deepseek-v3 "
contains "deepseek-v2-lite listed" "$out" "^deepseek-v2-lite "

# Regression: "max_batch": {"value": 0} when nothing fits; unknown is null.
check "nothing fits" 1 "$VRAMDOC" estimate --model llama-3-70b --mode train --gpu "RTX 3060 12GB" --max-batch --json
contains "max_batch null" "$out" '"max_batch":null'
finish
