"""Test job: a two-layer MLP trained with AdamW (tests/cli/estimate_capture.sh derives its bytes by hand)."""
import sys

import torch
import torch.nn as nn

batch = int(sys.argv[1]) if len(sys.argv) > 1 else 32
model = nn.Sequential(nn.Linear(256, 1024), nn.ReLU(), nn.Linear(1024, 256)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=False)
for step in range(10):
    x = torch.randn(batch, 256, device="cuda")
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    del x, loss
