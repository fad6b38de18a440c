// A forward op by op (see forward_ops.hpp): Mamba2Block as transformers 5.17 runs it without the mamba-ssm /
// causal-conv1d kernels (modeling_mamba2.py): Mamba2Mixer.torch_forward (:444-588), mamba2_chunk_scan (:254-348, the
// chunked SSD in a prefill or training forward) and mamba2_selective_state_update (:192-250, a decoding step).
// Sizes from the config (ssm_config.cpp): inner = expand x hidden, H = num_heads, P = head_dim, N = state_size,
// G = n_groups, chunk_size; the sequence padded to whole chunks. The SSD's fp32 broadcast products dominate: C x B^T
// (batch, chunks, chunk, chunk, H, N) before its sum (:302), M x x (.., chunk, chunk, H, P) (:308), B_decay x x and
// C x states (batch, chunks, chunk, H, P, N) (:314, :331, the latter a local to the return); in training each
// product's MulBackward0 makes both full-size input gradients at once (Forward::backward_transient).
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// mamba2_selective_state_update (modeling_mamba2.py:205-250): one token against the cached fp32 state (batch, H, P, N)
void single_step(Forward& f, u64 H, u64 P, u64 N) {
  const u64 state = mul(mul(f.batch, H), mul(P, N)), act = f.act;
  const u64 product = f.s.alloc(mul(state, 4)), dA = f.s.alloc(mul(state, 4));  // exp(dt.float() * A.float())
  f.s.free(product);
  const u64 dB = f.s.alloc(mul(state, act)), dBx = f.s.alloc(mul(state, act));  // dt * B, dB * x
  f.s.free(dB);
  const u64 decayed = f.s.alloc(mul(state, 4)), next = f.s.alloc(mul(state, 4));  // state * dA + dBx, copied in place
  f.s.free(decayed), f.s.free(dA), f.s.free(dBx);
  const u64 next16 = f.s.alloc(mul(state, act));  // ssm_states.to(C.dtype) for the bmm with C
  f.s.free(next), f.s.free(next16);
}

