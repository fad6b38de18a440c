// The convolutional classifiers' modules, op by op, as transformers 5.x builds them (the file each
// family's comment names); shapes follow PyTorch's floor((in + padding - dilation x (k - 1) - 1) / stride) + 1.
#include "core/estimator/cnn_graph.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/estimator/cnn_builder.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using namespace cnn_build;


// modeling_resnet.py: ResNetEmbeddings (7x7 stride-2 conv, BN, act, 3x3 max pool), stages of
// ResNetBottleNeckLayer (1x1 -> 3x3 -> 1x1 at out / 4, reduction 4) or ResNetBasicLayer, each with
// a 1x1 ResNetShortCut (conv + BN) where channels or stride change, `hidden += residual`, act.
void resnet(Builder& b, const CnnParts& p, Fm x) {
  const bool downsample_in_bottleneck = p.downsample_in_bottleneck;
  const CnnAct a = act_of(p.act);
  x = b.maxpool(conv_bn_act(b, x, p.stem, 7, 2, 1, true, a), 3, 2, 1);
  const Fm embedded = x;  // ResNetModel.forward's embedding_output: a local to its return (after the pooler)
  u64 in = p.stem;
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 out = p.widths[s];
    const Fm stage_input = x;  // ResNetStage.forward's `input` (and the encoder's loop variable) to the stage's return
    for (u64 d = 0; d < p.depths[s]; ++d) {
      const u64 stride = d > 0 ? 1 : s > 0 || p.downsample_first ? 2 : 1;
      Fm h;
      if (p.bottleneck) {
        const u64 red = out / 4;
        h = conv_bn_act(b, x, red, 1, downsample_in_bottleneck ? stride : 1, 1, true, a);
        h = conv_bn_act(b, h, red, 3, downsample_in_bottleneck ? 1 : stride, 1, true, a);
        h = conv_bn_act(b, h, out, 1, 1, 1, false, a);
      } else {
        h = conv_bn_act(b, x, out, 3, stride, 1, true, a);
        h = conv_bn_act(b, h, out, 3, 1, 1, false, a);
      }
      Fm shortcut = x;
      if (in != out || stride != 1) shortcut = b.bn(b.conv(x, out, 1, stride, 0));  // `residual = self.shortcut(residual)`
      const Fm input = x;
      x = b.act(b.add_in_place(h, shortcut), a);
      // ResNetStage's loop holds the block's input (`hidden_state = layer(hidden_state)`) and the block its `residual`
      // until it returns, after the activation's output is made (the ResNet-101 inference trace of 2026-12-03)
      b.hold_until_now(input.t);
      if (shortcut.t != input.t) b.hold_until_now(shortcut.t);
      in = out, ++b.g.layers;
    }
    b.hold_until_now(stage_input.t);
  }
  const Fm pooled = b.avgpool(x);
  b.hold_until_now(embedded.t);
  classifier(b, pooled, p.labels);
}

// Python's round() of n / 4 (half to even): RegNetSELayer's reduced_channels=int(round(in_channels / 4)).
u64 round_quarter(u64 n) {
  const u64 q = n / 4, r = n % 4;
  return r < 2 ? q : r > 2 ? q + 1 : q % 2 == 0 ? q : q + 1;
}

// modeling_regnet.py: a 3x3 stride-2 stem (conv, BN, act); RegNetXLayer / RegNetYLayer: 1x1 -> grouped
// 3x3 (groups out / groups_width) -> [Y: squeeze-excite: pool, 1x1 conv to round(in / 4), ReLU, 1x1 conv,
// sigmoid, hidden * attention] -> 1x1, the shortcut as ResNet's, `hidden += residual`, act.
void regnet(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  x = conv_bn_act(b, x, p.stem, 3, 2, 1, true, a);
  u64 in = p.stem;
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 out = p.widths[s];
    for (u64 d = 0; d < p.depths[s]; ++d) {
      const u64 stride = d > 0 ? 1 : s > 0 || p.downsample_first ? 2 : 1;
      const u64 groups = std::max<u64>(1, out / std::max<u64>(p.groups_width, 1));
      Fm h = conv_bn_act(b, x, out, 1, 1, 1, true, a);
      h = conv_bn_act(b, h, out, 3, stride, groups, true, a);
      if (p.squeeze_excite) {
        Fm se = b.avgpool(h);
        se = b.act(b.conv(se, std::max<u64>(round_quarter(in), 1), 1, 1, 0, 1, true), CnnAct::Relu);
        se = b.sigmoid(b.conv(se, out, 1, 1, 0, 1, true));
        h = b.mul(h, se);
      }
      h = conv_bn_act(b, h, out, 1, 1, 1, false, a);
      Fm shortcut = x;
      if (in != out || stride != 1) shortcut = b.bn(b.conv(x, out, 1, stride, 0)), b.hold_until_now(x.t);
      x = b.act(b.add_in_place(h, shortcut), a);
      in = out, ++b.g.layers;
    }
  }
  classifier(b, b.avgpool(x), p.labels);
}

