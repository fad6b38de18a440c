# The golden cases (tests/golden/README.md): golden COMMAND/CASE.EXT EXIT [live] -- COMMAND...
# Each runs in a fresh empty folder; $VRAMDOC, $SRC, $data (tests/data), $FAKES are set.

# No driver unless a case gives one: what a machine without NVIDIA's driver sees.
export VRAMDOC_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1 VRAMDOC_CUDA_LIBRARY=/nonexistent/libcuda.so.1
unset NO_COLOR PYTHONPATH

# The fake driver (tests/fakes): one or two H200s, their processes from a file.
fake_nvml() {  # fake_nvml CONFIG-LINES... -- COMMAND...: COMMAND with the fake NVML configured so
  local conf=$PWD/nvml.conf
  : >"$conf"
  while [[ $1 != -- ]]; do echo "$1" >>"$conf"; shift; done
  shift
  FAKE_NVML_CONFIG=$conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 "$@"
}
fake_drivers() {  # fake_drivers COMMAND...: two H200s in NVML and the CUDA driver
  printf 'devices=2\nbus=0x19\n' >cuda.conf
  FAKE_CUDA_CONFIG=$PWD/cuda.conf VRAMDOC_CUDA_LIBRARY=$FAKES/cuda_basic/libcuda.so.1 fake_nvml devices=2 bus=0x19 -- "$@"
}

# --- estimate
golden estimate/demo.txt 0 -- "$VRAMDOC" estimate
golden estimate/demo-color.txt 0 -- "$VRAMDOC" estimate --color always --model llama-2-7b
golden estimate/lora-4090.txt 0 -- "$VRAMDOC" estimate --model llama-2-7b --mode lora --gpu 'RTX 4090'
golden estimate/lora-4090.json 0 -- "$VRAMDOC" estimate --model llama-2-7b --mode lora --gpu 'RTX 4090' --json
golden estimate/lora-4090-color.txt 0 -- "$VRAMDOC" estimate --model llama-2-7b --mode lora --gpu 'RTX 4090' --color always
golden estimate/does-not-fit.txt 1 -- "$VRAMDOC" estimate --model llama-2-7b --gpu 'RTX 3060 12GB' --color always
golden estimate/config-max-batch.txt 0 -- "$VRAMDOC" estimate --config "$SRC/tests/cli/data/llama_h1024_l8.json" --gpu-memory 24GiB --max-batch --max-seq
golden estimate/config-max-batch.json 0 -- "$VRAMDOC" estimate --config "$SRC/tests/cli/data/llama_h1024_l8.json" --gpu-memory 24GiB --max-batch --max-seq --json
golden estimate/fsdp-8-gpus.txt 0 -- "$VRAMDOC" estimate --model llama-2-7b --gpus 8 --fsdp --gpu H100
golden estimate/infer-int4.txt 0 -- "$VRAMDOC" estimate --model llama-2-7b --mode infer --quant int4 --new-tokens 512 --gpu 'RTX 4090'
golden estimate/default-model.txt 0 -- "$VRAMDOC" estimate --gpu H200
golden estimate/local-gpu.txt 0 -- fake_nvml devices=1 -- "$VRAMDOC" estimate --model llama-2-7b --mode lora
golden estimate/list-models.txt 0 -- "$VRAMDOC" estimate --list-models
golden estimate/list-models.json 0 -- "$VRAMDOC" estimate --list-models --json
golden estimate/list-gpus.txt 0 -- "$VRAMDOC" estimate --list-gpus
golden estimate/list-gpus.json 0 -- "$VRAMDOC" estimate --list-gpus --json
golden estimate/unknown-gpu.txt 2 -- "$VRAMDOC" estimate --model llama-2-7b --gpu 'RTX 9999'
golden estimate/max-batch-without-card.txt 2 -- "$VRAMDOC" estimate --model llama-2-7b --max-batch
golden estimate/misspelt-option.txt 2 -- "$VRAMDOC" estimate --bach 4

# --- analyze: recorded timelines, snapshots, traces
for t in leak_tensor oom_insufficient stable trace_fragmentation trace_plateau_varseq h200_two_ranks_leak \
         h200_two_ranks_stable h200_step_hook_single issue15_eval_spike issue15_jax_prealloc issue15_slow_leak; do
  want=0
  case $t in leak_tensor | oom_insufficient | trace_fragmentation | h200_two_ranks_leak | issue15_jax_prealloc | issue15_slow_leak) want=1 ;; esac
  f=$(ls "$data/timelines/$t".json* | head -1)
  golden "analyze/$t.txt" $want -- "$VRAMDOC" analyze "$f"
  golden "analyze/$t.json" $want -- "$VRAMDOC" analyze "$f" --json
