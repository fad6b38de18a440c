"""Test job: dropout on a 1024 x 1024 fp32 activation (CUDA's fused kernel: a bool mask and the output)."""
import torch
import torch.nn as nn

w = torch.zeros(1024, 1024, device="cuda", requires_grad=True)
drop = nn.Dropout(0.5)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(5):
    y = drop(w * 2)  # DROPOUT_LINE
    y.sum().backward()
    opt.step()
    opt.zero_grad()
