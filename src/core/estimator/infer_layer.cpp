// Inference op by op (see infer_ops.hpp): Linears, norms, RoPE and the attention kernels, each
// allocation in the order transformers 5.17 and PyTorch 2.11 make it (checked against the
// allocator traces of docs/results/h200-2026-11-30-h16/traces/).
#include <algorithm>
#include <vector>

#include "core/estimator/infer_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

bool gemma_norm(Family f) { return f == Family::Gemma || f == Family::Gemma2 || f == Family::Gemma3; }
// The partial-rotary code path (rotate the first dims, then torch.cat with the rest), taken even at
// full rotation by Phi-3.
bool rope_with_cat(const ModelConfig& m, const LayerDims& d) {
  return d.rotary < d.head_dim || m.family == Family::Phi3 || m.family == Family::Phi || m.family == Family::GptNeox;
}

// q * cos + rotate_half(q) * sin over `e` elements per token: the product, -x2 (half), the cat,
// rotate_half * sin, the sum. `pw`: the products' width (fp32 when cos is: OLMo 2, autocast).
u64 rope(Forward& f, u64 e, u64 xw, u64 pw) {
  const u64 a = f.s.alloc(f.bytes(e, pw)), neg = f.s.alloc(f.bytes(e / 2, xw)), cat = f.s.alloc(f.bytes(e, xw));
  f.s.free(neg);
  const u64 b = f.s.alloc(f.bytes(e, pw));
  f.s.free(cat);
  const u64 sum = f.s.alloc(f.bytes(e, pw));
  f.s.free(a), f.s.free(b);
  return sum;
}

// Eager attention (transformers' eager_attention_forward; Gemma 2 soft-caps the scores): repeated
// keys and values, the query copied for the batched matmul, scores scaled, capped and masked,
// softmax in fp32 and its 16-bit copy (kept to the layer's end as attn_weights), the output made
// contiguous.
u64 eager(Forward& f, const LayerDims& d, bool q_contiguous_heads, u64& held) {
  const bool repeat = d.kv_heads < d.heads;
  const u64 kr = repeat ? f.s.alloc(f.bytes(d.q, f.act)) : 0, vr = repeat ? f.s.alloc(f.bytes(d.q, f.act)) : 0;
  const u64 qc = q_contiguous_heads ? 0 : f.s.alloc(f.bytes(d.q, f.act));
  const u64 sc = f.s.alloc(f.scores(d.heads, f.act));
  f.s.free(qc);
  u64 x = f.s.alloc(f.scores(d.heads, f.act));
  f.s.free(sc);
  const int steps = f.r.m.attn_logit_softcap > 0 ? 4 : 1;  // / cap, tanh, * cap; the mask
  for (int i = 0; i < steps; ++i) {
    const u64 next = f.s.alloc(f.scores(d.heads, f.act));
    f.s.free(x);
    x = next;
  }
  const bool cast = f.act != 4;
  const u64 up = cast ? f.s.alloc(f.scores(d.heads, 4)) : 0, sm = f.s.alloc(f.scores(d.heads, 4));
  f.s.free(up);
  held = cast ? f.s.alloc(f.scores(d.heads, f.act)) : sm;
  if (cast) f.s.free(sm);
  f.s.free(x);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act)), contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.s.free(out), f.s.free(kr), f.s.free(vr);
  return contiguous;
}

