# vramdoc estimate per rank against PyTorch on two GPUs: DDP, FSDP2 and FSDP1 (mixed precision) and
# tensor-parallel training of llama-160m, each a fresh torchrun launch of
# scripts/gpu/measure_multi_gpu.py; per rank, allocated must be within 3 % and the driver's number
# within 5 % (issue 18's bar). About 2 minutes; needs two NVIDIA GPUs, PyTorch and transformers.
# Skipped otherwise.
source "$(dirname "$0")/../cli_lib.sh"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
if [[ -n "${CUDA_VISIBLE_DEVICES:-}" ]]; then gpus=$(tr ',' '\n' <<< "$CUDA_VISIBLE_DEVICES" | grep -c .); fi
if (( gpus < 2 )); then echo "needs two NVIDIA GPUs (found $gpus): skipped"; exit 77; fi
if ! python3 -c "import torch, transformers; assert torch.cuda.device_count() >= 2" 2>/dev/null; then
  echo "no PyTorch with two CUDA devices, or no transformers: skipped"; exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$out" "$err"' EXIT
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 OMP_NUM_THREADS=4 HF_HUB_OFFLINE=1
i=0
for spec in ddp/llama-160m/amp/8x1024 fsdp2/llama-160m/mp/8x1024 fsdp1/llama-160m/mp/8x1024 tp/llama-160m/bf16/8x1024; do
  i=$((i + 1))
  echo "== $spec"
  timeout -k 10 150 python3 -m torch.distributed.run --standalone --nproc-per-node 2 \
    "$SRC/scripts/gpu/measure_multi_gpu.py" worker "$tmp" "case$i" "$spec" > "$tmp/case$i.log" 2>&1 \
    || { echo "FAIL: $spec did not run"; tail -20 "$tmp/case$i.log"; fails=$((fails + 1)); }
done
# Known miss (docs/estimator.md, "DDP's bucket rebuild"): DDP rebuilds its buckets at the second step
# and a rank may still hold the old ones at the peak (a race with NCCL's watchdog: 10 of 58 fresh
# measured ranks; this job held 9.79 instead of 9.29 GiB on 6 of its 22 ranks over eleven runs), so DDP is
# allowed the buckets' size (8 % allocated, 10 % process); estimate says so in its warning.
check "estimates per rank within 3 % allocated, 5 % process" 0 python3 "$SRC/scripts/eval_multi_gpu.py" "$tmp" \
  --vramdoc "$VRAMDOC" --max-error 3,5 --known-miss ddp/llama-160m/amp/8x1024=8,10
cat "$out"
finish
