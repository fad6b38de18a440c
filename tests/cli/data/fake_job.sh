# A stand-in training job for probe tests: prints "step N" lines, and "runs out of memory" (prints
# PyTorch's message, exits 1) when its batch is above $LIMIT. `bad` as the batch: a usage error.
# With $PROCS (the fake NVML's process file, tests/fakes) it holds $PER_ITEM bytes per batch item
# (default 1 GiB) from its first step on, so the driver sees its memory settle.
batch=$1 steps=${2:-3}
case $batch in *[!0-9]*|'') echo "error: argument --batch-size: invalid int value: '$batch'" >&2; exit 2 ;; esac
for ((i = 0; i < steps; i++)); do
  if [[ -n $PROCS ]] && ((i == 0)); then
    echo "0 $$ $((batch * ${PER_ITEM:-1073741824}))" >>"$PROCS"
    sleep 0.05  # longer than the sampling interval: the driver's reading is seen, OOM or not
  fi
  if ((batch > LIMIT)); then
    echo "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.10 GiB is free." >&2
    exit 1
  fi
  [[ -n $PROCS ]] && sleep 0.03  # a step longer than the sampling interval: each step end has its own reading
  echo "step $i loss 1.0"
done
