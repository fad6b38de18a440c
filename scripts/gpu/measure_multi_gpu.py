#!/usr/bin/env python3
"""Per-rank GPU memory of data-parallel, sharded and tensor-parallel training on several GPUs (one
process per visible GPU, or MEASURE_NPROC; measured so far on two).

Ground truth for `vramdoc estimate --gpus N --ddp/--fsdp/--zero/--tp`: Hugging Face causal LMs built
from configs with random weights, three AdamW steps per case, and per rank what PyTorch's caching
allocator saw (max_memory_allocated / max_memory_reserved per phase) and what the driver charged
the process (NVML's nvmlDeviceGetComputeRunningProcesses, matched by pid).

Three ways to run it:
  python3 measure_multi_gpu.py plan OUTDIR [--deadline SEC] [--only NAME,...]
      runs every launch of PLAN below with torchrun (2 processes, one GPU each), one launch at a
      time, each under a timeout; a launch that fails or hangs is recorded and the next one runs.
  python3 -m torch.distributed.run --standalone --nproc-per-node 2 measure_multi_gpu.py \
      worker OUTDIR NAME SPEC [SPEC ...]
      one launch by hand (what `plan` runs).
  python3 measure_multi_gpu.py fresh OUTDIR [--parallel K] [--deadline SEC] [--set fresh|new|many] [SPEC ...]
      every SPEC (default: FRESH below) as the only case of its own launch, so every number is a
      fresh process's (what one job sees); K launches at a time (default 3; they share the GPUs,
      which changes no per-process number; DDP's rebuild race is timing-dependent: run ddprace
      specs with `plan`, alone). Launch names f00, f01, ... (launches.jsonl maps them to specs).
  python3 measure_multi_gpu.py summary OUTDIR
      a table of what was measured (MiB per rank).

A SPEC is STRATEGY/MODEL/PRECISION/BATCHxSEQ[/OPTION,OPTION...] or `nccl`:
  STRATEGY  ddp | fsdp2 | fsdp1 | tp
  MODEL     a key of MODELS
  PRECISION bf16 (weights, grads, state bf16) | amp (fp32 weights, torch.autocast bf16) |
            mp (fp32 weights, FSDP mixed precision: bf16 params for compute, fp32 reduce)
  OPTIONS   ckpt (HF gradient checkpointing, non-reentrant)  view (DDP gradient_as_bucket_view)
            bucket=MB (DDP bucket_cap_mb)  static (DDP static_graph)  reshard=0|1 (FSDP2
            reshard_after_forward, default 1)  offload (FSDP2 CPUOffloadPolicy)
            shard=full|grad_op|hybrid|no (FSDP1 sharding strategy, default full)  foreach=0 (AdamW loop)
            hsdp=R (FSDP2 hybrid sharding: R replicas, each sharded over WORLD/R ranks)
            dp=D (tensor parallel in groups of WORLD/D ranks, FSDP2 over the D groups: TP x DP)
            lora (DDP over PEFT LoRA r=16, alpha 32, q/k/v/o_proj, no dropout, as the one-GPU set)
  nccl      no model: the CUDA context, cuBLAS, process-group init and one collective of each kind,
            the driver's number after each stage (the NCCL-only footprint), then a second
            communicator and a one-rank communicator (what FSDP1 HYBRID_SHARD makes on one node).
  ddprace/MODEL/PRECISION/BATCHxSEQ/view=0|1,bucket=MB,sync=phase|step|none,trials=N
            DDP's bucket rebuild (second forward) N times, each on a fresh DDP wrapper of one model:
            whether the old buckets are still allocated when the new ones are (`held_bytes` per
            trial), under three host loops: sync=phase (synchronize after backward and after the
            optimizer, as `run_case` does), step (loss.item() once a step), none (no sync at all).

With MEASURE_TRACE=1 in a launch's environment every case also writes the caching allocator's
trace, OUTDIR/traces/NAME.rankR.caseI.txt.gz, in alloc_trace.py's format (per block its stream and
the innermost 8 Python frames; phases build, forward, backward, optimizer).

Several cases share a launch (torchrun start-up and NCCL init cost 10-20 s each). The FIRST case of
a launch runs in a fresh process: its driver number is clean. Later cases start after
gc.collect() + torch.cuda.empty_cache() (cached segments go back to the driver) and record
`before` (allocated, reserved, driver) so the analysis can use deltas; their driver number also
holds the kernels the earlier cases loaded (the analysis marks them `secondary`).

Output (one JSON object per line): OUTDIR/NAME.rankR.jsonl with a `launch` record (stages of
process start: context, process group, first all-reduce) and one `case` record per spec (fields:
see `run_case`); OUTDIR/launches.jsonl (one line per launch: rc, wall, timed_out, skipped);
OUTDIR/NAME.log (torchrun's output); OUTDIR/configs/MODEL.json (the full config as transformers
writes it, for `vramdoc estimate --config`).
"""
import datetime, gc, json, os, signal, subprocess, sys, time, traceback

import alloc_trace  # scripts/gpu/alloc_trace.py, beside this file

MiB = 1 << 20


def nproc():
    """Processes per launch: MEASURE_NPROC, else one per visible GPU (nvidia-smi -L), at least 2."""
    if os.environ.get("MEASURE_NPROC"):
        return int(os.environ["MEASURE_NPROC"])
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        return max(2, sum(1 for line in out.splitlines() if line.startswith("GPU ")))
    except (OSError, subprocess.TimeoutExpired):
        return 2

MODELS = {  # name: (model_type, config fields); the same shapes as the single-GPU calibration where shared
    "llama-160m": ("llama", dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, num_key_value_heads=12,
                                 intermediate_size=2048, vocab_size=32000, max_position_embeddings=4096)),
    "qwen2.5-0.5b": ("qwen2", dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                                   intermediate_size=4864, vocab_size=151936, tie_word_embeddings=True,
                                   max_position_embeddings=32768)),
    "llama-1b": ("llama", dict(hidden_size=2048, num_hidden_layers=22, num_attention_heads=32, num_key_value_heads=4,
                               intermediate_size=5632, vocab_size=32000, max_position_embeddings=2048)),  # TinyLlama's shape
    "gemma3-1b": ("gemma3_text", dict(hidden_size=1152, num_hidden_layers=26, num_attention_heads=4, num_key_value_heads=1,
                                      head_dim=256, intermediate_size=6912, vocab_size=262144, sliding_window=512,
                                      max_position_embeddings=32768)),  # Gemma 3 1B's shape
    "dsv2-1b": ("deepseek_v2", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=16,
                                    intermediate_size=4096, vocab_size=32000, moe_intermediate_size=512, n_routed_experts=32,
                                    num_experts_per_tok=4, n_shared_experts=1, first_k_dense_replace=1, kv_lora_rank=256,
                                    q_lora_rank=None, qk_nope_head_dim=64, qk_rope_head_dim=32, v_head_dim=64,
                                    max_position_embeddings=4096)),  # DeepSeek-V2-Lite's layout, smaller
    "qwen2moe-1b": ("qwen2_moe", dict(hidden_size=1024, num_hidden_layers=8, num_attention_heads=16, num_key_value_heads=4,
                                      intermediate_size=2816, moe_intermediate_size=512, num_experts=32, num_experts_per_tok=4,
                                      shared_expert_intermediate_size=2048, vocab_size=151936, tie_word_embeddings=False,
                                      max_position_embeddings=4096)),
    "qwen2.5-1.5b": ("qwen2", dict(hidden_size=1536, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                                   intermediate_size=8960, vocab_size=151936, tie_word_embeddings=True,
                                   max_position_embeddings=32768)),
}