// mamba2_chunk_scan (modeling_mamba2.py:269-348) on x (batch, seq, H, P): its output (fp32, batch x padded seq x inner)
u64 chunk_scan(Forward& f, const SsmParts& s, CacheIds& cache) {
  const u64 b = f.batch, l = f.q_len, H = s.heads, P = s.head_dim, N = s.state, d = s.inner;
  const u64 chunks = (l + s.chunk - 1) / s.chunk, lp = mul(chunks, s.chunk);  // pad_size (:282)
  const u64 hp = mul(mul(b, l), mul(d, 4)), hpp = mul(mul(b, lp), mul(d, 4));  // fp32 x: seq, padded
  const u64 bnp = mul(mul(b, lp), mul(H, mul(N, 4)));                           // B or C repeated to H heads
  const u64 ll = mul(mul(b, H), mul(chunks, mul(s.chunk, mul(s.chunk, 4))));    // (batch, H, chunks, chunk, chunk)
  const u64 st = mul(mul(b, chunks), mul(H, mul(P, mul(N, 4))));                // states (batch, chunks, H, P, N)
  std::vector<u64> locals;
  const u64 xf = f.s.alloc(hp);  // hidden_states.float() (:278), saved by the product with dt
  f.keep(xf);
  u64 rep[2];
  for (u64& r : rep) {  // B / C.float().repeat_interleave(H / G) (:279-280)
    const u64 up = f.s.alloc(mul(mul(b, l), mul(s.groups, mul(N, 4))));
    r = f.s.alloc(mul(mul(b, l), mul(H, mul(N, 4))));
    f.s.free(up);
  }
  const u64 padded = f.s.alloc(hpp);  // pad_tensor_by_size (a clone when pad_size is 0), saved by D x (:285)
  f.keep(padded);
  const u64 d_residual = f.s.alloc(hpp);
  f.drop(padded);
  locals.push_back(d_residual);
  const u64 xdt = f.s.alloc(hp);  // hidden_states * dt (:288)
  f.drop(xf);
  // reshape_into_chunks (:292): the padded copies of x, B, C, then the originals go
  const u64 xc = f.s.alloc(hpp), bc = f.s.alloc(bnp), cc = f.s.alloc(bnp);
  f.drop(xdt), f.drop(rep[0]), f.drop(rep[1]);
  locals.insert(locals.end(), {xc, bc, cc});
  // L = exp(segment_sum(A)) (:73-90, :299): masked_fill, cumsum, masked_fill alive together, then exp (saved)
  const u64 m1 = f.s.alloc(ll), cs = f.s.alloc(ll), m2 = f.s.alloc(ll);
  f.s.free(cs), f.s.free(m1);
  const u64 L = f.s.alloc(ll);
  f.s.free(m2);
  f.keep(L);
  locals.push_back(L);
  // G = (C[..., None, :, :] * B[:, :, None]).sum(-1) (:302): the (.., chunk, chunk, H, N) product for a moment
  f.keep(cc), f.keep(bc);
  f.backward_transient(mul(ll, N));
  const u64 g_product = f.s.alloc(mul(ll, N)), G = f.s.alloc(ll);
  f.s.free(g_product);
  f.keep(G);
  const u64 m_product = f.s.alloc(ll), M = f.s.alloc(ll);  // M = (G * L).sum(-1) (:305)
  f.s.free(m_product);
  f.keep(M), f.keep(xc);
  locals.insert(locals.end(), {G, M});
  f.backward_transient(mul(ll, P));
  const u64 y_product = f.s.alloc(mul(ll, P)), y_diag = f.s.alloc(hpp);  // Y_diag (:308)
  f.s.free(y_product);
  locals.push_back(y_diag);
  const u64 b_decay = f.s.alloc(bnp);  // B * decay_states (:313)
  f.keep(b_decay);
  locals.push_back(b_decay);
  f.backward_transient(mul(hpp, N));
  const u64 s_product = f.s.alloc(mul(hpp, N)), states = f.s.alloc(st);  // (B_decay x x).sum(dim=2) (:314)
  f.s.free(s_product);
  // the inter-chunk recurrence (:318-326): torch.cat with the zero initial state, the (chunks + 1)^2 decay product
  const u64 one = mul(b, mul(H, mul(P, mul(N, 4))));
  const u64 zeros = f.s.alloc(one), joined = f.s.alloc(mul(one, chunks + 1));
  f.s.free(zeros), f.drop(states);
  f.keep(joined);
  const u64 r_product = f.s.alloc(mul(one, mul(chunks + 1, chunks + 1))), recurred = f.s.alloc(mul(one, chunks + 1));
  f.s.free(r_product);
  f.drop(joined);
  locals.push_back(recurred);
  if (!f.train && f.use_cache && cache[1] == 0) {  // update_recurrent_state: the final state copied into the cache
    cache[1] = f.s.alloc(one, Use::Cache);        // (cache_utils.py:1091-1105), fp32 (batch, H, P, N)
  }
  // C_times_states (:331): a local to the return; its sum x exp(A_cumsum) = Y_off (both saved by the product)
  f.keep(cc), f.keep(recurred);
  f.backward_transient(mul(hpp, N));
  const u64 c_states = f.s.alloc(mul(hpp, N));
  locals.push_back(c_states);
  const u64 summed = f.s.alloc(hpp), y_off = f.s.alloc(hpp);
  f.keep(summed), f.drop(summed);
  locals.push_back(y_off);
  const u64 both = f.s.alloc(hpp), output = f.s.alloc(hpp);  // Y_diag + Y_off, then + D_residual (:335-339)
  f.drop(both);
  for (u64 id : locals) f.drop(id);
  return output;
}

// MambaRMSNormGated (modeling_mamba2.py:111-120) on the scan's output: gate.to(float32), silu, the product, pow(2),
// x * rsqrt, weight * x (fp32 out when the scan's output is fp32: .to(input_dtype) keeps it)
u64 gated_rms_norm(Forward& f, u64 scan, u64 d, u64 scan_width) {
  const u64 act = f.act, wd = f.r.w.weight;
  const u64 gate = f.s.alloc(f.bytes(d, 4));
  f.keep(gate);
  const u64 silu = f.s.alloc(f.bytes(d, 4));
  f.drop(gate);
  f.keep(scan), f.keep(silu);
  const u64 gated = f.s.alloc(f.bytes(d, 4));
  f.drop(silu), f.drop(scan);
  f.keep(gated);
  const u64 squared = f.s.alloc(f.bytes(d, 4));
  f.drop(squared);
  const u64 normed = f.s.alloc(f.bytes(d, 4));
  f.drop(gated);
  f.keep(normed);
  const u64 weighted = f.s.alloc(f.bytes(d, scan_width == 4 ? 4 : std::max(act, wd)));
  f.drop(normed);
  return weighted;
}

}  // namespace

