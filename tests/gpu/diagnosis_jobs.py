"""Training loops the classifier must tell apart (issue 15), for `vramdoc run` on a GPU.

    python3 diagnosis_jobs.py periodic_eval   evaluates every 5 steps without torch.no_grad() and keeps
                                              the outputs (their graphs too): a periodic leak, fixed shapes
    python3 diagnosis_jobs.py eval_spike      evaluates every 10 steps at 8x the batch, graph built but not
                                              kept (only loss.item()): one large rise, then flat
    python3 diagnosis_jobs.py slow_leak       keeps 2 MiB per step for 150 steps: inside the cache's slack
    python3 diagnosis_jobs.py stable          the same loop keeping nothing
    python3 diagnosis_jobs.py insufficient B  a Llama-style model (config.json beside this file), seq 2048,
                                              batch B, until CUDA runs out of memory in the first step
    python3 diagnosis_jobs.py need B...       the same model's peak at each batch B (one step each): the
                                              ground truth to extrapolate the insufficient job's need from

Each step ends with "step N allocated=BYTES reserved=BYTES peak=BYTES" (torch.cuda.memory_allocated /
memory_reserved at the step's end, max_memory_allocated: the step hook's fields) on stdout and in $VRAMDOC_MARK_FILE when vramdoc run sets it.
Plain PyTorch (transformers only for insufficient / need), no downloads.
"""
import json
import os
import sys
import time

import torch

MARK_FILE = os.environ.get("VRAMDOC_MARK_FILE")
HERE = os.path.dirname(os.path.abspath(__file__))


def mark(label):
    line = (f"{label} allocated={torch.cuda.memory_allocated()} reserved={torch.cuda.memory_reserved()}"
            f" peak={torch.cuda.max_memory_allocated()}")
    print(line, flush=True)
    if MARK_FILE:
        with open(MARK_FILE, "a") as f:
            f.write(line + "\n")


def mlp(hidden=2048, blocks=8):
    layers = []
    for _ in range(blocks):
        layers += [torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(), torch.nn.Linear(4 * hidden, hidden)]
    return torch.nn.Sequential(*layers).cuda()


def loop(steps, batch=512, eval_every=0, eval_batch=512, keep_eval=False, leak_bytes=0, pause_s=0.05):
    """A training loop of an 8-block MLP (fp32, AdamW); fixed shapes; pause_s stands for data loading."""
    torch.manual_seed(0)
    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    x = torch.randn(batch, 2048, device="cuda")
    xe = torch.randn(eval_batch, 2048, device="cuda")
    kept = []
    for step in range(steps):
        loss = model(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if eval_every and step % eval_every == eval_every - 1:
            out = model(xe)               # no torch.no_grad(): the graph is built
            if keep_eval:
                kept.append(out)          # kept with its graph: every eval's activations stay
            else:
                out.pow(2).mean().item()  # only a number kept: the graph is freed
        if leak_bytes:
            kept.append(torch.empty(leak_bytes, dtype=torch.uint8, device="cuda"))
        torch.cuda.synchronize()
        mark(f"step {step}")
        time.sleep(pause_s)
    return kept


def llama(batch, seq=2048):
    from transformers import AutoModelForCausalLM, LlamaConfig
    cfg = LlamaConfig(**json.load(open(os.path.join(HERE, "diagnosis_llama.json"))))
    with torch.device("cuda"):
        m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16, attn_implementation="sdpa")
    opt = torch.optim.AdamW(m.parameters(), lr=1e-5)
    return cfg, m, opt


def train_step(cfg, m, opt, batch, seq=2048):
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device="cuda")
    m(input_ids=ids, labels=ids).loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    torch.cuda.synchronize()


def insufficient(batch):
    cfg, m, opt = llama(batch)
    mark("model loaded")
    for step in range(3):
        train_step(cfg, m, opt, batch)
        mark(f"step {step}")


def need(batches):
    cfg, m, opt = llama(batches[0])
    for b in batches:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        try:
            train_step(cfg, m, opt, b)
            train_step(cfg, m, opt, b)
            print(json.dumps({"batch": b, "seq": 2048, "max_allocated": torch.cuda.max_memory_allocated(),
                              "max_reserved": torch.cuda.max_memory_reserved(),
                              "allocated_after": torch.cuda.memory_allocated()}), flush=True)
        except torch.OutOfMemoryError as e:
            print(json.dumps({"batch": b, "seq": 2048, "oom": str(e)[:400]}), flush=True)
            break


def main():
    what = sys.argv[1]
    if what == "periodic_eval":
        loop(120, eval_every=5, keep_eval=True)
    elif what == "eval_spike":
        loop(120, eval_every=10, eval_batch=4096)
    elif what == "slow_leak":
        loop(150, leak_bytes=2 << 20, pause_s=0.03)
    elif what == "stable":
        loop(120)
    elif what == "insufficient":
        insufficient(int(sys.argv[2]))
    elif what == "need":
        need([int(b) for b in sys.argv[2:]])
    else:
        sys.exit(f"unknown job {what}")


if __name__ == "__main__":
    main()
