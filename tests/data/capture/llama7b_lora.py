"""Test and benchmark job: a 7B Llama-shaped model (32 layers of 4096, MLP 11008, vocab 32000) with LoRA
adapters on q and v, written in plain PyTorch (no transformers on the CI machine): bf16 weights, fp32
adapters and AdamW, the estimate of issue 27's "7B LoRA step captured in <= 60 s on the 2-core machine"."""
import argparse, math, time
import torch
import torch.nn as nn
import torch.nn.functional as F

p = argparse.ArgumentParser()
p.add_argument("--layers", type=int, default=32)
p.add_argument("--hidden", type=int, default=4096)
p.add_argument("--intermediate", type=int, default=11008)
p.add_argument("--heads", type=int, default=32)
p.add_argument("--vocab", type=int, default=32000)
p.add_argument("--batch", type=int, default=1)
p.add_argument("--seq", type=int, default=512)
p.add_argument("--rank", type=int, default=16)
p.add_argument("--steps", type=int, default=3)
a = p.parse_args()


class RMSNorm(nn.Module):
    def __init__(self, n, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(n)), eps

    def forward(self, x):
        h = x.float()
        h = h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * h.to(x.dtype)


class LoRALinear(nn.Module):
    def __init__(self, base, r, alpha=32):
        super().__init__()
        self.base = base
        self.A = nn.Parameter(torch.zeros(r, base.in_features))
        self.B = nn.Parameter(torch.zeros(base.out_features, r))
        nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.scale = alpha / r

    def forward(self, x):
        return self.base(x) + (F.linear(F.linear(x.to(self.A.dtype), self.A), self.B) * self.scale).to(x.dtype)


def rope(x, pos):
    d = x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=x.device).float() / d))
    ang = pos[:, None].float() * inv[None, :]
    cos, sin = torch.cat([ang, ang], -1).cos().to(x.dtype), torch.cat([ang, ang], -1).sin().to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2:]
    return x * cos + torch.cat([-x2, x1], -1) * sin


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        h, i = a.hidden, a.intermediate
        self.n1, self.n2 = RMSNorm(h), RMSNorm(h)
        self.q, self.k, self.v, self.o = (nn.Linear(h, h, bias=False) for _ in range(4))
        self.gate, self.up, self.down = nn.Linear(h, i, bias=False), nn.Linear(h, i, bias=False), nn.Linear(i, h, bias=False)

    def forward(self, x, pos):
        b, s, h = x.shape
        hd = h // a.heads
        y = self.n1(x)
        q = rope(self.q(y).view(b, s, a.heads, hd).transpose(1, 2), pos)
        k = rope(self.k(y).view(b, s, a.heads, hd).transpose(1, 2), pos)
        v = self.v(y).view(b, s, a.heads, hd).transpose(1, 2)
        att = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        mask = torch.full((s, s), float("-inf"), device=x.device).triu(1)
        att = (att + mask.to(att.dtype)).softmax(-1)
        x = x + self.o((att @ v).transpose(1, 2).reshape(b, s, h))
        y = self.n2(x)
        return x + self.down(F.silu(self.gate(y)) * self.up(y))


class Llama(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.hidden)
        self.blocks = nn.ModuleList(Block() for _ in range(a.layers))
        self.norm = RMSNorm(a.hidden)
        self.head = nn.Linear(a.hidden, a.vocab, bias=False)

    def forward(self, ids):
        x = self.emb(ids)
        pos = torch.arange(ids.shape[1], device=ids.device)
        for blk in self.blocks:
            x = blk(x, pos)
        return self.head(self.norm(x))


t0 = time.time()
model = Llama()
for p_ in model.parameters():
    p_.requires_grad_(False)
for blk in model.blocks:
    blk.q, blk.v = LoRALinear(blk.q, a.rank), LoRALinear(blk.v, a.rank)
model = model.to(torch.bfloat16)
for blk in model.blocks:  # adapters in fp32, as PEFT keeps them
    for m in (blk.q, blk.v):
        m.A.data, m.B.data = m.A.data.float(), m.B.data.float()
model = model.cuda()
params = [p_ for p_ in model.parameters() if p_.requires_grad]
print("parameters %.2f B, trainable %.1f M, built in %.1f s" % (
    sum(p_.numel() for p_ in model.parameters()) / 1e9, sum(p_.numel() for p_ in params) / 1e6, time.time() - t0), flush=True)
opt = torch.optim.AdamW(params, lr=1e-4)
for step in range(a.steps):
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda")
    logits = model(ids)
    loss = F.cross_entropy(logits.float().view(-1, a.vocab), ids.view(-1))
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    print("step", step, "%.1f s" % (time.time() - t0), flush=True)
