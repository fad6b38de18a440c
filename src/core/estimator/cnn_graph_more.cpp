// BiT, MobileNetV1 and PoolFormer's modules op by op, as transformers 5.x builds them (modeling_bit.py,
// modeling_mobilenet_v1.py, modeling_poolformer.py), on cnn_builder.hpp's ops.
#include <algorithm>
#include <cmath>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

// modeling_bit.py make_div: max(divisor, int(value + divisor / 2) // divisor * divisor), + divisor under 90 %.
u64 make_div(double value) { return make_divisible(value, 8, 8); }

// modeling_bit.py DynamicPad2d.compute_padding: max((ceil(x / s) - 1) * s + (k - 1) * d + 1 - x, 0).
u64 same_padding(u64 x, u64 k, u64 s, u64 d) {
  const u64 out = (x + s - 1) / s;
  const u64 need = (out > 0 ? (out - 1) * s : 0) + (k - 1) * d + 1;
  return need > x ? need - x : 0;
}

// WeightStandardizedConv2d: get_padding_value(global_padding): "SAME" with stride 1 and an even span is a static
// (k - 1) / 2 padding, other "SAME" convolutions pad dynamically (DynamicPad2d: F.pad, a copy, only where the
// padding is above 0) and convolve unpadded; without "SAME" the PyTorch-style ((s - 1) + d (k - 1)) / 2. The weight is
// F.batch_norm(weight.reshape(1, out, -1), training=True) first: a weight-sized copy the convolution saves.
Fm ws_conv(Builder& b, const CnnParts& p, Fm x, u64 c_out, u64 k, u64 stride, u64 dilation = 1) {
  u64 pad = ((stride - 1) + dilation * (k - 1)) / 2;
  if (p.same_padding && !(stride == 1 && (dilation * (k - 1)) % 2 == 0)) {
    const u64 ph = same_padding(x.h, k, stride, dilation), pw = same_padding(x.w, k, stride, dilation);
    if (ph > 0 || pw > 0) x = b.pad(x, ph, pw);
    pad = 0;
  }
  Fm y = b.conv(x, c_out, k, stride, pad, 1, false, dilation);
  b.g.ops.back().standardized = true;
  return y;
}

// BitGroupNormActivation: F.group_norm over num_groups (statistics per group), then the activation (or none).
Fm group_norm(Builder& b, const CnnParts& p, const Fm& x, bool act) {
  Fm y = b.layernorm(x, false);
  b.g.ops.back().channels = std::min<u64>(p.num_groups, x.c);
  return act ? b.act(y, act_of(p.act)) : y;
}

}  // namespace

// modeling_bit.py: BitEmbeddings (weight-standardised 7x7 stride-2 conv; ConstantPad2d(1) unless "SAME"; GroupNorm +
// act unless pre-activation; BitMaxPool2d(3, 2) with DynamicPad2d only for embedding_dynamic_padding, no padding
// otherwise); BitEncoder's stages (stride 1 then 2, make_div(hidden_size x width_factor) wide, dilation once the
// stride reaches output_stride) of BitPreActivationBottleneckLayer (norm1 -> [downsample of the pre-activation in the
// first layer] -> conv1 1x1 -> norm2 -> conv2 3x3 (stride) -> norm3 -> conv3 1x1 -> + shortcut) or BitBottleneckLayer
// (conv1 -> norm1 -> conv2 -> norm2 -> conv3 -> norm3 without act, [downsample: conv + GroupNorm], act(h + shortcut));
// BitModel's final GroupNorm + act for pre-activation; AdaptiveAvgPool2d, Flatten, Linear.
void bit(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  x = ws_conv(b, p, x, p.stem, 7, 2);
  if (!p.same_padding) x = b.pad(x, 2, 2);
  if (!p.preactivation) x = group_norm(b, p, x, true);
  if (p.embedding_dynamic_padding) {
    const u64 ph = same_padding(x.h, 3, 2, 1), pw = same_padding(x.w, 3, 2, 1);
    if (ph > 0 || pw > 0) x = b.pad(x, ph, pw);
  }
  x = b.maxpool(x, 3, 2, 0);
  u64 current_stride = 4, dilation = 1;
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 out = make_div(static_cast<double>(p.widths[s]) * p.width_factor);
    u64 stride = s == 0 ? 1 : 2;
    if (current_stride >= p.output_stride) dilation *= stride, stride = 1;
    current_stride *= stride;
    for (u64 d = 0; d < p.depths[s]; ++d) {
      const bool first = d == 0;
      const u64 st = first ? stride : 1, mid = make_div(static_cast<double>(out) * 0.25);
      const Fm input = x;
      Fm shortcut = x, h;
      if (p.preactivation) {
        const Fm preact = group_norm(b, p, x, true);
        if (first) shortcut = ws_conv(b, p, preact, out, 1, st);
        h = ws_conv(b, p, preact, mid, 1, 1);
        h = ws_conv(b, p, group_norm(b, p, h, true), mid, 3, st, dilation);
        h = ws_conv(b, p, group_norm(b, p, h, true), out, 1, 1);
        x = b.add(h, shortcut);
      } else {
        if (first) shortcut = group_norm(b, p, ws_conv(b, p, x, out, 1, st), false);
        h = group_norm(b, p, ws_conv(b, p, x, mid, 1, 1), true);
        h = group_norm(b, p, ws_conv(b, p, h, mid, 3, st, dilation), true);
        h = group_norm(b, p, ws_conv(b, p, h, out, 1, 1), false);
        x = b.act(b.add(h, shortcut), a);
      }
      b.hold_until_now(input.t);  // `shortcut = hidden_states` until the layer returns
      ++b.g.layers;
    }
  }
  if (p.preactivation) x = group_norm(b, p, x, true);
  classifier(b, b.avgpool(x), p.labels);
}