L1 = "llama-1b/bf16/4x1024"
Q = "qwen2.5-0.5b"
TRACE = {"MEASURE_TRACE": "1"}
LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj"]
# (launch name, extra environment, specs): most important first; `plan` stops starting launches at the deadline.
PLAN = [
    ("nccl-default", {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,ALLOC"}, ["nccl"]),
    ("ddp-l1b", {}, [f"ddp/{L1}", f"ddp/{L1}/view", f"ddp/{L1}/bucket=100"]),
    ("fsdp2-l1b", {}, [f"fsdp2/{L1}", f"fsdp2/{L1}/reshard=0", f"fsdp2/{L1}/ckpt"]),
    ("fsdp1-l1b", {}, [f"fsdp1/{L1}", f"fsdp1/{L1}/shard=grad_op", f"fsdp1/{L1}/ckpt"]),
    ("tp-l1b", {}, [f"tp/{L1}", f"tp/{L1}/ckpt", "tp/llama-1b/amp/4x1024"]),
    ("ddp-q05", {}, [f"ddp/{Q}/amp/2x1024", f"ddp/{Q}/amp/2x1024/view", f"ddp/{Q}/amp/2x1024/ckpt"]),
    ("fsdp2-q05", {}, [f"fsdp2/{Q}/mp/2x1024", f"fsdp2/{Q}/mp/2x1024/ckpt", f"fsdp2/{Q}/mp/2x1024/reshard=0"]),
    ("fsdp1-q05", {}, [f"fsdp1/{Q}/mp/2x1024", f"fsdp1/{Q}/mp/2x1024/shard=grad_op,ckpt",
                       f"fsdp1/{Q}/mp/2x1024/shard=hybrid"]),
    ("nccl-buf8m", {"NCCL_BUFFSIZE": str(8 * MiB)}, ["nccl"]),
    ("ddp-l1b-b", {}, [f"ddp/{L1}/view", f"ddp/{L1}/static", "ddp/llama-1b/bf16/8x1024/ckpt"]),
    ("fsdp2-l1b-b", {}, [f"fsdp2/{L1}/reshard=0", "fsdp2/llama-1b/bf16/8x1024/ckpt", "fsdp2/llama-1b/mp/2x2048"]),
    ("ddp-l160", {}, ["ddp/llama-160m/amp/8x1024", "ddp/llama-160m/amp/8x1024/view", "ddp/llama-160m/amp/8x1024/bucket=5"]),
    ("tp-q05", {}, [f"tp/{Q}/bf16/2x1024", f"tp/{Q}/bf16/2x1024/ckpt"]),
    ("fsdp1-l1b-b", {}, [f"fsdp1/{L1}/shard=grad_op", "fsdp1/llama-1b/mp/4x1024", f"fsdp1/{L1}/shard=grad_op,ckpt"]),
    ("fsdp2-l160", {}, ["fsdp2/llama-160m/mp/8x1024", "fsdp2/llama-160m/mp/8x1024/offload"]),
    ("nccl-buf1m", {"NCCL_BUFFSIZE": str(1 * MiB)}, ["nccl"]),
    ("tp-l1b-b", {}, ["tp/llama-1b/amp/4x1024", f"tp/{L1}/foreach=0"]),
    # 2026-12-01: the one-rank communicator, DDP's rebuild race, traces of the cases that missed,
    # and cases never measured (new sizes; held out: evaluated only, not looked into for modelling)
    ("nccl-one", {}, ["nccl"]),
    ("ddp-race", {}, [f"ddprace/llama-1b/bf16/1x1024/view={v},bucket={b},sync={y},trials=4"
                      for v, b, y in [(0, 25, "phase"), (0, 25, "step"), (0, 25, "none"), (1, 25, "phase"),
                                      (1, 25, "step"), (1, 25, "none"), (0, 100, "phase"), (0, 100, "step")]]
                     + ["ddprace/llama-160m/amp/8x1024/view=0,bucket=25,sync=step,trials=4"]),
    ("tr-fsdp1-l1b", TRACE, [f"fsdp1/{L1}", f"fsdp1/{L1}/ckpt"]),
    ("tr-fsdp1-q05", TRACE, [f"fsdp1/{Q}/mp/2x1024/shard=hybrid", f"fsdp1/{Q}/mp/2x1024"]),
    ("tr-ddp-ck", TRACE, ["ddp/llama-1b/bf16/8x1024/ckpt", f"ddp/{Q}/amp/2x1024/ckpt"]),
    ("tr-tp", TRACE, [f"tp/{L1}/ckpt", "tp/llama-160m/bf16/8x1024"]),
    ("tr-fsdp2-q05", TRACE, [f"fsdp2/{Q}/mp/2x1024/ckpt"]),
    ("ho-q15", TRACE, ["ddp/qwen2.5-1.5b/amp/2x1024", "fsdp2/qwen2.5-1.5b/mp/4x1024", "fsdp1/qwen2.5-1.5b/mp/2x1024"]),
    ("ho-tp-q05", TRACE, [f"tp/{Q}/bf16/2x1024", f"tp/{Q}/bf16/2x1024/ckpt", "tp/qwen2.5-1.5b/bf16/2x2048"]),
    ("ho-l160", TRACE, ["fsdp1/llama-160m/mp/8x1024", "ddp/llama-160m/amp/8x1024/view", "fsdp2/llama-160m/mp/8x1024/ckpt"]),
]

# `fresh`: one case per launch. The first block repeats every case measured before 2026-12-01 (as
# secondary cases many of them carried an earlier case's cache); the last block was chosen before
# any of it was measured and is held out: evaluated, never looked into while modelling.
L15 = "qwen2.5-1.5b"
FRESH = [
    f"ddp/{L1}", f"ddp/{L1}/view", f"ddp/{L1}/bucket=100", f"ddp/{L1}/static", "ddp/llama-1b/bf16/8x1024/ckpt",
    f"ddp/{Q}/amp/2x1024", f"ddp/{Q}/amp/2x1024/view", f"ddp/{Q}/amp/2x1024/ckpt",
    f"fsdp2/{L1}", f"fsdp2/{L1}/reshard=0", f"fsdp2/{L1}/ckpt", f"fsdp2/{Q}/mp/2x1024", f"fsdp2/{Q}/mp/2x1024/ckpt",
    f"fsdp2/{Q}/mp/2x1024/reshard=0",
    f"fsdp1/{L1}", f"fsdp1/{L1}/shard=grad_op", f"fsdp1/{L1}/ckpt", f"fsdp1/{Q}/mp/2x1024",
    f"fsdp1/{Q}/mp/2x1024/shard=grad_op,ckpt", f"fsdp1/{Q}/mp/2x1024/shard=hybrid",
    f"tp/{L1}", f"tp/{L1}/ckpt", "tp/llama-1b/amp/4x1024",
    f"ddp/{L15}/amp/2x1024", f"fsdp2/{L15}/mp/4x1024", f"fsdp1/{L15}/mp/2x1024", f"tp/{Q}/bf16/2x1024",
    f"tp/{Q}/bf16/2x1024/ckpt", f"tp/{L15}/bf16/2x2048", "fsdp1/llama-160m/mp/8x1024", "ddp/llama-160m/amp/8x1024/view",
    "fsdp2/llama-160m/mp/8x1024/ckpt", "tp/llama-160m/bf16/8x1024",
    # held out
    "ddp/llama-160m/amp/8x1024", "fsdp2/llama-160m/mp/8x1024", "fsdp2/llama-1b/mp/2x2048", "fsdp1/llama-1b/mp/4x1024",
    f"fsdp1/{L15}/bf16/2x1024", f"ddp/{L15}/bf16/2x1024/view", "tp/llama-1b/amp/2x2048/ckpt", f"fsdp2/{L15}/bf16/2x1024/ckpt",
    "ddp/llama-1b/amp/2x1024/static", "fsdp1/llama-160m/bf16/4x2048/shard=grad_op", f"tp/{L15}/amp/2x1024",
    "fsdp2/llama-160m/bf16/4x1024/reshard=0",
]
# Chosen 2026-12-01 00:10 UTC, measured after the model changes of that night, held out too: DDP over
# LoRA (one-GPU replay), a family never measured on two GPUs (Gemma 3), other batch shapes.
# For 4 or 8 ranks (`fresh OUT --set many`; issue 33): every strategy, hybrid sharding and TP x DP, at
# shapes whose per-rank terms differ visibly from the two-rank ones. Not measured yet (no such machine lent).
FRESH_MANY = [
    f"ddp/{L1}", "ddp/llama-1b/bf16/4x1024/ckpt", f"ddp/{Q}/amp/2x1024",
    f"fsdp2/{L1}", "fsdp2/llama-1b/bf16/4x1024/hsdp=2", f"fsdp2/{Q}/mp/2x1024", "fsdp2/qwen2.5-1.5b/mp/2x1024/ckpt",
    f"fsdp1/{L1}", "fsdp1/llama-1b/bf16/4x1024/shard=hybrid", f"fsdp1/{Q}/mp/2x1024/shard=grad_op",
    f"tp/{L1}", "tp/llama-1b/bf16/4x1024/dp=2", "nccl",
]
FRESH_NEW = [
    "ddp/qwen2.5-0.5b/bf16/4x1024/lora", "ddp/llama-1b/bf16/4x1024/lora,ckpt", "ddp/gemma3-1b/bf16/2x1024",
    "fsdp2/gemma3-1b/mp/2x1024", "fsdp1/gemma3-1b/mp/2x1024", "fsdp2/llama-1b/bf16/8x1024",
    "tp/llama-160m/amp/4x2048", "ddp/llama-160m/bf16/16x1024/ckpt", "fsdp1/qwen2.5-0.5b/bf16/4x2048/ckpt",
]
# Chosen 2026-12-01 00:40 UTC, held out too: mixture-of-experts models on two GPUs (DeepSeek's dense
# first layer, Qwen2-MoE's shared expert). FRESH_RACE repeats a held-out and a dev DDP job four
# times each to count the rebuild race (they keep their spec's set).
FRESH_MOE = ["ddp/dsv2-1b/bf16/2x1024", "fsdp2/dsv2-1b/mp/2x1024", "fsdp1/dsv2-1b/bf16/2x1024",
             "ddp/qwen2moe-1b/amp/2x1024", "fsdp2/qwen2moe-1b/bf16/2x1024/ckpt"]
FRESH_RACE = ["ddp/llama-160m/amp/8x1024"] * 4 + ["ddp/llama-1b/bf16/4x1024"] * 4
FRESH_HELD_OUT = FRESH[FRESH.index("ddp/llama-160m/amp/8x1024"):] + FRESH_NEW + FRESH_MOE

BASE_ENV = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "OMP_NUM_THREADS": "4",
            "TRANSFORMERS_VERBOSITY": "error", "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}


def log(*args):
    print(*args, flush=True)


# ---------------------------------------------------------------- plan: one torchrun per launch
def run_plan(outdir, deadline_s, only):
    os.makedirs(outdir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # unwinds run_launch, which kills its launch
    start = time.time()
    with open(os.path.join(outdir, "launches.jsonl"), "a") as launches:
        for name, extra_env, specs in PLAN:
            if only and name not in only:
                continue
            left = deadline_s - (time.time() - start)
            rec = dict(name=name, env=extra_env, specs=specs)
            if left < 20:
                rec["skipped"] = "deadline"
                log(f"[plan] {name}: skipped (deadline)")
            else:
                rec.update(run_launch(outdir, name, extra_env, specs, min(25 + 20 * len(specs), left)))
                log(f"[plan] {name}: rc={rec['rc']} {rec['wall']:.1f}s{' TIMEOUT' if rec['timed_out'] else ''}"
                    f" (total {time.time() - start:.0f}s)")
            launches.write(json.dumps(rec) + "\n")
            launches.flush()


def run_fresh(outdir, specs, parallel, deadline_s):
    """Every spec alone in its own launch, `parallel` launches at a time, until the deadline."""
    os.makedirs(outdir, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    start, todo, running = time.time(), list(enumerate(specs)), []
    with open(os.path.join(outdir, "launches.jsonl"), "a") as launches:
        while todo or running:
            while todo and len(running) < parallel and deadline_s - (time.time() - start) > 30:
                i, spec = todo.pop(0)
                name = f"f{i:02d}"
                env = dict(os.environ, **BASE_ENV, MEASURE_TRACE="1")
                cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc()),
                       os.path.abspath(__file__), "worker", outdir, name, spec]
                out = open(os.path.join(outdir, f"{name}.log"), "w")
                proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
                running.append((name, spec, proc, out, time.time()))
            if not running:
                break
            time.sleep(0.5)
            for item in list(running):
                name, spec, proc, out, t0 = item
                late = time.time() - t0 > 150 or time.time() - start > deadline_s
                if proc.poll() is None and not late:
                    continue
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
                out.close()
                running.remove(item)
                launches.write(json.dumps(dict(name=name, specs=[spec], rc=rc, wall=round(time.time() - t0, 1),
                                               timed_out=late)) + "\n")
                launches.flush()
                log(f"[fresh] {name} {spec}: rc={rc} {time.time() - t0:.0f}s (total {time.time() - start:.0f}s)")
        for i, spec in todo:
            launches.write(json.dumps(dict(name=f"f{i:02d}", specs=[spec], skipped="deadline")) + "\n")


def run_launch(outdir, name, extra_env, specs, timeout_s):
    env = dict(os.environ, **BASE_ENV, **extra_env)
    if env.get("NCCL_DEBUG"):
        env["NCCL_DEBUG_FILE"] = os.path.join(outdir, f"{name}.nccl.%h.%p.log")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", str(nproc()),
           os.path.abspath(__file__), "worker", outdir, name] + specs
    t0 = time.time()
    with open(os.path.join(outdir, f"{name}.log"), "w") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            rc, timed_out = proc.wait(timeout=timeout_s), False
        except subprocess.TimeoutExpired:
            rc, timed_out = None, True
        finally:  # also on SIGTERM (run.sh's timeout): torchrun and its workers share the new session
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                rc = proc.wait()
    return dict(rc=rc, wall=time.time() - t0, timed_out=timed_out, timeout_s=timeout_s)


# ---------------------------------------------------------------- the driver's number for this process
class Driver:
    """Bytes NVML charges this process on its device (and on the other devices, which should be 0)."""

    def __init__(self, torch, device):
        self.nvml, self.handles, self.mine, self.how = None, [], None, None
        try:
            import pynvml
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handles = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]
            props = torch.cuda.get_device_properties(device)
            self.mine, self.how = self._match_uuid(props), "uuid"
            if self.mine is None:
                self.mine, self.how = self._match_pci(props), "pci"
        except Exception as e:  # no pynvml: nvidia-smi's per-process list (MiB) instead
            self.how = "nvidia-smi (" + repr(e)[:100] + ")"
            self.uuid = str(torch.cuda.get_device_properties(device).uuid).replace("GPU-", "").lower()

    def _match_uuid(self, props):
        try:
            want = str(props.uuid).replace("GPU-", "").lower()
            for i, h in enumerate(self.handles):
                nv = self.nvml.nvmlDeviceGetUUID(h)
                nv = nv.decode() if isinstance(nv, bytes) else nv
                if nv.replace("GPU-", "").lower() == want:
                    return i
        except Exception:
            pass
        return None

    def _match_pci(self, props):
        try:
            want = (props.pci_domain_id, props.pci_bus_id, props.pci_device_id)
            for i, h in enumerate(self.handles):
                pci = self.nvml.nvmlDeviceGetPciInfo(h)
                if (pci.domain, pci.bus, pci.device) == want:
                    return i
        except Exception:
            pass
        return None

    def _by_pid(self, handle):
        used, procs = 0, self.nvml.nvmlDeviceGetComputeRunningProcesses(handle)
        for p in procs:
            if p.pid == os.getpid():
                used += p.usedGpuMemory or 0
        only = procs[0].usedGpuMemory if used == 0 and len(procs) == 1 else None
        return used, only

    def _read_smi(self):
        try:
            text = subprocess.run(["nvidia-smi", "--query-compute-apps=gpu_uuid,pid,used_memory",
                                   "--format=csv,noheader,nounits"], capture_output=True, text=True, timeout=10).stdout
            mine = other = 0
            for line in text.splitlines():
                uuid, pid, used = (f.strip() for f in line.split(","))
                if pid == str(os.getpid()):
                    if uuid.replace("GPU-", "").lower() == self.uuid:
                        mine += int(used) * MiB
                    else:
                        other += int(used) * MiB
            return dict(driver=mine or None, driver_other=other, driver_match=self.how)
        except Exception as e:
            return dict(driver=None, driver_other=None, driver_match=repr(e)[:200])

    def read(self):
        """driver: bytes on our device (None: unknown); driver_other: on other devices; driver_match: how found."""
        if self.nvml is None:
            return self._read_smi()
        try:
            per_device = [self._by_pid(h) for h in self.handles]
            if self.mine is None:  # no device match: the device where this pid holds the most
                best = max(range(len(per_device)), key=lambda i: per_device[i][0])
                used = per_device[best][0]
                return dict(driver=used or None, driver_other=sum(u for u, _ in per_device) - used, driver_match="scan")
            used, only = per_device[self.mine]
            other = sum(u for i, (u, _) in enumerate(per_device) if i != self.mine)
            if used:
                return dict(driver=used, driver_other=other, driver_match="pid/" + self.how)
            # a pid namespace hides our pid: the one process on our GPU is this one
            return dict(driver=only, driver_other=other, driver_match="only-process" if only else None)
        except Exception as e:
            return dict(driver=None, driver_other=None, driver_match=repr(e)[:200])


