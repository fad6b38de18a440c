// A forward op by op (see forward_ops.hpp): RecurrentGemma (Griffin) as transformers 5.17 runs it
// (modeling_recurrent_gemma.py): the recurrent temporal block (RecurrentGemmaRecurrentBlock.forward with
// RecurrentGemmaRglru.forward and its Python _rnn_scan), the attention's own fixed-window cache
// (RecurrentGemmaSdpaAttention._setup_cache / _update_cache) and the model's causal mask (_update_causal_mask). The
// layer around the temporal block (its norms, the residual sums, the MLP) is decoder_layer's (forward_layer.cpp).
// The model calls _setup_cache whenever use_cache is on (the config's default) and the input is longer than one
// token: in training too, unless gradient checkpointing turns the cache off.
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

}  // namespace

// RecurrentGemmaRecurrentBlock.forward over f.q_len tokens (the prefill or a training forward; a decoding step's
// states are (batch, lru_width), small: decode_layer). W = lru_width, each tensor below batch x seq x W unless said.
u64 recurrent_block(Forward& f, u64 n, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, W = m.ssm.inner, act = f.act, k = std::max<u64>(m.ssm.conv_kernel, 1);
  const u64 e = f.bytes(W, act);
  // y_branch = act_fn(linear_y(x)): gelu saves its input, x * y_branch its output
  const u64 y_lin = linear(f, n, h, W, f.amp, "linear_y");
  f.keep(y_lin);
  const u64 y = f.s.alloc(e);
  f.drop(y_lin);
  f.keep(y);
  // x_branch = linear_x(x).transpose(1, 2); with the cache, conv1d_state = pad(x_branch) (batch, W, k - 1) and the
  // RG-LRU's fp32 recurrent state (batch, W) replace _setup_cache's zeros; conv_1d reads a contiguous copy of the
  // transposed input (a temporary; the conv saves its input) and makes seq + k - 1 positions, sliced to seq
  const u64 x_lin = linear(f, n, h, W, f.amp, "linear_x");
  f.keep(x_lin);
  if (f.use_cache && cache[0] == 0) {
    cache[0] = f.s.alloc(mul(mul(f.batch, W), mul(k - 1, act)), Use::Cache);
    cache[1] = f.s.alloc(mul(mul(f.batch, W), 4), Use::Cache);
  }
  const u64 contiguous = f.s.alloc(e);
  const u64 conv = f.s.alloc(mul(mul(f.batch, f.q_len + k - 1), mul(W, act)));
  f.s.free(contiguous);
  f.drop(x_lin);
  f.keep(conv);  // activations * input_gate saves the conv's output (a view of it)
  // RecurrentGemmaRglru.forward: its names stay alive to its return
  std::vector<u64> locals;
  auto local = [&](bool saved) {
    const u64 id = f.s.alloc(e);
    if (saved) f.keep(id);
    locals.push_back(id);
    return id;
  };
  local(true);  // reshape_act: activations.reshape copies the strided view (both baddbmm save it)
  // a temporary (freed at its consumer; autograd may keep it)
  auto temporary = [&](bool saved) {
    const u64 id = f.s.alloc(e);
    if (saved) f.keep(id);
    return id;
  };
  u64 res = 0, sigmoid = 0;
  for (int gate = 0; gate < 2; ++gate) {  // res = baddbmm(bias, reshape_act, gate weight); sigmoid of its reshape copy
    const u64 next = f.s.alloc(e);
    f.s.free(res), res = next;  // (the second baddbmm rebinds `res`)
    const u64 copy = f.s.alloc(e);
    sigmoid = temporary(true);  // input_gate, then recurrent_gate: sigmoid saves its output
    if (gate == 0) locals.push_back(sigmoid);
    f.s.free(copy);
  }
  locals.push_back(res);
  const u64 scaled = temporary(true);  // -8.0 * recurrent_gate (saved by the product with softplus(recurrent_param))
  local(false);                        // log_recurrent_gate
  f.drop(scaled);
  local(true);  // recurrent_gate = exp(log_recurrent_gate) (exp saves its output; the sigmoid's name rebound)
  f.drop(sigmoid);
  const u64 twice = f.s.alloc(e);
  local(true);  // a_square = exp(2 * log_recurrent_gate)
  f.s.free(twice);
  local(true);  // gated_inputs = activations * input_gate (saved by the product with the multiplier)
  const u64 complement = temporary(true);  // 1 - a_square: SqrtBoundDerivative saves its input
  const u64 root = f.s.alloc(e);           // sqrt: `multiplier`
  f.drop(complement);
  const u64 masked = f.s.alloc(e);  // ~reset * multiplier
  local(true);  // multiplier = reset + ~reset * multiplier (saved by normalized_x's product)
  f.s.free(masked), f.s.free(root);
  local(false);  // normalized_x
  // _rnn_scan: recurrent_gate * ~reset, contextualized_states = zeros_like; each step t saves the fp32
  // recurrent_gate[:, t] and the previous fp32 state, (batch, W) each (lumped into one tensor here: they are
  // batch x W x 4-byte blocks of the small pool, 2 x seq of them)
  const u64 gate = f.s.alloc(e), states = f.s.alloc(e);
  if (f.train) f.keep(f.s.alloc(mul(mul(2, f.q_len), mul(mul(f.batch, W), 4))));
  f.s.free(gate);
  for (u64 id : locals) f.drop(id);  // RecurrentGemmaRglru.forward returns; the conv's output with it
  f.drop(conv);
  // hidden_states = x_branch * y_branch (saves both), linear_out
  f.keep(states);
  const u64 product = f.s.alloc(e);
  f.drop(states), f.drop(y);
  const u64 out = linear(f, product, W, h, false, "linear_out");
  f.drop(product);
  return out;
}

