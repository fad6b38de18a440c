#!/usr/bin/env python3
"""What the driver charges a PyTorch process beyond its caching allocator's reserved memory, stage by
stage (docs/estimator.md, "The process total"): the CUDA context alone, then each library and kernel
family as a job first uses it (CUDA_MODULE_LOADING=LAZY, the default: a kernel's module is loaded when
it first runs). One fresh process per ORDER; after each stage NVML's number for this process, the
allocator's reserved bytes, and their difference.
  python3 measure_overhead.py OUT.json ORDER      ORDER: comma-separated stage names (STAGES)"""
import json
import os
import subprocess
import sys
import threading

import torch
import torch.nn.functional as F


def driver_used():
    """NVML's bytes for this process (pynvml, else nvidia-smi)."""
    try:
        import pynvml
        pynvml.nvmlInit()
        for p in pynvml.nvmlDeviceGetComputeRunningProcesses(pynvml.nvmlDeviceGetHandleByIndex(0)):
            if p.pid == os.getpid() and p.usedGpuMemory is not None:
                return p.usedGpuMemory
    except Exception:
        pass
    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory", "--format=csv,noheader,nounits"],
                         capture_output=True, text=True, timeout=20).stdout
    for line in out.splitlines():
        pid, mib = [x.strip() for x in line.split(",")]
        if int(pid) == os.getpid():
            return int(mib) << 20
    return None


def cuda(*shape, dtype=torch.float32, grad=False):
    return torch.randn(*shape, device="cuda", dtype=dtype, requires_grad=grad)


def matmul(dtype):
    return lambda: cuda(512, 512, dtype=dtype) @ cuda(512, 512, dtype=dtype)


def in_thread(fn):
    def run():
        t = threading.Thread(target=fn)
        t.start()
        t.join()
    return run


def linear_train(dtype):
    def run():
        m = torch.nn.Linear(512, 512).to("cuda", dtype)
        m(cuda(64, 512, dtype=dtype)).sum().backward()
    return run


def conv(dtype, backward):
    def run():
        x, w = cuda(8, 64, 32, 32, dtype=dtype, grad=backward), cuda(64, 64, 3, 3, dtype=dtype, grad=backward)
        y = F.conv2d(x, w, padding=1)
        if backward:
            y.sum().backward()
    return run


def batch_norm():
    m = torch.nn.BatchNorm2d(64).cuda()
    m(cuda(8, 64, 32, 32, grad=True)).sum().backward()


def sdpa(dtype):
    def run():
        q = cuda(4, 8, 256, 64, dtype=dtype, grad=True)
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.1).sum().backward()
    return run


def adamw():
    ps = [torch.nn.Parameter(cuda(512, 512)) for _ in range(4)]
    for p in ps:
        p.grad = torch.randn_like(p)
    torch.optim.AdamW(ps).step()


def transformer_ops():
    x = cuda(8, 128, 512, grad=True)
    ids = torch.randint(0, 1000, (8, 128), device="cuda")
    emb = torch.nn.Embedding(1000, 512).cuda()
    y = F.layer_norm(x + emb(ids), (512,)).softmax(-1)
    F.cross_entropy(y.view(-1, 512), torch.randint(0, 512, (8 * 128,), device="cuda")).backward()


STAGES = {
    "context": lambda: torch.empty(1, device="cuda"),
    "elementwise": lambda: cuda(1024, 1024) * 2 + 1,
    "cublas_fp32": matmul(torch.float32),
    "cublas_bf16": matmul(torch.bfloat16),
    "cublas_thread": in_thread(matmul(torch.float32)),  # a second handle, as autograd's thread has
    "linear_train_fp32": linear_train(torch.float32),
    "linear_train_bf16": linear_train(torch.bfloat16),
    "conv_fwd_fp32": conv(torch.float32, False),
    "conv_train_fp32": conv(torch.float32, True),
    "conv_fwd_bf16": conv(torch.bfloat16, False),
    "conv_train_bf16": conv(torch.bfloat16, True),
    "batch_norm": batch_norm,
    "sdpa_bf16": sdpa(torch.bfloat16),
    "sdpa_fp32": sdpa(torch.float32),
    "adamw": adamw,
    "transformer_ops": transformer_ops,
}


def main():
    out, order = sys.argv[1], sys.argv[2].split(",")
    rows = []
    for name in order:
        STAGES[name]()
        torch.cuda.synchronize()
        used, reserved = driver_used(), torch.cuda.memory_reserved()
        rows.append(dict(stage=name, driver=used, reserved=reserved, beyond=None if used is None else used - reserved))
    with open(out, "w") as f:
        json.dump(dict(torch=torch.__version__, cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version(),
                       loading=os.environ.get("CUDA_MODULE_LOADING", "(default)"), order=order, stages=rows), f)


if __name__ == "__main__":
    main()
