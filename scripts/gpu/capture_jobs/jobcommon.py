"""What the capture's accuracy jobs share: their options and an ordinary PyTorch training or
inference loop (scripts/gpu/capture_jobs/README.md). Each job is a plain script a user could have
written; vramdoc runs it unchanged, the measurement runs it on the GPU."""
import argparse

import torch


def parser(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--precision", choices=["fp32", "amp", "bf16"], default="fp32",
                   help="fp32; amp: torch.autocast(bfloat16) over fp32 weights; bf16: bf16 weights")
    p.add_argument("--opt", choices=["sgd", "adamw"], default="adamw")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--ckpt", action="store_true", help="gradient checkpointing")
    p.add_argument("--infer", action="store_true", help="forward passes under no_grad only")
    return p


def dtype_of(a):
    return torch.bfloat16 if a.precision == "bf16" else torch.float32


def optimizer(a, params):
    params = [p for p in params if p.requires_grad]
    if a.opt == "sgd":
        return torch.optim.SGD(params, lr=1e-3, momentum=0.9)
    return torch.optim.AdamW(params, lr=1e-4)


def autocast(a):
    return torch.autocast("cuda", dtype=torch.bfloat16, enabled=a.precision == "amp")


def call(model, inputs):
    return model(**inputs) if isinstance(inputs, dict) else model(*inputs)


def run(a, model, make_inputs, loss_of, cast=True):
    """model on the GPU in the job's precision (cast=False: as it is); `steps` optimizer steps, or
    forwards under no_grad with --infer. make_inputs gives a tuple or a dict of model inputs."""
    model = (model.to(dtype_of(a)) if cast else model).to("cuda")
    if a.infer:
        model.eval()
        with torch.no_grad():
            for _ in range(a.steps):
                with autocast(a):
                    out = call(model, make_inputs())
                del out
        return
    model.train()
    opt = optimizer(a, model.parameters())
    for step in range(a.steps):
        inputs = make_inputs()
        with autocast(a):
            loss = loss_of(model, inputs)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del loss, inputs



def checkpoint(fn, *args):
    """Activation checkpointing as PyTorch recommends it (non-reentrant)."""
    import torch.utils.checkpoint

    return torch.utils.checkpoint.checkpoint(fn, *args, use_reentrant=False)
