// A forward op by op (see forward_ops.hpp): the token mixers of hybrid decoders other than attention, as
// transformers 5.17 runs them without the causal-conv1d / mamba-ssm kernels (the H200 of the measurements has
// neither: use_kernel_func_from_hub_with_fallback takes the torch functions of the modelling files). The layer around
// them (its norms, the residual sums, the MLP or the experts) is decoder_layer's (forward_layer.cpp).
// - LFM2 (Lfm2ShortConv.forward, modeling_lfm2.py:350-389): in_proj to 3 x hidden (B, C, x), B * x, the depthwise
//   causal conv1d over seq + conv_L_cache - 1 positions, C * conv_out, out_proj.
// - Jamba (JambaMambaMixer.forward, modeling_jamba.py:496-611, and mamba_selective_scan :331-436): Mamba's
//   selective scan with RMSNorms on the time step, B and C, the time step's sum with its bias in the 16-bit dtype,
//   the D skip and the gate in fp32 (D.float()).
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// The cache's conv state (and Mamba's recurrent state), lazily zeros on the prefill's first update
// (LinearAttentionLayer.lazy_initialization, cache_utils.py:1017-1049): (batch, channels, kernel) in the activations'
// dtype, (batch, inner, state) in fp32.
void cache_states(Forward& f, u64 channels, u64 kernel, u64 recurrent_bytes, CacheIds& cache) {
  if (!f.use_cache || cache[0] != 0) return;
  cache[0] = f.s.alloc(mul(mul(f.batch, channels), mul(kernel, f.act)), Use::Cache);
  if (recurrent_bytes > 0) cache[1] = f.s.alloc(recurrent_bytes, Use::Cache);
}

// Lfm2ShortConv.forward. B, C and x are chunks of in_proj's transposed output: B * x and C * conv_out save them
// (in_proj's output stays to the backward); B * x keeps in_proj's token-major layout, so conv1d (causal_conv1d_fn)
// reads a contiguous copy (a temporary, as MambaMixer's) and saves the product; its output has seq + kernel - 1
// positions, sliced to seq and saved by C * conv_out, whose result is in C's token-major layout (the
// .transpose(-1, -2).contiguous() before out_proj is a view).
u64 short_conv(Forward& f, u64 n, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, act = f.act, k = std::max<u64>(m.short_conv_kernel, 1);
  const u64 bcx = linear(f, n, h, 3 * h, f.amp, "in_proj");
  f.keep(bcx);
  const u64 bx = f.s.alloc(f.bytes(h, act));
  f.keep(bx);
  cache_states(f, h, k, 0, cache);  // update_conv_state: the prefill's states returned as they are
  const u64 contiguous = f.s.alloc(f.bytes(h, act));
  const u64 conv = f.s.alloc(mul(mul(f.batch, f.q_len + k - 1), mul(h, act)));
  f.s.free(contiguous);
  f.drop(bx);
  f.keep(conv);
  const u64 y = f.s.alloc(f.bytes(h, act));
  f.drop(conv), f.drop(bcx);
  const u64 out = linear(f, y, h, h, false, "out_proj");
  f.drop(y);
  return out;
}

// JambaRMSNorm (modeling_jamba.py:60-74) on a `width`-wide column slice of x_proj's output: hidden.to(float32) (saved
// by pow and the product), the normalised fp32 tensor, its cast back (saved by the weight's product), the output.
u64 slice_norm(Forward& f, u64 width) {
  const u64 up = f.s.alloc(f.bytes(width, 4));
  f.keep(up);
  const u64 y = f.s.alloc(f.bytes(width, 4)), cast = f.s.alloc(f.bytes(width, f.act));
  f.drop(up), f.s.free(y);
  if (f.weights_train()) f.keep(cast);
  const u64 out = f.s.alloc(f.bytes(width, f.act));
  f.drop(cast);
  f.keep(out);
  return out;
}

