# Image classifiers shaped as transformers 5.x's ForImageClassification models (the same modules, tensors
# and in-place ops as modeling_resnet.py, modeling_regnet.py, modeling_convnext(v2).py, modeling_efficientnet.py,
# modeling_mobilenet_v2.py; no transformers needed), for the script capture to record on the CPU and compare
# with the config estimator (tests/cli/estimate_cnn_capture.sh).
# Usage: hf_cnn.py ARCH BATCH IMAGE PRECISION MODE [OPTIMIZER]   (fp32 | amp-bf16 | bf16; train | infer;
# adamw (foreach) | sgd), three steps.
import math
import sys

import torch
from torch import nn

arch, batch, side, precision, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
optimizer = sys.argv[6] if len(sys.argv) > 6 else "adamw"
F = nn.functional


def conv_bn(cin, cout, k, stride=1, groups=1, act=None, padding=None):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2 if padding is None else padding, groups=groups, bias=False), nn.BatchNorm2d(cout)]
    return nn.Sequential(*layers, act) if act is not None else nn.Sequential(*layers)


class Residual(nn.Module):  # ResNet / RegNet layers: `hidden += shortcut(residual)`, then the activation
    def __init__(self, branch, shortcut):
        super().__init__()
        self.layer, self.shortcut, self.activation = branch, shortcut, nn.ReLU()

    def forward(self, x):
        h = self.layer(x)
        h += self.shortcut(x)
        return self.activation(h)


class SqueezeExcite(nn.Module):
    def __init__(self, c, reduced, act):
        super().__init__()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.attention = nn.Sequential(nn.Conv2d(c, reduced, 1), act, nn.Conv2d(reduced, c, 1), nn.Sigmoid())

    def forward(self, x):
        return x * self.attention(self.pool(x))


def resnet(depths, widths, bottleneck):
    blocks, cin = [conv_bn(3, 64, 7, 2, act=nn.ReLU()), nn.MaxPool2d(3, 2, 1)], 64
    for s, (d, w) in enumerate(zip(depths, widths)):
        for j in range(d):
            stride = 2 if s > 0 and j == 0 else 1
            if bottleneck:
                r = w // 4
                branch = nn.Sequential(conv_bn(cin, r, 1, act=nn.ReLU()), conv_bn(r, r, 3, stride, act=nn.ReLU()), conv_bn(r, w, 1))
            else:
                branch = nn.Sequential(conv_bn(cin, w, 3, stride, act=nn.ReLU()), conv_bn(w, w, 3))
            short = conv_bn(cin, w, 1, stride, padding=0) if cin != w or stride != 1 else nn.Identity()
            blocks.append(Residual(branch, short))
            cin = w
    return nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000))


def regnet(depths, widths, groups_width):
    blocks, cin = [conv_bn(3, 32, 3, 2, act=nn.ReLU())], 32
    for s, (d, w) in enumerate(zip(depths, widths)):
        for j in range(d):
            stride = 2 if j == 0 else 1
            g = max(1, w // groups_width)
            branch = nn.Sequential(conv_bn(cin, w, 1, act=nn.ReLU()), conv_bn(w, w, 3, stride, g, act=nn.ReLU()),
                                   SqueezeExcite(w, int(round(cin / 4)), nn.ReLU()), conv_bn(w, w, 1))
            short = conv_bn(cin, w, 1, stride, padding=0) if cin != w or stride != 1 else nn.Identity()
            blocks.append(Residual(branch, short))
            cin = w
    return nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, 1000))


class ChannelsFirstNorm(nn.LayerNorm):  # ConvNextLayerNorm(data_format="channels_first"): permute, F.layer_norm, permute
    def forward(self, x):
        return super().forward(x.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)


