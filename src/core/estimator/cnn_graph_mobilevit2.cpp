// MobileViT V2's modules op by op, as transformers 5.x builds them (modeling_mobilevitv2.py), on cnn_builder.hpp's
// ops. Its transformer works on (batch, C, patch_area, patches) maps: feature maps of C channels, patch_area rows and
// `patches` columns, so its 1x1 convolutions, GroupNorm(1) and products are the builder's feature-map ops.
#include <algorithm>
#include <cmath>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

// MobileViTV2ConvLayer: Conv2d(k, stride, padding (k - 1) / 2 x dilation, groups, bias), [BatchNorm2d], [act].
Fm conv_layer(Builder& b, const CnnParts& p, const Fm& x, u64 c_out, u64 k, u64 stride, u64 groups, bool bias, bool norm,
              bool act, u64 dilation = 1) {
  Fm y = b.conv(x, c_out, k, stride, (k - 1) / 2 * dilation, groups, bias, dilation);
  if (norm) y = b.bn(y);
  if (act) y = b.act(y, act_of(p.act));
  b.hold_until_now(x.t);
  return y;
}

// MobileViTV2InvertedResidual: 1x1 to make_divisible(int(round(in x expand_ratio)), 8), depthwise 3x3 (stride,
// dilation), 1x1 without act; + the input where stride 1 and in == out.
Fm inverted(Builder& b, const CnnParts& p, const Fm& in, u64 out, u64 stride, u64 dilation = 1) {
  const u64 wide = make_divisible(std::nearbyint(static_cast<double>(in.c) * p.expand_ratio), 8, 8);
  Fm h = conv_layer(b, p, in, wide, 1, 1, 1, false, true, true);
  h = conv_layer(b, p, h, wide, 3, stride, wide, false, true, true, dilation);
  h = conv_layer(b, p, h, out, 1, 1, 1, false, true, false);
  if (stride == 1 && in.c == out) return b.add(in, h);
  b.hold_until_now(in.t);  // `residual = features` until the block returns
  return h;
}

Fm group_norm1(Builder& b, const Fm& x) {  // nn.GroupNorm(num_groups=1): one mean and rstd per sample
  Fm y = b.layernorm(x, false);
  b.g.ops.back().channels = 1;
  return y;
}

// MobileViTV2LinearSelfAttention: qkv_proj 1x1 conv (bias) to 1 + 2C channels; torch.split's query, key and value
// are views of it (what autograd saves of them holds all of it); softmax(query, dim=-1) over the patches (saved);
// key * scores (saves both); sum(dim=-1, keepdim=True); relu(value) (saves its output); relu(value) x the context
// vector expanded; out_proj 1x1 conv (bias).
Fm linear_attention(Builder& b, const Fm& x) {
  const u64 c = x.c;
  const Fm qkv = b.conv(x, 1 + 2 * c, 1, 1, 0, 1, true);
  const Fm query{qkv.t, 1, x.h, x.w}, kv{qkv.t, c, x.h, x.w};
  const Fm scores = b.act(query, CnnAct::Relu);  // softmax: saves its output (as ReLU does)
  const Fm context = b.avgpool(b.mul(kv, scores), x.h, 1);  // torch.sum(key * scores, dim=-1, keepdim=True)
  const Fm out = b.mul(b.act(kv, CnnAct::Relu), context);
  return b.conv(out, c, 1, 1, 0, 1, true);
}

}  // namespace

// MobileViTV2Model: conv_stem (3x3 stride 2, BN, act) to make_divisible(clip(32 x width_multiplier, 16, 64), 8, 16);
// layer_1 one inverted residual to make_divisible(64 x wm, 16); layer_2 two (stride 2) to make_divisible(128 x wm,
// 8); layer_3-5 MobileViTV2Layers to 256 / 384 / 512 x wm of attention width make_divisible(base_attn_unit_dims[i] x
// wm, 8) with n_attn_blocks[i] transformer layers (output_stride 16 / 8 dilates layer 5 / layers 4-5): a stride-2
// inverted residual, conv_kxk (depthwise, BN, act), conv_1x1 (no norm, no act), F.unfold into (B, C, patch_area,
// patches) (a new tensor), the layers (GroupNorm(1), the linear attention, + residual; GroupNorm(1), 1x1 conv to
// (2C // 16) x 16 (bias, act), 1x1 conv back (bias), + residual), GroupNorm(1), F.fold back (a new tensor),
// conv_projection (1x1, BN, no act); the mean over H x W; the classifier.
void mobilevit_v2(Builder& b, const CnnParts& p, Fm x) {
  const double wm = p.width_multiplier;
  const u64 dim0 = make_divisible(std::clamp(32 * wm, 16.0, 64.0), 8, 16);
  const u64 dims[] = {make_divisible(64 * wm, 16, 16), make_divisible(128 * wm, 8, 8), make_divisible(256 * wm, 8, 8),
                      make_divisible(384 * wm, 8, 8), make_divisible(512 * wm, 8, 8)};
  x = conv_layer(b, p, x, dim0, 3, 2, 1, false, true, true);
  x = inverted(b, p, x, dims[0], 1), ++b.g.layers;
  for (int i = 0; i < 2; ++i) x = inverted(b, p, x, dims[1], i == 0 ? 2 : 1), ++b.g.layers;
  u64 dilation = 1;
  for (std::size_t s = 0; s < 3; ++s) {
    if ((s == 1 && p.output_stride == 8) || (s == 2 && (p.output_stride == 8 || p.output_stride == 16))) dilation *= 2;
    const u64 attn = make_divisible(static_cast<double>(p.widths[s]) * wm, 8, 8);
    x = inverted(b, p, x, dims[2 + s], dilation == 1 ? 2 : 1, dilation > 1 ? dilation / 2 : 1);
    const u64 in = x.c;
    x = conv_layer(b, p, x, in, p.kernel_size, 1, in, false, true, true);
    x = conv_layer(b, p, x, attn, 1, 1, 1, false, false, false);
    const u64 side = std::max<u64>(p.patch, 1), area = side * side, patches = (x.h / side) * (x.w / side);
    const u64 map_h = x.h, map_w = x.w;
    Fm t = b.pad(x, 0, 0);  // F.unfold: (B, C x area, patches), reshaped (a view) to (B, C, area, patches)
    t.h = area, t.w = patches;
    const u64 ffn = (p.ffn_multiplier * attn / 16) * 16;  // MobileViTV2Transformer: int((ffn_multiplier x d // 16) x 16)
    for (u64 l = 0; l < p.depths[s]; ++l) {
      t = b.add(linear_attention(b, group_norm1(b, t)), t);
      Fm h = conv_layer(b, p, group_norm1(b, t), ffn, 1, 1, 1, true, false, true);
      h = conv_layer(b, p, h, attn, 1, 1, 1, true, false, false);
      t = b.add(h, t);
      ++b.g.layers;
    }
    t = group_norm1(b, t);
    Fm folded = b.pad(t, 0, 0);  // F.fold back to (B, C, H, W)
    folded.h = map_h, folded.w = map_w;
    x = conv_layer(b, p, folded, in, 1, 1, 1, false, true, false);
  }
  classifier(b, b.avgpool(x), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