// modeling_convnext.py / modeling_convnextv2.py: a patch_size x patch_size conv and a channels-first
// LayerNorm (permute, F.layer_norm, permute back); per stage after the first a LayerNorm and a 2x2
// stride-2 conv; each layer: 7x7 depthwise conv, permute, LayerNorm, Linear to 4 x dim, act, [V2: GRN:
// vector_norm over H x W, x * (norm / mean), weight * that + bias + x], Linear back, [V1: layer scale],
// permute, residual + x; the mean over H x W, a LayerNorm, the classifier.
void convnext(Builder& b, const CnnParts& p, Fm x) {
  const bool v2 = p.arch == CnnArch::ConvNextV2;
  const CnnAct a = act_of(p.act);
  x = b.layernorm(b.conv(x, p.widths.front(), p.patch, p.patch, 0, 1, true), true);
  const Fm embeddings = x;  // ConvNextModel.forward's embedding_output: referenced until the encoder returns
  u64 total = 0;
  for (u64 d : p.depths) total = saturating_add(total, d);
  u64 prev = p.widths.front();
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 out = p.widths[s];
    const Fm stage_input = x;  // ConvNextEncoder's hidden_states: the stage's argument until it returns
    // after the embeddings the feature maps are channels-last in memory (the sums of permuted views; cuDNN keeps
    // its input's layout): the permutes to (N, H, W, C) are contiguous, LayerNorm copies nothing
    if (prev != out || s > 0) x = b.conv(b.layernorm(x, false), out, 2, 2, 0, 1, true);
    for (u64 d = 0; d < p.depths[s]; ++d) {
      Fm h = b.layernorm(b.conv(x, out, 7, 1, 3, out, true), false);
      h = b.act(b.linear(h, 4 * out), a);
      if (v2) {
        const Fm norm = b.vector_norm(h);
        h = b.add(b.bias(b.scale(b.mul(h, norm))), h);
      }
      h = b.linear(h, out);
      if (!v2 && p.layer_scale) h = b.scale(h);
      // ConvNextDropPath's rates: linspace(0, drop_path_rate, sum(depths)); in training x.div(keep) * mask
      const double rate = p.drop_path * static_cast<double>(b.g.layers) / static_cast<double>(std::max<u64>(total, 2) - 1);
      if (rate > 0.0) h = b.dropout(h, rate, false);
      x = b.add(x, h);
      ++b.g.layers;
    }
    b.hold_until_now(stage_input.t);
    prev = out;
  }
  b.hold_until_now(embeddings.t);
  classifier(b, b.layernorm(b.avgpool(x), false), p.labels);
}

// modeling_efficientnet.py round_filters: width_coefficient x channels to a multiple of depth_divisor.
u64 round_filters(const CnnParts& p, u64 channels) {
  const double c = static_cast<double>(channels) * p.width_coefficient;
  const double d = static_cast<double>(p.depth_divisor);
  double dim = std::max(d, std::floor(std::floor(c + d / 2) / d) * d);
  if (dim < 0.9 * c) dim += d;
  return static_cast<u64>(dim);
}