// SDPA's math kernel (aten _scaled_dot_product_attention_math): 16-bit inputs upcast to fp32, the
// query and keys scaled, keys expanded to every head, fp32 scores and probabilities, a bool mask of
// rows (_safe_softmax), the probabilities' 16-bit copy (returned), the output cast back. The
// query's own copy first was measured (Falcon 7B) and is kept as measured.
u64 math_kernel(Forward& f, const LayerDims& d) {
  const bool up = f.act != 4, expand = d.kv_heads < d.heads;
  const u64 qx = f.s.alloc(f.bytes(d.q, f.act));
  const u64 qf = up ? f.s.alloc(f.bytes(d.q, 4)) : 0, kf = up ? f.s.alloc(f.bytes(d.kv, 4)) : 0;
  const u64 vf = up ? f.s.alloc(f.bytes(d.kv, 4)) : 0;
  const u64 qs = f.s.alloc(f.bytes(d.q, 4)), ks = f.s.alloc(f.bytes(d.kv, 4));
  const u64 kx = expand ? f.s.alloc(f.bytes(d.q, 4)) : 0, qr = f.s.alloc(f.bytes(d.q, 4));
  const u64 sc = f.s.alloc(f.scores(d.heads, 4));
  f.s.free(qr), f.s.free(kx), f.s.free(ks);
  const u64 pr = f.s.alloc(f.scores(d.heads, 4)), rows = f.s.alloc(f.scores(d.heads, 1));
  f.s.free(rows), f.s.free(sc);
  const u64 p16 = up ? f.s.alloc(f.scores(d.heads, f.act)) : 0;
  const u64 vx = expand ? f.s.alloc(f.bytes(d.q, 4)) : 0, o32 = f.s.alloc(f.bytes(d.q, 4));
  f.s.free(vx);
  const u64 out = up ? f.s.alloc(f.bytes(d.q, f.act)) : o32;
  if (up) f.s.free(o32);
  for (u64 id : {pr, qs, vf, kf, qf, p16, qx}) f.s.free(id);
  return out;
}

// Projections: q, k and v (own Linears, or views of one fused Linear's output, which Falcon copies:
// its single key/value head by index, and for the new architecture every head broadcast).
struct Qkv {
  u64 q = 0, k = 0, v = 0;  // tensors of their own (0: a view)
  std::vector<u64> end;     // freed when attention returns
};

Qkv projections(Forward& f, const LayerDims& d, bool input_wide) {
  const ModelConfig& m = f.r.m;
  Qkv t;
  if (!m.fused_qkv) {
    t.q = linear(f, d.h, d.q, input_wide);
    if (m.qk_norm != QkNorm::None && m.family != Family::Gemma3) {  // q_norm(q_proj(x)), then k
      const u64 normed = norm(f, d.q, f.act);
      f.s.free(t.q), t.q = normed;
      t.k = linear(f, d.h, d.kv, input_wide);
      const u64 kn = norm(f, d.kv, f.act);
      f.s.free(t.k), t.k = kn;
      t.v = linear(f, d.h, d.kv, input_wide);
      return t;
    }
    t.k = linear(f, d.h, d.kv, input_wide), t.v = linear(f, d.h, d.kv, input_wide);
    if (m.qk_norm != QkNorm::None) {  // Gemma 3: all three projections, then the norms
      const u64 qn = norm(f, d.q, f.act);
      f.s.free(t.q), t.q = qn;
      const u64 kn = norm(f, d.kv, f.act);
      f.s.free(t.k), t.k = kn;
    }
    return t;
  }
  const u64 kv_fused = m.kv_broadcast_to_heads ? mul(m.num_kv_heads / std::max<u64>(f.r.o.tensor_parallel, 1), d.head_dim) : d.kv;
  t.end.push_back(linear(f, d.h, d.q + 2 * kv_fused, input_wide));
  if (m.family != Family::Falcon) return t;
  if (m.kv_broadcast_to_heads) {
    const u64 ki = f.s.alloc(f.bytes(kv_fused, f.act)), vi = f.s.alloc(f.bytes(kv_fused, f.act));
    t.q = f.s.alloc(f.bytes(d.q, f.act)), t.k = f.s.alloc(f.bytes(d.q, f.act)), t.v = f.s.alloc(f.bytes(d.q, f.act));
    f.s.free(ki), f.s.free(vi);
  } else if (d.kv_heads < d.heads) {
    t.k = f.s.alloc(f.bytes(d.kv, f.act)), t.v = f.s.alloc(f.bytes(d.kv, f.act));
  }
  return t;
}

