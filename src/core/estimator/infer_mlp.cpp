// Inference op by op (see infer_ops.hpp): the MLPs, routed and shared experts, DeepSeek's latent
// attention, and what a decoding step allocates per layer. Orders as the allocator traces of
// docs/results/h200-2026-11-30-h16/traces/ show them (transformers 5.17, PyTorch 2.11).
#include <algorithm>

#include "core/estimator/infer_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// gate, act(gate), up, act * up, down (Llama's MLP; Gemma's gelu-tanh runs the same way).
u64 gated(Forward& f, u64 h, u64 inter, bool input_wide) {
  const u64 gate = linear(f, h, inter, input_wide), act = f.s.alloc(f.bytes(inter, f.act));
  f.s.free(gate);
  const u64 up = linear(f, h, inter, input_wide), prod = f.s.alloc(f.bytes(inter, f.act));
  f.s.free(act), f.s.free(up);
  const u64 down = linear(f, inter, h, false);
  f.s.free(prod);
  return down;
}

u64 dense_mlp(Forward& f, u64 h, u64 inter, bool input_wide) {
  const ModelConfig& m = f.r.m;
  if (m.mlp == MlpKind::Gated && m.family != Family::Phi3) return gated(f, h, inter, input_wide);
  if (m.family == Family::Phi3) {  // gate_up_proj, chunked: act(gate), up * act(gate)
    const u64 gate_up = linear(f, h, 2 * inter, input_wide), act = f.s.alloc(f.bytes(inter, f.act));
    const u64 prod = f.s.alloc(f.bytes(inter, f.act));
    f.s.free(act);
    const u64 down = linear(f, inter, h, false);
    f.s.free(prod), f.s.free(gate_up);
    return down;
  }
  const u64 first = linear(f, h, inter, input_wide);
  u64 act = 0;
  if (m.mlp == MlpKind::NewGelu || m.family == Family::Gpt2) {
    // 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), left to right in Python
    const u64 half = f.s.alloc(f.bytes(inter, f.act));
    u64 t = f.s.alloc(f.bytes(inter, f.act));  // pow(x, 3)
    for (int i = 0; i < 5; ++i) {               // * 0.044715, x +, * sqrt(2 / pi), tanh, 1 +
      const u64 next = f.s.alloc(f.bytes(inter, f.act));
      f.s.free(t);
      t = next;
    }
    act = f.s.alloc(f.bytes(inter, f.act));
    f.s.free(half), f.s.free(t);
  } else {
    act = f.s.alloc(f.bytes(inter, f.act));
  }
  f.s.free(first);
  const u64 down = linear(f, inter, h, false);
  f.s.free(act);
  return down;
}

// Router: logits, softmax in fp32 (DeepSeek: the linear itself in fp32), top-k weights and ids;
// Qwen-MoE casts the weights back to the activation dtype. Returns the tensors held to the end.
std::vector<u64> router(Forward& f, u64 h, u64 experts, u64 k) {
  const ModelConfig& m = f.r.m;
  const bool deepseek = m.family == Family::DeepseekV2 || m.family == Family::DeepseekV3;
  std::vector<u64> held;
  if (deepseek) {
    const u64 in32 = f.s.alloc(f.bytes(h, 4));
    held.push_back(f.s.alloc(f.bytes(experts, 4)));
    f.s.free(in32);
  } else {
    held.push_back(f.s.alloc(f.bytes(experts, f.act)));
  }
  const u64 up = f.act != 4 && !deepseek ? f.s.alloc(f.bytes(experts, 4)) : 0, probs = f.s.alloc(f.bytes(experts, 4));
  f.s.free(up);
  const u64 biased = m.family == Family::DeepseekV3 ? f.s.alloc(f.bytes(experts, 4)) : 0;  // + e_score_correction_bias
  held.push_back(f.s.alloc(f.bytes(k, 4))), held.push_back(f.s.alloc(f.bytes(k, 8)));
  if (m.family == Family::Qwen2Moe || m.family == Family::Qwen3Moe) held.push_back(f.s.alloc(f.bytes(k, f.act)));
  f.s.free(biased), f.s.free(probs);
  return held;
}

