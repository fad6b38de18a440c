#!/usr/bin/env python3
"""The accuracy measurement of `vramdoc estimate -- python JOB` (docs/estimator.md, "Estimating a
script"): every case of CASES run for real on the GPU, each in a fresh process (measure_real.py:
peaks, NVML's process total, the allocator's trace), and captured on the CPU with the GPU hidden
(CUDA_VISIBLE_DEVICES='', python/vramdoc/_capture.py as sitecustomize: the trace vramdoc replays).
  python3 scripts/gpu/measure_capture.py OUTDIR [--real] [--capture] [--probe] [--max-batch-check] [ID,ID]
OUTDIR/real/ID.json + ID.txt.gz, OUTDIR/capture/ID.trace + ID.log, OUTDIR/probe.json, OUTDIR/cases.json.
The split (dev: tune on these; held-out: never looked at before the estimate is final) is fixed here.
Cases run concurrently (each process's peaks and NVML number are its own); MEASURE_BUDGET_S stops
starting new ones."""
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
REAL_SLOTS = int(os.environ.get("MEASURE_REAL_SLOTS", "6"))
CAPTURE_SLOTS = int(os.environ.get("MEASURE_CAPTURE_SLOTS", "10"))
REAL_TIMEOUT_S, CAPTURE_TIMEOUT_S = 120, 200

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
]

# --max-batch checks: the value `vramdoc estimate --max-batch` predicted for a smaller card (see
# docs/estimator.md) and one above it, run for real with that card emulated by
# torch.cuda.set_per_process_memory_fraction (measure_real.py): the predicted value must not run
# out of memory. id, job, arguments, the card's bytes, the driver's overhead beyond reserved.
MAX_BATCH_CHECKS = [
    ("mb-enc-28", "encoder.py", "--batch 28 --seq 512 --precision fp32", 16 << 30, 742 << 20),
    ("mb-enc-29", "encoder.py", "--batch 29 --seq 512 --precision fp32", 16 << 30, 742 << 20),
    ("mb-rn50-219", "vision.py", "--model resnet50 --batch 219 --precision fp32 --opt sgd", 25757220864, 760 << 20),
    ("mb-rn50-220", "vision.py", "--model resnet50 --batch 220 --precision fp32 --opt sgd", 25757220864, 760 << 20),
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


def commands(out, case, real, hook_dir):
    cid, split, job, args = case[:4]
    script = [sys.executable, os.path.join(JOBS, job)] + args.split()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if len(case) > 4:  # a --max-batch check: the card emulated
        env.update(MEASURE_CARD_BYTES=str(case[4]), MEASURE_OVERHEAD_BYTES=str(case[5]))
    if real:
        cmd = [sys.executable, os.path.join(HERE, "measure_real.py"), os.path.join(out, "real", cid + ".json"),
               os.path.join(out, "real", cid + ".txt.gz"), "--"] + script[1:]
        return cmd, env, os.path.join(out, "real", cid + ".log")
    env.update(CUDA_VISIBLE_DEVICES="", PYTHONPATH=hook_dir + os.pathsep + env.get("PYTHONPATH", ""),
               VRAMDOC_CAPTURE_OUT=os.path.join(out, "capture", cid + ".trace"),
               VRAMDOC_CAPTURE_STEPS=os.environ.get("MEASURE_CAPTURE_STEPS", "3"),
               VRAMDOC_CAPTURE_GPU_NAME="NVIDIA H200", VRAMDOC_CAPTURE_GPU_BYTES=str(150754820096),
               VRAMDOC_CAPTURE_GPU_CC="9.0", VRAMDOC_CAPTURE_GPU_SMS="132")
    return script, env, os.path.join(out, "capture", cid + ".log")


def main():
    out = sys.argv[1]
    flags = set(a for a in sys.argv[2:] if a.startswith("--"))
    only = next((a.split(",") for a in sys.argv[2:] if not a.startswith("--")), None)
    cases = [c for c in CASES if only is None or c[0] in only]
    for d in ("real", "capture"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump([dict(id=c[0], split=c[1], job=c[2], args=c[3]) for c in CASES], f, indent=1)
    hook_dir = tempfile.mkdtemp(prefix="vramdoc-capture-")
    shutil.copy(os.path.join(ROOT, "python", "vramdoc", "_capture.py"), os.path.join(hook_dir, "sitecustomize.py"))
    start = time.time()
    if "--probe" in flags:
        probe(out)
        print("[%5.1fs] probe done" % (time.time() - start), flush=True)
    checks = [(i, "check", job, args, card, overhead) for i, job, args, card, overhead in MAX_BATCH_CHECKS]
    queues = {True: (checks if "--max-batch-check" in flags else []) + (list(cases) if "--real" in flags else []),
              False: sorted(cases, key=lambda c: c[2] != "hf.py") if "--capture" in flags else []}  # the slowest first
    slots = {True: REAL_SLOTS, False: CAPTURE_SLOTS}
    limit = {True: REAL_TIMEOUT_S, False: CAPTURE_TIMEOUT_S}
    running = []  # (process, case, real, started, log file)
    while any(queues.values()) or running:
        for item in list(running):
            p, case, real, t0, log = item
            if p.poll() is not None or time.time() - t0 > limit[real] or time.time() - start > BUDGET_S + 25:
                if p.poll() is None:
                    p.kill()
                    p.wait()
                log.close()
                running.remove(item)
                print("[%5.1fs] %s %s rc=%s %.1fs" % (time.time() - start, "real" if real else "capture", case[0],
                                                     p.returncode, time.time() - t0), flush=True)
        for real in (True, False):
            while queues[real] and sum(1 for r in running if r[2] == real) < slots[real]:
                if time.time() - start > BUDGET_S:
                    print("not started (budget): %s %s" % ("real" if real else "capture", [c[0] for c in queues[real]]))
                    queues[real] = []
                    break
                case = queues[real].pop(0)
                cmd, env, log_path = commands(out, case, real, hook_dir)
                log = open(log_path, "w")
                running.append((subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=JOBS),
                                case, real, time.time(), log))
        time.sleep(0.2)
    print("done in %.0fs" % (time.time() - start), flush=True)


if __name__ == "__main__":
    main()
