// SwiftFormer's modules op by op, as transformers 5.x builds them (modeling_swiftformer.py), on cnn_builder.hpp's
// ops. Its attention's tokens (batch, H x W, C) are feature maps of C channels: a Linear acts per position.
#include <algorithm>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

// SwiftFormerConvEncoder / SwiftFormerLocalRepresentation: depthwise 3x3 (bias), BatchNorm, 1x1 to `hidden`, GELU,
// 1x1 back, layer_scale * x (saves x), input + that.
Fm conv_encoder(Builder& b, const Fm& x, u64 hidden) {
  Fm h = b.bn(b.conv(x, x.c, 3, 1, 1, x.c, true));
  h = b.act(b.conv(h, hidden, 1, 1, 0, 1, true), CnnAct::SavesInput);
  h = b.scale(b.conv(h, x.c, 1, 1, 0, 1, true));
  return b.add(x, h);
}

// F.normalize(x, dim=-1): x.norm(dim=-1, keepdim=True) (saves its input and output), clamp_min, x / that (saves both).
Fm normalize(Builder& b, const Fm& x) { return b.mul(x, b.pad(b.norm_over_channels(x), 0, 0)); }

// SwiftFormerEfficientAdditiveAttention: to_query, to_key (Linears), normalize both, query @ w_g (a C x 1 parameter),
// x scale_factor, softmax (a value per token), torch.sum(weights * query, dim=1), unsqueeze().repeat(1, N, 1) (a
// new tensor), proj(global_queries * key) + query, final.
Fm additive_attention(Builder& b, const Fm& x) {
  const Fm q = normalize(b, b.linear(x, x.c)), k = normalize(b, b.linear(x, x.c));
  const Fm weights = b.act(b.pad(b.linear(q, 1, false), 0, 0), CnnAct::Relu);  // x scale, softmax (saves its output)
  const Fm global = b.avgpool(b.mul(q, weights));                              // torch.sum(..., dim=1)
  const Fm repeated = b.pad(global, x.h - 1, x.w - 1);                          // repeat(1, N, 1)
  return b.linear(b.add(b.linear(b.mul(repeated, k), x.c), q), x.c);
}

}  // namespace

// SwiftFormerPatchEmbedding: Conv2d(3x3, stride 2, bias) to embed_dims[0] // 2, BN, ReLU, Conv2d(3x3, stride 2) to
// embed_dims[0], BN, ReLU. Per stage depths[i] blocks: SwiftFormerConvEncoder (mlp_ratio wide) but the last, a
// SwiftFormerEncoderBlock: the local representation, permute(0, 2, 3, 1).reshape (a copy) into the additive
// attention, reshape().permute() back (a view), x + layer_scale_1 * res, x + layer_scale_2 * SwiftFormerMlp(x) (BN,
// 1x1 conv to mlp_ratio x C, act, 1x1 conv back); between stages SwiftFormerEmbeddings (Conv2d(down_patch_size,
// down_stride, down_pad), BN) where downsamples[i] or the width changes. The classifier: BN, the mean over H x W,
// head and dist_head (two Linears of the same input), (cls + dist) / 2.
void swiftformer(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  const u64 first = p.widths.front();
  x = b.act(b.bn(b.conv(x, first / 2, 3, 2, 1, 1, true)), CnnAct::Relu);
  x = b.act(b.bn(b.conv(x, first, 3, 2, 1, 1, true)), CnnAct::Relu);
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 dim = p.widths[s], hidden = static_cast<u64>(p.mlp_ratio * static_cast<double>(dim));
    for (u64 d = 0; d < p.depths[s]; ++d) {
      if (p.depths[s] - d > 1) {
        x = conv_encoder(b, x, hidden);
      } else {
        x = conv_encoder(b, x, dim);
        Fm res = additive_attention(b, b.pad(x, 0, 0));
        if (p.layer_scale) res = b.scale(res);
        x = b.add(x, res);
        Fm m = b.act(b.conv(b.bn(x), hidden, 1, 1, 0, 1, true), a);
        m = b.conv(m, dim, 1, 1, 0, 1, true);
        if (p.layer_scale) m = b.scale(m);
        x = b.add(x, m);
      }
      ++b.g.layers;
    }
    if (s + 1 < p.depths.size() && (p.downsamples[s] != 0 || p.widths[s + 1] != dim)) {
      x = b.bn(b.conv(x, p.widths[s + 1], p.patch_sizes.front(), p.patch_strides.front(), p.paddings.front(), 1, true));
    }
  }
  const Fm pooled = b.avgpool(b.bn(x));
  if (p.labels == 0) {
    b.g.logits = pooled.t;
    return;
  }
  const Fm cls = b.linear(pooled, p.labels), dist = b.linear(pooled, p.labels);
  b.g.logits = b.pad(b.add(cls, dist), 0, 0).t;  // (cls + dist) / 2
}

}  // namespace vramdoc::estimator::cnn_build
