"""A small training loop for vramdoc's recordings (h15b): one process, or one rank of a torchrun job.
--leak-rank R: rank R keeps --leak-mib MiB per step (a tensor appended to a list); the others stable.
--slow-leak-mib X: every rank keeps X MiB per step. --eval-every K: an evaluation every K steps
(--eval-spike-mib: a large temporary under no_grad; --eval-keep: keeps the outputs with their graph).
Writes its own truth per step (allocated / reserved from torch) to --truth DIR/truth.RANK.jsonl."""
import argparse, json, os, time

import torch
import torch.nn as nn

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=80)
p.add_argument("--step-sleep", type=float, default=0.05)
p.add_argument("--width", type=int, default=2048)
p.add_argument("--batch", type=int, default=256)
p.add_argument("--leak-rank", type=int, default=-1)
p.add_argument("--leak-mib", type=float, default=62.5)
p.add_argument("--slow-leak-mib", type=float, default=0)
p.add_argument("--eval-every", type=int, default=0)
p.add_argument("--eval-spike-mib", type=float, default=0)
p.add_argument("--eval-keep", action="store_true")
p.add_argument("--truth", default="")
a = p.parse_args()

rank = int(os.environ.get("RANK", 0))
world = int(os.environ.get("WORLD_SIZE", 1))
local = int(os.environ.get("LOCAL_RANK", 0))
torch.cuda.set_device(local)
dev = torch.device("cuda", local)
model = nn.Sequential(nn.Linear(a.width, a.width), nn.ReLU(), nn.Linear(a.width, a.width), nn.ReLU(),
                      nn.Linear(a.width, 16)).to(dev)
if world > 1:
    torch.distributed.init_process_group("nccl", device_id=dev)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local])
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
kept, evals = [], []
truth = open(os.path.join(a.truth, "truth.%d.jsonl" % rank), "w") if a.truth else None
t0 = time.time()
for step in range(a.steps):
    x = torch.randn(a.batch, a.width, device=dev)
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    if rank == a.leak_rank:
        kept.append(torch.empty(int(a.leak_mib * 2**20), dtype=torch.uint8, device=dev))
    if a.slow_leak_mib:
        kept.append(torch.empty(int(a.slow_leak_mib * 2**20), dtype=torch.uint8, device=dev))
    if a.eval_every and step % a.eval_every == a.eval_every - 1:
        if a.eval_keep:
            evals.append(model(torch.randn(a.batch * 4, a.width, device=dev)))  # graph kept: the periodic leak
        else:
            with torch.no_grad():
                spike = torch.empty(int(a.eval_spike_mib * 2**20), dtype=torch.uint8, device=dev)
                model(torch.randn(a.batch * 4, a.width, device=dev))
                del spike
    torch.cuda.synchronize()
    if truth:
        truth.write(json.dumps({"step": step, "t_unix": time.time(), "pid": os.getpid(), "rank": rank,
                                "allocated": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved()}) + "\n")
    print("rank %d step %d loss %.4f" % (rank, step, loss.item()), flush=True)
    time.sleep(a.step_sleep)
if world > 1:
    torch.distributed.barrier()
    torch.distributed.destroy_process_group()
print("rank %d done in %.1f s, kept %d tensors" % (rank, time.time() - t0, len(kept)), flush=True)
