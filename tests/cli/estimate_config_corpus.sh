# Issue 28: no config that transformers can build is refused. Every config.json of the corpus
# (tests/data/estimator/config-corpus: CNNs, decoders, encoders, encoder-decoders, vision and speech models with
# transformers 5.x's field names) is estimated by `vramdoc estimate --config`, training and inference, exit 0;
# a model type no family reads as its own says so on stderr ("unknown model_type") with its margin.
source "$(dirname "$0")/../cli_lib.sh"
for f in "$SRC"/tests/data/estimator/config-corpus/*.json; do
  name=$(basename "$f" .json)
  for mode in train infer; do
    check "$name --mode $mode" 0 "$VRAMDOC" estimate --config "$f" --mode $mode --batch 2 --seq 128
    contains "$name --mode $mode: the peak" "$out" "peak allocated"
    if grep -q "unknown model_type" "$err"; then contains "$name: the stand-in's margin" "$err" "expect +-30 %"; fi
  done
done
finish