// modeling_mobilenet_v1.py: MobileNetV1ConvLayer = [apply_tf_padding: F.pad, a copy even with nothing to pad],
// conv (no bias), BatchNorm, act; conv_stem 3x3 stride 2 to max(int(32 x depth_multiplier), min_depth); 13 pairs of a
// 3x3 depthwise (strides 1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1) and a 1x1 pointwise conv, the width doubling at the
// first pair and every stride 2; AdaptiveAvgPool2d, Dropout(classifier_dropout_prob, inplace=True), Linear.
void mobilenet_v1(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  const auto layer = [&](const Fm& in, u64 c_out, u64 k, u64 stride, u64 groups) {
    Fm h = in;
    u64 pad = (k - 1) / 2;
    if (p.tf_padding) {  // apply_tf_padding: TensorFlow's SAME
      const auto along = [&](u64 side) { return side % stride == 0 ? (k > stride ? k - stride : 0) : (k > side % stride ? k - side % stride : 0); };
      h = b.pad(h, along(h.h), along(h.w));
      pad = 0;
    }
    h = b.act(b.bn(b.conv(h, c_out, k, stride, pad, groups)), a);
    b.hold_until_now(in.t);
    return h;
  };
  const auto width = [&](double depth) { return std::max<u64>(static_cast<u64>(depth * p.depth_multiplier), p.min_depth); };
  const u64 strides[] = {1, 2, 1, 2, 1, 2, 1, 1, 1, 1, 1, 2, 1};
  double depth = 32;
  u64 out = width(depth);
  x = layer(x, out, 3, 2, 1);
  for (int i = 0; i < 13; ++i) {
    const u64 in = out;
    if (strides[i] == 2 || i == 0) depth *= 2, out = width(depth);
    x = layer(x, in, 3, strides[i], in);
    x = layer(x, out, 1, 1, 1);
    ++b.g.layers;
  }
  classifier(b, b.dropout(b.avgpool(x), p.classifier_dropout, true), p.labels);
}

// modeling_poolformer.py: per stage PoolFormerEmbeddings (Conv2d(patch_sizes[i], strides[i], padding[i]) with bias)
// and depths[i] PoolFormerLayers: before_norm (GroupNorm(1)), PoolFormerPooling (AvgPool2d(pool_size, 1,
// pool_size // 2, count_include_pad=False)(x) - x), layer_scale_1 * that, hidden + it; after_norm, PoolFormerOutput
// (1x1 conv to int(hidden x mlp_ratio), act, 1x1 conv back), layer_scale_2 * that, hidden + it; the classifier's
// GroupNorm(1) over the last stage, mean over H x W, Linear.
void poolformer(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  const auto norm = [&](const Fm& in) {
    Fm y = b.layernorm(in, false);
    b.g.ops.back().channels = 1;  // PoolFormerGroupNorm: num_groups 1
    return y;
  };
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 dim = p.widths[s];
    x = b.conv(x, dim, p.patch_sizes[s], p.patch_strides[s], p.paddings[s], 1, true);
    for (u64 d = 0; d < p.depths[s]; ++d) {
      const Fm normed = norm(x);
      Fm mixed = b.add(b.pool_same(normed), normed);  // pool(x) - x: a new tensor, nothing saved
      if (p.layer_scale) mixed = b.scale(mixed);
      x = b.add(x, mixed);
      const u64 hidden = static_cast<u64>(static_cast<double>(dim) * p.mlp_ratio);  // int(hidden_size * mlp_ratio)
      Fm h = b.act(b.conv(norm(x), hidden, 1, 1, 0, 1, true), a);
      h = b.conv(h, dim, 1, 1, 0, 1, true);
      if (p.layer_scale) h = b.scale(h);
      x = b.add(x, h);
      ++b.g.layers;
    }
  }
  classifier(b, b.avgpool(norm(x)), p.labels);
}