// RoPE on q and k; returns the rotated query and key (their own tensors) and whether the query's
// memory is [batch, heads, seq, dim] (made by a cat), which SDPA's output inherits.
struct Rotated {
  u64 q = 0, k = 0;
  bool heads_major = false;
};

Rotated apply_rope(Forward& f, const LayerDims& d, Qkv& t) {
  const ModelConfig& m = f.r.m;
  const u64 cos_width = m.family == Family::Olmo2 ? 4 : f.wide, pw = std::max(f.act, cos_width);
  Rotated out;
  if (!rope_with_cat(m, d)) {
    out.q = rope(f, mul(d.heads, d.rotary), f.act, pw), out.k = rope(f, mul(d.kv_heads, d.rotary), f.act, pw);
    f.s.free(t.q), f.s.free(t.k);
    if (m.family == Family::Olmo2 && pw != f.act) {  // q_embed.to(q_type), k_embed.to(k_type)
      const u64 qc = f.s.alloc(f.bytes(d.q, f.act)), kc = f.s.alloc(f.bytes(d.kv, f.act));
      f.s.free(out.q), f.s.free(out.k);
      out.q = qc, out.k = kc;
    }
    return out;
  }
  out.heads_major = true;
  const u64 qe = mul(d.heads, d.rotary), ke = mul(d.kv_heads, d.rotary);
  if (m.family == Family::Phi3) {  // q rotated and concatenated, then k
    const u64 qr = rope(f, qe, f.act, pw);
    out.q = f.s.alloc(f.bytes(d.q, pw));
    f.s.free(qr);
    const u64 kr = rope(f, ke, f.act, pw);
    out.k = f.s.alloc(f.bytes(d.kv, pw));
    f.s.free(kr);
    return out;
  }
  const u64 qr = rope(f, qe, f.act, pw), kr = rope(f, ke, f.act, pw);
  out.q = f.s.alloc(f.bytes(d.q, pw));
  if (m.family == Family::Phi) t.end.push_back(qr); else f.s.free(qr);  // Phi keeps query_rot to the end
  out.k = f.s.alloc(f.bytes(d.kv, pw));
  if (m.family == Family::Phi) t.end.push_back(kr); else f.s.free(kr);
  if (m.family == Family::Phi) t.end.push_back(t.q), t.end.push_back(t.k);  // query_states, key_states too
  else f.s.free(t.q), f.s.free(t.k);
  return out;
}

}  // namespace

LayerDims layer_dims(const Run& r) {
  const ModelConfig& m = r.m;
  const u64 tp = std::max<u64>(r.o.tensor_parallel, 1);
  LayerDims d{};
  d.h = m.hidden_size, d.head_dim = m.head_dim;
  d.heads = std::max<u64>(m.num_heads / tp, 1);
  d.kv_heads = m.kv_broadcast_to_heads ? d.heads : std::max<u64>(m.num_kv_heads / tp, 1);
  d.q = mul(d.heads, d.head_dim), d.kv = mul(d.kv_heads, d.head_dim);
  d.inter = m.intermediate_size / tp;
  d.rotary = std::min(m.rotary_dims, m.head_dim);
  return d;
}

u64 linear(Forward& f, u64 in_elements, u64 out_elements, bool input_wide, bool quantizable) {
  const u64 cast = f.amp && input_wide ? f.s.alloc(f.bytes(in_elements, 2)) : 0;
  const u64 dequant = f.quantized && quantizable ? f.s.alloc(mul(mul(in_elements, out_elements), f.act), Use::Dequant) : 0;
  const u64 out = f.s.alloc(f.bytes(out_elements, f.act));
  f.s.free(dequant), f.s.free(cast);
  return out;
}

