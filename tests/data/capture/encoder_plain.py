"""Test job: a transformer encoder in plain PyTorch; the attention scores are B x HEADS x S x S."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

B, S, H, HEADS, LAYERS = 2, 256, 128, 4, 2


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(H), nn.LayerNorm(H)
        self.qkv, self.o, self.fc1, self.fc2 = nn.Linear(H, 3 * H), nn.Linear(H, H), nn.Linear(H, 4 * H), nn.Linear(4 * H, H)

    def forward(self, x):
        q, k, v = self.qkv(self.n1(x)).view(B, S, 3, HEADS, H // HEADS).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / math.sqrt(H // HEADS)  # SCORES_LINE
        x = x + self.o((scores.softmax(-1) @ v).transpose(1, 2).reshape(B, S, H))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


model = nn.Sequential(*[Layer() for _ in range(LAYERS)]).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(10):
    loss = model(torch.randn(B, S, H, device="cuda")).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
