// A forward op by op (see forward_ops.hpp): the MLPs, routed and shared experts, DeepSeek's latent
// attention, and what a decoding step allocates per layer. Orders as the allocator traces of
// docs/results/estimator-families-h200-2026-11-30/raw.tar.xz (traces/) show them (transformers 5.17, PyTorch 2.11).
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// gate, act(gate) (saves gate), up, act * up (saves both), down (saves the product when it trains).
u64 gated(Forward& f, u64 x, u64 h, u64 inter, bool input_wide, const std::string& prefix) {
  const u64 gate = linear(f, x, h, inter, input_wide, prefix + "gate_proj"), act = f.s.alloc(f.bytes(inter, f.act));
  f.keep(gate), f.keep(act);
  f.drop(gate);
  const u64 up = linear(f, x, h, inter, input_wide, prefix + "up_proj");
  u64 prod = f.s.alloc(f.bytes(inter, f.act));
  f.keep(up);
  f.drop(act), f.drop(up);
  if (f.r.m.sub_norms && prefix.empty()) {  // BitNetMLP: down_proj(ffn_sub_norm(act(gate) * up))
    const u64 n = norm(f, prod, inter, f.act);
    f.drop(prod);
    prod = n;
  }
  const u64 down = linear(f, prod, inter, h, false, prefix + "down_proj");
  f.drop(prod);
  return down;
}

// QuickGELUActivation.forward (activations.py): input * torch.sigmoid(1.702 * input), op by op in the input's dtype
// (neither op is on autocast's lists): the scaled copy (a temporary: the scalar product saves nothing), its sigmoid
// (saved: SigmoidBackward keeps its result, the product its other factor), the product (the caller's: fc2's input).
// The input is the caller's to keep (the product saves it). In the backward the product's MulBackward0 returns
// both factors' gradients at once, each of the input's size.
u64 quick_gelu(Forward& f, u64 x, u64 inter) {
  f.keep(x);
  const u64 e = f.bytes(inter, f.act), scaled = f.s.alloc(e), sigmoid = f.s.alloc(e);
  f.s.free(scaled);
  f.keep(sigmoid);
  f.backward_transient(e);
  const u64 out = f.s.alloc(e);
  f.drop(sigmoid);
  return out;
}

u64 dense_mlp(Forward& f, u64 x, u64 h, u64 inter, bool input_wide) {
  const ModelConfig& m = f.r.m;
  const bool gpt2 = gpt2_style(m.family);
  if (m.mlp == MlpKind::Gated && m.family != Family::Phi3 && !m.fused_gate_up && !gpt2) return gated(f, x, h, inter, input_wide, "");
  if (const u64 out = family_mlp(f, x, h, inter, input_wide); out != 0) return out;
  if (m.family == Family::Phi3 || m.fused_gate_up) {  // gate_up_proj, chunked (both halves saved): act(gate), up * act(gate)
    const u64 gate_up = linear(f, x, h, 2 * inter, input_wide, "gate_up_proj"), act = f.s.alloc(f.bytes(inter, f.act));
    f.keep(gate_up), f.keep(act);
    const u64 prod = f.s.alloc(f.bytes(inter, f.act));
    f.drop(act);
    const u64 down = linear(f, prod, inter, h, false, "down_proj");
    f.drop(prod), f.drop(gate_up);
    return down;
  }
  const bool phi = m.family == Family::Phi, coder = m.family == Family::Starcoder2, gptj = gptj_style(m.family);
  const u64 first = linear(f, x, h, inter, input_wide, phi ? "fc1" : coder || gpt2 ? "c_fc" : gptj ? "fc_in" : "dense_h_to_4h");
  f.keep(first);  // gelu saves its input (gelu_new's pow and product too)
  const bool python_gelu = m.mlp == MlpKind::NewGelu || m.family == Family::Gpt2;  // its output is fp32 under autocast
  u64 act = python_gelu ? new_gelu(f, first, inter)
            : m.mlp == MlpKind::QuickGelu ? quick_gelu(f, first, inter) : f.s.alloc(f.bytes(inter, f.act));
  f.drop(first);
  act = dropout(f, act, inter, f.act, m.activation_dropout);  // BART-style fc1 -> act -> dropout -> fc2 (ProphetNet's 0.1)
  const u64 down = linear(f, act, inter, h, f.amp && python_gelu,
                          phi ? "fc2" : gpt2 ? "mlp.c_proj" : coder ? "c_proj" : gptj ? "fc_out" : "dense_4h_to_h");
  if (f.hold_intermediate) f.layer_locals.push_back(act);
  else f.drop(act);
  return down;
}

