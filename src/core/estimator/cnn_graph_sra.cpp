// Hierarchical vision transformers with spatial-reduction attention (PVT, PVT v2, SegFormer) op by op, as
// transformers 5.x builds them (modeling_pvt.py, modeling_pvt_v2.py, modeling_segformer.py), on cnn_builder.hpp's
// ops. Tokens (batch, H x W, C) are feature maps of C channels and H x W positions: a Linear acts per position.
#include <algorithm>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

// PvtDropPath / SegformerDropPath in training: hidden.div(keep_prob) * random_tensor (two new tensors, only the
// per-sample random tensor saved); the identity at rate 0 or in inference.
Fm drop_path(Builder& b, const Fm& x, double rate) {
  if (!b.training() || !(rate > 0.0)) return x;
  return b.pad(b.pad(x, 0, 0), 0, 0);
}

Fm tokens(const Fm& x, u64 n) { return {x.t, x.c, n, 1}; }  // a view of the same tensor as n positions

// The attention block on normed tokens `n` of an h x w map: query Linear; keys and values from the tokens
// themselves, or (sr > 1) from Conv2d(C, C, sr, stride sr) over the map (the permute().reshape() views are
// channels-last: no copy) + LayerNorm, or (PVT v2's linear_attention) AdaptiveAvgPool2d(7), a 1x1 conv, LayerNorm,
// GELU; then the eager matmuls and softmax (PvtEfficientSelfAttention, PvtV2SelfAttention) or, for SegformerAttention
// under SDPA, the fused kernel; the output projection.
Fm sr_attention(Builder& b, const CnnParts& p, const Fm& n, u64 h, u64 w, std::size_t s) {
  const u64 c = n.c, heads = p.sr_heads[s], sr = p.sr_ratios[s];
  const Fm q = b.linear(n, c, p.qkv_bias);
  Fm kv = n;
  if (p.linear_attention) {
    const Fm pooled = b.avgpool(Fm{n.t, c, h, w}, std::min<u64>(7, h), std::min<u64>(7, w));
    kv = b.act(b.layernorm(b.conv(pooled, c, 1, 1, 0, 1, true), false), CnnAct::SavesInput);
  } else if (sr > 1) {
    kv = b.layernorm(b.conv(Fm{n.t, c, h, w}, c, sr, sr, 0, 1, true), false);
  }
  const Fm k = b.linear(kv, c, p.qkv_bias), v = b.linear(kv, c, p.qkv_bias);
  const Fm y = b.attention(tokens(q, n.h * n.w), tokens(k, kv.h * kv.w), tokens(v, kv.h * kv.w), heads, p.sr_fused);
  const Fm out = b.dropout(b.linear(Fm{y.t, c, n.h, n.w}, c), p.hidden_dropout, false);
  b.hold_until_now(n.t);  // the module's argument (the LayerNorm's output) until it returns
  return out;
}

// The MLP: dense1 to int(C x mlp_ratio), [ReLU for linear_attention], [the Mix-FFN's depthwise 3x3 conv with bias
// over the map (PvtV2DepthWiseConv, SegformerDepthWiseConv: transpose().view() in, flatten().transpose() out, views)],
// act, dropout, dense2, dropout. The argument of each module is its caller's until it returns.
Fm mlp(Builder& b, const CnnParts& p, const Fm& n, std::size_t s) {
  const u64 hidden = static_cast<u64>(static_cast<double>(n.c) * p.sr_mlp_ratios[s]);
  Fm h = b.linear(n, hidden);
  if (p.linear_attention) h = b.act(h, CnnAct::Relu);
  if (p.mix_ffn) h = b.conv(h, hidden, 3, 1, 1, hidden, true);
  h = b.dropout(b.act(h, act_of(p.act)), p.hidden_dropout, false);
  h = b.dropout(b.linear(h, n.c), p.hidden_dropout, false);
  b.hold_until_now(n.t);
  return h;
}

}  // namespace

