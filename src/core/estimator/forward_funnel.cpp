// A forward op by op (see forward_ops.hpp) for Funnel Transformer (modeling_funnel.py, transformers 5.17): blocks of
// layers over a sequence pooled by 2 before each block after the first, FunnelRelMultiheadAttention's relative
// attention (relative_shift) written out, FunnelDecoder's layers on the upsampled sequence.
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// FunnelAttentionStructure.pool_tensor's length: separate_cls keeps the first token apart (cat(x[:, :1], x[:, :-1])
// with truncate_seq, cat(x[:, :1], x) without), then avg_pool2d of stride 2 with ceil_mode; FunnelEncoder pools only
// while the sequence is longer than 2 (1 without separate_cls).
u64 pooled_length(const ModelConfig& m, u64 len) {
  if (len <= (m.enc.separate_cls ? 2U : 1U)) return len;
  const u64 in = m.enc.separate_cls && !m.enc.truncate_seq ? len + 1 : len;
  return (in + 1) / 2;
}

// The sequence each block runs on (block 0: the input's).
std::vector<u64> block_lengths(const ModelConfig& m, u64 seq) {
  std::vector<u64> lengths;
  for (std::size_t b = 0; b < m.enc.pooled_blocks.size(); ++b) lengths.push_back(b == 0 ? seq : pooled_length(m, lengths.back()));
  return lengths;
}

// FunnelRelMultiheadAttention.forward with attention_type relative_shift, on `query` of f.q_len tokens and
// `key_value` of `sk` tokens: q_head * scale; content_score = einsum(q + r_w_bias, k) (bmm: both operands' copies
// saved); positional_attn = einsum(q + r_r_bias, r_head) over ~2 sk relative positions, _relative_shift_gather's
// reshape of a slice (a copy), times cls_mask in place; token_type_attn = torch.where(token_type_mat, ...) (the
// model's token_type_ids default to zeros: always made); their sum; .float(); minus INF x (1 - mask) (the model's
// attention_mask defaults to ones); softmax(dtype=the scores' dtype) (its converted copy; output saved), attention
// dropout (mask and output saved), einsum with v (v's copy saved), the context reshaped (a copy). Every score-sized
// local (content, positional, token type, the fp32 scores) stays referenced to the forward's return, after post_proj,
// hidden_dropout and LayerNorm(query + attn_out). Returns the LayerNorm's output.
u64 relative_attention(Forward& f, u64 query, u64 key_value, u64 sk) {
  const ModelConfig& m = f.r.m;
  const LayerDims d = layer_dims(f.r);
  const u64 sq = f.q_len, w = f.act;
  const u64 q = linear(f, query, d.h, d.q, false, "attention.q_head");
  f.q_len = sk;
  const u64 k = linear(f, key_value, d.h, d.kv, false, "attention.k_head"), v = linear(f, key_value, d.h, d.kv, false, "attention.v_head");
  const u64 k_copy = f.s.alloc(f.bytes(d.kv, w)), v_copy = f.s.alloc(f.bytes(d.kv, w));
  f.q_len = sq, f.kv_len = sk;
  const u64 scaled = f.s.alloc(f.bytes(d.q, w));
  f.drop(q), f.drop(k);
  std::vector<u64> locals;  // referenced to the forward's return
  const u64 content_q = f.s.alloc(f.bytes(d.q, w));  // q_head + r_w_bias, reshaped for bmm
  f.keep(content_q), f.keep(k_copy);
  locals.push_back(f.s.alloc(f.scores(d.heads, w)));  // content_score
  f.drop(content_q), f.drop(k_copy);
  const u64 position_q = f.s.alloc(f.bytes(d.q, w));  // q_head + r_r_bias
  f.keep(position_q);
  f.kv_len = 2 * sk;
  const u64 raw = f.s.alloc(f.scores(d.heads, w));
  locals.push_back(f.s.alloc(f.scores(d.heads, w)));  // the shifted copy (positional_attn views it)
  f.s.free(raw), f.drop(position_q);
  f.kv_len = sk;
  locals.push_back(f.s.alloc(f.scores(d.heads, w)));  // token_type_attn
  const u64 partial = f.s.alloc(f.scores(d.heads, w)), sum = f.s.alloc(f.scores(d.heads, w));
  f.s.free(partial);
  const u64 wide = w == 4 ? sum : f.s.alloc(f.scores(d.heads, 4));
  if (wide != sum) f.s.free(sum);
  locals.push_back(f.s.alloc(f.scores(d.heads, 4)));  // the masked fp32 scores (attn_score)
  f.s.free(wide);
  const u64 converted = w == 4 ? 0 : f.s.alloc(f.scores(d.heads, w)), probs = f.s.alloc(f.scores(d.heads, w));
  f.s.free(converted);
  f.keep(probs);
  u64 dropped = probs;
  if (f.train && m.attention_dropout > 0) {  // attention_dropout: its mask and output saved
    const u64 mask = f.s.alloc(f.scores(d.heads, 1));
    f.keep(mask);
    dropped = f.s.alloc(f.scores(d.heads, w));
  }
  f.keep(dropped), f.keep(v_copy);
  const u64 context = f.s.alloc(f.bytes(d.q, w)), merged = f.s.alloc(f.bytes(d.q, w));
  f.drop(context), f.drop(dropped), f.drop(probs), f.drop(v_copy), f.drop(v), f.drop(scaled);
  u64 o = linear(f, merged, d.q, d.h, false, "attention.post_proj");
  f.drop(merged);
  o = dropout(f, o, d.h, w, m.residual_dropout);
  const u64 residual = f.s.alloc(f.bytes(d.h, f.wide));
  f.drop(o);
  const u64 out = norm(f, residual, d.h, f.wide);
  f.drop(residual);
  for (u64 id : locals) f.s.free(id);
  return out;
}

}  // namespace

