// A forward op by op (see forward_ops.hpp): MambaBlock as transformers 5.17 runs it on a GPU without the
// mamba-ssm / causal-conv1d kernels (the H200 of the measurements has neither): MambaMixer.slow_forward
// (modeling_mamba.py), the same in FalconMambaMixer (modeling_falcon_mamba.py, plus rms_forward on B, C and the time
// step). Every size comes from the config (ssm_config.cpp): inner = intermediate_size, N = state_size, conv_kernel,
// time_step_rank. Per token and layer the scan's fp32 tensors of inner x N elements dominate: discrete_A,
// discrete_B and deltaB_u, and in training each step's ssm_state (fp32, saved by the next step's product) and its
// .to(dtype) copy (saved by the matmul with C).
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

}  // namespace

// MambaMixer.slow_forward's softplus of the time step `time_step` (kept: softplus saves its input; dropped here)
// and steps 3.b and 3.c (and JambaMambaMixer's, forward_hybrid.cpp): the discretisation and the sequential scan
// over `d` channels of `N` states; their tensors and scan_outputs join `locals`; returns scan_outputs.
u64 mamba_scan(Forward& f, u64 time_step, u64 d, u64 N, std::vector<u64>& locals) {
  const u64 act = f.act;
  const u64 dt = f.s.alloc(f.bytes(d, act));  // softplus (saved by A x dt and dt x B)
  f.drop(time_step);
  f.keep(dt);
  locals.push_back(dt);
  // 3.b discretisation (fp32: A = -exp(A_log.float())): discrete_A = exp(A * dt) (the product freed, exp saves its
  // output), discrete_B = dt * B.float() (saved by the next product), deltaB_u = discrete_B * hidden_states.float()
  const u64 big = f.bytes(mul(d, N), 4);
  const u64 product = f.s.alloc(big), dA = f.s.alloc(big);
  f.s.free(product);
  f.keep(dA);
  const u64 bf = f.s.alloc(f.bytes(N, 4));
  f.keep(bf), f.drop(bf);
  const u64 dB = f.s.alloc(big);
  f.keep(dB);
  const u64 hf = f.s.alloc(f.bytes(d, 4));
  f.keep(hf), f.drop(hf);
  const u64 dBu = f.s.alloc(big);
  locals.insert(locals.end(), {dA, dB, dBu});
  // 3.c the sequential scan: ssm_state = discrete_A[:, :, i] * ssm_state + deltaB_u[:, :, i]; each state is saved by
  // the next step's product, its .to(dtype) copy by the matmul with C; in inference each goes with the next step.
  // The per-step outputs (batch, inner) stay in the scan_outputs list to the return.
  if (f.train) {
    const u64 states = f.s.alloc(big), states16 = f.s.alloc(f.bytes(mul(d, N), act));
    f.keep(states), f.keep(states16);
    f.drop(states), f.drop(states16);
  } else {
    const u64 step = mul(mul(f.batch, d), N);
    const u64 state = f.s.alloc(mul(step, 4)), state16 = f.s.alloc(mul(step, act));
    f.s.free(state16), f.s.free(state);
  }
  const u64 outputs = f.s.alloc(f.bytes(d, act));
  locals.push_back(outputs);
  return outputs;
}