// LayerNorm: one output (fp32 under autocast). RMSNorm: hidden.to(float32), pow(2) (its mean is
// small), hidden * rsqrt(...), then the weight: Llama casts back and multiplies (the product in the
// weight's dtype); Gemma multiplies (1 + weight) in fp32 and casts; OLMo 2 multiplies in fp32, casts.
u64 norm(Forward& f, u64 elements, u64 in_width) {
  const ModelConfig& m = f.r.m;
  if (m.norm == NormKind::LayerNorm || m.family == Family::Gpt2) return f.s.alloc(f.bytes(elements, f.amp ? 4 : in_width));
  const u64 up = in_width == 4 ? 0 : f.s.alloc(f.bytes(elements, 4)), pow = f.s.alloc(f.bytes(elements, 4));
  f.s.free(pow);
  const u64 y = f.s.alloc(f.bytes(elements, 4));
  f.s.free(up);
  if (m.norm == NormKind::Rms) {
    const u64 cast = in_width == 4 ? 0 : f.s.alloc(f.bytes(elements, in_width));
    const u64 out = f.s.alloc(f.bytes(elements, std::max(f.r.w.weight, in_width)));
    f.s.free(cast), f.s.free(y);
    return out;
  }
  const u64 weighted = f.s.alloc(f.bytes(elements, 4));
  if (gemma_norm(m.family)) f.s.free(y);
  const u64 cast = in_width == 4 ? 0 : f.s.alloc(f.bytes(elements, in_width));
  if (cast != 0) f.s.free(weighted);
  f.s.free(y);
  return cast != 0 ? cast : weighted;
}

u64 attention(Forward& f, LayerKind kind, bool input_wide, CacheIds& cache, u64& held) {
  const ModelConfig& m = f.r.m;
  if (m.mla.kv_lora_rank > 0) return latent_attention(f, cache);
  const LayerDims d = layer_dims(f.r);
  Qkv t = projections(f, d, input_wide);
  Rotated rot{t.q, t.k, false};
  if (d.rotary > 0) rot = apply_rope(f, d, t);
  // DynamicCache's first update concatenates onto an empty tensor: copies of the keys and values.
  const u64 kw = f.r.o.kv_bytes_per_element.value_or(f.amp ? 4 : f.act), vw = f.r.o.kv_bytes_per_element.value_or(f.act);
  cache[0] = f.s.alloc(f.bytes(d.kv, kw), Use::Cache), cache[1] = f.s.alloc(f.bytes(d.kv, vw), Use::Cache);
  if (rot.k != t.k) f.s.free(rot.k);
  f.s.free(t.k), f.s.free(t.v);
  u64 out = 0;
  const AttentionPath path = attention_path(m, f.r.o, kind);
  if (path == AttentionPath::Eager) {
    out = eager(f, d, rot.heads_major, held);
  } else {
    const bool autocast = f.amp;  // SDPA is on autocast's 16-bit list: q, k, v cast first
    std::vector<u64> casts;
    if (autocast) casts = {f.s.alloc(f.bytes(d.q, 2)), f.s.alloc(f.bytes(d.kv, 2)), f.s.alloc(f.bytes(d.kv, 2))};
    const bool masked = kind.sliding && f.sliding_bool_mask != 0;  // the bool mask made additive per call
    const u64 mask = masked ? f.s.alloc(f.scores(1, f.act)) : 0;
    const bool math = path == AttentionPath::Math;
    u64 raw = math ? math_kernel(f, d) : f.s.alloc(f.bytes(d.q, f.act));
    f.s.free(mask);
    f.s.free(casts);
    if (math || rot.heads_major) {  // transpose(1, 2).contiguous() of a [batch, heads, seq, dim] output
      out = f.s.alloc(f.bytes(d.q, f.act));
      f.s.free(raw);
    } else {
      out = raw;
    }
  }
  const u64 o = linear(f, d.q, d.h, false);
  f.s.free(out);
  if (rot.q != t.q) f.s.free(rot.q);
  f.s.free(t.q);
  f.s.free(t.end);
  return o;
}

}  // namespace vramdoc::estimator::detail
