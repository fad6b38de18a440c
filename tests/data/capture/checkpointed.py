"""Test job: an MLP whose blocks are checkpointed (tests/cli/estimate_capture.sh): their recomputation
runs inside the backward."""
import torch
import torch.nn as nn
import torch.utils.checkpoint as cp

blocks = nn.ModuleList(nn.Sequential(nn.Linear(256, 256), nn.ReLU()) for _ in range(3)).cuda()
opt = torch.optim.SGD(blocks.parameters(), lr=1e-3)
for step in range(10):
    x = torch.randn(16, 256, device="cuda")
    for b in blocks:
        x = cp.checkpoint(b, x, use_reentrant=False)
    x.sum().backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
