"""Test job: fails in its second step, after allocating a known 4 MiB tensor in the first."""
import torch

w = torch.zeros(1024, 1024, device="cuda", requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(5):
    if step == 1:
        raise ValueError("the data ran out")  # CRASH_LINE
    (w * 2).sum().backward()
    opt.step()
    opt.zero_grad()