done
# issue 32: a version-1 timeline judged on its marks' allocated= figures (flat driver number, rising marks)
golden analyze/issue32-v1-marks-allocated.txt 1 -- "$VRAMDOC" analyze "$data/timelines/issue32_v1_marks_allocated.jsonl"
golden analyze/leak-color.txt 1 -- "$VRAMDOC" analyze "$data/timelines/leak_tensor.json" --color always
golden analyze/quantified-color.txt 1 -- "$VRAMDOC" analyze "$data/timelines/issue15_insufficient.jsonl" --color always \
  --config "$SRC/tests/cli/data/llama_h1024_l8.json" --batch 8 --seq 1024
golden analyze/quantified.txt 1 -- "$VRAMDOC" analyze "$data/timelines/issue15_insufficient.jsonl" \
  --config "$SRC/tests/cli/data/llama_h1024_l8.json" --batch 8 --seq 1024
trace_dir() {  # trace_dir TRACE.vdt... -- COMMAND...: the traces copied into ./trace as trace.N.vdt
  mkdir trace
  local n=4242
  while [[ $1 != -- ]]; do cp "$1" "trace/trace.$n.vdt"; n=$((n + 1)); shift; done
  shift
  "$@"
}
golden analyze/trace-dir.txt 1 -- trace_dir "$data/traces/h200_pytorch_leak.vdt" -- \
  "$VRAMDOC" analyze "$data/timelines/trace_leak_mid.json" --trace-dir trace
golden analyze/trace-dir-empty.txt 1 -- trace_dir -- "$VRAMDOC" analyze "$data/timelines/trace_leak_mid.json" --trace-dir trace
golden analyze/issue15-short-leak-trace.txt 1 -- "$VRAMDOC" analyze "$data/timelines/issue15_short_leak_trace.jsonl" \
  --trace-dir "$data/traces/issue15_short_leak"
golden analyze/issue15-short-leak-trace.json 1 -- "$VRAMDOC" analyze "$data/timelines/issue15_short_leak_trace.jsonl" \
  --trace-dir "$data/traces/issue15_short_leak" --json
for s in h200_leak h200_stable h200_oom_big h200_fragmented.after synthetic_leak; do
  want=0
  case $s in h200_leak | h200_oom_big | h200_fragmented.after | synthetic_leak) want=1 ;; esac
  golden "analyze/snapshot-$s.txt" $want -- "$VRAMDOC" analyze "$data/snapshots/$s.pickle"
done
golden analyze/snapshot-h200_oom_big.json 1 -- "$VRAMDOC" analyze "$data/snapshots/h200_oom_big.pickle" --json  # the others' JSON: a few 100 KB
golden analyze/two-snapshots.txt 2 -- "$VRAMDOC" analyze "$data/snapshots/h200_leak.pickle" "$data/snapshots/h200_stable.pickle"
golden analyze/not-a-timeline.txt 2 -- "$VRAMDOC" analyze "$SRC/tests/cli/data/llama_h1024_l8.json"

# --- trace
golden trace/pytorch-leak.txt 0 -- trace_dir "$data/traces/h200_pytorch_leak.vdt" -- "$VRAMDOC" trace trace
golden trace/planted-leak.txt 0 -- trace_dir "$data/traces/h200_planted_leak.vdt" "$data/traces/h200_planted_leak_killed.vdt" -- "$VRAMDOC" trace trace
golden trace/one-file.txt 0 -- "$VRAMDOC" trace "$data/traces/h200_planted_leak.vdt"  # issue 32: a file, not only a folder
golden trace/planted-leak.json 0 -- trace_dir "$data/traces/h200_planted_leak.vdt" -- "$VRAMDOC" trace trace --json
made_trace() { mkdir trace && python3 "$SRC/tests/cli/data/make_trace.py" trace/trace.77.vdt && "$VRAMDOC" trace trace "$@"; }
golden trace/make-trace-report.txt 0 -- made_trace
golden trace/make-trace-report.json 0 -- made_trace --json
golden trace/missing-dir.txt 2 -- "$VRAMDOC" trace nowhere
built_with "CUPTI tracer" || golden trace/env-without-tracer.txt 2 -- "$VRAMDOC" trace --env trace