class Grn(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.weight, self.bias = nn.Parameter(torch.zeros(1, 1, 1, dim)), nn.Parameter(torch.zeros(1, 1, 1, dim))

    def forward(self, x):
        g = torch.linalg.vector_norm(x, ord=2, dim=(1, 2), keepdim=True)
        n = g / (g.mean(dim=-1, keepdim=True) + 1e-6)
        return self.weight * (x * n) + self.bias + x


class ConvNextLayer(nn.Module):
    def __init__(self, dim, v2):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, 7, padding=3, groups=dim)
        self.layernorm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1, self.act, self.pwconv2 = nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim)
        self.grn = Grn(4 * dim) if v2 else None
        self.scale = None if v2 else nn.Parameter(1e-6 * torch.ones(dim))

    def forward(self, x):
        h = self.act(self.pwconv1(self.layernorm(self.dwconv(x).permute(0, 2, 3, 1))))
        if self.grn is not None:
            h = self.grn(h)
        h = self.pwconv2(h)
        if self.scale is not None:
            h = self.scale * h
        return x + h.permute(0, 3, 1, 2)


class Pooled(nn.Module):  # ConvNextModel: layernorm(last_hidden_state.mean([-2, -1]))
    def __init__(self, dim):
        super().__init__()
        self.layernorm, self.classifier = nn.LayerNorm(dim), nn.Linear(dim, 1000)

    def forward(self, x):
        return self.classifier(self.layernorm(x.mean([-2, -1])))


def convnext(depths, widths, v2):
    blocks = [nn.Conv2d(3, widths[0], 4, 4), ChannelsFirstNorm(widths[0], eps=1e-6)]
    prev = widths[0]
    for s, (d, w) in enumerate(zip(depths, widths)):
        if s > 0:
            blocks += [ChannelsFirstNorm(prev, eps=1e-6), nn.Conv2d(prev, w, 2, 2)]
        blocks += [ConvNextLayer(w, v2) for _ in range(d)]
        prev = w
    return nn.Sequential(*blocks, Pooled(prev))


