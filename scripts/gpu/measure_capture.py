#!/usr/bin/env python3
"""The accuracy measurement of `vramdoc estimate -- python JOB` (docs/estimator.md, "Estimating a
script"): every case of CASES run for real on the GPU, each in a fresh process (measure_real.py:
peaks, NVML's process total, the allocator's trace), and captured on the CPU with the GPU hidden
(CUDA_VISIBLE_DEVICES='', python/vramdoc/_capture.py as sitecustomize: the trace vramdoc replays).
  python3 scripts/gpu/measure_capture.py OUTDIR [--real[=SPLIT]] [--capture] [--probe] [--max-batch-check]
                                         [--sweep] [--overhead] [ID,ID]
OUTDIR/real/ID.json + ID.txt.gz, OUTDIR/capture/ID.trace + ID.log, OUTDIR/probe.json, OUTDIR/cases.json,
OUTDIR/max-batch/ (the ladders of MAX_BATCH_LADDERS on an emulated card), OUTDIR/conv/DTYPE.jsonl
(measure_conv_workspace.py), OUTDIR/overhead/ORDER.json (measure_overhead.py), OUTDIR/times.txt.
The split (dev: tune on these; held-out and fresh: never looked at before the estimate is final) is
fixed here. Everything runs concurrently (each process's peaks and NVML number are its own; the
captures see no GPU); MEASURE_BUDGET_S stops starting new processes."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "capture_jobs")
ROOT = os.path.dirname(os.path.dirname(HERE))
BUDGET_S = float(os.environ.get("MEASURE_BUDGET_S", "170"))
CAPTURE_SLOTS = int(os.environ.get("MEASURE_CAPTURE_SLOTS", "10"))
GPU_SLOTS = int(os.environ.get("MEASURE_GPU_SLOTS", "7"))
REAL_TIMEOUT_S, CAPTURE_TIMEOUT_S = 100, 150
SWEEP_S = float(os.environ.get("MEASURE_SWEEP_S", "50"))

# id, split, job, arguments
CASES = [
    ("c01", "dev", "vision.py", "--model resnet50 --batch 128 --precision fp32 --opt sgd"),
    ("c02", "held-out", "vision.py", "--model resnet50 --batch 128 --precision amp --opt adamw"),
    ("c03", "dev", "vision.py", "--model vgg16 --batch 64 --precision amp --opt sgd"),
    ("c04", "held-out", "vision.py", "--model vgg16 --batch 32 --precision fp32 --opt sgd"),
    ("c05", "dev", "vision.py", "--model convnext_tiny --batch 96 --precision amp --opt adamw"),
    ("c06", "held-out", "vision.py", "--model efficientnet_b0 --batch 128 --precision amp --opt adamw"),
    ("c07", "dev", "vision.py", "--model efficientnet_b0 --batch 96 --precision fp32 --opt sgd"),
    ("c08", "held-out", "vision.py", "--model convnext_tiny --batch 64 --precision bf16 --opt adamw"),
    ("c09", "dev", "vision.py", "--model resnet50 --batch 256 --infer --precision amp"),
    ("c10", "held-out", "vision.py", "--model vgg16 --batch 128 --infer --precision bf16"),
    ("c11", "dev", "vision.py", "--model vit_b_16 --batch 64 --precision amp --opt adamw"),
    ("c12", "held-out", "vision.py", "--model swin_t --batch 64 --precision amp --opt adamw"),
    ("c13", "dev", "vision.py", "--model swin_t --batch 32 --precision fp32 --opt sgd"),
    ("c14", "held-out", "vision.py", "--model vit_b_16 --batch 32 --precision bf16 --opt adamw"),
    ("c15", "dev", "hf.py", "--model bert-cls --batch 32 --seq 256 --precision amp"),
    ("c16", "held-out", "hf.py", "--model bert-mlm --batch 16 --seq 512 --precision amp"),
    ("c17", "dev", "hf.py", "--model bert-mlm --batch 16 --seq 256 --precision fp32"),
    ("c18", "held-out", "hf.py", "--model bert-large-cls --batch 16 --seq 512 --precision bf16 --ckpt"),
    ("c19", "dev", "hf.py", "--model bert-large-cls --batch 32 --seq 256 --precision amp --ckpt"),
    ("c20", "held-out", "hf.py", "--model bert-cls --batch 64 --seq 256 --infer --precision fp32"),
    ("c21", "dev", "hf.py", "--model t5 --batch 16 --seq 256 --precision amp"),
    ("c22", "held-out", "hf.py", "--model whisper --batch 8 --seq 128 --precision amp"),
    ("c23", "dev", "hf.py", "--model whisper --batch 4 --seq 128 --precision fp32 --opt sgd"),
    ("c24", "held-out", "hf.py", "--model t5-small --batch 32 --seq 256 --precision bf16 --ckpt"),
    ("c25", "dev", "gan.py", "--batch 256 --precision fp32"),
    ("c26", "held-out", "gan.py", "--batch 256 --precision amp"),
    ("c27", "dev", "gan.py", "--batch 128 --precision bf16 --opt sgd"),
    ("c28", "dev", "unet.py", "--batch 32 --precision amp"),
    ("c29", "held-out", "unet.py", "--batch 16 --precision fp32 --ckpt"),
    ("c30", "dev", "unet.py", "--batch 16 --precision bf16 --ckpt --opt sgd"),
    ("c31", "held-out", "unet.py", "--batch 64 --infer --precision amp"),
    ("c32", "dev", "hf.py", "--model llama-lora --batch 4 --seq 1024 --precision bf16"),
    ("c33", "held-out", "hf.py", "--model llama-lora --batch 4 --seq 1024 --precision amp --ckpt"),
    ("c34", "dev", "hf.py", "--model llama-lora --batch 2 --seq 2048 --precision fp32 --ckpt"),
    ("c35", "held-out", "hf.py", "--model llama --batch 8 --seq 1024 --infer --precision bf16"),
    ("c36", "dev", "encoder.py", "--batch 32 --seq 512 --precision amp --sdpa"),
    ("c37", "held-out", "encoder.py", "--batch 16 --seq 512 --precision fp32"),
    # The fresh held-out set (issue 27, round 2): new models and sizes of the same kinds, fixed on 2026-12-01
    # before their one measurement; nothing was tuned on them.
    ("f01", "fresh", "vision.py", "--model densenet121 --batch 64 --precision amp --opt adamw"),
    ("f02", "fresh", "vision.py", "--model mobilenet_v3_large --batch 128 --precision fp32 --opt sgd"),
    ("f03", "fresh", "vision.py", "--model regnet_y_1_6gf --batch 64 --precision bf16 --opt adamw"),
    ("f04", "fresh", "vision.py", "--model convnext_small --batch 32 --precision amp --opt adamw"),
    ("f05", "fresh", "vision.py", "--model densenet121 --batch 128 --infer --precision amp"),
    ("f06", "fresh", "vision.py", "--model vit_b_32 --batch 128 --precision amp --opt adamw"),
    ("f07", "fresh", "vision.py", "--model swin_s --batch 32 --precision fp32 --opt sgd"),
    ("f08", "fresh", "hf.py", "--model roberta-cls --batch 32 --seq 256 --precision amp"),
    ("f09", "fresh", "hf.py", "--model distilbert-mlm --batch 32 --seq 256 --precision fp32"),
    ("f10", "fresh", "hf.py", "--model bart --batch 16 --seq 256 --precision amp"),
    ("f11", "fresh", "gan.py", "--wgan-gp --batch 64 --precision fp32"),
    ("f12", "fresh", "unet.py", "--width 192 --batch 16 --precision amp"),
    ("f13", "fresh", "hf.py", "--model qwen2-lora --batch 4 --seq 1024 --precision bf16"),
    ("f14", "fresh", "hf.py", "--model qwen2-lora --batch 2 --seq 2048 --precision amp --ckpt"),
    ("f15", "fresh", "hf.py", "--model roberta-cls --batch 64 --seq 256 --infer --precision bf16"),
    ("f16", "fresh", "encoder.py", "--hidden 1024 --layers 8 --heads 16 --batch 16 --seq 1024 --precision bf16 --sdpa"),
    # The second fresh held-out set (issue 27, round 3): new models and sizes of the same kinds, fixed on
    # 2026-12-02 before their one measurement, after the round-3 fixes (autocast's fall-through, softmax's
    # backward temporary, _safe_softmax's mask, SDPA's stride rule) and before any of their results.
    ("g01", "fresh2", "vision.py", "--model resnet101 --batch 64 --precision amp --opt sgd"),
    ("g02", "fresh2", "vision.py", "--model mobilenet_v2 --batch 128 --precision bf16 --opt adamw"),
    ("g03", "fresh2", "vision.py", "--model wide_resnet50_2 --batch 32 --precision fp32 --opt adamw"),
    ("g04", "fresh2", "vision.py", "--model resnet101 --batch 128 --infer --precision bf16"),
    ("g05", "fresh2", "vision.py", "--model efficientnet_v2_s --batch 32 --precision amp --opt adamw"),
    ("g06", "fresh2", "vision.py", "--model vit_l_16 --batch 8 --precision amp --opt adamw"),
    ("g07", "fresh2", "vision.py", "--model deit_s --batch 128 --precision bf16 --opt adamw"),
    ("g08", "fresh2", "vision.py", "--model swin_v2_t --batch 32 --precision amp --opt adamw"),
    ("g09", "fresh2", "vision.py", "--model vit_b_16 --batch 64 --infer --precision amp"),
    ("g10", "fresh2", "hf.py", "--model roberta-large-mlm --batch 8 --seq 256 --precision amp"),
    ("g11", "fresh2", "hf.py", "--model bert-mlm --batch 8 --seq 512 --precision bf16 --ckpt"),
    ("g12", "fresh2", "hf.py", "--model distilbert-mlm --batch 32 --seq 256 --precision amp"),
    ("g13", "fresh2", "hf.py", "--model bart --batch 8 --seq 512 --precision fp32 --opt sgd"),
    ("g14", "fresh2", "hf.py", "--model t5-small --batch 16 --seq 512 --precision amp"),
    ("g15", "fresh2", "hf.py", "--model whisper --batch 4 --seq 128 --infer --precision bf16"),
    ("g16", "fresh2", "gan.py", "--conditional --batch 128 --precision amp"),
    ("g17", "fresh2", "gan.py", "--width 96 --batch 64 --precision fp32"),
    ("g18", "fresh2", "unet.py", "--image 128 --width 64 --batch 8 --precision bf16"),
    ("g19", "fresh2", "unet.py", "--image 32 --width 128 --batch 64 --precision fp32 --ckpt --opt sgd"),
    ("g20", "fresh2", "hf.py", "--model qwen2-0.5b-lora --batch 4 --seq 1024 --precision bf16"),
    ("g21", "fresh2", "hf.py", "--model llama-mha-lora --batch 2 --seq 1024 --precision amp --ckpt"),
    ("g22", "fresh2", "hf.py", "--model qwen2-0.5b-lora --batch 2 --seq 1024 --precision fp32"),
    ("g23", "fresh2", "hf.py", "--model llama --batch 4 --seq 2048 --infer --precision bf16"),
    ("g24", "fresh2", "encoder.py", "--hidden 512 --heads 8 --layers 6 --batch 16 --seq 1024 --precision fp32"),
    ("g25", "fresh2", "encoder.py", "--batch 32 --seq 256 --precision amp --ckpt"),
]

# The cases docs/estimator.md names as the misses of round 2 (captured first).
MISSES = {"c16", "c34", "c28", "c27", "c30", "c21", "c24", "f03", "f01", "c04", "c36", "c11", "f16", "c37"}

# --max-batch: ladders of batch sizes run for real with a smaller card emulated by
# torch.cuda.set_per_process_memory_fraction (measure_real.py), so that the largest batch that runs
# is known to within one step: `vramdoc estimate --max-batch` for that card must never answer more.
# id, job, arguments with {batch}, the batches, the card's bytes, the driver's overhead beyond reserved.
MAX_BATCH_LADDERS = [
    ("mb-rn50", "vision.py", "--model resnet50 --batch {batch} --precision fp32 --opt sgd",
     range(222, 246, 4), 25757220864, 760 << 20),  # an RTX 4090's 23.99 GiB
    ("mb-enc", "encoder.py", "--batch {batch} --seq 512 --precision fp32", range(29, 33), 16 << 30, 742 << 20),
    ("mb-vgg", "vision.py", "--model vgg16 --batch {batch} --precision amp --opt sgd",
     range(104, 128, 4), 12 << 30, 760 << 20),
]
OVERHEAD_ORDERS = [
    "context,elementwise,cublas_fp32,cublas_bf16,cublas_thread,linear_train_fp32,linear_train_bf16,conv_fwd_fp32,"
    "conv_train_fp32,conv_fwd_bf16,conv_train_bf16,batch_norm,sdpa_bf16,sdpa_fp32,adamw,transformer_ops",
    "context,conv_fwd_fp32,conv_train_fp32,conv_fwd_bf16,conv_train_bf16,batch_norm,adamw,elementwise,cublas_fp32",
    "context,sdpa_bf16,sdpa_fp32,cublas_bf16,linear_train_bf16,transformer_ops,adamw",
    "context,elementwise,transformer_ops,cublas_fp32,cublas_thread,adamw",
]


def probe(out):
    """What the capture must imitate on this machine: autocast's CUDA ops, SDPA's kernel choices."""
    code = r'''
import json, torch, itertools
r = dict(torch=torch.__version__, cudnn=torch.backends.cudnn.version(),
         props=str(torch.cuda.get_device_properties(0)),
         autocast_cuda=sorted(torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCUDA")),
         autocast_cpu=sorted(torch._C._dispatch_get_registrations_for_dispatch_key("AutocastCPU")), sdpa=[])
for dt, mask, causal, hd, drop, grad, gqa in itertools.product([torch.float32, torch.bfloat16, torch.float16],
        [False, True], [False, True], [64, 80, 128, 256], [0.0, 0.1], [False, True], [False, True]):
    if mask and causal:
        continue
    q = torch.randn(2, 8, 128, hd, device="cuda", dtype=dt, requires_grad=grad)
    k = torch.randn(2, 2 if gqa else 8, 128, hd, device="cuda", dtype=dt, requires_grad=grad)
    m = torch.ones(128, 128, device="cuda", dtype=torch.bool) if mask else None
    try:
        c = torch._fused_sdp_choice(q, k, k, m, drop, causal, enable_gqa=gqa)
    except Exception as e:
        c = "error: %s" % str(e)[:80]
    r["sdpa"].append([str(dt), mask, causal, hd, drop, grad, gqa, c])
print(json.dumps(r))
'''
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    with open(os.path.join(out, "probe.json"), "w") as f:
        f.write(res.stdout or json.dumps(dict(error=res.stderr[-2000:])))


def capture_env(out, cid, hook_dir):
    return dict(os.environ, PYTHONUNBUFFERED="1", CUDA_VISIBLE_DEVICES="", OMP_NUM_THREADS="1",
                PYTHONPATH=hook_dir + os.pathsep + os.environ.get("PYTHONPATH", ""),
                VRAMDOC_CAPTURE_OUT=os.path.join(out, "capture", cid + ".trace"),
                VRAMDOC_CAPTURE_STEPS=os.environ.get("MEASURE_CAPTURE_STEPS", "3"),
                VRAMDOC_CAPTURE_GPU_NAME="NVIDIA H200", VRAMDOC_CAPTURE_GPU_BYTES=str(150754820096),
                VRAMDOC_CAPTURE_GPU_CC="9.0", VRAMDOC_CAPTURE_GPU_SMS="132")


def real_task(out, sub, cid, job, args, env_extra=None):
    cmd = [sys.executable, os.path.join(HERE, "measure_real.py"), os.path.join(out, sub, cid + ".json"),
           os.path.join(out, sub, cid + ".txt.gz"), "--", os.path.join(JOBS, job)] + args.split()
    env = dict(os.environ, PYTHONUNBUFFERED="1", **(env_extra or {}))
    return dict(name="%s %s" % (sub, cid), gpu=True, cmd=cmd, env=env, log=os.path.join(out, sub, cid + ".log"),
                limit=REAL_TIMEOUT_S)


def tasks(out, flags, cases, hook_dir):
    """Every process of this measurement: (GPU ones, CPU ones), the slowest first."""
    gpu, cpu = [], []
    if "--sweep" in flags:
        for dt in ("float32", "bfloat16"):
            gpu.append(dict(name="conv " + dt, gpu=True, log=os.path.join(out, "conv", dt + ".log"), limit=SWEEP_S + 30,
                            cmd=[sys.executable, os.path.join(HERE, "measure_conv_workspace.py"),
                                 os.path.join(out, "conv", dt + ".jsonl"), dt, str(SWEEP_S)], env=dict(os.environ)))
    if "--overhead" in flags:
        for i, order in enumerate(OVERHEAD_ORDERS):
            gpu.append(dict(name="overhead %d" % i, gpu=True, log=os.path.join(out, "overhead", "%d.log" % i), limit=60,
                            cmd=[sys.executable, os.path.join(HERE, "measure_overhead.py"),
                                 os.path.join(out, "overhead", "%d.json" % i), order], env=dict(os.environ)))
    real = next((f for f in flags if f.startswith("--real")), None)
    if real is not None:
        split = real.partition("=")[2]
        gpu += [real_task(out, "real", c[0], c[2], c[3]) for c in sorted(cases, key=lambda c: c[2] != "hf.py")
                if not split or c[1] == split]  # the transformers jobs (the slowest) first
    if "--max-batch-check" in flags:
        for lid, job, args, batches, card, overhead in MAX_BATCH_LADDERS:
            for b in batches:
                gpu.append(real_task(out, "max-batch", "%s-%d" % (lid, b), job, args.replace("{batch}", str(b)),
                                     dict(MEASURE_CARD_BYTES=str(card), MEASURE_OVERHEAD_BYTES=str(overhead))))
    if "--capture" in flags:  # the newest set and the named misses first (the budget may stop the rest)
        for c in sorted(cases, key=lambda c: (c[1] != "fresh2" and c[0] not in MISSES, c[2] != "hf.py")):
            cpu.append(dict(name="capture " + c[0], gpu=False, cmd=[sys.executable, os.path.join(JOBS, c[2])] + c[3].split(),
                            env=capture_env(out, c[0], hook_dir), log=os.path.join(out, "capture", c[0] + ".log"),
                            limit=CAPTURE_TIMEOUT_S))
    return gpu, cpu


def main():
    out = sys.argv[1]
    flags = set(a for a in sys.argv[2:] if a.startswith("--"))
    only = next((a.split(",") for a in sys.argv[2:] if not a.startswith("--")), None)
    cases = [c for c in CASES if only is None or c[0] in only]
    for d in ("real", "capture", "max-batch", "conv", "overhead"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump([dict(id=c[0], split=c[1], job=c[2], args=c[3]) for c in CASES], f, indent=1)
    hook_dir = tempfile.mkdtemp(prefix="vramdoc-capture-")
    shutil.copy(os.path.join(ROOT, "python", "vramdoc", "_capture.py"), os.path.join(hook_dir, "sitecustomize.py"))
    start = time.time()
    times = open(os.path.join(out, "times.txt"), "w")
    if "--probe" in flags:
        probe(out)
        print("[%5.1fs] probe done" % (time.time() - start), flush=True)
    queues = dict(zip((True, False), tasks(out, flags, cases, hook_dir)))
    slots = {True: GPU_SLOTS, False: CAPTURE_SLOTS}
    running = []  # (process, task, started, log file)
    while any(queues.values()) or running:
        for item in list(running):
            p, task, t0, log = item
            late = time.time() - t0 > task["limit"] or time.time() - start > BUDGET_S + 20
            if p.poll() is not None or late:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                log.close()
                running.remove(item)
                line = "[%5.1fs] %s rc=%s %.1fs%s" % (time.time() - start, task["name"], p.returncode, time.time() - t0,
                                                      " (stopped)" if late else "")
                print(line, flush=True)
                times.write(line + "\n")
        for gpu in (True, False):
            while queues[gpu] and sum(1 for r in running if r[1]["gpu"] == gpu) < slots[gpu]:
                if time.time() - start > BUDGET_S:
                    line = "not started (budget): %s" % [t["name"] for t in queues[gpu]]
                    print(line, flush=True)
                    times.write(line + "\n")
                    queues[gpu] = []
                    break
                task = queues[gpu].pop(0)
                log = open(task["log"], "w")
                running.append((subprocess.Popen(task["cmd"], env=task["env"], stdout=log, stderr=subprocess.STDOUT,
                                                 cwd=JOBS), task, time.time(), log))
        time.sleep(0.2)
    times.close()
    print("done in %.0fs" % (time.time() - start), flush=True)


if __name__ == "__main__":
    main()