u64 mamba_block(Forward& f, u64 x, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const SsmParts& s = m.ssm;
  const u64 h = m.hidden_size, d = s.inner, N = s.state, act = f.act, wd = f.r.w.weight;
  const u64 tokens = std::max<u64>(f.tokens(), 1);
  const u64 in_width = f.s.bytes_of(x) / std::max<u64>(mul(tokens, h), 1);  // the layer's input: embeddings or fp32
  // MambaBlock.forward: self.norm(hidden_states.to(dtype=self.norm.weight.dtype)); the norm's input is a copy when
  // the residual stream is fp32 (residual_in_fp32) and the weights are not
  const u64 norm_in = in_width != wd ? f.s.alloc(f.bytes(h, wd)) : x;
  const u64 n = norm(f, norm_in, h, wd);
  if (norm_in != x) f.drop(norm_in);
  // residual.to(torch.float32): a copy of a 16-bit input (the first layer's embeddings), else the input itself
  const u64 residual = s.residual_fp32 && in_width != 4 ? f.s.alloc(f.bytes(h, 4)) : x;
  std::vector<u64> locals;  // slow_forward's names, alive to its return

  // 1. in_proj: [batch, 2 x inner, seq] (a transposed view); hidden_states and gate are chunks of it
  const u64 proj = linear(f, n, h, 2 * d, f.amp, "in_proj");
  f.keep(proj);  // conv1d saves its (view) input, silu(gate) the gate: both views of proj
  locals.push_back(proj);
  const bool prefill = f.q_len > 1 || !f.use_cache;
  if (!f.train && f.use_cache && cache[0] == 0) {  // MambaCache: conv_states (batch, inner, conv_kernel), ssm_states
    cache[0] = f.s.alloc(mul(mul(f.batch, d), mul(s.conv_kernel, act)), Use::Cache);  // (batch, inner, N)
    cache[1] = f.s.alloc(mul(mul(f.batch, d), mul(N, act)), Use::Cache);
  }
  // generate() passes an attention_mask: hidden_states * attention_mask.unsqueeze(1) before and after the conv
  // (the prefill; decoding steps get none); a training forward here is called without one
  const bool masked = !f.train && prefill;
  u64 hs = proj;
  if (masked) hs = f.s.alloc(f.bytes(d, act)), locals.push_back(hs);
  // 2. conv1d over the transposed view: cuDNN reads a contiguous copy (a temporary); its output has
  // seq + conv_kernel - 1 positions (padding conv_kernel - 1), sliced to seq; silu saves it
  const u64 contiguous = masked ? 0 : f.s.alloc(f.bytes(d, act));
  const u64 conv = f.s.alloc(mul(mul(f.batch, f.q_len + s.conv_kernel - 1), mul(d, act)));
  f.s.free(contiguous);
  f.keep(conv);
  hs = f.s.alloc(f.bytes(d, act));  // self.act(...): silu
  f.drop(conv);
  if (masked) {
    const u64 again = f.s.alloc(f.bytes(d, act));
    f.drop(hs), hs = again;
  }
  f.keep(hs);  // saved by hidden_states * D (and, a view, by x_proj's reshape)
  locals.push_back(hs);
  // 3.a x_proj on the transposed hidden states: reshape makes a contiguous copy (mm saves it)
  const u64 xin = f.s.alloc(f.bytes(d, act));
  const u64 params = linear(f, xin, d, s.dt_rank + 2 * N, false, "x_proj");
  f.drop(xin);
  f.keep(params);  // C[:, i, :] for every step's matmul, B for B.float()
  locals.push_back(params);
  if (s.bc_norm) {  // FalconMamba's rms_forward(B / C / time_step): fp32 pow, mean, rsqrt, cast back (small)
    for (u64 width : {N, N, s.dt_rank}) {
      const u64 up = f.s.alloc(f.bytes(width, 4)), out = f.s.alloc(f.bytes(width, act));
      f.keep(up), f.drop(up), f.keep(out);
      locals.push_back(out);
    }
  }
  const u64 ts = f.s.alloc(f.bytes(s.dt_rank, act));  // time_step: a column slice, copied for dt_proj
  const u64 dtp = linear(f, ts, s.dt_rank, d, false, "dt_proj");
  f.drop(ts);
  f.keep(dtp);  // softplus saves its input
  mamba_scan(f, dtp, d, N, locals);
  const u64 stacked = f.s.alloc(f.bytes(d, act));  // torch.stack(scan_outputs, dim=-1)
  const u64 skip = f.s.alloc(f.bytes(d, act));     // hidden_states * D
  const u64 sum = f.s.alloc(f.bytes(d, act));
  f.s.free(skip), f.s.free(stacked);
  const u64 gate = f.s.alloc(f.bytes(d, act));  // self.act(gate)
  f.keep(sum), f.keep(gate);
  const u64 gated = f.s.alloc(f.bytes(d, act));
  f.drop(sum), f.drop(gate);
  locals.push_back(gated);
  // 4. out_proj on the transposed result: reshape's contiguous copy (saved by mm)
  const u64 oin = f.s.alloc(f.bytes(d, act));
  const u64 out = linear(f, oin, d, h, false, "out_proj");
  f.drop(oin);
  for (u64 id : locals) f.drop(id);
  f.drop(n);  // input_states: the mixer's argument, alive to its return
  // residual + hidden_states: fp32 with residual_in_fp32
  const u64 next = f.s.alloc(f.bytes(h, s.residual_fp32 ? 4 : std::max(in_width, act)));
  f.drop(out);
  if (residual != x) f.drop(residual);
  return next;
}

}  // namespace vramdoc::estimator::detail