// modeling_mobilevit.py. MobileViTConvLayer: conv (padding (k - 1) / 2, bias=False by default), [BatchNorm],
// [act]. MobileViTInvertedResidual: 1x1 expand to make_divisible(round(in x expand_ratio), 8), 3x3 depthwise (stride),
// 1x1 reduce without act, + the input where stride 1 and in == out. MobileViTLayer: [a stride-2 inverted residual],
// conv_kxk, conv_1x1 to the transformer's width (no norm, no act), unfolding into patch_size^2 sequences of the
// patches (two reshape copies), the transformer layers (pre-norm; query / key / value Linears, eager
// softmax(q k^T / sqrt(d)) v, dense + dropout + residual; layernorm_after, Linear to int(width x mlp_ratio) + act,
// Linear + dropout + residual), a LayerNorm, folding back (two copies), conv_projection (1x1 conv + BN + act), fusion
// (cat(residual, features): 3x3 conv + BN + act). MobileViTEncoder: layer1 one, layer2 three inverted residuals,
// layer3-5 MobileViTLayers of 2, 4, 3 transformer layers; conv_1x1_exp (neck[6]); mean over H x W; in-place dropout,
// the classifier.
void mobilevit(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  const auto conv_layer = [&](const Fm& in, u64 c_out, u64 k, u64 stride, u64 groups, bool norm, bool act) {
    Fm y = b.conv(in, c_out, k, stride, (k - 1) / 2, groups, false);
    if (norm) y = b.bn(y);
    if (act) y = b.act(y, a);
    b.hold_until_now(in.t);
    return y;
  };
  const auto inverted = [&](Fm in, u64 out, u64 stride) {
    const u64 wide = make_divisible(std::nearbyint(static_cast<double>(in.c) * p.expand_ratio), 8, 8);
    Fm h = conv_layer(in, wide, 1, 1, 1, true, true);
    h = conv_layer(h, wide, 3, stride, wide, true, true);
    h = conv_layer(h, out, 1, 1, 1, true, false);
    if (stride == 1 && in.c == out) return b.add(in, h);
    b.hold_until_now(in.t);  // `residual = features` until the block returns
    return h;
  };
  const auto dropout = [&](const Fm& in) { return b.dropout(in, p.hidden_dropout, false); };
  x = conv_layer(x, p.neck[0], 3, 2, 1, true, true);
  x = inverted(x, p.neck[1], 1), ++b.g.layers;
  for (int i = 0; i < 3; ++i) x = inverted(x, p.neck[2], i == 0 ? 2 : 1), ++b.g.layers;
  for (std::size_t s = 0; s < 3; ++s) {
    const u64 out = p.neck[3 + s], width = p.widths[s];
    x = inverted(x, out, 2);
    const Fm residual = x;
    Fm f = conv_layer(x, out, p.kernel_size, 1, 1, true, true);
    f = conv_layer(f, width, 1, 1, 1, false, false);
    // unfolding: (B, C, H, W) -> (B x patch_area, patches, C); the image's side is divisible by the patch here
    const u64 area = p.patch * p.patch, patches = (f.h / std::max<u64>(p.patch, 1)) * (f.w / std::max<u64>(p.patch, 1));
    Fm t = b.pad(f, 0, 0);  // reshape(B, C, patches, area) of a transposed view: a copy
    t = b.pad(t, 0, 0);     // reshape(B x area, patches, C) after transpose(1, 3): a copy
    t.h = patches, t.w = area;
    for (u64 l = 0; l < p.depths[s]; ++l) {
      const Fm n = b.layernorm(t, false);
      const Fm q = b.linear(n, width, p.qkv_bias), k = b.linear(n, width, p.qkv_bias), v = b.linear(n, width, p.qkv_bias);
      Fm h = dropout(b.linear(b.attention(q, k, v, p.heads), width));
      t = b.add(h, t);
      h = b.act(b.linear(b.layernorm(t, false), static_cast<u64>(static_cast<double>(width) * p.mlp_ratio)), a);
      h = dropout(b.linear(h, width));
      t = b.add(h, t);
      ++b.g.layers;
    }
    t = b.layernorm(t, false);
    Fm folded = b.pad(t, 0, 0);  // folding: reshape(B x C x patches_h, patches_w, ph, pw) of a transposed view: a copy
    folded = b.pad(folded, 0, 0);  // reshape(B, C, H, W) after transpose(1, 2): a copy
    folded.h = f.h, folded.w = f.w;
    f = conv_layer(folded, out, 1, 1, 1, true, true);
    x = conv_layer(b.cat(residual, f), out, p.kernel_size, 1, 1, true, true);
  }
  if (p.neck.size() > 6) x = conv_layer(x, p.neck[6], 1, 1, 1, true, true);
  classifier(b, b.dropout(b.avgpool(x), p.classifier_dropout, true), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