// modeling_efficientnet.py: ZeroPad2d(0, 1, 0, 1) and a 3x3 stride-2 valid conv, BN, act; each block:
// [expansion 1x1, BN, act], [stride 2: ZeroPad2d], depthwise kxk, BN, act, squeeze-excite (pool, 1x1 conv
// with bias to max(1, in x se_ratio), act, 1x1 conv back, sigmoid, inputs * that), projection 1x1, BN and,
// for the repeats after a stage's first block, dropout and + the block's input; top 1x1 conv, BN, act;
// AvgPool2d(hidden_dim, ceil_mode) to one value; dropout; the classifier on hidden_dim.
void efficientnet(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  x = b.act(b.bn(b.conv(b.pad(x, 1, 1), round_filters(p, 32), 3, 2, 0)), a);
  const Fm stem = x;  // EfficientNetModel.forward's embedding_output: referenced until the encoder returns
  u64 blocks = 0, total = 0;
  for (u64 r : p.repeats) total += static_cast<u64>(std::ceil(p.depth_coefficient * static_cast<double>(r)));
  for (std::size_t i = 0; i < p.in_channels.size(); ++i) {
    const u64 out = round_filters(p, p.out_channels[i]);
    const u64 repeats = static_cast<u64>(std::ceil(p.depth_coefficient * static_cast<double>(p.repeats[i])));
    for (u64 j = 0; j < repeats; ++j) {
      const u64 in = j > 0 ? out : round_filters(p, p.in_channels[i]);
      const u64 stride = j > 0 ? 1 : p.strides[i], k = p.kernels[i], expand = p.expand_ratios[i];
      const Fm embeddings = x;
      Fm h = x;
      const u64 wide = in * expand;
      if (expand != 1) {
        const Fm in_expand = h;
        h = b.act(b.bn(b.conv(h, wide, 1, 1, 0)), a);
        b.hold_until_now(in_expand.t);
      }
      const Fm in_depthwise = h;
      if (stride == 2) h = b.pad(h, k - 1, k - 1);  // correct_pad: k // 2 - 1 and k // 2 (or k // 2 twice): k - 1 in all
      h = b.act(b.bn(b.conv(h, h.c, k, stride, stride == 2 ? 0 : k / 2, h.c)), a);
      b.hold_until_now(in_depthwise.t);
      Fm se = b.avgpool(h);
      se = b.act(b.conv(se, std::max<u64>(1, static_cast<u64>(static_cast<double>(in) * p.se_ratio)), 1, 1, 0, 1, true), a);
      se = b.sigmoid(b.conv(se, h.c, 1, 1, 0, 1, true));
      const Fm excited = b.mul(h, se);
      h = b.bn(b.conv(excited, out, 1, 1, 0));
      b.hold_until_now(excited.t);
      if (stride == 1 && j > 0) {
        const double rate = p.drop_connect * static_cast<double>(blocks) / static_cast<double>(std::max<u64>(total, 1));
        h = b.add(b.dropout(h, rate, false), embeddings);
      } else {
        b.hold_until_now(embeddings.t);  // `embeddings = hidden_states` until the block returns
      }
      x = h, ++blocks, ++b.g.layers;
    }
  }
  x = b.act(b.bn(b.conv(x, round_filters(p, 1280), 1, 1, 0)), a);
  b.hold_until_now(stem.t);
  if (x.c != p.hidden_dim) b.fail("EfficientNet's hidden_dim (" + std::to_string(p.hidden_dim) + ") is not the top convolution's width (" +
                                  std::to_string(x.c) + "): transformers cannot build this config");
  classifier(b, b.dropout(b.avgpool(x), p.dropout, false), p.labels);
}

// modeling_mobilenet_v2.py: with tf_padding every conv's input is padded first (apply_tf_padding: F.pad,
// a copy even where nothing is padded); MobileNetV2ConvLayer = [pad], conv, BN, [act]; the stem (3x3
// stride 2, [1x1 expansion], 3x3 depthwise, 1x1 reduce), 16 inverted residuals (1x1 expand to
// make_divisible(in x expand_ratio), 3x3 depthwise, 1x1 reduce, + the input where stride 1 and in == out),
// conv_1x1 to 1280 (x depth_multiplier unless finegrained_output and < 1), pool, dropout in place, classifier.
void mobilenet_v2(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  const auto depth = [&](u64 c) {
    return make_divisible(std::nearbyint(static_cast<double>(c) * p.depth_multiplier), p.divisible_by, p.min_depth);
  };
  const auto layer = [&](const Fm& in, u64 c_out, u64 k, u64 stride, u64 groups, bool act, u64 dilation) {
    Fm h = in;
    u64 pad = (k - 1) / 2 * dilation;
    if (p.tf_padding) {  // TensorFlow's SAME: the padding that makes ceil(in / stride) outputs
      const auto along = [&](u64 side) { return side % stride == 0 ? (k > stride ? k - stride : 0) : (k > side % stride ? k - side % stride : 0); };
      h = b.pad(h, along(h.h) * dilation, along(h.w) * dilation);
      pad = 0;
    }
    h = b.bn(b.conv(h, c_out, k, stride, pad, groups, false, dilation));
    if (act) h = b.act(h, a);
    b.hold_until_now(in.t);
    return h;
  };
  const u64 channels[] = {16, 24, 24, 32, 32, 32, 64, 64, 64, 64, 96, 96, 96, 160, 160, 160, 320};
  const u64 strides[] = {2, 1, 2, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1, 1};
  const u64 first = depth(32);
  x = layer(x, first, 3, 2, 1, true, 1);
  if (!p.first_layer_is_expansion) x = layer(x, first, 1, 1, 1, true, 1);
  x = layer(x, first, 3, 1, first, true, 1);
  x = layer(x, depth(channels[0]), 1, 1, 1, false, 1);
  u64 current = 2, dilation = 1;
  for (int i = 0; i < 16; ++i) {
    u64 stride = strides[i], layer_dilation = 1;
    if (current == p.output_stride) {
      layer_dilation = dilation, dilation *= stride, stride = 1;
    } else {
      current *= stride;
    }
    const u64 in = depth(channels[i]), out = depth(channels[i + 1]);
    const u64 wide = make_divisible(std::nearbyint(static_cast<double>(in) * p.expand_ratio), p.divisible_by, p.min_depth);
    const Fm residual = x;
    Fm h = layer(x, wide, 1, 1, 1, true, 1);
    h = layer(h, wide, 3, stride, wide, true, layer_dilation);
    h = layer(h, out, 1, 1, 1, false, 1);
    if (stride == 1 && in == out) {
      x = b.add(residual, h);
    } else {
      b.hold_until_now(residual.t);  // `residual = features` until the block returns
      x = h;
    }
    ++b.g.layers;
  }
  x = layer(x, p.finegrained_output && p.depth_multiplier < 1.0 ? 1280 : depth(1280), 1, 1, 1, true, 1);
  classifier(b, b.dropout(b.avgpool(x), p.classifier_dropout, true), p.labels);
}

}  // namespace