def tf_pad(x, k, stride):  # apply_tf_padding (TensorFlow's SAME)
    along = max(k - stride, 0) if x.shape[-1] % stride == 0 else max(k - x.shape[-1] % stride, 0)
    return F.pad(x, (along // 2, along - along // 2, along // 2, along - along // 2))


class ConvLayer(nn.Module):  # MobileNetV2ConvLayer / EfficientNet's expansion, depthwise and projection layers
    def __init__(self, cin, cout, k, stride=1, groups=1, act=None, pad=None):
        super().__init__()
        self.k, self.stride, self.pad = k, stride, pad
        self.convolution = nn.Conv2d(cin, cout, k, stride, k // 2 if pad is None else 0, groups=groups, bias=False)
        self.normalization = nn.BatchNorm2d(cout)
        self.activation = act

    def forward(self, features):
        if self.pad == "tf":
            features = tf_pad(features, self.k, self.stride)
        elif self.pad == "correct":  # EfficientNetDepthwiseLayer with stride 2: ZeroPad2d(correct_pad) then a valid conv
            features = F.pad(features, (self.k // 2 - 1, self.k // 2, self.k // 2 - 1, self.k // 2))
        features = self.convolution(features)
        features = self.normalization(features)
        if self.activation is not None:
            features = self.activation(features)
        return features


class MbBlock(nn.Module):  # EfficientNetBlock / MobileNetV2InvertedResidual
    def __init__(self, cin, cout, k, stride, expand, act, se, residual, tf):
        super().__init__()
        wide = cin * expand if se else int(round(cin * expand))
        self.residual = residual
        pad = "tf" if tf else None
        self.expand = ConvLayer(cin, wide, 1, act=act, pad=pad if tf else "none") if expand != 1 else None
        self.depthwise = ConvLayer(wide, wide, k, stride, wide, act=act, pad=pad if tf else ("correct" if stride == 2 else None))
        self.se = SqueezeExcite(wide, max(1, int(cin * 0.25)), nn.SiLU()) if se else None
        self.project = ConvLayer(wide, cout, 1, pad=pad if tf else "none")
        self.dropout = None

    def forward(self, features):
        embeddings = features
        if self.expand is not None:
            features = self.expand(features)
        features = self.depthwise(features)
        if self.se is not None:
            features = self.se(features)
        features = self.project(features)
        if self.residual:
            if self.dropout is not None:
                features = self.dropout(features)
            features = features + embeddings
        return features


class TfPadConv(ConvLayer):
    def __init__(self, cin, cout, k, stride, groups=1, act=True):
        super().__init__(cin, cout, k, stride, groups, nn.ReLU6() if act else None, "tf")


def mobilenet_v2():
    ch = [16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320]
    st = [2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1]
    blocks = [TfPadConv(3, 32, 3, 2), TfPadConv(32, 32, 3, 1, 32), TfPadConv(32, 16, 1, 1, act=False)]
    blocks += [MbBlock(ch[i], ch[i + 1], 3, st[i], 6, nn.ReLU6(), False, st[i] == 1 and ch[i] == ch[i + 1], True) for i in range(16)]
    return nn.Sequential(*blocks, TfPadConv(320, 1280, 1, 1), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.8, inplace=True),
                         nn.Linear(1280, 1001))


def efficientnet_b0():
    k, cin, cout = [3, 3, 5, 3, 5, 5, 3], [32, 16, 24, 40, 80, 112, 192], [16, 24, 40, 80, 112, 192, 320]
    s, r, e = [1, 2, 2, 2, 1, 2, 1], [1, 2, 2, 3, 3, 4, 1], [1, 6, 6, 6, 6, 6, 6]
    blocks = [nn.ZeroPad2d((0, 1, 0, 1)), ConvLayer(3, 32, 3, 2, act=nn.SiLU(), pad="none")]
    total, n = sum(r), 0
    for i in range(7):
        for j in range(r[i]):
            block = MbBlock(cout[i] if j else cin[i], cout[i], k[i], 1 if j else s[i], e[i], nn.SiLU(), True, j > 0, False)
            if j > 0:  # the projection's dropout before the sum (p = drop_connect_rate x block / blocks)
                block.dropout = nn.Dropout(0.2 * n / total)
            blocks.append(block)
            n += 1
    return nn.Sequential(*blocks, ConvLayer(320, 1280, 1, act=nn.SiLU(), pad="none"), nn.AvgPool2d(1280, ceil_mode=True), nn.Flatten(),
                         nn.Dropout(0.2), nn.Linear(1280, 1000))


models = {
    "resnet-18": lambda: resnet([2, 2, 2, 2], [64, 128, 256, 512], False),
    "resnet-50": lambda: resnet([3, 4, 6, 3], [256, 512, 1024, 2048], True),
    "regnet-y-040": lambda: regnet([2, 6, 12, 2], [128, 192, 512, 1088], 64),
    "convnext-tiny": lambda: convnext([3, 3, 9, 3], [96, 192, 384, 768], False),
    "convnextv2-tiny": lambda: convnext([3, 3, 9, 3], [96, 192, 384, 768], True),
    "mobilenet-v2": mobilenet_v2,
    "efficientnet-b0": efficientnet_b0,
}
model = models[arch]()
if precision == "bf16":  # converted before it moves: no fp32 and bf16 copies on the card at once
    model = model.to(torch.bfloat16)
model = model.cuda()
dtype = torch.bfloat16 if precision == "bf16" else torch.float32
x = torch.randn(batch, 3, side, side, device="cuda", dtype=dtype)
if mode == "infer":
    model.eval()
    for _ in range(3):
        with torch.no_grad(), torch.autocast("cuda", torch.bfloat16, enabled=precision == "amp-bf16"):
            model(x)
    sys.exit(0)
y = torch.randint(0, 1000, (batch,), device="cuda")
if optimizer == "sgd":
    opt = torch.optim.SGD(model.parameters(), lr=1e-4, foreach=True)
else:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
for _ in range(3):
    with torch.autocast("cuda", torch.bfloat16, enabled=precision == "amp-bf16"):
        loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
