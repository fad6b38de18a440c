"""Jobs whose memory sits at the seams the classifier must look across (issue 29), for `vramdoc run`
on a GPU. Sizes and rates are our own (not the issue's), so a verdict that is right here is not
tuned to the issue's numbers. Each job marks nothing itself: the step hook does.

    python3 accounting_jobs.py fraction_oom   set_per_process_memory_fraction(0.07); the first step
                                              needs more than that (24 slow layers keeping 1 GiB each
                                              for backward): OOM inside step 1, "... allowed"
    python3 accounting_jobs.py ext_leak       a flat training loop that also keeps 12 MiB a step of
                                              raw cudaMalloc (CuPy's runtime.malloc, as an extension
                                              does): PyTorch's allocated and reserved stay flat
    python3 accounting_jobs.py ext_native     the same with a C++ extension (scratch_ext.cu, through
                                              ctypes; $VRAMDOC_SCRATCH_EXT names the built library)
                                              keeping 10 MiB a step, and 2 MiB of pinned host memory
                                              every 10 steps
    python3 accounting_jobs.py helpers        a flat training loop that starts a helper process each
                                              epoch (4 s), each holding 768 MiB and never stopped
    python3 accounting_jobs.py serving        generate() requests of random sizes on a small Llama (no
                                              optimizer): the cache grows to a plateau, nothing kept
    python3 accounting_jobs.py trainer_eval   the Hugging Face Trainer keeping every evaluation batch's
                                              logits on the GPU (no eval_accumulation_steps), under a
                                              per-process fraction of 0.06: OOM in evaluation
    python3 accounting_jobs.py workers        a flat training loop fed by 3 DataLoader workers (spawn)
                                              that each made a CUDA context
"""
import os
import random
import subprocess
import sys
import time

import torch

MiB = 1 << 20


def mlp(hidden=1024, blocks=4):
    layers = []
    for _ in range(blocks):
        layers += [torch.nn.Linear(hidden, 4 * hidden), torch.nn.GELU(), torch.nn.Linear(4 * hidden, hidden)]
    return torch.nn.Sequential(*layers).cuda()


def train_steps(model, opt, steps, batch=256, hidden=1024, each=None, pause=0.04):
    for i in range(steps):
        x = torch.randn(batch, hidden, device="cuda")
        loss = model(x).square().mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        if each:
            each(i)
        torch.cuda.synchronize()
        time.sleep(pause)


class SlowStack(torch.nn.Module):
    """Layers whose activations are kept for backward, each taking a while (as a large model's do)."""

    def __init__(self, hidden, depth):
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(hidden, hidden) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
            torch.cuda.synchronize()
            time.sleep(0.15)
        return x


def fraction_oom():
    torch.cuda.set_per_process_memory_fraction(0.07)  # about 9.8 GiB of the H200's 140
    model = SlowStack(4096, 24).cuda()  # 1.5 GiB of weights
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    x = torch.randn(32768, 4096, device="cuda")  # each layer keeps 2 x 512 MiB for backward
    for step in range(3):  # never gets past the first forward
        model(x).square().mean().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)


def ext_leak():
    import cupy

    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    kept = []

    def leak(i):
        kept.append(cupy.cuda.runtime.malloc(12 * MiB))  # never freed, outside PyTorch's allocator

    train_steps(model, opt, 90, each=leak, pause=0.08)


def ext_native():
    import ctypes

    ext = ctypes.CDLL(os.environ.get("VRAMDOC_SCRATCH_EXT", os.path.join(os.path.dirname(__file__), "libscratch_ext.so")))
    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def leak(i):
        ext.make_scratch(ctypes.c_size_t(10 * MiB))
        if i % 10 == 0:
            ext.make_pinned(ctypes.c_size_t(2 * MiB))

    train_steps(model, opt, 90, each=leak, pause=0.08)


def helper():
    x = torch.empty(768 * MiB, dtype=torch.uint8, device="cuda")
    parent = os.getppid()
    while os.getppid() == parent:  # never stopped by the job; gone once the job's process is
        time.sleep(0.2)
    del x


def helpers():
    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    started = []
    for epoch in range(5):
        started.append(subprocess.Popen([sys.executable, __file__, "helper"]))
        t0 = time.time()
        while time.time() - t0 < 4.0:  # an epoch of 4 s
            train_steps(model, opt, 5, pause=0.05)
    time.sleep(1.0)


def serving():
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=6, num_attention_heads=16,
                         num_key_value_heads=16, vocab_size=32000, max_position_embeddings=4096)
    model = LlamaForCausalLM(config).to("cuda", torch.bfloat16).eval()
    rng = random.Random(29)
    with torch.no_grad():
        for request in range(45):
            batch, prompt, new = rng.randint(1, 12), rng.randint(16, 1024), rng.randint(4, 24)
            ids = torch.randint(0, config.vocab_size, (batch, prompt), device="cuda")
            out = model.generate(ids, max_new_tokens=new, min_new_tokens=new, do_sample=False, pad_token_id=0)
            del out, ids  # the request's KV cache goes with it
            time.sleep(0.1)


class RandomTokens(torch.utils.data.Dataset):
    def __init__(self, n, seq, vocab):
        g = torch.Generator().manual_seed(n)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "labels": self.ids[i]}


def trainer_eval():
    from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

    torch.cuda.set_per_process_memory_fraction(0.06)  # a card of about 8.4 GiB
    config = LlamaConfig(hidden_size=512, intermediate_size=1408, num_hidden_layers=4, num_attention_heads=8,
                         num_key_value_heads=8, vocab_size=32000, max_position_embeddings=1024)
    model = LlamaForCausalLM(config)
    args = TrainingArguments(output_dir=os.environ.get("TMPDIR", "/tmp") + "/trainer_eval", per_device_train_batch_size=8,
                             per_device_eval_batch_size=8, max_steps=50, eval_strategy="steps", eval_steps=35,
                             save_strategy="no", logging_steps=1000, report_to=[], dataloader_num_workers=0,
                             disable_tqdm=True, bf16=True)
    trainer = Trainer(model=model, args=args, train_dataset=RandomTokens(400, 256, config.vocab_size),
                      eval_dataset=RandomTokens(800, 256, config.vocab_size), compute_metrics=lambda p: {})
    trainer.train()


class CudaWorkerData(torch.utils.data.Dataset):
    def __len__(self):
        return 4096

    def __getitem__(self, i):
        return torch.randn(1024)


def touch_cuda(worker_id):
    torch.zeros(1, device="cuda")  # a stray context in each worker (the mistake this job shows)


def workers():
    model = mlp()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = torch.utils.data.DataLoader(CudaWorkerData(), batch_size=64, num_workers=3, worker_init_fn=touch_cuda,
                                         multiprocessing_context="spawn", persistent_workers=True)
    for epoch in range(2):
        for i, x in enumerate(loader):
            loss = model(x.cuda()).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            torch.cuda.synchronize()
            time.sleep(0.02)
            if i == 50:
                break


if __name__ == "__main__":
    {"fraction_oom": fraction_oom, "ext_leak": ext_leak, "ext_native": ext_native, "helper": helper, "helpers": helpers, "serving": serving,
     "trainer_eval": trainer_eval, "workers": workers}[sys.argv[1]]()
