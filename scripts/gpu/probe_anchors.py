"""The batch-size finders vramdoc probe is compared with, on probe_jobs.py's jobs (issue 30).

    python3 probe_anchors.py JOB FINDER [--limit-gib 16 | --limit-bytes N] [--start 512] [--steps-per-trial 3]

FINDER: lightning-power      Lightning's Tuner.scale_batch_size(mode="power"): BatchSizeFinder's
                             doubling from init_val 2 until the first OOM
        lightning-binsearch  the same with mode="binsearch" (doubling, then bisection)
        accelerate           accelerate.utils.find_executable_batch_size(starting_batch_size=--start)
                             around a trial of --steps-per-trial steps (a fresh AdamW each attempt)
Each finder runs --steps-per-trial steps per size (Lightning's default is 3). Prints one JSON line:
{"job", "finder", "value", "seconds", "trials"}; the 50-step check is a separate, fresh process
(probe_compare.py). The card is limited as in probe_jobs.py.
"""
import argparse
import json
import sys
import time

import torch

import probe_jobs

t0 = time.time()


def lightning_finder(job, seq, mode, steps):
    import lightning.pytorch as pl
    from lightning.pytorch.tuner import Tuner

    class Batches(torch.utils.data.Dataset):
        def __init__(self, make, size):
            self.make, self.size = make, size

        def __len__(self):
            return 1 << 20

        def __getitem__(self, i):
            return self.make(self.size, i)

    class Module(pl.LightningModule):
        def __init__(self):
            super().__init__()
            self.batch_size = 2
            self.model, self.make = probe_jobs.build(job, seq)
            self.sizes = []

        def train_dataloader(self):
            self.sizes.append(self.batch_size)
            return torch.utils.data.DataLoader(Batches(self.make, self.batch_size), batch_size=None)

        def training_step(self, batch, index):
            return probe_jobs.loss_of(job, self.model, batch)

        def configure_optimizers(self):
            return torch.optim.AdamW(self.model.parameters(), lr=1e-5)

    module = Module()
    trainer = pl.Trainer(accelerator="gpu", devices=1, precision="bf16-mixed", max_steps=10, logger=False,
                         enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    value = Tuner(trainer).scale_batch_size(module, mode=mode, steps_per_trial=steps, init_val=2, max_trials=25)
    return value, module.sizes


def accelerate_finder(job, seq, start, steps):
    from accelerate.utils import find_executable_batch_size

    model, make = probe_jobs.build(job, seq)
    model = model.cuda().train()
    sizes = []

    @find_executable_batch_size(starting_batch_size=start)
    def attempt(batch_size):
        sizes.append(batch_size)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        try:
            for step in range(steps):
                inputs = probe_jobs.to_device(make(batch_size, step))
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    loss = probe_jobs.loss_of(job, model, inputs)
                loss.backward()
                opt.step()
                opt.zero_grad(set_to_none=True)
        finally:
            model.zero_grad(set_to_none=True)
            del opt
        return batch_size

    return attempt(), sizes


def main():
    p = argparse.ArgumentParser()
    p.add_argument("job")
    p.add_argument("finder", choices=["lightning-power", "lightning-binsearch", "accelerate"])
    p.add_argument("--seq", type=int, default=None)
    p.add_argument("--limit-gib", type=float, default=16)
    p.add_argument("--limit-bytes", type=int, default=0)
    p.add_argument("--start", type=int, default=512)
    p.add_argument("--steps-per-trial", type=int, default=3)
    a = p.parse_args()
    seq = a.seq or probe_jobs.DEFAULT_SEQ.get(a.job, 384)
    probe_jobs.limit_card(a.limit_gib, a.limit_bytes)
    if a.finder == "accelerate":
        value, sizes = accelerate_finder(a.job, seq, a.start, a.steps_per_trial)
    else:
        value, sizes = lightning_finder(a.job, seq, a.finder.split("-")[1], a.steps_per_trial)
    print(json.dumps({"job": a.job, "finder": a.finder, "value": value, "seconds": round(time.time() - t0, 1),
                      "trials": sizes}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
