"""Test job: torchvision's ResNet-18 trained with SGD and momentum on random images."""
import torch
import torch.nn.functional as F
import torchvision

model = torchvision.models.resnet18(num_classes=10).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
for step in range(10):
    x, y = torch.randn(4, 3, 64, 64, device="cuda"), torch.randint(0, 10, (4,), device="cuda")
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
