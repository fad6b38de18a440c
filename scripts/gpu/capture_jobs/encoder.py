"""A transformer encoder written in plain PyTorch (pre-norm layers, GELU MLP) classifying token sequences."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import jobcommon

p = jobcommon.parser(__doc__)
p.add_argument("--hidden", type=int, default=768)
p.add_argument("--layers", type=int, default=12)
p.add_argument("--heads", type=int, default=12)
p.add_argument("--seq", type=int, default=512)
p.add_argument("--vocab", type=int, default=32000)
p.add_argument("--sdpa", action="store_true", help="F.scaled_dot_product_attention instead of softmax(q k^T) v")
a = p.parse_args()


class Layer(nn.Module):
    def __init__(self, h, heads):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(h), nn.LayerNorm(h)
        self.qkv, self.o = nn.Linear(h, 3 * h), nn.Linear(h, h)
        self.fc1, self.fc2 = nn.Linear(h, 4 * h), nn.Linear(4 * h, h)
        self.heads = heads

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.qkv(self.n1(x)).view(b, s, 3, self.heads, h // self.heads).permute(2, 0, 3, 1, 4)
        if a.sdpa and hasattr(F, "scaled_dot_product_attention"):  # PyTorch 2.0+
            y = F.scaled_dot_product_attention(q, k, v)
        else:
            y = (q @ k.transpose(-1, -2) / math.sqrt(h // self.heads)).softmax(-1) @ v
        x = x + self.o(y.transpose(1, 2).reshape(b, s, h))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(a.vocab, a.hidden)
        self.layers = nn.ModuleList(Layer(a.hidden, a.heads) for _ in range(a.layers))
        self.norm, self.head = nn.LayerNorm(a.hidden), nn.Linear(a.hidden, 2)

    def forward(self, ids):
        x = self.emb(ids)
        for layer in self.layers:
            x = jobcommon.checkpoint(layer, x) if a.ckpt and self.training else layer(x)
        return self.head(self.norm(x[:, 0]))


def inputs():
    return (torch.randint(0, a.vocab, (a.batch, a.seq), device="cuda"), torch.randint(0, 2, (a.batch,), device="cuda"))


if a.infer:
    jobcommon.run(a, Encoder(), lambda: inputs()[:1], None)
else:
    jobcommon.run(a, Encoder(), inputs, lambda m, x: F.cross_entropy(m(x[0]), x[1]))