// Per stage: the patch embedding (PVT v2 / SegFormer's overlapping Conv2d(patch_sizes[i], strides[i], padding
// patch // 2); PVT's Conv2d(kernel strides[i], stride patch_sizes[i])) with bias, flatten(2).transpose(1, 2) and a
// LayerNorm of that transposed view (a contiguous copy first); PVT adds its cls token in the last stage (torch.cat: a
// copy) and the position embeddings (interpolated to the map: batch-1 tensors, a new sum); then depths[i] pre-norm
// layers (LayerNorm, attention, [drop path], + residual; LayerNorm, MLP, [drop path], + residual) and, for PVT v2 /
// SegFormer, the stage's LayerNorm; between stages (and after the last for PVT v2 and SegFormer's
// reshape_last_stage) reshape().permute(0, 3, 1, 2).contiguous(), a copy. The classifier: PVT's final LayerNorm and
// the cls token (`sequence_output[:, 0, :]`, a view: the Linear saves it, so all of that LayerNorm's output); PVT v2's
// and SegFormer's permute(0, 2, 3, 1).reshape() (a copy), mean over the positions, the Linear.
void spatial_reduction_vit(Builder& b, const CnnParts& p, Fm x) {
  u64 total = 0, index = 0;
  for (u64 d : p.depths) total = saturating_add(total, d);
  const std::size_t stages = p.depths.size();
  for (std::size_t s = 0; s < stages; ++s) {
    const u64 c = p.widths[s];
    const bool cls = p.pvt_v1 && s + 1 == stages;
    const Fm input = x;  // the stage's argument (SegformerStage, PvtV2EncoderLayer) until it returns
    if (p.pvt_v1) x = b.conv(x, c, p.patch_strides[s], p.patch_sizes[s], 0, 1, true);
    else x = b.conv(x, c, p.patch_sizes[s], p.patch_strides[s], p.patch_sizes[s] / 2, 1, true);
    const u64 h = x.h, w = x.w;
    x = b.layernorm(x, true);
    if (p.pvt_v1) {
      if (cls) x = b.pad(tokens(x, h * w), 1, 0);  // torch.cat((cls_token, embeddings), dim=1)
      // position_embeddings (num_patches [+ 1]) x C at the config's image size, PvtEncoder's image_size // 2^(i + 1)
      const u64 side = s == 0 ? p.image_size : p.image_size >> (s + 1);
      const u64 patches = (side / p.patch_sizes[s]) * (side / p.patch_sizes[s]) + (cls ? 1 : 0);
      x = b.bias(x, saturating_mul(patches, c));
      if (cls) b.g.ops.back().params.push_back(c);  // cls_token
      if (cls) b.g.params = saturating_add(b.g.params, c);
      x = b.dropout(x, p.hidden_dropout, false);
    }
    for (u64 d = 0; d < p.depths[s]; ++d, ++index) {
      // drop path rates: linspace(0, drop_path_rate, sum(depths)) (SegFormer's rate x i / (sum - 1): the same)
      const double rate = total > 1 ? p.drop_path * static_cast<double>(index) / static_cast<double>(total - 1) : 0.0;
      const Fm layer_input = x;
      const Fm a = sr_attention(b, p, b.layernorm(x, false), h, w, s);
      x = b.add(drop_path(b, a, rate), x);
      Fm m = mlp(b, p, b.layernorm(x, false), s);
      x = b.add(x, drop_path(b, m, rate));
      b.hold_until_now(layer_input.t);  // the layer's argument: its caller's until it returns
      ++b.g.layers;
    }
    if (!p.pvt_v1) x = b.layernorm(x, false);
    if (s + 1 < stages || (!p.pvt_v1 && p.reshape_last_stage)) x = b.pad(x, 0, 0);
    b.hold_until_now(input.t);
  }
  if (p.pvt_v1) {
    x = b.layernorm(x, false);
    classifier(b, Fm{x.t, x.c, 1, 1}, p.labels);
    return;
  }
  if (p.reshape_last_stage) x = b.pad(x, 0, 0);  // permute(0, 2, 3, 1) of the contiguous map, reshape: a copy
  classifier(b, b.avgpool(x), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