// Qwen-MoE and OLMoE cast the top-k routing weights back to the router logits' dtype, GraniteMoE to the hidden
// states' (GraniteMoeTopKRouter: softmax(top_k_logits).type_as(hidden_states)); PhiMoE's stay in the logits' dtype.
bool routing_in_activation_dtype(Family f) {
  return f == Family::Qwen2Moe || f == Family::Qwen3Moe || f == Family::Olmoe || f == Family::GraniteMoe ||
         f == Family::Phimoe;  // PhiMoE: sparsemixer's multipliers, gathered from softmax of the router's logits
}

// Router: logits, softmax in fp32 (saved; DeepSeek runs the gate in fp32), top-k weights and ids;
// Qwen-MoE casts the weights back to the activation dtype. Returns the tensors held to the end.
std::vector<u64> router(Forward& f, u64 h, u64 experts, u64 k) {
  const ModelConfig& m = f.r.m;
  const bool deepseek = m.family == Family::DeepseekV2 || m.family == Family::DeepseekV3;
  std::vector<u64> held;
  if (deepseek) {
    const u64 in32 = f.s.alloc(f.bytes(h, 4));
    held.push_back(f.s.alloc(f.bytes(experts, 4)));
    f.drop(in32);
  } else {
    held.push_back(f.s.alloc(f.bytes(experts, f.act)));
  }
  const u64 up = f.act != 4 && !deepseek ? f.s.alloc(f.bytes(experts, 4)) : 0, probs = f.s.alloc(f.bytes(experts, 4));
  f.keep(probs);
  f.drop(up);
  const u64 biased = m.family == Family::DeepseekV3 ? f.s.alloc(f.bytes(experts, 4)) : 0;  // + e_score_correction_bias
  held.push_back(f.s.alloc(f.bytes(k, 4))), held.push_back(f.s.alloc(f.bytes(k, 8)));
  if (routing_in_activation_dtype(m.family)) held.push_back(f.s.alloc(f.bytes(k, f.act)));
  f.drop(biased), f.drop(probs);
  return held;
}

// Routed experts through grouped_mm (transformers' integrations/moe.py), S = tokens x k rows: the
// token index, argsort and inverse permutation, the gathered inputs (saved when the experts train),
// gate_up and a second tensor of its size (seen after each grouped matmul in every MoE trace; the
// one act() reads is saved), act (saved) and the product (saved when down_proj trains), down and its
// companion (saved by the weighting), the weighted
// outputs in the routing weights' dtype (fp32 for Mixtral and DeepSeek), reordered and summed per
// token (then cast back).
u64 routed_experts(Forward& f, u64 h, u64 inter, u64 experts, u64 k) {
  const ModelConfig& m = f.r.m;
  std::vector<u64> held = router(f, h, experts, k);
  const u64 rw = routing_in_activation_dtype(m.family) ? f.act : 4;
  const u64 idx = f.s.alloc(f.bytes(k, 8)), perm = f.s.alloc(f.bytes(k, 8)), inv = f.s.alloc(f.bytes(k, 8));
  const u64 gathered = f.s.alloc(f.bytes(mul(k, h), f.act));
  if (f.weights_train()) f.keep(gathered);  // for the experts' weight gradients
  f.drop(inv);
  const u64 weights = f.s.alloc(f.bytes(k, rw)), ids = f.s.alloc(f.bytes(k, 4));
  f.keep(weights);
  const u64 gate_up = f.s.alloc(f.bytes(mul(k, 2 * inter), f.act)), gate_up2 = f.s.alloc(f.bytes(mul(k, 2 * inter), f.act));
  f.keep(gate_up2);
  f.drop(gate_up);
  const u64 act = f.s.alloc(f.bytes(mul(k, inter), f.act)), prod = f.s.alloc(f.bytes(mul(k, inter), f.act));
  f.keep(act);
  if (f.weights_train()) f.keep(prod);
  f.drop(act), f.drop(gate_up2);
  const u64 down = f.s.alloc(f.bytes(mul(k, h), f.act)), down2 = f.s.alloc(f.bytes(mul(k, h), f.act));
  f.keep(down2);
  f.drop(prod), f.drop(down);
  const u64 weighted = f.s.alloc(f.bytes(mul(k, h), rw)), inverse = f.s.alloc(f.bytes(k, 8));
  const u64 reordered = f.s.alloc(f.bytes(mul(k, h), rw));
  f.drop(weighted);
  u64 sum = f.s.alloc(f.bytes(h, rw));
  if (rw != f.act) {
    const u64 cast = f.s.alloc(f.bytes(h, f.act));
    f.drop(sum);
    sum = cast;
  }
  for (u64 id : {idx, perm, gathered, weights, ids, down2, reordered, inverse}) f.drop(id);
  f.drop(held);
  return sum;
}