// JambaMambaMixer.forward, its full-sequence form (the prefill or a training forward; a decoding step is
// decode_layer's: the states are updated in place). Sizes: inner = mamba_expand x hidden, N = mamba_d_state,
// mamba_d_conv, mamba_dt_rank (hybrid_config.cpp).
u64 jamba_mamba(Forward& f, u64 n, CacheIds& cache) {
  const SsmParts& s = f.r.m.ssm;
  const u64 h = f.r.m.hidden_size, d = s.inner, N = s.state, act = f.act;
  std::vector<u64> locals;  // the function's and mamba_selective_scan's names, alive to their return
  // 1. in_proj, transposed: hidden_states_B_C and gate are its chunks (conv1d saves the first, silu(z) the gate)
  const u64 proj = linear(f, n, h, 2 * d, f.amp, "in_proj");
  f.keep(proj);
  locals.push_back(proj);
  cache_states(f, d, s.conv_kernel, mul(mul(f.batch, d), mul(N, 4)), cache);
  // 2. causal_conv1d_fn: F.conv1d on a contiguous copy (a temporary), seq + d_conv - 1 positions (saved by silu)
  const u64 contiguous = f.s.alloc(f.bytes(d, act));
  const u64 conv = f.s.alloc(mul(mul(f.batch, f.q_len + s.conv_kernel - 1), mul(d, act)));
  f.s.free(contiguous);
  f.keep(conv);
  const u64 hs = f.s.alloc(f.bytes(d, act));  // silu: saved by hidden_states * D and by .float() for deltaB_u
  f.drop(conv);
  f.keep(hs);
  locals.push_back(hs);
  // 3. x_proj on the transposed hidden states: F.linear's reshape makes a contiguous copy (saved by mm)
  const u64 xin = f.s.alloc(f.bytes(d, act));
  const u64 params = linear(f, xin, d, s.dt_rank + 2 * N, false, "x_proj");
  f.drop(xin);
  locals.push_back(params);
  // dt_layernorm, b_layernorm, c_layernorm on the split's views (their outputs are the scan's time step, B and C)
  for (u64 width : {s.dt_rank, N, N}) locals.push_back(slice_norm(f, width));
  // time_step = dt_proj.weight @ time_step.transpose(1, 2): (batch, inner, seq) (matmul saves the weight and the input)
  const u64 ts = f.s.alloc(f.bytes(d, act));
  // mamba_selective_scan: dt + delta_bias.to(dt.dtype) (16-bit; softplus saves it), softplus (saved by A x dt and dt x B)
  const u64 biased = f.s.alloc(f.bytes(d, act));
  f.drop(ts);
  f.keep(biased);
  // softplus, discrete_A, discrete_B, deltaB_u and the sequential scan: MambaMixer.slow_forward's (forward_ssm.cpp)
  mamba_scan(f, biased, d, N, locals);
  const u64 stacked = f.s.alloc(f.bytes(d, act));
  // scan_output + hidden_states x D.float(): fp32; then x F.silu(z) (16-bit; the product fp32, both saved)
  const u64 skip = f.s.alloc(f.bytes(d, 4)), sum = f.s.alloc(f.bytes(d, 4));
  f.s.free(skip), f.s.free(stacked);
  const u64 gate = f.s.alloc(f.bytes(d, act));
  f.keep(sum), f.keep(gate);
  const u64 gated = f.s.alloc(f.bytes(d, 4));
  f.drop(sum), f.drop(gate);
  for (u64 id : locals) f.drop(id);  // mamba_selective_scan returns (its names go; the mixer's too, but they are saved)
  // 4. out_proj(scan_output.transpose(1, 2).to(dtype)): the cast keeps the transposed strides, F.linear's reshape
  // copies it (saved by mm)
  const u64 cast = f.s.alloc(f.bytes(d, act));
  f.s.free(gated);
  const u64 oin = f.s.alloc(f.bytes(d, act));
  f.s.free(cast);
  const u64 out = linear(f, oin, d, h, false, "out_proj");
  f.drop(oin);
  return out;
}

}  // namespace

// FalconH1DecoderLayer.forward (modeling_falcon_h1.py): input_layernorm; the Mamba2 mixer on it (its
// ssm_in_multiplier product inside), times ssm_out_multiplier; attention on input_layernorm * attention_in_multiplier
// (a copy, saved by q/k/v_proj), times attention_out_multiplier; their sum, the residual sum; pre_ff_layernorm, the MLP
// whose output is times down_multiplier, the residual sum. Each scalar product a tensor of its own (the norm's
// output itself is saved by neither product). The attention's cache entries are slot 0 / 1 as in an attention
// layer; the Mamba states Falcon-H1's cache preallocates are FalconHybridMambaAttentionDynamicCache's (inference only).
u64 parallel_mixer_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, wide = f.wide, act = f.act;
  const u64 n = norm(f, x, h, wide);
  CacheIds states{cache[2], cache[3]};  // the mixer's conv / ssm states beside the attention's keys and values
  const u64 mixed = mamba2_mixer(f, n, states);
  cache[2] = states[0], cache[3] = states[1];
  const u64 mixed_scaled = f.s.alloc(f.bytes(h, act));  // * ssm_out_multiplier
  f.drop(mixed);
  const u64 attn_in = f.s.alloc(f.s.bytes_of(n));  // hidden_states * attention_in_multiplier
  u64 held = 0;
  const u64 a = attention(f, kind, attn_in, f.amp, cache, held);
  f.drop(attn_in);
  const u64 a_scaled = f.s.alloc(f.bytes(h, act));  // * attention_out_multiplier
  f.drop(a);
  const u64 branches = f.s.alloc(f.bytes(h, act));  // mamba_hidden_states + attention_hidden_states
  f.drop(mixed_scaled), f.drop(a_scaled), f.drop(n);
  const u64 x2 = f.s.alloc(f.bytes(h, wide));  // residual + hidden_states
  f.drop(branches);
  const u64 n2 = norm(f, x2, h, wide);
  const u64 mo = mlp(f, kind, n2, f.amp);
  f.drop(n2);
  const u64 down_scaled = f.s.alloc(f.bytes(h, act));  // FalconH1MLP: down_proj(y) * down_multiplier
  f.drop(mo);
  const u64 out = f.s.alloc(f.bytes(h, wide));
  f.drop(down_scaled), f.drop(x2);
  if (held != 0) f.drop(held);
  return out;
}

u64 mixer_block(Forward& f, LayerKind kind, u64 n, CacheIds& cache) {
  if (kind.mixer == Mixer::ShortConv) return short_conv(f, n, cache);
  if (kind.mixer == Mixer::Recurrent) return recurrent_block(f, n, cache);  // RecurrentGemma (forward_griffin.cpp)
  return f.r.m.ssm.heads != 0 ? mamba2_mixer(f, n, cache) : jamba_mamba(f, n, cache);  // Bamba's Mamba2 mixers
}

}  // namespace vramdoc::estimator::detail
