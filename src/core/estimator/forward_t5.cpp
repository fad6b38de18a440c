// A forward op by op (see forward_ops.hpp) for T5 and its relatives (mT5, UMT5): T5LayerNorm, the
// relative position bias, self-attention through SDPA's math kernel, cross-attention, the dense or
// gated feed-forward, as modeling_t5.py (transformers 5.17) and PyTorch 2.11 run them. Read off the
// traces of docs/results/families-h200-2026-12-01-b/ (016 t5-s inference, 000-009 t5 training).
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// SDPA's math kernel (aten _scaled_dot_product_attention_math) without grouped heads, as the T5
// traces show it: 16-bit q, k, v upcast to fp32; q and k^T scaled; both copied contiguous for the
// batched matmul (saved); fp32 scores, the bias added in place; _safe_softmax's output (saved) with
// its bool row check; in training the dropout's mask and output (both saved); the probabilities in
// the inputs' dtype (the kernel's second output, dropped at its end); v copied contiguous (saved),
// the fp32 output cast back. q, k, v are (batch, heads, seq, dim) views of the projections.
u64 math_sdpa(Forward& f, const LayerDims& d, u64 kv_tokens) {
  const bool up = f.act != 4;
  const u64 q_len = f.q_len;
  const u64 qf = up ? f.s.alloc(f.bytes(d.q, 4)) : 0;
  f.q_len = kv_tokens;
  const u64 kf = up ? f.s.alloc(f.bytes(d.kv, 4)) : 0, vf = up ? f.s.alloc(f.bytes(d.kv, 4)) : 0;
  f.q_len = q_len;
  const u64 qs = f.s.alloc(f.bytes(d.q, 4));
  f.q_len = kv_tokens;
  const u64 ks = f.s.alloc(f.bytes(d.kv, 4));
  f.q_len = q_len;
  const u64 qc = f.s.alloc(f.bytes(d.q, 4));
  f.q_len = kv_tokens;
  const u64 kc = f.s.alloc(f.bytes(d.kv, 4));
  f.q_len = q_len;
  f.keep(qc), f.keep(kc);
  const u64 kv_len = f.kv_len;
  f.kv_len = kv_tokens;
  const u64 scores = f.s.alloc(f.scores(d.heads, 4));
  f.drop(kc), f.drop(qc), f.s.free(ks);
  u64 probs = f.s.alloc(f.scores(d.heads, 4));
  f.keep(probs);
  const u64 rows = f.s.alloc(f.scores(d.heads, 1));
  f.s.free(rows), f.s.free(scores);
  const double p = f.r.m.attention_dropout;
  u64 dropped = probs;
  if (f.train && p > 0) {
    const u64 mask = f.s.alloc(f.scores(d.heads, 1));
    f.keep(mask);
    dropped = f.s.alloc(f.scores(d.heads, 4));
    f.keep(dropped);
  }
  const u64 weights16 = up ? f.s.alloc(f.scores(d.heads, f.act)) : 0;
  f.kv_len = kv_len;
  f.q_len = kv_tokens;
  const u64 vc = f.s.alloc(f.bytes(d.kv, 4));
  f.q_len = q_len;
  f.keep(vc);
  const u64 o32 = f.s.alloc(f.bytes(d.q, 4));
  f.drop(vc);
  const u64 out = up ? f.s.alloc(f.bytes(d.q, f.act)) : o32;
  if (up) f.s.free(o32);
  if (dropped != probs) f.drop(dropped);
  f.drop(probs);
  for (u64 id : {qs, vf, kf, qf, weights16}) f.s.free(id);
  return out;
}

// compute_bias(query_length, key_length): the relative positions (int64) and their buckets (a few
// int64 / bool / float temporaries of seq x seq, two alive at once), the embedding's lookup (seq x
// seq x heads, in the weights' dtype: under autocast fp32), its permuted view returned; the buckets
// saved for the embedding's backward.
u64 position_bias(Forward& f, const LayerDims& d, u64 kv_tokens) {
  const u64 square = mul(f.q_len, kv_tokens);
  const u64 relative = f.s.alloc(mul(square, 8)), bucket = f.s.alloc(mul(square, 8));
  f.s.free(relative);
  const u64 values = f.s.alloc(mul(mul(square, d.heads), f.r.w.weight));
  f.keep(bucket);
  f.drop(bucket);
  return values;
}