u64 mamba2_mixer(Forward& f, u64 n, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const SsmParts& s = m.ssm;
  const u64 h = m.hidden_size, d = s.inner, act = f.act, wd = f.r.w.weight;
  const u64 conv_dim = d + mul(2 * s.groups, s.state), proj_width = d + conv_dim + s.heads;  // :392, :403
  std::vector<u64> locals;  // torch_forward's names, alive to its return

  // 1. in_proj (:457): gate, xBC, dt are column slices of it (gate read by the norm, xBC by conv1d: saved).
  // Falcon-H1 (FalconH1Mixer.torch_forward): input_states * ssm_in_multiplier first (saved by in_proj), its output
  // times the mup_vector buffer (the product replaces it: a buffer's product saves only the buffer)
  const u64 input = s.mup_scaled ? f.s.alloc(f.s.bytes_of(n)) : n;
  if (input != n) locals.push_back(input);
  u64 proj = linear(f, input, h, proj_width, f.amp, "in_proj");
  if (s.mup_scaled) {
    const u64 scaled = f.s.alloc(f.bytes(proj_width, std::max(act, wd)));
    f.drop(proj), proj = scaled;
  }
  f.keep(proj);
  locals.push_back(proj);
  const bool step = !f.train && f.use_cache && f.q_len == 1 && cache[0] != 0;  // use_precomputed_states, seq_len 1
  if (!f.train && f.use_cache && cache[0] == 0) {  // update_conv_state's lazy initialization: (batch, conv_dim, kernel)
    cache[0] = f.s.alloc(mul(mul(f.batch, conv_dim), mul(s.conv_kernel, act)), Use::Cache);
  }
  // 2. causal_conv1d_fn (:151-163) on the transposed slice: cuDNN's contiguous copy (a temporary), the output over
  // seq + conv_kernel - 1 positions (saved by silu), sliced to seq; silu's output (xBC) alive to the return.
  // A decoding step: causal_conv1d_update (:131-140), torch.cat with the conv state (small)
  const u64 contiguous = f.s.alloc(f.bytes(conv_dim, act));
  const u64 conv = f.s.alloc(mul(mul(f.batch, f.q_len + (step ? 0 : s.conv_kernel - 1)), mul(conv_dim, act)));
  f.s.free(contiguous);
  f.keep(conv);
  const u64 xbc = f.s.alloc(f.bytes(conv_dim, act));
  f.drop(conv);
  locals.push_back(xbc);
  // 3. the SSM: the single-step recurrence or the chunked SSD (its fp32 output)
  u64 scan = 0;
  if (step) {
    single_step(f, s.heads, s.head_dim, s.state);
    scan = f.s.alloc(f.bytes(d, act));  // out.to(hidden_states.dtype)
  } else {
    scan = chunk_scan(f, s, cache);
  }
  const u64 scan_width = step ? act : 4;
  // MambaRMSNormGated, or Falcon-H1's y * silu(gate) without mamba_rms_norm (silu saves the gate, a slice of the
  // kept projection; the product, fp32 from the fp32 scan, saves y and silu's output)
  u64 weighted = 0;
  if (s.gated_norm) {
    weighted = gated_rms_norm(f, scan, d, scan_width);
  } else {
    const u64 silu = f.s.alloc(f.bytes(d, act));
    f.keep(scan), f.keep(silu);
    weighted = f.s.alloc(f.bytes(d, scan_width));
    f.drop(silu), f.drop(scan);
  }
  locals.push_back(weighted);
  // 4. out_proj(scan_output.to(dtype)) (:587)
  const u64 oin = f.s.alloc(f.bytes(d, act));
  const u64 out = linear(f, oin, d, h, false, "out_proj");
  f.drop(oin);
  for (u64 id : locals) f.drop(id);
  return out;
}

u64 mamba2_block(Forward& f, u64 x, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const SsmParts& s = m.ssm;
  const u64 h = m.hidden_size, act = f.act, wd = f.r.w.weight;
  const u64 tokens = std::max<u64>(f.tokens(), 1);
  const u64 in_width = f.s.bytes_of(x) / std::max<u64>(mul(tokens, h), 1);
  // Mamba2Block.forward (:624-631): norm(hidden_states.to(norm dtype)), residual.to(float32) with residual_in_fp32
  const u64 norm_in = in_width != wd ? f.s.alloc(f.bytes(h, wd)) : x;
  const u64 n = norm(f, norm_in, h, wd);
  if (norm_in != x) f.drop(norm_in);
  const u64 residual = s.residual_fp32 && in_width != 4 ? f.s.alloc(f.bytes(h, 4)) : x;
  const u64 out = mamba2_mixer(f, n, cache);
  f.drop(n);
  const u64 next = f.s.alloc(f.bytes(h, s.residual_fp32 ? 4 : std::max(in_width, act)));  // residual + hidden_states
  f.drop(out);
  if (residual != x) f.drop(residual);
  return next;
}

}  // namespace vramdoc::estimator::detail