// Routed experts through grouped_mm (transformers' integrations/moe.py), S = tokens x k rows: the
// token index, argsort and inverse permutation, the gathered inputs, gate_up and a second tensor of
// its size (seen after each grouped matmul in every MoE trace), act and product, down and its
// companion, the weighted outputs in the routing weights' dtype (fp32 for Mixtral and DeepSeek),
// reordered and summed per token (then cast back).
u64 routed_experts(Forward& f, u64 h, u64 inter, u64 experts, u64 k) {
  const ModelConfig& m = f.r.m;
  std::vector<u64> held = router(f, h, experts, k);
  const u64 rw = m.family == Family::Qwen2Moe || m.family == Family::Qwen3Moe ? f.act : 4;
  const u64 idx = f.s.alloc(f.bytes(k, 8)), perm = f.s.alloc(f.bytes(k, 8)), inv = f.s.alloc(f.bytes(k, 8));
  const u64 gathered = f.s.alloc(f.bytes(mul(k, h), f.act));
  f.s.free(inv);
  const u64 weights = f.s.alloc(f.bytes(k, rw)), ids = f.s.alloc(f.bytes(k, 4));
  const u64 gate_up = f.s.alloc(f.bytes(mul(k, 2 * inter), f.act)), gate_up2 = f.s.alloc(f.bytes(mul(k, 2 * inter), f.act));
  f.s.free(gate_up);
  const u64 act = f.s.alloc(f.bytes(mul(k, inter), f.act)), prod = f.s.alloc(f.bytes(mul(k, inter), f.act));
  f.s.free(act), f.s.free(gate_up2);
  const u64 down = f.s.alloc(f.bytes(mul(k, h), f.act)), down2 = f.s.alloc(f.bytes(mul(k, h), f.act));
  f.s.free(prod), f.s.free(down);
  const u64 weighted = f.s.alloc(f.bytes(mul(k, h), rw)), inverse = f.s.alloc(f.bytes(k, 8));
  const u64 reordered = f.s.alloc(f.bytes(mul(k, h), rw));
  f.s.free(weighted);
  u64 sum = f.s.alloc(f.bytes(h, rw));
  if (rw != f.act) {
    const u64 cast = f.s.alloc(f.bytes(h, f.act));
    f.s.free(sum);
    sum = cast;
  }
  for (u64 id : {idx, perm, gathered, weights, ids, down2, reordered, inverse}) f.s.free(id);
  f.s.free(held);
  return sum;
}

u64 moe(Forward& f, u64 h) {
  const ModelConfig& m = f.r.m;
  const u64 tp = std::max<u64>(f.r.o.tensor_parallel, 1), shared = m.shared_expert_intermediate / tp;
  const u64 inter = m.moe_intermediate_size / tp;
  if (m.shared_expert_gate) {  // Qwen2-MoE: the shared expert first, scaled by sigmoid(gate) after
    const u64 s = gated(f, h, shared, false), routed = routed_experts(f, h, inter, m.num_experts, m.experts_per_token);
    const u64 scaled = f.s.alloc(f.bytes(h, f.act));
    f.s.free(s);
    const u64 sum = f.s.alloc(f.bytes(h, f.act));
    f.s.free(routed), f.s.free(scaled);
    return sum;
  }
  const u64 routed = routed_experts(f, h, inter, m.num_experts, m.experts_per_token);
  if (shared == 0) return routed;
  const u64 s = gated(f, h, shared, false), sum = f.s.alloc(f.bytes(h, f.act));
  f.s.free(s), f.s.free(routed);
  return sum;
}

// RoPE on DeepSeek's rotary part of `e` elements per token: V2 multiplies complex numbers in fp32
// (view_as_complex(x.float())), V3 interleaves the halves.
u64 latent_rope(Forward& f, u64 e) {
  if (f.r.m.family == Family::DeepseekV2) {
    const u64 x32 = f.s.alloc(f.bytes(e, 4)), freqs = f.s.alloc(f.bytes(f.r.m.mla.qk_rope_head_dim, 4));
    const u64 prod = f.s.alloc(f.bytes(e, 4)), out = f.s.alloc(f.bytes(e, f.act));
    f.s.free(prod), f.s.free(x32), f.s.free(freqs);
    return out;
  }
  u64 kept = 0;
  for (int round = 0; round < 2; ++round) {  // x1 * cos - x2 * sin, then x2 * cos + x1 * sin
    const u64 a = f.s.alloc(f.bytes(e / 2, f.act)), b = f.s.alloc(f.bytes(e / 2, f.act)), c = f.s.alloc(f.bytes(e / 2, f.act));
    f.s.free(a), f.s.free(b);
    if (round == 0) kept = c;
    else {
      const u64 out = f.s.alloc(f.bytes(e, f.act));
      f.s.free(c), f.s.free(kept);
      return out;
    }
  }
  return 0;
}

}  // namespace

u64 mlp(Forward& f, LayerKind kind, bool input_wide) {
  const LayerDims d = layer_dims(f.r);
  if (kind.moe) return moe(f, d.h);
  return dense_mlp(f, d.h, d.inter, input_wide);
}