// T5LayerSelfAttention or T5LayerCrossAttention: T5LayerNorm, q (and k, v over the encoder's output
// for cross-attention), the cache's copies, the bias, the kernel (self-attention: its relative bias
// is a permuted view, so SDPA takes the math kernel; cross-attention: a zeros bias, the
// memory-efficient kernel), the heads merged, o, dropout; returns the residual sum.
u64 t5_attention(Forward& f, u64 x, bool cross, CacheIds& cache) {
  const LayerDims d = layer_dims(f.r);
  const u64 n = norm(f, x, d.h, f.wide);
  const std::string prefix = cross ? "EncDecAttention." : "SelfAttention.";
  const u64 q = linear(f, n, d.h, d.q, f.amp, prefix + "q");
  const u64 kv_tokens = cross ? f.memory_tokens : f.q_len;
  const u64 q_len = f.q_len;
  f.q_len = kv_tokens;
  const u64 source = cross ? f.memory : n;
  u64 k = linear(f, source, d.h, d.kv, f.amp, prefix + "k");  // the norm's and the encoder's output: fp32 under autocast
  u64 v = linear(f, source, d.h, d.kv, f.amp, prefix + "v");
  if (f.use_cache) {  // EncoderDecoderCache: torch.cat onto an empty tensor, copies
    const u64 kc = f.s.alloc(f.bytes(d.kv, f.act), Use::Cache), vc = f.s.alloc(f.bytes(d.kv, f.act), Use::Cache);
    f.drop(k), f.drop(v);
    k = kc, v = vc;
    if (cross) f.cross_cache.push_back(kc), f.cross_cache.push_back(vc);
    else cache = {kc, vc};
  }
  f.q_len = q_len;
  u64 out = 0;
  const bool local = !cross && f.memory == 0 && f.r.m.enc.local_block_len > 0;  // LongT5's encoder (forward_longt5.cpp)
  if (local) {
    out = longt5_local_attention(f, d, n, q, k, v);
  } else if (!cross) {
    if (f.position_bias == 0) f.position_bias = position_bias(f, d, kv_tokens);  // the stack's first layer
    const bool where = f.q_len > 1 && f.memory != 0;  // the decoder: causal positions by torch.where (per call)
    const u64 mask = where ? f.s.alloc(mul(mul(f.q_len, kv_tokens), mul(d.heads, f.r.w.weight))) : 0;
    const u64 mask16 = f.amp ? f.s.alloc(mul(mul(f.q_len, kv_tokens), mul(d.heads, 2))) : 0;  // autocast's cast for SDPA
    out = math_sdpa(f, d, kv_tokens);
    f.s.free(mask16), f.s.free(mask);
  } else {
    if (f.cross_bias == 0) f.cross_bias = f.s.alloc(mul(mul(f.q_len, kv_tokens), mul(d.heads, f.act)));  // zeros
    for (u64 id : {q, k, v}) f.keep(id);
    const u64 raw = f.s.alloc(f.bytes(d.q, f.act));
    f.keep(raw);
    out = raw;
  }
  const u64 merged = cross || local ? out : f.s.alloc(f.bytes(d.q, f.act));  // transpose(1, 2).contiguous()
  if (merged != out) f.drop(out);
  const u64 o = linear(f, merged, d.q, d.h, false, prefix + "o");
  f.drop(merged), f.drop(q);
  if (!f.use_cache) f.drop(k), f.drop(v);
  const u64 dropped = dropout(f, o, d.h, f.act, f.r.m.residual_dropout);
  const u64 sum = f.s.alloc(f.bytes(d.h, f.wide));
  f.drop(dropped), f.drop(n);
  return sum;
}

// T5LayerFF: T5LayerNorm, wi (or gelu_new(wi_0) * wi_1), dropout, the input cast to wo's dtype when
// it differs (under autocast: fp32, then autocast's 16-bit copy), wo, dropout, the residual sum.
u64 t5_feed_forward(Forward& f, u64 x) {
  const ModelConfig& m = f.r.m;
  const LayerDims d = layer_dims(f.r);
  const u64 n = norm(f, x, d.h, f.wide);
  u64 h = 0;
  if (m.enc.gated_ffn) {
    const u64 g = linear(f, n, d.h, d.inter, f.amp, "wi_0");
    f.keep(g);
    const u64 act = new_gelu(f, g, d.inter);
    f.drop(g);
    const u64 lin = linear(f, n, d.h, d.inter, f.amp, "wi_1");
    f.keep(act), f.keep(lin);
    h = f.s.alloc(f.bytes(d.inter, std::max(f.act, f.amp ? u64{4} : f.act)));
    f.drop(act), f.drop(lin);
  } else {
    const u64 wi = linear(f, n, d.h, d.inter, f.amp, "wi");
    h = f.s.alloc(f.bytes(d.inter, f.act));  // relu (saves its output)
    f.keep(h);
    f.drop(wi);
  }
  h = dropout(f, h, d.inter, f.act, m.residual_dropout);
  const bool widen = f.amp && f.s.bytes_of(h) < f.bytes(d.inter, 4);  // hidden.to(wo.weight.dtype)
  const u64 wide = widen ? f.s.alloc(f.bytes(d.inter, 4)) : h;
  const u64 o = linear(f, wide, d.inter, d.h, widen, "wo");
  if (wide != h) f.drop(wide);
  f.drop(h);
  const u64 dropped = dropout(f, o, d.h, f.act, m.residual_dropout);
  const u64 sum = f.s.alloc(f.bytes(d.h, f.wide));
  f.drop(dropped), f.drop(n);
  return sum;
}

}  // namespace

u64 t5_norm(Forward& f, u64 x, u64 elements, u64 in_width) {
  // T5LayerNorm: hidden.to(float32).pow(2) (the copy saved by pow), its mean, hidden * rsqrt(...)
  // (fp32; saves hidden), .to(weight dtype) for a 16-bit weight, weight * hidden (saves it when the
  // weight trains).
  const u64 up = in_width == 4 ? x : f.s.alloc(f.bytes(elements, 4));
  f.keep(up);
  const u64 pow = f.s.alloc(f.bytes(elements, 4));
  if (up != x) f.drop(up);
  f.s.free(pow);
  f.keep(x);
  const u64 prod = f.s.alloc(f.bytes(elements, 4));
  const bool narrow = f.r.w.weight == 2;
  const u64 cast = narrow ? f.s.alloc(f.bytes(elements, 2)) : prod;
  if (cast != prod) f.s.free(prod);
  if (f.weights_train()) f.keep(cast);
  const u64 out = f.s.alloc(f.bytes(elements, narrow ? 2 : 4));
  f.drop(cast);
  return out;
}

u64 t5_block(Forward& f, LayerKind kind, u64 x, CacheIds& cache) {
  const u64 a = t5_attention(f, x, false, cache);
  u64 y = a;
  if (kind.cross) {
    CacheIds none{0, 0};
    y = t5_attention(f, a, true, none);
    f.drop(a);
  }
  const u64 out = t5_feed_forward(f, y);
  f.drop(y);
  return out;
}

}  // namespace vramdoc::estimator::detail
