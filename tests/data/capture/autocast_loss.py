"""Test job: a vocabulary head and its cross-entropy under autocast (bf16), 8192 rows x 30000 words."""
import torch
import torch.nn.functional as F

N, D, V = 8192, 768, 30000
head = torch.nn.Linear(D, V).cuda()
opt = torch.optim.SGD(head.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(N, D, device="cuda")
    y = torch.randint(0, V, (N,), device="cuda")
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = F.cross_entropy(head(x), y)  # LOSS_LINE
    loss.backward()
    opt.step()
    opt.zero_grad()