// Multi-head latent attention (DeepSeek V2/V3, transformers 5.17): q through its low-rank pair (or
// q_proj), the compressed kv and its norm, RoPE on the rotary parts, the cache (the normed latent
// and the rotary key: what DynamicCache keeps), then the full query, kv_b_proj of the cached
// latent and the full key, SDPA, and o_proj on the contiguous output.
u64 latent_attention(Forward& f, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const LatentAttention& l = m.mla;
  const LayerDims d = layer_dims(f.r);
  const u64 qk = mul(d.heads, l.qk_nope_head_dim + l.qk_rope_head_dim);
  u64 q = 0;
  if (l.q_lora_rank > 0) {
    const u64 qa = linear(f, d.h, l.q_lora_rank, false), qn = norm(f, l.q_lora_rank, f.act);
    f.s.free(qa);
    q = linear(f, l.q_lora_rank, qk, false);
    f.s.free(qn);
  } else {
    q = linear(f, d.h, qk, false);
  }
  const u64 kva = linear(f, d.h, l.kv_lora_rank + l.qk_rope_head_dim, false), kvn = norm(f, l.kv_lora_rank, f.act);
  const u64 q_rot = latent_rope(f, mul(d.heads, l.qk_rope_head_dim)), k_rot = latent_rope(f, l.qk_rope_head_dim);
  cache[0] = f.s.alloc(f.bytes(l.kv_lora_rank, f.act), Use::Cache);
  cache[1] = f.s.alloc(f.bytes(l.qk_rope_head_dim, f.act), Use::Cache);
  f.s.free(kvn), f.s.free(k_rot);
  const u64 query = f.s.alloc(f.bytes(qk, f.act));
  const u64 kvb = linear(f, l.kv_lora_rank, mul(d.heads, l.qk_nope_head_dim + l.v_head_dim), false);
  const u64 key = f.s.alloc(f.bytes(qk, f.act));
  const u64 v = mul(d.heads, l.v_head_dim), raw = f.s.alloc(f.bytes(v, f.act)), out = f.s.alloc(f.bytes(v, f.act));
  f.s.free(raw);
  const u64 o = linear(f, v, d.h, false);
  for (u64 id : {out, q, q_rot, kva, query, key, kvb}) f.s.free(id);
  return o;
}

void decode_layer(Forward& f, LayerKind kind, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const LayerDims d = layer_dims(f.r);
  if (m.mla.kv_lora_rank > 0) {
    const LatentAttention& l = m.mla;
    for (auto [slot, width] : {std::pair<std::size_t, u64>{0, l.kv_lora_rank}, {1, l.qk_rope_head_dim}}) {
      const u64 grown = f.s.alloc(saturating_mul(mul(f.batch, f.kv_len), mul(width, f.act)), Use::Cache);
      f.s.free(cache[slot]), cache[slot] = grown;
    }
    const u64 keys = mul(f.batch, f.kv_len);
    const u64 kvb = f.s.alloc(mul(keys, mul(mul(d.heads, l.qk_nope_head_dim + l.v_head_dim), f.act)));
    const u64 key = f.s.alloc(mul(keys, mul(mul(d.heads, l.qk_nope_head_dim + l.qk_rope_head_dim), f.act)));
    f.s.free(kvb), f.s.free(key);
  } else {
    // DynamicLayer: torch.cat onto the cache; DynamicSlidingWindowLayer keeps the last window.
    const bool window = kind.sliding && m.sliding_window > 0;
    const u64 keys = window ? std::min(f.kv_len, m.sliding_window) : f.kv_len;
    const u64 kw = f.r.o.kv_bytes_per_element.value_or(f.amp ? 4 : f.act), vw = f.r.o.kv_bytes_per_element.value_or(f.act);
    for (auto [slot, width] : {std::pair<std::size_t, u64>{0, kw}, {1, vw}}) {
      const u64 grown = f.s.alloc(saturating_mul(mul(f.batch, keys), mul(d.kv, width)), Use::Cache);
      f.s.free(cache[slot]), cache[slot] = grown;
    }
  }
  if (kind.moe) {  // few rows: each routed token gathers its experts' weights (gate_up_proj[ids], down_proj[ids])
    const u64 rows = mul(f.batch, m.experts_per_token), inter = m.moe_intermediate_size / std::max<u64>(f.r.o.tensor_parallel, 1);
    const u64 gate_up = f.s.alloc(mul(rows, mul(mul(2 * inter, d.h), f.act))), down = f.s.alloc(mul(rows, mul(mul(inter, d.h), f.act)));
    f.s.free(gate_up), f.s.free(down);
  }
}

}  // namespace vramdoc::estimator::detail
