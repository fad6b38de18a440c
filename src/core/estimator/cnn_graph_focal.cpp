// FocalNet's modules op by op, as transformers 5.x builds them (modeling_focalnet.py), on cnn_builder.hpp's ops.
// Tokens (batch, H x W, C) are feature maps of C channels; the split views of projection_in's output are that
// tensor itself (a view keeps its storage: what autograd saves of q and the gates holds all of it).
#include <algorithm>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

// FocalNetDropPath in training: input.div(keep_prob) * random_tensor (two new tensors; only the per-sample random
// tensor is saved); the identity at rate 0 or in inference (the builder drops copies only where it is told to).
Fm drop_path(Builder& b, const Fm& x, double rate, bool training) {
  if (!training || !(rate > 0.0)) return x;
  return b.pad(b.pad(x, 0, 0), 0, 0);
}

}  // namespace

// FocalNetEmbeddings: Conv2d(patch, stride patch) with bias, flatten.transpose, LayerNorm (on a transposed view: a
// copy first). FocalNetLayer (pre-norm): norm1, FocalNetModulation (projection_in Linear(C, 2C + L + 1),
// permute().contiguous(), per focal level a depthwise Conv2d(focal_factor x k + focal_window) + GELU and
// `ctx_all + ctx * gates[:, k]` (the first sum `0 + ...` a new tensor), the global context gelu(mean(mean(ctx)))
// times the last gate, [/ (L + 1)], projection_context 1x1 conv, `q * modulator`, permute().contiguous(),
// [LayerNorm], projection_out), `gamma_1 * h` (a float 1.0 without layer scale: a new tensor), drop path, the
// residual; norm2, fc1, act, fc2, gamma_2, drop path, the residual. FocalNetStage's downsample after each stage but
// the last: transpose(1, 2).reshape (a copy), Conv2d(2, 2), LayerNorm (a copy of the transposed view first);
// FocalNetModel's final LayerNorm, AdaptiveAvgPool1d, the classifier. Widths embed_dim x 2^stage.
void focalnet(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  const bool training = b.training();
  if (x.h % p.patch != 0 || x.w % p.patch != 0) x = b.pad(x, p.patch - x.h % p.patch, p.patch - x.w % p.patch);  // maybe_pad
  x = b.layernorm(b.conv(x, p.stem, p.patch, p.patch, 0, 1, true), true);
  u64 total = 0, index = 0;
  for (u64 d : p.depths) total = saturating_add(total, d);
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 c = p.widths[s], levels = p.focal_levels[s];
    for (u64 d = 0; d < p.depths[s]; ++d, ++index) {
      // the stochastic depth decay rule: linspace(0, drop_path_rate, sum(depths))
      const double rate = total > 1 ? p.drop_path * static_cast<double>(index) / static_cast<double>(total - 1) : 0.0;
      const Fm shortcut = x;
      const Fm projected = b.linear(b.layernorm(x, false), 2 * c + levels + 1);
      const Fm xc = b.pad(projected, 0, 0);  // permute(0, 3, 1, 2).contiguous()
      const Fm view{xc.t, c, xc.h, xc.w};    // q, ctx and the gates: views of xc
      Fm ctx = view, all{};
      for (u64 l = 0; l < levels; ++l) {
        const u64 k = 2 * l + p.focal_windows[s];  // focal_factor 2
        ctx = b.act(b.conv(ctx, c, k, 1, k / 2, c), CnnAct::SavesInput);
        const Fm gated = b.mul(ctx, view);  // ctx * gates[:, l:l + 1]
        all = l == 0 ? b.pad(gated, 0, 0) : b.add(all, gated);
      }
      const Fm global = b.act(b.avgpool(ctx), CnnAct::SavesInput);
      const Fm gated = b.mul(view, global);  // ctx_global * gates[:, L:]: the full map
      all = all.t >= 0 ? b.add(all, gated) : gated;
      if (p.normalize_modulator) all = b.pad(all, 0, 0);
      const Fm modulator = b.conv(all, c, 1, 1, 0, 1, true);
      Fm h = b.pad(b.mul(view, modulator), 0, 0);  // q * modulator, permute(0, 2, 3, 1).contiguous()
      if (p.post_norm_in_modulation) h = b.layernorm(h, false);
      h = b.linear(h, c);
      h = p.layer_scale ? b.scale(h) : b.pad(h, 0, 0);
      x = b.add(shortcut, drop_path(b, h, rate, training));
      h = b.act(b.linear(b.layernorm(x, false), static_cast<u64>(static_cast<double>(c) * p.mlp_ratio)), a);
      h = b.linear(h, c);
      h = p.layer_scale ? b.scale(h) : b.pad(h, 0, 0);
      x = b.add(x, drop_path(b, h, rate, training));
      ++b.g.layers;
    }
    if (s + 1 < p.depths.size()) x = b.layernorm(b.conv(b.pad(x, 0, 0), p.widths[s + 1], 2, 2, 0, 1, true), true);
  }
  classifier(b, b.avgpool(b.layernorm(x, false)), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
