"""Test job: a WGAN-GP critic step (tests/cli/estimate_capture.sh): four forwards before the first
backward, the gradient penalty a double backward through the convolutions."""
import torch
import torch.nn as nn

critic = nn.Sequential(nn.Conv2d(3, 16, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(16, 1, 4, 1, 0)).cuda()
gen = nn.Sequential(nn.ConvTranspose2d(8, 3, 8, 1, 0)).cuda()
opt = torch.optim.Adam(critic.parameters(), lr=1e-4)
for step in range(10):
    real = torch.randn(4, 3, 8, 8, device="cuda")
    fake = gen(torch.randn(4, 8, 1, 1, device="cuda")).detach()
    loss = critic(fake).mean() - critic(real).mean()
    eps = torch.rand(4, 1, 1, 1, device="cuda")
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grad, = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    loss = loss + 10 * ((grad.flatten(1).norm(2, dim=1) - 1) ** 2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
