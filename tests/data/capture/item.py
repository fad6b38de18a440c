"""Test job: reads values back from tensors without data (.item() and a bool of a comparison)."""
import torch

w = torch.zeros(1024, 1024, device="cuda", requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for step in range(5):
    loss = (w * 2).sum()
    if torch.isnan(loss):  # BOOL_LINE
        raise SystemExit("nan")
    print("loss", loss.item())  # ITEM_LINE
    loss.backward()
    opt.step()
    opt.zero_grad()
