# vramdoc estimate end to end: the judged JSON contract, the default demo, presets, fit search.
source "$(dirname "$0")/../cli_lib.sh"
cfg=$SRC/tests/data/estimator/configs/llama-160m.json

check "contract invocation" 0 "$VRAMDOC" estimate --config "$cfg" --mode train --precision amp-bf16 --batch 8 \
  --seq 1024 --attention sdpa --json --optimizer adamw
python3 - "$out" <<'PY' || { echo "FAIL: JSON contract"; fails=$((fails + 1)); }
import json, sys
j = json.load(open(sys.argv[1]))
for k in ("peak_allocated_bytes", "peak_reserved_bytes", "process_bytes"):
    assert isinstance(j[k], int) and j[k] > 0, k
assert j["peak_allocated_bytes"] <= j["peak_reserved_bytes"] <= j["process_bytes"]
assert isinstance(j["breakdown"], dict) and all(isinstance(v, int) for v in j["breakdown"].values())
assert j["peak_phase"]
truth = 8928 * 2**20 + 64 * 2**20  # measured: peak_allocated (MiB) + warm cuBLAS workspace
assert abs(j["peak_allocated_bytes"] - truth) / truth < 0.05, j["peak_allocated_bytes"]
PY
check "lora with targets" 0 "$VRAMDOC" estimate --config "$cfg" --mode lora --precision bf16 --batch 2 --seq 512 \
  --attention sdpa --json --lora-rank 8 --lora-alpha 16 --lora-targets q_proj,k_proj,v_proj,o_proj
contains "lora JSON" $out '"mode":"lora"'
check "infer from a model directory" 0 "$VRAMDOC" estimate --config "$SRC/tests/data/estimator/configs/llama-160m.json" --mode infer --json
# The no-argument demo and --list-models, whole: tests/golden/estimate/demo.txt, list-models.*.
check "text output (does not fit: exit 1)" 1 "$VRAMDOC" estimate --model llama-3-8b --mode lora --batch 4 --seq 2048 --gpu "RTX 4090" --max-batch
contains "text marks the biggest term" $out "<- biggest"
contains "text says whether it fits" $out "FIT"
contains "text gives the largest batch" $out "largest batch that fits"
contains "text gives remedies, each estimated" $out "for a larger batch on RTX 4090, cheapest first (each estimated for this job):"
contains "checkpointing's batch" $out "^  --grad-checkpointing .* batch [0-9]* ([0-9.]* of 23.99 GiB)"
check "--max-seq with --gpu-memory" 0 "$VRAMDOC" estimate --model mistral-7b --mode infer --gpu-memory 24GiB --max-seq --json
contains "max_seq in JSON" $out '"max_seq"'
check "multi-GPU" 0 "$VRAMDOC" estimate --model llama-3-70b --gpus 8 --fsdp --grad-checkpointing --json
contains "FSDP2 named in JSON" $out '"data_parallel":"fsdp2"'
check "per-rank table" 0 "$VRAMDOC" estimate --model llama-3-8b --gpus 2 --fsdp --precision amp-bf16
contains "the table says what is sharded" $out "1/2 (FSDP2)"
contains "NCCL is in the process" $out "NCCL communicators"
check "ZeRO-3 with DeepSpeed's bucket sizes" 0 "$VRAMDOC" estimate --model llama-3-8b --gpus 8 --zero 3 \
  --zero-reduce-bucket 5e7 --zero-max-live 1e8 --json
contains "ZeRO-3 named" $out '"data_parallel":"zero3"'
check "tensor and data parallel" 0 "$VRAMDOC" estimate --model llama-3-8b --gpus 8 --tp 2 --ddp-bucket-view --json
contains "4 data-parallel ranks" $out '"data_parallel_ranks":4'
check "--max-batch per rank" 0 "$VRAMDOC" estimate --model llama-3-8b --gpus 8 --fsdp --gpu H100 --max-batch --json
contains "max_batch on several GPUs" $out '"max_batch"'

# A model directory: config.json plus a safetensors header that disagrees with it.
dir=$(mktemp -d)
cp "$cfg" "$dir/config.json"
hdr='{"w":{"dtype":"BF16","shape":[10,10],"data_offsets":[0,200]}}'
{ printf "\\x$(printf %02x ${#hdr})\\x00\\x00\\x00\\x00\\x00\\x00\\x00"; printf '%s' "$hdr"; } > "$dir/model.safetensors"
check "model directory" 0 "$VRAMDOC" estimate --config "$dir" --json
contains "safetensors headers are read" $out "safetensors headers hold 100"
printf 'garbage' > "$dir/model.safetensors"
check "bad safetensors header is exit 2" 2 "$VRAMDOC" estimate --config "$dir"
contains "the bad file is named" $err "model.safetensors"
rm -rf "$dir"
finish
