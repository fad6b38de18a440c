"""A diffusion-style UNet (time embedding, residual blocks, self-attention at the two lowest
resolutions) trained to predict the noise added to random images."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import jobcommon

p = jobcommon.parser(__doc__)
p.add_argument("--image", type=int, default=64)
p.add_argument("--width", type=int, default=128)
a = p.parse_args()


def attention(q, k, v):
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention(q, k, v)
    return (q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])).softmax(-1) @ v


class Res(nn.Module):
    def __init__(self, cin, cout, tdim):
        super().__init__()
        self.n1, self.c1 = nn.GroupNorm(32, cin), nn.Conv2d(cin, cout, 3, padding=1)
        self.t = nn.Linear(tdim, cout)
        self.n2, self.c2 = nn.GroupNorm(32, cout), nn.Conv2d(cout, cout, 3, padding=1)
        self.skip = nn.Conv2d(cin, cout, 1) if cin != cout else nn.Identity()

    def forward(self, x, t):
        h = self.c1(F.silu(self.n1(x))) + self.t(F.silu(t))[:, :, None, None]
        return self.skip(x) + self.c2(F.silu(self.n2(h)))


class Attn(nn.Module):
    def __init__(self, c, heads=4):
        super().__init__()
        self.n, self.qkv, self.out, self.heads = nn.GroupNorm(32, c), nn.Conv2d(c, 3 * c, 1), nn.Conv2d(c, c, 1), heads

    def forward(self, x):
        b, c, h, w = x.shape
        q, k, v = self.qkv(self.n(x)).reshape(b, 3, self.heads, c // self.heads, h * w).transpose(-1, -2).unbind(1)
        y = attention(q, k, v).transpose(-1, -2).reshape(b, c, h, w)
        return x + self.out(y)


class UNet(nn.Module):
    def __init__(self, w):
        super().__init__()
        chans, tdim = [w, 2 * w, 4 * w, 4 * w], 4 * w
        self.temb = nn.Sequential(nn.Linear(w, tdim), nn.SiLU(), nn.Linear(tdim, tdim))
        self.inp = nn.Conv2d(3, w, 3, padding=1)
        self.down, self.up = nn.ModuleList(), nn.ModuleList()
        cin, skips = w, [w]
        for i, c in enumerate(chans):
            for _ in range(2):
                self.down.append(nn.ModuleList([Res(cin, c, tdim), Attn(c) if i >= 2 else nn.Identity()]))
                cin = c
                skips.append(c)
            if i < len(chans) - 1:
                self.down.append(nn.Conv2d(c, c, 3, stride=2, padding=1))
                skips.append(c)
        self.mid = nn.ModuleList([Res(cin, cin, tdim), Attn(cin), Res(cin, cin, tdim)])
        for i, c in reversed(list(enumerate(chans))):
            for _ in range(3):
                self.up.append(nn.ModuleList([Res(cin + skips.pop(), c, tdim), Attn(c) if i >= 2 else nn.Identity()]))
                cin = c
            if i > 0:
                self.up.append(nn.Upsample(scale_factor=2, mode="nearest"))
        self.out = nn.Sequential(nn.GroupNorm(32, cin), nn.SiLU(), nn.Conv2d(cin, 3, 3, padding=1))
        self.w = w

    def block(self, m, x, t):
        if isinstance(m, nn.ModuleList):
            run = lambda x, t: m[1](m[0](x, t))  # noqa: E731
            return jobcommon.checkpoint(run, x, t) if a.ckpt and self.training else run(x, t)
        return m(x)

    def forward(self, x, steps):
        half = self.w // 2
        freqs = torch.exp(-math.log(10000) * torch.arange(half, device=x.device) / half)
        e = steps[:, None].float() * freqs[None]
        t = self.temb(torch.cat([e.sin(), e.cos()], -1).to(x.dtype))
        h, hs = self.inp(x), []
        hs.append(h)
        for m in self.down:
            h = self.block(m, h, t)
            hs.append(h)
        h = self.mid[2](self.mid[1](self.mid[0](h, t)), t)
        for m in self.up:
            if isinstance(m, nn.ModuleList):
                h = torch.cat([h, hs.pop()], 1)
            h = self.block(m, h, t)
        return self.out(h)


dt = jobcommon.dtype_of(a)


def inputs():
    return (torch.randn(a.batch, 3, a.image, a.image, device="cuda", dtype=dt),
            torch.randint(0, 1000, (a.batch,), device="cuda"))


def loss(m, x):
    noise = torch.randn_like(x[0])
    return F.mse_loss(m(x[0] + noise, x[1]), noise)


jobcommon.run(a, UNet(a.width), inputs, None if a.infer else loss)
