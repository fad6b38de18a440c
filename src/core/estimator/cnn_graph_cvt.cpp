// CvT's modules op by op, as transformers 5.x builds them (modeling_cvt.py), on cnn_builder.hpp's ops. Tokens
// (batch, H x W [+ 1], C) are feature maps of C channels; the permute().view() between tokens and maps are views.
#include <algorithm>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

Fm tokens(const Fm& x, u64 n) { return {x.t, x.c, n, 1}; }

// CvtDropPath in training: hidden.div(keep_prob) * random_tensor (two new tensors); the identity at rate 0.
Fm drop_path(Builder& b, const Fm& x, double rate) {
  if (!b.training() || !(rate > 0.0)) return x;
  return b.pad(b.pad(x, 0, 0), 0, 0);
}

// CvtSelfAttentionProjection "dw_bn": a depthwise Conv2d(kernel_qkv, stride, padding, bias=False) + BatchNorm2d over
// the map, flattened back to tokens (a view); [cls: torch.cat((cls_token, it), dim=1), a new tensor].
Fm projection(Builder& b, const CnnParts& p, const Fm& map, std::size_t s, u64 stride, u64 padding, bool cls) {
  Fm y = b.bn(b.conv(map, map.c, p.kernels[s], stride, padding, map.c));
  y = tokens(y, y.h * y.w);
  return cls ? b.pad(y, 1, 0) : y;
}

}  // namespace

// Per stage: CvtConvEmbeddings (Conv2d(patch_sizes[i], patch_stride[i], patch_padding[i]) with bias, a LayerNorm
// of its permuted view: a contiguous copy first), [a cls token: torch.cat, a new tensor], depth[i] CvtLayers:
// layernorm_before; CvtSelfAttention (the key, query and value projections over the map, the three Linears,
// einsum's contiguous copies of q and k (saved by its bmm, the eager Attention op's q, k, v), the scores, x scale,
// softmax (saved), einsum with v, permute().contiguous()), CvtSelfOutput's dense; [drop path]; + residual;
// layernorm_after, CvtIntermediate (dense to mlp_ratio x C, GELU), CvtOutput (dense, + the residual), [drop path of
// that sum]. CvtStage's drop path rate is linspace(0, drop_path_rate[i], depth[i])[i] for every layer of the stage
// (the stage's index, as the code has it). The classifier: LayerNorm of the cls token (a view of the last stage's
// tokens: what it saves holds them) or of the last map's tokens, the mean over the tokens, the Linear.
void cvt(Builder& b, const CnnParts& p, Fm x) {
  bool cls = false;
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 c = p.widths[s];
    const Fm input = x;
    x = b.layernorm(b.conv(x, c, p.patch_sizes[s], p.patch_strides[s], p.paddings[s], 1, true), true);
    cls = p.cvt_cls_token[s] != 0;
    if (cls) b.g.params = saturating_add(b.g.params, p.widths.back()), b.g.ops.back().params.push_back(p.widths.back());  // cls_token (1, 1, embed_dim[-1])
    x = b.dropout(x, p.hidden_dropout, false);
    const u64 h = x.h, w = x.w;
    if (cls) x = b.pad(tokens(x, h * w), 1, 0);
    const u64 depth = p.depths[s];
    const double rate = depth > 1 && s < depth ? p.cvt_drop_path[s] * static_cast<double>(s) / static_cast<double>(depth - 1) : 0.0;
    const u64 hidden = static_cast<u64>(static_cast<double>(c) * p.sr_mlp_ratios[s]);
    const bool bias = p.cvt_qkv_bias[s] != 0;
    for (u64 d = 0; d < depth; ++d) {
      const Fm layer_input = x;
      const Fm n = b.layernorm(x, false);
      const Fm map{n.t, c, h, w};  // split off the cls token, permute(0, 2, 1).view(B, C, H, W): views
      const Fm key = projection(b, p, map, s, p.cvt_stride_kv[s], p.cvt_padding_kv[s], cls);
      const Fm query = projection(b, p, map, s, p.cvt_stride_q[s], p.cvt_padding_q[s], cls);
      const Fm value = projection(b, p, map, s, p.cvt_stride_kv[s], p.cvt_padding_kv[s], cls);
      const Fm q = b.linear(query, c, bias), k = b.linear(key, c, bias), v = b.linear(value, c, bias);
      const Fm y = b.attention(q, k, v, p.sr_heads[s]);
      Fm a = b.dropout(b.linear(y, c), p.hidden_dropout, false);
      b.hold_until_now(n.t);  // CvtAttention's argument until it returns
      x = b.add(drop_path(b, a, rate), x);
      Fm m = b.act(b.linear(b.layernorm(x, false), hidden), CnnAct::SavesInput);
      m = b.add(b.dropout(b.linear(m, c), p.hidden_dropout, false), x);
      x = drop_path(b, m, rate);
      b.hold_until_now(layer_input.t);
      ++b.g.layers;
    }
    x = Fm{x.t, c, h, w};
    b.hold_until_now(input.t);
  }
  const Fm normed = b.layernorm(cls ? Fm{x.t, x.c, 1, 1} : x, false);
  classifier(b, b.avgpool(normed), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