std::vector<LayerKind> funnel_layer_order(const ModelConfig& m) {
  std::vector<LayerKind> kinds;
  const auto& blocks = m.enc.pooled_blocks;
  for (std::size_t b = 0; b < blocks.size(); ++b) {
    for (u64 i = 0; i < blocks[b]; ++i) {
      LayerKind k{};
      k.stage = static_cast<std::uint8_t>(std::min<std::size_t>(b, 254)), k.shifted = b > 0 && i == 0;  // the pooling layer
      kinds.push_back(k);
    }
  }
  u64 encoder = 0;
  for (u64 n : blocks) encoder += n;
  for (u64 i = encoder; i < m.num_layers; ++i) {  // FunnelDecoder's layers (FunnelModel's tasks)
    LayerKind k{};
    k.stage = 255, k.stage_end = i == encoder;  // the first one upsamples
    kinds.push_back(k);
  }
  return kinds;
}

// FunnelLayer: the relative attention, then FunnelPositionwiseFFN (linear_1, act, activation_dropout, linear_2,
// dropout, LayerNorm(hidden + h)). The first layer of a pooled block reads the pooled sequence as its query
// (pre_attention_pooling: separate_cls's cat, avg_pool2d, which saves its input) and the unpooled one as keys and
// values with pool_q_only (else the pooled one); FunnelDecoder's first layer reads upsample(final_hidden) +
// first_block_hidden (repeat_interleave, F.pad with truncate_seq, the cat with the first token, the sum).
u64 funnel_layer(Forward& f, LayerKind kind, u64 x) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size;
  const std::vector<u64> lengths = block_lengths(m, f.r.o.seq);
  const bool decoder = kind.stage == 255;
  const u64 len = decoder ? f.r.o.seq : lengths[std::min<std::size_t>(kind.stage, lengths.size() - 1)];
  u64 query = x, sk = len;
  std::vector<u64> transient;
  if (kind.shifted && len != lengths[kind.stage - 1]) {
    f.q_len = lengths[kind.stage - 1];
    const u64 cat = m.enc.separate_cls ? f.s.alloc(f.bytes(h, f.wide)) : x;
    f.keep(cat);
    if (cat != x) transient.push_back(cat);
    f.q_len = len;
    query = f.s.alloc(f.bytes(h, f.wide));
    transient.push_back(query);
    if (m.enc.pool_q_only) sk = lengths[kind.stage - 1];
  }
  if (kind.stage_end) {
    const u64 last = lengths.back();
    f.q_len = last > 1 ? mul(last - 1, u64{1} << std::min<std::size_t>(lengths.size() - 1, 31)) : 1;
    const u64 repeated = f.s.alloc(f.bytes(h, f.wide));
    f.q_len = len;
    const u64 padded = m.enc.truncate_seq ? f.s.alloc(f.bytes(h, f.wide)) : 0, cat = f.s.alloc(f.bytes(h, f.wide));
    f.s.free(repeated), f.s.free(padded);
    query = f.s.alloc(f.bytes(h, f.wide));
    f.s.free(cat);
    transient.push_back(query);
  }
  f.q_len = len;
  const u64 key_value = sk == len ? query : x;
  const u64 a = relative_attention(f, query, key_value, sk);
  f.kv_len = len;
  for (u64 id : transient) f.drop(id);
  return post_norm_ffn(f, kind, a);
}

}  // namespace vramdoc::estimator::detail