// modeling_wav2vec2.py Wav2Vec2FeatureEncoder: Wav2Vec2GroupNormConvLayer (conv, GroupNorm, gelu) then
// Wav2Vec2NoLayerNormConvLayer (conv, gelu), or Wav2Vec2LayerNormConvLayer each (conv, transpose, LayerNorm,
// transpose, gelu); conv_bias, conv_kernel, conv_stride per layer.
Result<CnnGraph> build_audio_features(const CnnParts& parts, std::uint64_t samples, bool training) {
  Builder b(training);
  Fm x{b.input(1, 1).t, 1, 1, 1};
  b.g.tensors[0] = samples, x.w = samples;
  if (samples > kMaxFeatureElements) return make_error("the audio of " + std::to_string(samples) + " samples is absurdly long");
  for (std::size_t i = 0; i < parts.conv_dim.size(); ++i) {
    const Fm in = x;
    x = b.conv1d(x, parts.conv_dim[i], parts.conv_kernel[i], parts.conv_stride[i], parts.conv_bias);
    if (parts.layer_norm_features) x = b.layernorm(x, true);
    else if (i == 0) x = b.groupnorm(x);
    x = b.act(x, CnnAct::SavesInput);
    b.hold_until_now(in.t);
    ++b.g.layers;
  }
  b.g.logits = x.t;
  if (!b.error.empty()) return make_error(b.error + " (" + std::to_string(samples) + " samples)");
  return std::move(b.g);
}

Result<CnnGraph> build_cnn_graph(const CnnParts& parts, std::uint64_t image_size, bool training) {
  Builder b(training);
  const Fm x = b.input(parts.channels, image_size);
  switch (parts.arch) {
    case CnnArch::ResNet: resnet(b, parts, x); break;
    case CnnArch::RegNet: regnet(b, parts, x); break;
    case CnnArch::ConvNext:
    case CnnArch::ConvNextV2: convnext(b, parts, x); break;
    case CnnArch::EfficientNet: efficientnet(b, parts, x); break;
    case CnnArch::MobileNetV2: mobilenet_v2(b, parts, x); break;
    case CnnArch::Bit: bit(b, parts, x); break;
    case CnnArch::MobileNetV1: mobilenet_v1(b, parts, x); break;
    case CnnArch::PoolFormer: poolformer(b, parts, x); break;
    case CnnArch::MobileViT: mobilevit(b, parts, x); break;
    case CnnArch::FocalNet: focalnet(b, parts, x); break;
    case CnnArch::HGNetV2: hgnet_v2(b, parts, x); break;
    case CnnArch::TextNet: textnet(b, parts, x); break;
    case CnnArch::SpatialReductionViT: spatial_reduction_vit(b, parts, x); break;
    case CnnArch::MobileViTV2: mobilevit_v2(b, parts, x); break;
    case CnnArch::SwiftFormer: swiftformer(b, parts, x); break;
    case CnnArch::Cvt: cvt(b, parts, x); break;
    case CnnArch::Hiera: hiera(b, parts, x); break;
  }
  if (!b.error.empty()) return make_error(b.error + " (image size " + std::to_string(image_size) + ")");
  return std::move(b.g);
}

}  // namespace vramdoc::estimator