// Llama4TextMoe.forward and Llama4TextExperts.forward (modeling_llama4.py): every expert runs over every token. The
// router (a Linear: logits, held to the block's return), top-k values and ids (saved by the scatter), full_like(-inf)
// scattered with them, .float() and sigmoid (saved), cast back (saved by the product); the tokens repeated once per
// expert (E x T rows, saved by the product) times the scores (the bmm's input, saved when the experts train; a
// local to the block's return); bmm with gate_up_proj (E x T x 2 inter: silu saves its gate half, the product its up
// half), silu(gate), up * silu(gate) (saved by the second bmm when the experts train), bmm with down_proj (E x T x h);
// the shared expert over the T tokens; the experts' outputs summed over E, added in place to the shared expert's.
// The experts are Parameters used by torch.bmm (no Linear: LoRA does not wrap them); under autocast each bmm casts its
// expert weights to 16 bits at the call.
u64 dense_experts(Forward& f, u64 x, u64 h, u64 inter, u64 shared) {
  const ModelConfig& m = f.r.m;
  const u64 e = m.num_experts, k = std::max<u64>(m.experts_per_token, 1);
  const u64 logits = linear(f, x, h, e, false, "router");
  const u64 top = f.s.alloc(f.bytes(k, f.act)), ids = f.s.alloc(f.bytes(k, 8));
  f.keep(ids);
  const u64 full = f.s.alloc(f.bytes(e, f.act));
  f.drop(top);
  const u64 up32 = f.act != 4 ? f.s.alloc(f.bytes(e, 4)) : 0, sig = f.s.alloc(f.bytes(e, 4));
  if (up32 != 0) f.drop(up32);
  f.keep(sig);
  u64 scores = sig;
  if (f.act != 4) {
    scores = f.s.alloc(f.bytes(e, f.act));
    f.drop(sig);
  }
  f.drop(full), f.drop(ids);
  const u64 repeated = f.s.alloc(f.bytes(mul(e, h), f.act));
  f.keep(repeated), f.keep(scores);
  const u64 routed_in = f.s.alloc(f.bytes(mul(e, h), f.act));
  f.drop(repeated);
  if (f.weights_train()) f.keep(routed_in);
  const u64 w16 = f.act == 4 ? 4 : 2;
  const u64 cast1 = f.weight_cast(mul(mul(e, h), mul(2 * inter, w16)));
  const u64 gate_up = f.s.alloc(f.bytes(mul(e, 2 * inter), f.act));
  f.keep(gate_up);
  f.release_cast(cast1);
  const u64 act = f.s.alloc(f.bytes(mul(e, inter), f.act));
  f.keep(act);
  const u64 prod = f.s.alloc(f.bytes(mul(e, inter), f.act));
  f.drop(act);
  if (f.weights_train()) f.keep(prod);
  const u64 cast2 = f.weight_cast(mul(mul(e, inter), mul(h, w16)));
  const u64 routed_out = f.s.alloc(f.bytes(mul(e, h), f.act));
  f.release_cast(cast2);
  f.drop(prod), f.drop(gate_up);
  const u64 out = gated(f, x, h, shared, false, "shared_expert.");
  const u64 sum = f.s.alloc(f.bytes(h, f.act));
  f.drop(sum);  // out.add_(...): in place
  for (u64 id : {routed_out, routed_in, scores, logits}) f.drop(id);
  return out;
}

u64 moe(Forward& f, u64 x, u64 h) {
  const ModelConfig& m = f.r.m;
  if (m.attention_experts > 0) return jetmoe_moe(f, x, h);  // JetMoeMoE (forward_jetmoe.cpp)
  const u64 tp = std::max<u64>(f.r.o.tensor_parallel, 1), shared = m.shared_expert_intermediate / tp;
  const u64 inter = m.moe_intermediate_size / tp;
  if (m.dense_experts) return dense_experts(f, x, h, inter, shared);
  const std::string prefix = m.shared_expert_gate ? "shared_expert." : "shared_experts.";
  if (m.shared_expert_gate) {  // Qwen2-MoE: the shared expert first, scaled by sigmoid(gate) after
    const u64 s = gated(f, x, h, shared, false, prefix), routed = routed_experts(f, h, inter, m.num_experts, m.experts_per_token);
    f.keep(s);
    const u64 scaled = f.s.alloc(f.bytes(h, f.act));
    f.drop(s);
    const u64 sum = f.s.alloc(f.bytes(h, f.act));
    f.drop(routed), f.drop(scaled);
    return sum;
  }
  const u64 routed = routed_experts(f, h, inter, m.num_experts, m.experts_per_token);
  if (shared == 0) return routed;
  const u64 s = gated(f, x, h, shared, false, prefix), sum = f.s.alloc(f.bytes(h, f.act));
  f.drop(s), f.drop(routed);
  return sum;
}