# ---------------------------------------------------------------- worker: one launch, several cases
class Ctx:
    pass


def snapshot(ctx, stage=None):
    torch = ctx.torch
    torch.cuda.synchronize(ctx.device)
    s = dict(allocated=torch.cuda.memory_allocated(ctx.device), reserved=torch.cuda.memory_reserved(ctx.device),
             t=round(time.time() - ctx.t0, 3), **ctx.driver.read())
    if stage:
        s["stage"] = stage
    return s


def worker(outdir, name, specs):
    import torch
    import torch.distributed as dist
    ctx = Ctx()
    ctx.torch, ctx.dist, ctx.t0 = torch, dist, time.time()
    ctx.rank, ctx.world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    ctx.local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(ctx.local_rank)
    ctx.device = torch.device("cuda", ctx.local_rank)
    ctx.driver = Driver(torch, ctx.device)
    ctx.out = open(os.path.join(outdir, f"{name}.rank{ctx.rank}.jsonl"), "a")
    ctx.outdir, ctx.launch = outdir, name
    stages = []
    torch.zeros(1, device=ctx.device)
    stages.append(snapshot(ctx, "cuda_context"))
    if specs == ["nccl"]:
        nccl_stages(ctx, stages)
    else:
        dist.init_process_group("nccl", device_id=ctx.device, timeout=datetime.timedelta(seconds=60))
        stages.append(snapshot(ctx, "process_group"))
        flag = torch.ones(1, device=ctx.device)
        dist.all_reduce(flag)
        stages.append(snapshot(ctx, "first_all_reduce"))
    emit(ctx, dict(kind="launch", stages=stages, **versions(torch)))
    for index, spec in enumerate(specs):
        if spec.startswith("ddprace/"):
            emit(ctx, dict(kind="ddprace", index=index, spec=spec, **ddp_race(ctx, spec)))
        elif spec != "nccl":
            run_and_emit(ctx, index, spec)
    dist.barrier()
    dist.destroy_process_group()
    ctx.out.close()


