# vramdoc estimate: every bad input is exit 2 with a message naming what and where; never a crash.
source "$(dirname "$0")/../cli_lib.sh"
cfg=$SRC/tests/data/estimator/configs/llama-160m.json
tmp=$(mktemp -d)

check "missing config file" 2 "$VRAMDOC" estimate --config "$tmp/nope.json"
contains "names the file" $err "nope.json"
echo '{"model_type": "llama", "hidden_size": 7' > "$tmp/broken.json"
check "malformed JSON" 2 "$VRAMDOC" estimate --config "$tmp/broken.json"
contains "malformed JSON named" $err "broken.json is not valid JSON"
sed 's/"hidden_size": 768/"hidden_size": "big"/' "$cfg" > "$tmp/text.json"
check "non-numeric size" 2 "$VRAMDOC" estimate --config "$tmp/text.json"
contains "field named" $err "field 'hidden_size' in $tmp/text.json is not a number"
sed 's/"num_hidden_layers": 12/"num_hidden_layers": -3/' "$cfg" > "$tmp/neg.json"
check "negative size" 2 "$VRAMDOC" estimate --config "$tmp/neg.json"
contains "negative named" $err "num_hidden_layers"
sed 's/"num_attention_heads": 12/"num_attention_heads": 11/; s/"num_key_value_heads": 12/"num_key_value_heads": 11/; /head_dim/d' "$cfg" > "$tmp/heads.json"
check "heads not dividing hidden" 2 "$VRAMDOC" estimate --config "$tmp/heads.json"
contains "heads named" $err "does not divide hidden_size"
head -c 3000 /dev/urandom > "$tmp/binary.json"
check "binary file" 2 "$VRAMDOC" estimate --config "$tmp/binary.json"
check "unknown precision" 2 "$VRAMDOC" estimate --config "$cfg" --precision fp8
contains "precision choices listed" $err "unknown precision 'fp8'"
check "unknown optimizer" 2 "$VRAMDOC" estimate --config "$cfg" --optimizer lion
contains "optimizer named" $err "unknown optimizer 'lion'"
check "zero batch" 2 "$VRAMDOC" estimate --config "$cfg" --batch 0
check "negative batch" 2 "$VRAMDOC" estimate --config "$cfg" --batch -4
check "absurd batch is a clear error" 2 "$VRAMDOC" estimate --config "$cfg" --batch 1000000000000 --seq 100000000
contains "absurd named" $err "absurdly large"
check "huge batch is a huge number" 0 "$VRAMDOC" estimate --config "$cfg" --batch 1000000000000 --seq 1 --json
check "unknown preset" 2 "$VRAMDOC" estimate --model gpt5
contains "presets listed" $err "llama-3-8b"
check "unknown gpu" 2 "$VRAMDOC" estimate --model gpt2 --gpu "Voodoo 5"
check "max-batch needs a target" 2 "$VRAMDOC" estimate --model gpt2 --max-batch
check "config and model together" 2 "$VRAMDOC" estimate --model gpt2 --config "$cfg"
check "lora target matching nothing" 2 "$VRAMDOC" estimate --config "$cfg" --mode lora --lora-targets c_attn
check "fsdp and zero together" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --fsdp --zero 3
contains "the conflict is named" $err "exclude each other"
check "gpus not whole TP groups" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 6 --tp 4
contains "gpus and tp named" $err "multiple of --tp"
check "unknown offload" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --zero 2 --offload disk
check "offload under DDP" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --offload all
check "fsdp version 3" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --fsdp --fsdp-version 3
check "bucket beyond 2^64" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --zero 2 --zero-reduce-bucket 5e99
check "bucket of garbage" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --zero 2 --zero-reduce-bucket 5e
check "zero nccl buffer" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --nccl-buffsize 0
check "rank beyond the GPUs" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --fsdp --fsdp-version 1 --rank 2
contains "rank range named" $err "from 0 to --gpus - 1 (1)"
check "negative rank" 2 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --rank -1
check "rank of a two-GPU FSDP1 job" 0 "$VRAMDOC" estimate --config "$cfg" --gpus 2 --fsdp --fsdp-version 1 --rank 1
echo '{"model_type":"bert","hidden_size":768,"num_hidden_layers":12,"num_attention_heads":12,"vocab_size":30522,"intermediate_size":3072}' > "$tmp/bert.json"
check "encoder-only model (issue 28: estimated, was refused)" 0 "$VRAMDOC" estimate --config "$tmp/bert.json" --task seq-cls
check "a task the model cannot run" 2 "$VRAMDOC" estimate --config "$tmp/bert.json" --task image-cls
contains "tasks named" $err "it can run: seq-cls, token-cls, mlm"
check "unknown task" 2 "$VRAMDOC" estimate --config "$tmp/bert.json" --task summarise
check "zero image size" 2 "$VRAMDOC" estimate --config "$tmp/bert.json" --image-size 0
check "quant in training" 2 "$VRAMDOC" estimate --config "$cfg" --quant int4
contains "quant is for inference" $err "is for inference"
check "unknown quant" 2 "$VRAMDOC" estimate --config "$cfg" --mode infer --quant int3
check "new tokens in training" 2 "$VRAMDOC" estimate --config "$cfg" --new-tokens 8
sed 's/"model_type": "llama"/"model_type": "frobnet"/' "$cfg" > "$tmp/unknown.json"
check "unknown family is estimated" 0 "$VRAMDOC" estimate --config "$tmp/unknown.json"
contains "its warning on stderr" $err "warning: unknown model_type 'frobnet'"
if grep -q "frobnet'" "$out"; then echo "FAIL: the warning is not on stdout"; fails=$((fails + 1)); fi
rm -rf "$tmp"
finish
