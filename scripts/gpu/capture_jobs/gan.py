"""DCGAN (64x64 images): a generator and a discriminator, each with its own optimizer; --wgan-gp: a
WGAN-GP critic (no batch norm) trained with the gradient penalty (a double backward); --conditional: a
class-conditional DCGAN (the label's embedding beside the noise, and as an extra image plane of the
discriminator's input)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

import jobcommon

p = jobcommon.parser(__doc__)
p.add_argument("--width", type=int, default=64)
p.add_argument("--wgan-gp", action="store_true", help="Wasserstein loss with the gradient penalty")
p.add_argument("--conditional", action="store_true", help="class-conditional: 10 classes, label embeddings")
a = p.parse_args()
nz, w = 100, a.width
classes, ne = 10, (50 if a.conditional else 0)  # the label embedding's width beside the noise


def G():
    return nn.Sequential(
        nn.ConvTranspose2d(nz + ne, w * 8, 4, 1, 0, bias=False), nn.BatchNorm2d(w * 8), nn.ReLU(True),
        nn.ConvTranspose2d(w * 8, w * 4, 4, 2, 1, bias=False), nn.BatchNorm2d(w * 4), nn.ReLU(True),
        nn.ConvTranspose2d(w * 4, w * 2, 4, 2, 1, bias=False), nn.BatchNorm2d(w * 2), nn.ReLU(True),
        nn.ConvTranspose2d(w * 2, w, 4, 2, 1, bias=False), nn.BatchNorm2d(w), nn.ReLU(True),
        nn.ConvTranspose2d(w, 3, 4, 2, 1, bias=False), nn.Tanh())


def D():
    norm = (lambda c: nn.Identity()) if a.wgan_gp else nn.BatchNorm2d  # a WGAN-GP critic has no batch norm
    return nn.Sequential(
        nn.Conv2d(3 + (1 if a.conditional else 0), w, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(w, w * 2, 4, 2, 1, bias=False), norm(w * 2), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(w * 2, w * 4, 4, 2, 1, bias=False), norm(w * 4), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(w * 4, w * 8, 4, 2, 1, bias=False), norm(w * 8), nn.LeakyReLU(0.2, inplace=True),
        nn.Conv2d(w * 8, 1, 4, 1, 0, bias=False))


def gradient_penalty(real, fake):
    """WGAN-GP: (|grad of the critic at a random mix of real and fake| - 1)^2."""
    eps = torch.rand(real.shape[0], 1, 1, 1, device=real.device, dtype=real.dtype)
    mix = (eps * real + (1 - eps) * fake).requires_grad_(True)
    grad, = torch.autograd.grad(critic(mix).sum(), mix, create_graph=True)
    return ((grad.flatten(1).norm(2, dim=1) - 1) ** 2).mean()


class Conditional(nn.Module):
    """A generator or discriminator that also takes the label: its embedding beside the noise (the
    generator), or an embedding to a 64 x 64 plane beside the image (the discriminator)."""

    def __init__(self, net, generator):
        super().__init__()
        self.net, self.generator = net, generator
        self.emb = nn.Embedding(classes, ne if generator else 64 * 64)

    def forward(self, x, labels):
        e = self.emb(labels).to(x.dtype)
        e = e[:, :, None, None] if self.generator else e.view(-1, 1, 64, 64)
        return self.net(torch.cat([x, e], 1))


dt = jobcommon.dtype_of(a)
g, d = G(), D()
if a.conditional:
    g, d = Conditional(g, True), Conditional(d, False)
g, d = g.to(dt).cuda(), d.to(dt).cuda()
opt_g, opt_d = jobcommon.optimizer(a, g.parameters()), jobcommon.optimizer(a, d.parameters())
bce = F.binary_cross_entropy_with_logits
for step in range(a.steps):
    real = torch.randn(a.batch, 3, 64, 64, device="cuda", dtype=dt)
    noise = torch.randn(a.batch, nz, 1, 1, device="cuda", dtype=dt)
    labels = torch.randint(0, classes, (a.batch,), device="cuda")
    gen = (lambda x: g(x, labels)) if a.conditional else g  # noqa: E731
    critic = (lambda x: d(x, labels)) if a.conditional else d  # noqa: E731
    with jobcommon.autocast(a):
        fake = gen(noise)
        out_real, out_fake = critic(real).view(-1), critic(fake.detach()).view(-1)
        if a.wgan_gp:
            loss_d = out_fake.mean() - out_real.mean() + 10 * gradient_penalty(real, fake.detach())
        else:
            loss_d = bce(out_real, torch.ones_like(out_real)) + bce(out_fake, torch.zeros_like(out_fake))
    loss_d.backward()
    opt_d.step()
    opt_d.zero_grad(set_to_none=True)
    with jobcommon.autocast(a):
        out = critic(fake).view(-1)
        loss_g = -out.mean() if a.wgan_gp else bce(out, torch.ones_like(out))
    loss_g.backward()
    opt_g.step()
    opt_g.zero_grad(set_to_none=True)
    del real, noise, labels, fake, out_real, out_fake, out, loss_d, loss_g