// RoPE on DeepSeek's rotary part of `e` elements per token: V2 multiplies complex numbers in fp32
// (view_as_complex(x.float()), saved), V3 interleaves the halves.
u64 latent_rope(Forward& f, u64 e) {
  if (f.r.m.family == Family::DeepseekV2) {
    const u64 x32 = f.s.alloc(f.bytes(e, 4)), freqs = f.s.alloc(f.bytes(f.r.m.mla.qk_rope_head_dim, 4));
    f.keep(x32);
    const u64 prod = f.s.alloc(f.bytes(e, 4)), out = f.s.alloc(f.bytes(e, f.act));
    f.drop(prod), f.drop(x32), f.drop(freqs);
    return out;
  }
  const u64 a = f.s.alloc(f.bytes(e / 2, f.act)), b = f.s.alloc(f.bytes(e / 2, f.act)), c = f.s.alloc(f.bytes(e / 2, f.act));
  f.drop(a), f.drop(b);  // x1 * cos, x2 * sin, their difference; then x2 * cos, x1 * sin, their sum
  const u64 d = f.s.alloc(f.bytes(e / 2, f.act)), g = f.s.alloc(f.bytes(e / 2, f.act)), sum = f.s.alloc(f.bytes(e / 2, f.act));
  f.drop(d), f.drop(g);
  const u64 out = f.s.alloc(f.bytes(e, f.act));
  f.drop(sum), f.drop(c);
  return out;
}

}  // namespace

// Python gelu_new: 0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))), left to right; pow
// runs in fp32 under autocast (its input cast and saved), so does the chain after it. Saved: x,
// tanh's output, 1 + tanh, 0.5 * x.
u64 new_gelu(Forward& f, u64 x, u64 inter) {
  const u64 cw = f.amp ? 4 : f.act;
  const u64 half = f.s.alloc(f.bytes(inter, f.act));
  f.keep(half);
  const u64 x32 = f.amp ? f.s.alloc(f.bytes(inter, 4)) : x;
  f.keep(x32);
  u64 t = f.s.alloc(f.bytes(inter, cw));  // pow(x, 3)
  for (int i = 0; i < 5; ++i) {           // * 0.044715, x +, * sqrt(2 / pi), tanh, 1 +
    const u64 next = f.s.alloc(f.bytes(inter, cw));
    if (i >= 3) f.keep(next);
    f.drop(t);
    t = next;
  }
  const u64 act = f.s.alloc(f.bytes(inter, std::max(cw, f.act)));
  if (x32 != x) f.drop(x32);
  f.drop(half), f.drop(t);
  return act;
}

u64 mlp(Forward& f, LayerKind kind, u64 input, bool input_wide) {
  const LayerDims d = layer_dims(f.r);
  if (kind.moe) return moe(f, input, d.h);
  if (kind.routed) return nllb_sparse_mlp(f, input, d.h, d.inter);
  return dense_mlp(f, input, d.h, d.inter, input_wide);
}

u64 dropout(Forward& f, u64 x, u64 elements, u64 width, double p) {
  if (!f.train || p <= 0) return x;
  const u64 mask = f.s.alloc(f.bytes(elements, 1));
  f.keep(mask);
  const u64 out = f.s.alloc(f.bytes(elements, width));
  f.drop(x);
  return out;
}

