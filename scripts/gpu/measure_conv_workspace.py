#!/usr/bin/env python3
"""What cuDNN asks PyTorch's caching allocator for inside one convolution, per direction, on this
GPU (docs/estimator.md, "cuDNN's convolution workspaces"): a fixed grid of convolutions (not the
accuracy jobs' layers), each run forward, as the data gradient and as the weight gradient
(aten.convolution_backward with one output each), in this one process (the workspace is per call;
PyTorch's plan cache is keyed by the shape, so every grid point asks cuDNN's heuristics afresh).
  python3 measure_conv_workspace.py OUT.jsonl DTYPE [SECONDS]
One JSON line per grid point: the convolution's arguments, and for each direction the bytes alive
above the inputs and outputs at the op's peak (`fwd`, `dgrad`, `wgrad`), i.e. the workspace and any
internal temporaries, with the allocations the op made that it freed itself (`fwd_temps`, ...)."""
import itertools
import json
import random
import sys
import time

import torch

aten = torch.ops.aten


def grid(seed=2026):
    """(N, C, K, H, kernel, stride, groups, transposed): every stem / body / head pattern of the
    common CNN families at a few batch sizes and widths, in a fixed pseudo-random order."""
    points = []
    for n, c, h, k, s in itertools.product([8, 32, 128], [16, 64, 96, 256, 512], [7, 14, 28, 56, 112],
                                           [1, 3, 5, 7], [1, 2]):
        for ratio in (1, 2, 4):
            points.append((n, c, c * ratio if s == 1 else c * 2, h, k, s, 1, False))
        points.append((n, c, c, h, k, s, c, False))          # depthwise
        if c >= 64:
            points.append((n, c, c, h, k, s, c // 16, False))  # grouped (RegNet, ResNeXt)
    for n, c, h in itertools.product([8, 32, 128], [3], [32, 64, 224]):
        points += [(n, c, 64, h, 7, 2, 1, False), (n, c, 32, h, 3, 2, 1, False), (n, c, 96, h, 4, 4, 1, False),
                   (n, c, 64, h, 3, 1, 1, False), (n, c, 768, h, 16, 16, 1, False)]
    for n, c, h in itertools.product([8, 32, 128], [64, 128, 256, 512], [4, 8, 16, 32]):
        points += [(n, c, c // 2, h, 4, 2, 1, True), (n, c, c // 2, h, 2, 2, 1, True)]  # GAN / UNet upsampling
    for n, c, h in itertools.product([8, 32, 128], [3, 64, 128, 256], [8, 16, 32, 64]):
        points.append((n, c, 64 if c == 3 else c * 2, h, 4, 2, 1, False))  # GAN / UNet 4x4 downsampling
    random.Random(seed).shuffle(points)
    return points


def bytes_of(*ts):
    return sum(t.untyped_storage().nbytes() for t in ts if t is not None)


def measure(fn, keep):
    """Bytes above `keep` plus the outputs at the op's peak, and the temporaries it freed itself."""
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    torch.cuda.memory._record_memory_history(enabled="all", context=None, stacks="python", max_entries=10000)
    out = fn()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    peak = torch.cuda.max_memory_allocated()
    outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
    alive, temps = {}, []
    for e in (snap.get("device_traces") or [[]])[0]:
        if e["action"] == "alloc":
            alive[e["addr"]] = e["size"]
        elif e["action"] == "free_completed" and e["addr"] in alive:
            temps.append(alive.pop(e["addr"]))
    return peak - before - bytes_of(*outs), temps, outs


def main():
    out_path, dtype = sys.argv[1], getattr(torch, sys.argv[2])
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    t0 = time.time()
    torch.backends.cudnn.benchmark = False
    with open(out_path, "w") as f:
        f.write(json.dumps(dict(torch=torch.__version__, cudnn=torch.backends.cudnn.version(), dtype=str(dtype),
                                tf32=torch.backends.cudnn.allow_tf32)) + "\n")
        for n, c, k, h, kernel, stride, groups, transposed in grid():
            if time.time() - t0 > budget:
                break
            pad = kernel // 2 if not transposed else (kernel - stride) // 2
            h_out = h * stride if transposed else (h + 2 * pad - kernel) // stride + 1
            if (h < kernel and not transposed) or n * h * h * c + n * h_out * h_out * k > (1 << 30):
                continue  # at most 1 G elements of input and output (the card is shared with other cases)
            rec = dict(n=n, c=c, k=k, h=h, kernel=kernel, stride=stride, pad=pad, groups=groups, transposed=transposed)
            try:
                x = torch.randn(n, c, h, h, device="cuda", dtype=dtype)
                wshape = (c, k // groups, kernel, kernel) if transposed else (k, c // groups, kernel, kernel)
                w = torch.randn(wshape, device="cuda", dtype=dtype)
                args = ([stride] * 2, [pad] * 2, [1, 1], transposed, [0, 0], groups)
                rec["fwd"], rec["fwd_temps"], outs = measure(lambda: aten.convolution(x, w, None, *args), 0)
                y = outs[0]
                rec["out"] = list(y.shape)
                gy = torch.randn_like(y)
                for name, mask in (("dgrad", [True, False, False]), ("wgrad", [False, True, False])):
                    rec[name], rec[name + "_temps"], _ = measure(
                        lambda: aten.convolution_backward(gy, x, w, None, *args, mask), 0)
                del x, w, y, gy, outs
            except Exception as e:  # one grid point's failure (out of memory, unsupported) never stops the rest
                rec["error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
            f.write(json.dumps(rec) + "\n")
    print("%d s" % (time.time() - t0))


if __name__ == "__main__":
    main()
