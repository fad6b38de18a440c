"""A torchvision classifier (ResNet, VGG, ConvNeXt, EfficientNet, ViT, Swin, ...) trained on random images;
--model deit_s: torchvision's VisionTransformer in DeiT-S's shape (384 wide, 6 heads, 12 layers)."""
import torch
import torch.nn.functional as F
import torchvision

import jobcommon

p = jobcommon.parser(__doc__)
p.add_argument("--model", default="resnet50")
p.add_argument("--image", type=int, default=224)
a = p.parse_args()
if a.model == "deit_s":
    from torchvision.models.vision_transformer import VisionTransformer

    model = VisionTransformer(image_size=a.image, patch_size=16, num_layers=12, num_heads=6, hidden_dim=384, mlp_dim=1536)
else:
    model = getattr(torchvision.models, a.model)(num_classes=1000)


def inputs():
    return (torch.randn(a.batch, 3, a.image, a.image, device="cuda", dtype=jobcommon.dtype_of(a)),
            torch.randint(0, 1000, (a.batch,), device="cuda"))


if a.infer:
    jobcommon.run(a, model, lambda: inputs()[:1], None)
else:
    jobcommon.run(a, model, inputs, lambda m, x: F.cross_entropy(m(x[0]), x[1]))