# --- info
golden info/fake-driver.txt 0 -- fake_drivers "$VRAMDOC" info
golden info/fake-driver.json 0 -- fake_drivers "$VRAMDOC" info --json
golden info/no-driver.txt 0 -- "$VRAMDOC" info
golden info/device-out-of-range.txt 2 -- fake_drivers "$VRAMDOC" info --device 2

# --- watch --once
fake_gpus=(devices=2 used=21474836480 util_gpu=35 util_mem=92 processes=4194301:1073741824:30:60,4194303:2147483648)
golden watch/once.txt 0 -- fake_nvml "${fake_gpus[@]}" -- "$VRAMDOC" watch --once
golden watch/once.json 0 -- fake_nvml "${fake_gpus[@]}" -- "$VRAMDOC" watch --once --json
golden watch/once-color.txt 0 -- fake_nvml devices=1 used=140000000000 -- "$VRAMDOC" watch --once --color always
golden watch/once-device.txt 0 -- fake_nvml "${fake_gpus[@]}" -- "$VRAMDOC" watch --once --device 1
golden watch/no-driver.txt 2 -- "$VRAMDOC" watch --once

# --- bench
built_with "CUDA kernels" || golden bench/without-cuda.txt 2 -- "$VRAMDOC" bench --quick

# --- run: a fake job under the fake NVML (live: a real job and clock; the numbers are N). The jobs
# end in ways that decide the verdict whatever the timing: an OOM message, no GPU sampled. The OOM jobs
# run two steps: the trend after warm-up (at least the first step) then has one point whatever the
# timing, so the growth is n/a every time. With three steps a sample taken before a late-read step mark
# gave the first step a point under load, and a Theil-Sen growth (the suite's flake).
oom='torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.10 GiB is free.'
job='for i in 1 2; do echo "0 $$ $((i * 1073741824))" >>"$PROCS"; echo "step $i"; sleep 0.05; done; echo "$OOM" >&2; exit 1'
run_fake() { OOM=$oom PROCS=$PWD/procs fake_nvml devices=1 used=4194304000 "processes_file=$PWD/procs" -- "$@"; }
golden run/oom-job.txt 1 live -- run_fake "$VRAMDOC" run --interval 10ms --out t.jsonl --step-regex 'step ([0-9]+)' -- sh -c "$job"
# --json: the job's step lines on stderr (run reads both streams), so that stdout is the JSON alone.
job_json='for i in 1 2; do echo "0 $$ $((i * 1073741824))" >>"$PROCS"; echo "step $i" >&2; sleep 0.05; done; echo "$OOM" >&2; exit 1'
run_json() { run_fake "$VRAMDOC" run --interval 10ms --out t.jsonl --json --step-regex 'step ([0-9]+)' -- sh -c "$job_json" 2>/dev/null; }
golden run/oom-job.json 1 live -- run_json
golden run/no-driver.txt 0 live -- "$VRAMDOC" run --out t.jsonl -- sh -c 'echo hello'
golden run/no-driver-color.txt 0 live -- "$VRAMDOC" run --out t.jsonl --color always -- true
golden run/exit-status.txt 3 live -- "$VRAMDOC" run --out t.jsonl --no-report -- sh -c 'exit 3'
golden run/not-found.txt 127 -- "$VRAMDOC" run --out t.jsonl -- /nonexistent/program
golden run/bad-step-regex.txt 2 -- "$VRAMDOC" run --step-regex '(' -- true

# --- probe: the fake job of tests/cli/data/fake_job.sh (OOM above LIMIT)
probe_fake() {  # batch 5 holds 95 % of the fake H200, batch 6 runs out
  printf 'devices=1\nprocesses_file=%s\n' "$PWD/procs" >nvml.conf
  FAKE_NVML_CONFIG=$PWD/nvml.conf VRAMDOC_NVML_LIBRARY=$FAKES/nvml_full/libnvidia-ml.so.1 PROCS=$PWD/procs \
    LIMIT=5 PER_ITEM=$((150754820096 * 95 / 100 / 5)) "$VRAMDOC" probe --cmd "bash $SRC/tests/cli/data/fake_job.sh {batch}" --max 16 "$@"
}
golden probe/fake-job.txt 0 live -- probe_fake
golden probe/fake-job-color.txt 0 live -- probe_fake --color always
probe_json() { probe_fake --json 2>/dev/null; }  # the progress lines are the text case's
golden probe/fake-job.json 0 live -- probe_json
golden probe/no-placeholder.txt 2 -- "$VRAMDOC" probe --cmd 'true'