// Multi-head latent attention (DeepSeek V2/V3, transformers 5.17): q through its low-rank pair (or
// q_proj), the compressed kv and its norm, RoPE on the rotary parts, the cache (the normed latent
// and the rotary key: what DynamicCache keeps), then the full query, kv_b_proj of the cached
// latent (its output saved: the value is a view of it) and the full key, SDPA, and o_proj on the
// contiguous output.
u64 latent_attention(Forward& f, u64 input, CacheIds& cache) {
  const LatentAttention& l = f.r.m.mla;
  const LayerDims d = layer_dims(f.r);
  const u64 qk = mul(d.heads, l.qk_nope_head_dim + l.qk_rope_head_dim);
  u64 q = 0;
  if (l.q_lora_rank > 0) {
    const u64 qa = linear(f, input, d.h, l.q_lora_rank, false, "q_a_proj"), qn = norm(f, qa, l.q_lora_rank, f.act);
    f.drop(qa);
    q = linear(f, qn, l.q_lora_rank, qk, false, "q_b_proj");
    f.drop(qn);
  } else {
    q = linear(f, input, d.h, qk, false, "q_proj");
  }
  const u64 kva = linear(f, input, d.h, l.kv_lora_rank + l.qk_rope_head_dim, false, "kv_a_proj_with_mqa");
  u64 latent = norm(f, kva, l.kv_lora_rank, f.act);
  const u64 q_rot = latent_rope(f, mul(d.heads, l.qk_rope_head_dim));
  u64 k_rot = latent_rope(f, l.qk_rope_head_dim);
  if (f.use_cache) {
    cache[0] = f.s.alloc(f.bytes(l.kv_lora_rank, f.act), Use::Cache);
    cache[1] = f.s.alloc(f.bytes(l.qk_rope_head_dim, f.act), Use::Cache);
    f.drop(latent), f.drop(k_rot);
    latent = cache[0], k_rot = cache[1];
  }
  const u64 query = f.s.alloc(f.bytes(qk, f.act));
  const u64 kvb = linear(f, latent, l.kv_lora_rank, mul(d.heads, l.qk_nope_head_dim + l.v_head_dim), false, "kv_b_proj");
  const u64 key = f.s.alloc(f.bytes(qk, f.act));
  f.keep(query), f.keep(key), f.keep(kvb);
  const u64 v = mul(d.heads, l.v_head_dim), raw = f.s.alloc(f.bytes(v, f.act));
  f.keep(raw);
  const u64 out = f.s.alloc(f.bytes(v, f.act));
  f.drop(raw);
  const u64 o = linear(f, out, v, d.h, false, "o_proj");
  for (u64 id : {out, q, q_rot, kva, query, key, kvb}) f.drop(id);
  if (!f.use_cache) f.drop(latent), f.drop(k_rot);
  return o;
}

void decode_layer(Forward& f, LayerKind kind, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  if (m.family == Family::Mamba) return;  // MambaCache: fixed-size conv and ssm states, updated in place
  const LayerDims d = layer_dims(f.r);
  if (kind.mixer != Mixer::Attention && kind.mixer != Mixer::Parallel) {
    // a hybrid's convolution or Mamba layer: its conv (and recurrent) state is fixed-size, updated in place
  } else if (m.mla.kv_lora_rank > 0) {
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
    // RecurrentGemma's _update_cache: each step indexes its window-sized cache into a new one (the old freed)
    const bool window = kind.sliding && m.sliding_window > 0, fixed = m.attention_cache_window > 0;
    const u64 keys = fixed ? m.attention_cache_window : window ? std::min(f.kv_len, m.sliding_window) : f.kv_len;
    const u64 kw = f.r.o.kv_bytes_per_element.value_or(f.amp ? 4 : f.act), vw = f.r.o.kv_bytes_per_element.value_or(fixed ? f.wide : f.act);
    for (auto [slot, width] : {std::pair<std::size_t, u64>{0, kw}, {1, vw}}) {
      const u64 grown = f.s.alloc(saturating_mul(mul(f.batch, keys), mul(d.kv, width)), Use::Cache);
      f.s.free(cache[slot]), cache[slot] = grown;
    }
  }
  if (kind.moe && m.dense_experts) {  // Llama 4: every expert over the step's tokens (dense_experts), E x batch rows
    const u64 rows = mul(f.batch, m.num_experts), inter = m.moe_intermediate_size / std::max<u64>(f.r.o.tensor_parallel, 1);
    const u64 gate_up = f.s.alloc(mul(rows, mul(2 * inter, f.act))), out = f.s.alloc(mul(rows, mul(d.h, f.act)));
    f.s.free(gate_up), f.s.free(out);
  } else if (kind.moe) {  // few rows: each routed token gathers its experts' weights (gate_up_proj[ids], down_proj[ids])
    const u64 rows = mul(f.batch, m.experts_per_token), inter = m.moe_intermediate_size / std::max<u64>(f.r.o.tensor_parallel, 1);
    const u64 gate_up = f.s.alloc(mul(rows, mul(mul(2 * inter, d.h), f.act))), down = f.s.alloc(mul(rows, mul(mul(inter, d.h), f.act)));
    f.s.free(gate_up), f.s.free(down);
  }
}

}  // namespace vramdoc::estimator::detail