// RecurrentGemmaSdpaAttention with the cache on: _setup_cache's zeros (batch, kv_heads, attention_window_size,
// head_dim) each for keys and values, _update_cache's indexed copy of them (the new cache; the zeros freed) into which
// the new keys and values are written under no_grad. SDPA then attends over the window's positions.
void window_cache(Forward& f, const LayerDims& d, CacheIds& cache) {
  const u64 window = mul(mul(f.batch, f.r.m.attention_cache_window), mul(d.kv, f.wide));  // the hidden states' dtype
  for (std::size_t i = 0; i < 2; ++i) {  // keys, values (slots 2 and 3 are a parallel layer's Mamba states)
    const u64 zeros = f.s.alloc(window, Use::Cache);
    cache[i] = f.s.alloc(window, Use::Cache);
    f.s.free(zeros);
  }
}

// RecurrentGemmaModel._update_causal_mask: full((seq, max(window, seq)), min) in the embeddings' dtype, its triu, the
// bool of arange > cache_position multiplied in; the batch's view of it goes to every attention layer. With an
// attention_mask (generate() passes one) the view is cloned, padded rows masked_fill-ed (a bool of seq x seq per
// sequence, their masked copy), then multiplied by ~all(mask == min): a second batch-sized copy. Held to the forward's end.
void griffin_mask(Forward& f, Prelude& p) {
  const u64 target = std::max(f.r.m.attention_cache_window, f.q_len), square = mul(f.q_len, target);
  const u64 width = f.r.w.weight;
  const u64 full = f.s.alloc(mul(square, width)), triu = f.s.alloc(mul(square, width));
  f.s.free(full);
  const u64 condition = f.s.alloc(square);
  f.s.free(condition);
  if (f.r.o.new_tokens == 0) {  // no attention_mask: the expanded view
    p.held.push_back(triu);
    return;
  }
  const u64 clone = f.s.alloc(mul(f.batch, mul(square, width)));
  f.s.free(triu);
  const u64 rows = mul(f.batch, mul(f.q_len, f.q_len));  // the attention_mask's columns: seq
  const u64 is_zero = f.s.alloc(rows), padding = f.s.alloc(rows);
  f.s.free(is_zero);
  const u64 filled = f.s.alloc(mul(rows, width));
  f.s.free(padding), f.s.free(filled);
  const u64 is_min = f.s.alloc(mul(f.batch, square)), multiplied = f.s.alloc(mul(f.batch, mul(square, width)));
  f.s.free(is_min), f.s.free(clone);
  p.held.push_back(multiplied);
}

}  // namespace vramdoc::estimator::detail
