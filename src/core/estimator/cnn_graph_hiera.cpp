// Hiera's modules op by op, as transformers 5.x builds them (modeling_hiera.py), on cnn_builder.hpp's ops. Tokens
// (batch, N, C) are feature maps of C channels and N positions; a mask unit attention's windows are the map's
// columns (independent sequences per sample).
#include <algorithm>
#include <cmath>

#include "core/estimator/cnn_builder.hpp"

namespace vramdoc::estimator::cnn_build {

namespace {

Fm tokens(const Fm& x, u64 n, u64 sequences = 1) { return {x.t, x.c, n, sequences}; }

// HieraMaskUnitAttention: qkv Linear(C_in, 3 C_out) whose reshape().permute().unbind() gives views; [query.max over
// the query stride: values and int64 indices]; `query * scale` (a new tensor); matmul's contiguous copies of the
// permuted key and value views (what its bmm saves); the eager matmuls of each window (num_windows = N /
// (query_stride x window_size) with mask unit attention, else 1), softmax (saved); transpose(1, 3).reshape (a copy);
// proj.
Fm mask_unit_attention(Builder& b, const Fm& n, u64 c_out, u64 heads, u64 stride, u64 window, bool masked) {
  const u64 tokens_in = n.h * n.w, windows = masked ? std::max<u64>(tokens_in / std::max<u64>(stride * window, 1), 1) : 1;
  const Fm qkv = b.linear(n, 3 * c_out);
  Fm query{qkv.t, c_out, tokens_in, 1};
  if (stride > 1) query = b.max_reduce(query, stride);
  query = b.pad(query, 0, 0);  // query * scale
  const u64 nq = query.h, nk = tokens_in;
  const Fm view{qkv.t, c_out, nk, 1};
  const Fm key = b.pad(view, 0, 0), value = b.pad(view, 0, 0);  // matmul's reshape of the permuted views: copies
  const Fm y = b.attention(tokens(query, nq / windows, windows), tokens(key, nk / windows, windows),
                           tokens(value, nk / windows, windows), heads);
  const Fm out = b.linear(tokens(y, nq), c_out);
  b.hold_until_now(qkv.t);  // query, key and value (views of qkv) until the module returns
  return out;
}

}  // namespace

// HieraEmbeddings: Conv2d(patch_size, patch_stride, patch_padding) with bias, flatten(2).transpose(2, 1) (a view), +
// position_embeddings (a new tensor); unroll: per query stride of the schedule (len(depths) - 1 of them) a
// view().permute().flatten() (a copy). HieraModel.forward keeps embedding_output and the unrolled tokens until the
// encoder returns. HieraLayer: layernorm_before; [dim changes: proj Linear, view().max(dim=1) over the query stride];
// the attention, + residual; layernorm_after, the MLP (fc1 to mlp_ratio x C, act, fc2), + residual. Widths embed_dim x
// embed_dim_multiplier^stage; the first layers of stages 1..num_query_pool pool their queries by query_stride's area;
// window_size = masked_unit_area x query_stride_area^-stage; mask unit attention where masked_unit_attention[stage],
// and in a stage's first layer after a stage that had it. HieraPooler: AdaptiveAvgPool1d over the tokens, LayerNorm;
// the classifier.
void hiera(Builder& b, const CnnParts& p, Fm x) {
  const CnnAct a = act_of(p.act);
  x = b.conv(x, p.stem, p.patch_sizes.front(), p.patch_strides.front(), p.paddings.front(), 1, true);
  const u64 n = x.h * x.w;
  const u64 config_side = p.image_size / std::max<u64>(p.patch_strides.front(), 1);
  x = b.bias(tokens(x, n), saturating_mul(config_side * config_side, p.stem));  // + position_embeddings
  const Fm embeddings = x;
  for (std::size_t s = 0; s + 1 < p.depths.size(); ++s) x = b.pad(x, 0, 0);  // unroll's copies
  const Fm unrolled = x;
  u64 c_in = p.stem, layer = 0, ends = 0;
  std::vector<u64> pool_layers;  // cumulative_depths[:num_query_pool]
  for (std::size_t s = 0; s < p.depths.size() && s < p.hiera_query_pool; ++s) ends += p.depths[s], pool_layers.push_back(ends);
  for (std::size_t s = 0; s < p.depths.size(); ++s) {
    const u64 c_out = static_cast<u64>(static_cast<double>(p.stem) * std::pow(p.hiera_dim_multiplier, static_cast<double>(s)));
    const double window_d = static_cast<double>(p.hiera_mask_unit_area) * std::pow(static_cast<double>(p.hiera_query_stride_area), -static_cast<double>(s));
    const u64 window = static_cast<u64>(window_d);
    const bool previous = p.hiera_mask_unit_attention[s > 0 ? s - 1 : 0] != 0;
    for (u64 d = 0; d < p.depths[s]; ++d, ++layer) {
      const u64 stride = std::find(pool_layers.begin(), pool_layers.end(), layer) != pool_layers.end() ? p.hiera_query_stride_area : 1;
      const bool masked = p.hiera_mask_unit_attention[s] != 0 || (previous && d == 0);
      const Fm input = x;
      const Fm normed = b.layernorm(x, false);
      Fm residual = x;
      if (c_in != c_out) residual = b.max_reduce(b.linear(normed, c_out), stride);
      x = b.add(residual, mask_unit_attention(b, normed, c_out, p.sr_heads[s], stride, window, masked));
      Fm m = b.act(b.linear(b.layernorm(x, false), static_cast<u64>(static_cast<double>(c_out) * p.mlp_ratio)), a);
      x = b.add(x, b.linear(m, c_out));
      b.hold_until_now(input.t);
      c_in = c_out, ++b.g.layers;
    }
  }
  b.hold_until_now(embeddings.t), b.hold_until_now(unrolled.t);
  classifier(b, b.layernorm(b.avgpool(x), false), p.labels);
}

}  // namespace vramdoc::estimator::cnn_build