def emit(ctx, rec):
    rec.update(launch=ctx.launch, rank=ctx.rank, world=ctx.world, pid=os.getpid())
    ctx.out.write(json.dumps(rec) + "\n")
    ctx.out.flush()


def versions(torch):
    v = dict(torch=torch.__version__, cuda=torch.version.cuda, device_name=torch.cuda.get_device_name(),
             total_bytes=torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory,
             env={k: os.environ[k] for k in sorted(os.environ) if k.startswith(("NCCL_", "TORCH_", "PYTORCH_", "CUDA_"))})
    try:
        v["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    except Exception:
        pass
    try:
        import transformers
        v["transformers"] = transformers.__version__
    except Exception:
        pass
    return v


def nccl_stages(ctx, stages):
    """The NCCL-only footprint: each stage's driver number, in one fresh process per rank."""
    torch, dist, dev = ctx.torch, ctx.dist, ctx.device
    x = torch.randn(1024, 1024, device=dev)
    for dt in (torch.float32, torch.bfloat16):
        (x.to(dt) @ x.to(dt)).sum().item()
    del x
    gc.collect()
    torch.cuda.empty_cache()
    stages.append(snapshot(ctx, "cublas"))
    dist.init_process_group("nccl", device_id=dev, timeout=datetime.timedelta(seconds=60))
    stages.append(snapshot(ctx, "process_group"))
    small = torch.ones(1, device=dev)
    dist.all_reduce(small)
    stages.append(snapshot(ctx, "all_reduce_4B"))
    big = torch.ones(128 * MiB, dtype=torch.bfloat16, device=dev)  # 256 MiB
    dist.all_reduce(big)
    stages.append(snapshot(ctx, "all_reduce_256MiB"))
    part = torch.ones(big.numel() // ctx.world, dtype=torch.bfloat16, device=dev)
    dist.all_gather_into_tensor(big, part)
    stages.append(snapshot(ctx, "all_gather_256MiB"))
    dist.reduce_scatter_tensor(part, big)
    stages.append(snapshot(ctx, "reduce_scatter_256MiB"))
    dist.broadcast(big, src=0)
    stages.append(snapshot(ctx, "broadcast_256MiB"))
    del big, part
    gc.collect()
    torch.cuda.empty_cache()
    stages.append(snapshot(ctx, "freed"))
    group = dist.new_group(list(range(ctx.world)))
    dist.all_reduce(small, group=group)
    stages.append(snapshot(ctx, "second_communicator"))
    fp32 = torch.ones(16 * MiB, device=dev)  # 64 MiB fp32: another dtype and size
    dist.all_reduce(fp32, group=group)
    del fp32
    torch.cuda.empty_cache()
    stages.append(snapshot(ctx, "second_communicator_64MiB"))
    singles = [dist.new_group([r]) for r in range(ctx.world)]  # every rank takes part in every new_group
    dist.all_reduce(small, group=singles[ctx.rank])
    stages.append(snapshot(ctx, "one_rank_communicator"))
    dist.all_reduce(torch.ones(16 * MiB, device=dev), group=singles[ctx.rank])
    torch.cuda.empty_cache()
    stages.append(snapshot(ctx, "one_rank_communicator_64MiB"))


def parse_spec(spec):
    parts = spec.split("/")
    if len(parts) not in (4, 5):
        raise ValueError(f"bad spec {spec!r}: STRATEGY/MODEL/PRECISION/BATCHxSEQ[/OPTIONS]")
    s = dict(strategy=parts[0], model=parts[1], precision=parts[2], ckpt=False, view=False, bucket_mb=None,
             static=False, reshard=True, offload=False, shard="full", foreach=True, lora=False,
             hsdp=None, dp=None)
    s["batch"], s["seq"] = (int(v) for v in parts[3].split("x"))
    for opt in (parts[4].split(",") if len(parts) == 5 else []):
        key, _, value = opt.partition("=")
        if key == "bucket":
            s["bucket_mb"] = float(value)
        elif key in ("reshard", "foreach"):
            s[key] = value != "0"
        elif key == "shard":
            s["shard"] = value
        elif key in ("hsdp", "dp"):
            s[key] = int(value)
        elif key in ("ckpt", "view", "static", "offload", "lora"):
            s[key] = True
        else:
            raise ValueError(f"unknown option {opt!r} in {spec!r}")
    if s["strategy"] not in ("ddp", "fsdp2", "fsdp1", "tp") or s["model"] not in MODELS:
        raise ValueError(f"unknown strategy or model in {spec!r}")
    if (s["hsdp"] and s["strategy"] != "fsdp2") or (s["dp"] and s["strategy"] != "tp"):
        raise ValueError(f"hsdp=R goes with fsdp2, dp=D with tp, in {spec!r}")
    if s["lora"] and s["strategy"] != "ddp":
        raise ValueError(f"lora goes with ddp only, in {spec!r}")
    if s["precision"] not in ("bf16", "amp", "mp") or (s["precision"] == "mp" and s["strategy"] not in ("fsdp1", "fsdp2")):
        raise ValueError(f"precision {s['precision']!r} does not go with {s['strategy']!r}")
    return s


def run_and_emit(ctx, index, spec):
    torch = ctx.torch
    t0 = time.time()
    rec = dict(kind="case", index=index, spec=spec, secondary=index > 0)
    ctx.case_index, ctx.marks = index, None
    try:
        rec.update(run_case(ctx, spec))
        rec["status"] = "ok"
    except Exception as e:
        try:
            torch.cuda.memory._record_memory_history(enabled=None)
        except Exception:
            pass
        oom = isinstance(e, torch.OutOfMemoryError)
        rec.update(status="oom" if oom else "failed", error=type(e).__name__, message=str(e)[:600],
                   tb=traceback.format_exc()[-1500:])
    rec["wall"] = round(time.time() - t0, 2)
    emit(ctx, rec)
    if ctx.rank == 0:
        log(f"[{ctx.launch}] {spec}: {rec['status']} peak_alloc={rec.get('peak_allocated')} "
            f"peak_res={rec.get('peak_reserved')} driver={rec.get('driver_end', {}).get('driver')} {rec['wall']}s")


def run_case(ctx, spec):
    """Builds, wraps and trains one case; returns its record (absolute per-rank bytes)."""
    torch = ctx.torch
    s = parse_spec(spec)
    gc.collect()
    torch.cuda.synchronize(ctx.device)
    torch.cuda.empty_cache()
    rec = dict(s)
    rec["before"] = snapshot(ctx)
    torch.cuda.reset_peak_memory_stats(ctx.device)
    ctx.marks = Marks(ctx) if os.environ.get("MEASURE_TRACE") == "1" else None
    model, cfg, info = build(ctx, s)
    rec.update(info)
    if ctx.marks is not None:
        ctx.marks.mark("build")
    rec["after_build"] = snapshot(ctx)
    rec["after_build"]["peak_allocated"] = torch.cuda.max_memory_allocated(ctx.device)
    opt, step = make_optimizer(ctx, model, s)
    g = torch.Generator().manual_seed(1234)  # the same tokens on every rank (tensor parallel needs it)
    ids = torch.randint(0, cfg.vocab_size, (s["batch"], s["seq"]), generator=g).to(ctx.device)
    rec["steps"] = [train_step(ctx, model, opt, step, ids, s["precision"] == "amp") for _ in range(3)]
    phases = [p for st in rec["steps"] for k, p in st.items() if isinstance(p, dict)]
    rec["peak_allocated"] = max(p["peak_allocated"] for p in phases)
    rec["peak_reserved"] = max(p["peak_reserved"] for p in phases)
    rec["driver_end"] = snapshot(ctx)
    stats = torch.cuda.memory_stats(ctx.device)
    rec["memory_stats"] = {k: stats.get(k) for k in ("num_alloc_retries", "num_ooms", "num_device_alloc",
                                                       "num_device_free", "segment.all.current",
                                                       "reserved_bytes.large_pool.current",
                                                       "reserved_bytes.small_pool.current")}
    del model, opt, step, ids
    if ctx.marks is not None:
        rec["trace"] = ctx.marks.write(os.path.join(ctx.outdir, "traces", f"{ctx.launch}.rank{ctx.rank}.case{ctx.case_index}.txt.gz"))
    return rec


class Marks:
    """The caching allocator's history of one case (with Python frames) and its phase boundaries."""

    def __init__(self, ctx):
        self.torch, self.device, self.cuts = ctx.torch, ctx.device, {}
        self.torch.cuda.memory._record_memory_history(enabled="all", context="alloc", stacks="python",
                                                      max_entries=2_000_000)
        self.base = self._count()
        try:  # events an earlier case left in the history are skipped
            self.skip = len(self.torch.cuda.memory._snapshot()["device_traces"][self.device.index])
        except Exception:
            self.skip = 0

    def _count(self):
        return self.torch.cuda.memory_stats(self.device).get("allocation.all.allocated", 0)

    def mark(self, name):
        self.cuts.setdefault(self._count() - self.base, []).append(name)

    def write(self, path):
        torch = self.torch
        try:
            snap = torch.cuda.memory._snapshot()
            torch.cuda.memory._record_memory_history(enabled=None)
            events = snap.get("device_traces", [])[self.device.index][self.skip:]
        except Exception as e:
            return dict(error=f"{type(e).__name__}: {e}"[:300])
        os.makedirs(os.path.dirname(path), exist_ok=True)
        alloc_trace.write(path, events, self.cuts, frames=8)
        return dict(events=len(events), path=os.path.basename(path))


def train_step(ctx, model, opt, step, ids, autocast):
    """One step with the allocator's peak of each phase: forward, backward, optimizer (+ zero_grad)."""
    torch = ctx.torch

    def phase(name=None):
        torch.cuda.synchronize(ctx.device)
        if name and ctx.marks is not None:
            ctx.marks.mark(name)
        p = dict(peak_allocated=torch.cuda.max_memory_allocated(ctx.device),
                 peak_reserved=torch.cuda.max_memory_reserved(ctx.device),
                 allocated=torch.cuda.memory_allocated(ctx.device))
        torch.cuda.reset_peak_memory_stats(ctx.device)
        return p

    t0 = time.time()
    phase()
    with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
        loss = model(input_ids=ids, labels=ids).loss
    forward = phase("forward")
    loss.backward()
    backward = phase("backward")
    step()
    opt.zero_grad(set_to_none=True)
    optimizer = phase("optimizer")
    value = float(loss.detach().float().cpu())
    del loss
    return dict(forward=forward, backward=backward, optimizer=optimizer, seconds=round(time.time() - t0, 3), loss=value)


def ddp_race(ctx, spec):
    """DDP's bucket rebuild, `trials` times on fresh DDP wrappers of one model: per trial and step the
    allocated bytes before the forward (`before`), at the wrapped module's forward pre-hook (after
    DDP's _pre_forward, where step 1 rebuilds the buckets: `at_forward`), the step's peak, and the
    host time from the end of backward to that pre-hook. held_bytes = at_forward - before of step 1:
    the old buckets' bytes when they were still referenced at the rebuild, 0 when already freed."""
    torch = ctx.torch
    from torch.nn.parallel import DistributedDataParallel as DDP
    parts = spec.split("/")
    opts = dict(kv.split("=") for kv in parts[4].split(","))
    s = parse_spec("ddp/" + "/".join(parts[1:4]))
    view, bucket, sync, trials = opts["view"] == "1", float(opts["bucket"]), opts["sync"], int(opts["trials"])
    gc.collect()
    torch.cuda.empty_cache()
    cfg, model = make_model(ctx, s, ctx.device)
    bucket_bytes = sum(p.numel() * p.element_size() for p in model.parameters() if p.requires_grad)
    g = torch.Generator().manual_seed(1234)
    ids = torch.randint(0, cfg.vocab_size, (s["batch"], s["seq"]), generator=g).to(ctx.device)
    out = []
    for trial in range(trials):
        ddp = DDP(model, device_ids=[ctx.local_rank], gradient_as_bucket_view=view, bucket_cap_mb=bucket)
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)
        seen = {}

        def at_forward(*_):  # returns None: the module's inputs stay as they are
            seen.setdefault("at", (torch.cuda.memory_allocated(ctx.device), time.perf_counter()))

        hook = model.register_forward_pre_hook(at_forward)
        steps, t_backward = [], None
        for step in range(3):
            seen.clear()
            torch.cuda.reset_peak_memory_stats(ctx.device)  # host-side counters: no synchronisation
            before = torch.cuda.memory_allocated(ctx.device)
            with torch.autocast("cuda", dtype=torch.bfloat16, enabled=s["precision"] == "amp"):
                loss = ddp(input_ids=ids, labels=ids).loss
            at, t_at = seen["at"]
            loss.backward()
            if sync == "phase":
                torch.cuda.synchronize(ctx.device)
            t_end = time.perf_counter()
            opt.step()
            opt.zero_grad(set_to_none=True)
            if sync == "phase":
                torch.cuda.synchronize(ctx.device)
            if sync in ("phase", "step"):
                loss.item()
            steps.append(dict(before=before, at_forward=at, peak=torch.cuda.max_memory_allocated(ctx.device),
                              gap_ms=None if t_backward is None else round(1e3 * (t_at - t_backward), 2)))
            t_backward = t_end
            del loss
        hook.remove()
        torch.cuda.synchronize(ctx.device)
        out.append(dict(trial=trial, held_bytes=steps[1]["at_forward"] - steps[1]["before"], steps=steps))
        del ddp, opt
        gc.collect()
        torch.cuda.synchronize(ctx.device)
        torch.cuda.empty_cache()
    held = sum(1 for t in out if t["held_bytes"] > bucket_bytes // 2)
    if ctx.rank == 0:
        log(f"[{ctx.launch}] {spec}: old buckets held in {held} of {trials} trials (rank 0)")
    del model, ids
    gc.collect()
    torch.cuda.empty_cache()
    return dict(view=view, bucket_mb=bucket, sync=sync, bucket_bytes=bucket_bytes, held=held, trials=out)


# ---------------------------------------------------------------- building and wrapping the model
def make_model(ctx, s, device):
    torch = ctx.torch
    from transformers import AutoConfig, AutoModelForCausalLM
    kind, kw = MODELS[s["model"]]
    cfg = AutoConfig.for_model(kind, **kw)
    if ctx.rank == 0:
        os.makedirs(os.path.join(ctx.outdir, "configs"), exist_ok=True)
        path = os.path.join(ctx.outdir, "configs", s["model"] + ".json")
        if not os.path.exists(path):
            cfg.to_json_file(path, use_diff=False)
    dtype = torch.bfloat16 if s["precision"] == "bf16" else torch.float32
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(cfg, dtype=dtype, attn_implementation="sdpa")
    ctx.n_params = sum(p.numel() for p in model.parameters())  # before any wrapping; tied weights once
    if s["ckpt"]:
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": False})
    model.train()
    return cfg, model


def fill_random(ctx, model):
    """Values for a model materialised from the meta device (memory does not depend on them)."""
    torch = ctx.torch
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:
        from torch.distributed._tensor import DTensor
    with torch.no_grad():
        for p in model.parameters():
            t = p.to_local() if isinstance(p, DTensor) else p
            if t.is_floating_point() and t.numel():
                t.normal_(0.0, 0.02)
        for name, b in model.named_buffers():
            if name.endswith("inv_freq") and b.numel():  # rotary frequencies, as the default RoPE makes them
                n = b.numel()
                b.copy_(1.0 / (10000.0 ** (torch.arange(0, 2 * n, 2, dtype=torch.float32, device=b.device) / (2 * n))))


def local_numel(ctx, model):
    try:
        from torch.distributed.tensor import DTensor
    except ImportError:
        from torch.distributed._tensor import DTensor
    return sum((p.to_local() if isinstance(p, DTensor) else p).numel() for p in model.parameters())


def build(ctx, s):
    """The wrapped model on this rank. Sharded strategies start on the meta device (PyTorch's
    documented FSDP2 / tensor-parallel initialisation: no unsharded copy ever lands on the GPU);
    if that fails the unsharded model is built on the GPU first (recorded as init=gpu)."""
    builders = {"ddp": build_ddp, "fsdp2": build_fsdp2, "fsdp1": build_fsdp1, "tp": build_tp}
    info = {}
    if s["strategy"] == "ddp":
        model, cfg = builders["ddp"](ctx, s, ctx.device)
        info["init"] = "gpu"
    else:
        try:
            model, cfg = builders[s["strategy"]](ctx, s, "meta")
            info["init"] = "meta"
        except Exception as e:
            info.update(init="gpu", meta_error=f"{type(e).__name__}: {str(e)[:300]}")
            gc.collect()
            ctx.torch.cuda.empty_cache()
            model, cfg = builders[s["strategy"]](ctx, s, ctx.device)
    info["n_params"], info["n_params_local"] = ctx.n_params, local_numel(ctx, model)
    return model, cfg, info


def build_ddp(ctx, s, device):
    from torch.nn.parallel import DistributedDataParallel as DDP
    cfg, model = make_model(ctx, s, device)
    if s["lora"]:
        from peft import LoraConfig, get_peft_model
        model = get_peft_model(model, LoraConfig(r=16, lora_alpha=32, target_modules=LORA_TARGETS, lora_dropout=0.0))
        if s["ckpt"]:
            model.enable_input_require_grads()
        model.train()
    kw = dict(device_ids=[ctx.local_rank], gradient_as_bucket_view=s["view"], static_graph=s["static"])
    if s["bucket_mb"] is not None:
        kw["bucket_cap_mb"] = s["bucket_mb"]
    return DDP(model, **kw), cfg


def build_fsdp2(ctx, s, device):
    torch = ctx.torch
    try:
        from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard
    except ImportError:
        from torch.distributed._composable.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy, fully_shard
    cfg, model = make_model(ctx, s, device)
    mp = MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32) if s["precision"] == "mp" \
        else MixedPrecisionPolicy()
    kw = dict(reshard_after_forward=s["reshard"], mp_policy=mp)
    if s["hsdp"]:  # hybrid sharding: R replicas, each sharded over world / R ranks
        from torch.distributed.device_mesh import init_device_mesh
        kw["mesh"] = init_device_mesh("cuda", (s["hsdp"], ctx.world // s["hsdp"]), mesh_dim_names=("replicate", "shard"))
    if s["offload"]:
        kw["offload_policy"] = CPUOffloadPolicy()
    for layer in model.model.layers:
        fully_shard(layer, **kw)
    fully_shard(model, **kw)
    if device == "meta":
        model.to_empty(device="cpu" if s["offload"] else ctx.device)
        if s["offload"]:  # parameters live on the CPU; buffers (rotary frequencies) must be on the GPU
            for m in model.modules():
                for k, b in list(m._buffers.items()):
                    if b is not None:
                        m._buffers[k] = b.to(ctx.device)
        fill_random(ctx, model)
    return model, cfg


def build_fsdp1(ctx, s, device):
    torch = ctx.torch
    from torch.distributed.fsdp import FullyShardedDataParallel as FSDP, MixedPrecision, ShardingStrategy
    from torch.distributed.fsdp.wrap import ModuleWrapPolicy
    cfg, model = make_model(ctx, s, device)
    strategy = {"full": ShardingStrategy.FULL_SHARD, "grad_op": ShardingStrategy.SHARD_GRAD_OP,
                "hybrid": ShardingStrategy.HYBRID_SHARD, "no": ShardingStrategy.NO_SHARD}[s["shard"]]
    mp = MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32, buffer_dtype=torch.float32) \
        if s["precision"] == "mp" else None
    kw = dict(auto_wrap_policy=ModuleWrapPolicy({type(model.model.layers[0])}), sharding_strategy=strategy,
              mixed_precision=mp, device_id=ctx.device, use_orig_params=True)
    if device == "meta":
        dev = ctx.device
        kw["param_init_fn"] = lambda m: m.to_empty(device=dev, recurse=False)
    model = FSDP(model, **kw)
    if device == "meta":
        fill_random(ctx, model)
    return model, cfg


def build_tp(ctx, s, device):
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
    cfg, model = make_model(ctx, s, device)
    dp = s["dp"] or 1  # TP x DP: tensor parallel inside groups of world / dp ranks, FSDP2 across them
    mesh2 = init_device_mesh("cuda", (dp, ctx.world // dp), mesh_dim_names=("dp", "tp"))
    mesh = mesh2["tp"]
    plan = {"self_attn.q_proj": ColwiseParallel(), "self_attn.k_proj": ColwiseParallel(),
            "self_attn.v_proj": ColwiseParallel(), "self_attn.o_proj": RowwiseParallel(),
            "mlp.gate_proj": ColwiseParallel(), "mlp.up_proj": ColwiseParallel(), "mlp.down_proj": RowwiseParallel()}
    for layer in model.model.layers:
        parallelize_module(layer, mesh, plan)
    if dp > 1:
        try:
            from torch.distributed.fsdp import fully_shard
        except ImportError:
            from torch.distributed._composable.fsdp import fully_shard
        for layer in model.model.layers:
            fully_shard(layer, mesh=mesh2["dp"])
        fully_shard(model, mesh=mesh2["dp"])
    if device == "meta":
        model.to_empty(device=ctx.device)
        fill_random(ctx, model)
    return model, cfg


def make_optimizer(ctx, model, s):
    """AdamW (foreach unless foreach=0) and the callable that steps it. Tensor parallel mixes DTensor
    and plain parameters in one foreach group: implicit_replication lets DTensor accept them."""
    torch = ctx.torch
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=1e-5, foreach=None if s["foreach"] else False)
    if s["strategy"] != "tp":
        return opt, opt.step
    from torch.distributed.tensor.experimental import implicit_replication

    def step():
        with implicit_replication():
            opt.step()

    return opt, step


def summary(outdir):
    """A table of every case and every NCCL stage (MiB, per rank) from OUTDIR/*.rank*.jsonl."""
    mib = lambda v: "-" if v is None else f"{v / MiB:.0f}"
    rows = []
    for f in sorted(os.listdir(outdir)):
        if ".rank" in f and f.endswith(".jsonl"):
            with open(os.path.join(outdir, f)) as fh:
                rows += [json.loads(line) for line in fh if line.strip()]
    for r in rows:
        if r.get("kind") == "launch":
            print(f"{r['launch']:<14} r{r['rank']} " + " ".join(f"{st['stage']}={mib(st.get('driver'))}/{mib(st['reserved'])}"
                                                         for st in r["stages"]))
    print(f"{'launch':<14} {'spec':<44} r  status  alloc   reserved driver  (MiB; * = secondary)")
    for r in rows:
        if r.get("kind") == "case":
            print(f"{r['launch']:<14} {r['spec']:<44} {r['rank']} {r['status']:<7} {mib(r.get('peak_allocated')):>6} "
                  f"{mib(r.get('peak_reserved')):>8} {mib(r.get('driver_end', {}).get('driver')):>7}"
                  f"{' *' if r.get('secondary') else ''}")


def main(argv):
    if len(argv) == 3 and argv[1] == "summary":
        summary(argv[2])
        return 0
    if len(argv) >= 3 and argv[1] == "plan":
        deadline, only = 270.0, set()
        rest = argv[3:]
        while rest:
            if rest[0] == "--deadline" and len(rest) > 1:
                deadline, rest = float(rest[1]), rest[2:]
            elif rest[0] == "--only" and len(rest) > 1:
                only, rest = set(rest[1].split(",")), rest[2:]
            else:
                print(__doc__)
                return 2
        run_plan(argv[2], deadline, only)
        return 0
    if len(argv) >= 3 and argv[1] == "fresh":
        parallel, deadline, specs, rest = 3, 400.0, [], argv[3:]
        while rest:
            if rest[0] == "--set" and len(rest) > 1:
                specs += {"many": FRESH_MANY, "new": FRESH_NEW, "fresh": FRESH}[rest[1]]
                rest = rest[2:]
            elif rest[0] in ("--parallel", "--deadline") and len(rest) > 1:
                parallel, deadline = (int(rest[1]), deadline) if rest[0] == "--parallel" else (parallel, float(rest[1]))
                rest = rest[2:]
            else:
                specs.append(rest[0])
                rest = rest[1:]
        for spec in specs or FRESH:
            parse_spec(spec)
        run_fresh(argv[2], specs or FRESH, parallel, deadline)
        return 0
    if len(argv) >= 5 and argv[1] == "worker":
        for spec in argv[4:]:
            if spec.startswith("ddprace/"):
                parse_spec("ddp/" + "/".join(spec.split("/")[1:4]))
            elif spec != "nccl":
                parse_spec(spec)  # a typo fails before any GPU work
        worker(argv[2], argv[3], argv[4:])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
