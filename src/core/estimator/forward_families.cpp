// A forward op by op (see forward_ops.hpp): the pieces of the decoder families of issue 28 that the
// Llama template lacks, each as its modeling_*.py (transformers 5.17) and PyTorch 2.11's kernels run
// it: BLOOM's ALiBi attention and gelu, GPT-J's fp32 attention, OPT's ReLU MLP and post-norm layers,
// Nemotron's relu^2, Cohere's and Nemotron's norms. docs/estimator.md has each term's source line.
#include <algorithm>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

// BLOOM's gelu (bloom_gelu_forward: x * 0.5 * (1.0 + tanh(0.79788456 * x * (1 + 0.044715 * x * x))),
// left to right; in training run inside GeLUFunction, which saves only its input): the output.
u64 bloom_gelu(Forward& f, u64 x, u64 inter) {
  f.keep(x);
  const u64 e = f.bytes(inter, f.act);
  const u64 half = f.s.alloc(e), scaled = f.s.alloc(e), c = f.s.alloc(e), cx = f.s.alloc(e);  // x*0.5, 0.797*x, 0.0447*x, *x
  f.s.free(c);
  const u64 one = f.s.alloc(e);  // 1 + ...
  f.s.free(cx);
  const u64 inner = f.s.alloc(e);  // 0.797*x * (...)
  f.s.free(scaled), f.s.free(one);
  const u64 t = f.s.alloc(e);  // tanh
  f.s.free(inner);
  const u64 one_t = f.s.alloc(e);  // 1.0 + tanh
  f.s.free(t);
  const u64 out = f.s.alloc(e);
  f.s.free(half), f.s.free(one_t);
  return out;
}

// XIELUActivation._xielu_python (activations.py:281-288, without the xielu CUDA wheel) on up_proj's output `x`:
// torch.where(x > 0, alpha_p * x * x + beta * x, (expm1(min(x, eps)) - x) * alpha_n + beta * x), each step a tensor,
// left to right. Autograd saves x (by alpha_p * x, the square and min), the bool condition (where), alpha_p * x, expm1's
// result and expm1 - x (their products with a parameter); the products with alpha_p / alpha_n (1-element parameters,
// so type promotion follows them) and the branches are in the weights' dtype. Returns the output.
u64 xielu(Forward& f, u64 x, u64 inter) {
  const u64 e = f.bytes(inter, f.act), ew = f.bytes(inter, std::max(f.act, f.r.w.weight));
  f.keep(x);
  const u64 cond = f.s.alloc(f.bytes(inter, 1));
  f.keep(cond);
  const u64 ax = f.s.alloc(ew);
  f.keep(ax);
  const u64 axx = f.s.alloc(ew);
  f.drop(ax);
  const u64 bx = f.s.alloc(e), positive = f.s.alloc(ew);
  f.s.free(axx), f.s.free(bx);
  const u64 low = f.s.alloc(e), em = f.s.alloc(e);
  f.s.free(low);
  f.keep(em);
  const u64 diff = f.s.alloc(e);
  f.drop(em);
  f.keep(diff);
  const u64 scaled = f.s.alloc(ew);
  f.drop(diff);
  const u64 bx2 = f.s.alloc(e), negative = f.s.alloc(ew);
  f.s.free(scaled), f.s.free(bx2);
  const u64 out = f.s.alloc(ew);
  f.s.free(positive), f.s.free(negative);
  f.drop(cond);
  return out;
}

}  // namespace

u64 family_mlp(Forward& f, u64 x, u64 h, u64 inter, bool input_wide) {
  const ModelConfig& m = f.r.m;
  if (m.mlp == MlpKind::Relu) {  // OPT, BART's relatives: fc1, relu (saves its output: fc2's input), dropout, fc2
    const u64 fc1 = linear(f, x, h, inter, input_wide, "fc1");
    u64 r = f.s.alloc(f.bytes(inter, f.act));
    f.keep(r);
    f.drop(fc1);
    r = dropout(f, r, inter, f.act, m.activation_dropout);  // BART-style activation_dropout (0 for OPT, M2M100)
    const u64 down = linear(f, r, inter, h, false, "fc2");
    f.drop(r);
    return down;
  }
  if (m.mlp == MlpKind::Relu2) {  // Nemotron: up_proj, relu (saved by square), square (down's input), down_proj;
    // ReLUSquaredActivation.forward's `input` (up_proj's output) is alive until it returns (activations.py:211-214)
    const u64 up = linear(f, x, h, inter, input_wide, "up_proj"), r = f.s.alloc(f.bytes(inter, f.act));
    f.keep(r);
    const u64 sq = f.s.alloc(f.bytes(inter, f.act));
    f.drop(up), f.drop(r);
    const u64 down = linear(f, sq, inter, h, false, "down_proj");
    f.drop(sq);
    return down;
  }
  if (m.mlp == MlpKind::Xielu) {  // ApertusMLP: down_proj(act_fn(up_proj(x)))
    const u64 up = linear(f, x, h, inter, input_wide, "up_proj"), act = xielu(f, up, inter);
    f.drop(up);
    const u64 down = linear(f, act, inter, h, f.r.w.weight == 4, "down_proj");
    f.drop(act);
    return down;
  }
  if (m.mlp == MlpKind::BloomGelu) {
    const u64 fc = linear(f, x, h, inter, input_wide, "dense_h_to_4h"), act = bloom_gelu(f, fc, inter);
    f.drop(fc);
    const u64 down = linear(f, act, inter, h, false, "dense_4h_to_h");
    f.drop(act);
    return down;
  }
  return 0;
}

// BLOOM's attention (BloomAttention.forward): the query reshaped to (batch x heads, seq, dim) from a
// view of the fused projection (a copy, saved by baddbmm with the keys), alibi.baddbmm's scores, the
// mask added, softmax in fp32 (saved) cast back (saved by bmm; returned as attn_weights, held to the
// layer's end), bmm, the heads merged (a copy). Keys and values are the cache's copies (contiguous)
// or, without a cache, copies of the fused buffer's views. The query's copy, attention_scores and
// attn_weights (the masked scores) are locals of the forward, which ends with dense and dropout_add
// (the residual sum): they go to `locals` (trace 007-bloom-m of 2026-12-02: modeling_bloom.py:265, 270
// and 280 freed after dropout_add, line 309).
u64 bloom_attention(Forward& f, const LayerDims& d, u64 k, u64 v, bool cached, u64& held, std::vector<u64>& locals) {
  const u64 q = f.s.alloc(f.bytes(d.q, f.act));
  const u64 kc = cached ? k : f.s.alloc(f.bytes(d.kv, f.act)), vc = cached ? v : f.s.alloc(f.bytes(d.kv, f.act));
  f.keep(q), f.keep(kc);
  // softmax(dtype=float32) upcasts first
  const u64 scores = f.s.alloc(f.scores(d.heads, f.act)), masked = f.s.alloc(f.scores(d.heads, f.act));
  const u64 up = f.act != 4 ? f.s.alloc(f.scores(d.heads, 4)) : 0, sm = f.s.alloc(f.scores(d.heads, 4));
  f.keep(sm);
  f.drop(up);
  held = f.s.alloc(f.scores(d.heads, f.act));
  f.keep(held), f.keep(vc);
  f.drop(sm);
  const u64 ctx = f.s.alloc(f.bytes(d.q, f.act)), merged = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(ctx);
  if (!cached) f.drop(kc), f.drop(vc);
  locals.insert(locals.end(), {q, scores, masked});
  return merged;
}

// GPT-J's _attn: query and key upcast to fp32 (saved by the matmul), fp32 scores, / scale_attn, the
// mask added, softmax (saved), cast to the values' dtype (saved; attn_weights, returned by the block),
// the output, its heads merged (permute().contiguous()).
u64 fp32_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held) {
  const bool up = f.act != 4;
  const u64 qf = up ? f.s.alloc(f.bytes(d.q, 4)) : q, kf = up ? f.s.alloc(f.bytes(d.kv, 4)) : k;
  f.keep(qf), f.keep(kf);
  u64 x = f.s.alloc(f.scores(d.heads, 4));
  for (int i = 0; i < 2; ++i) {  // / scale_attn, + attention_mask
    const u64 next = f.s.alloc(f.scores(d.heads, 4));
    f.s.free(x);
    x = next;
  }
  const u64 sm = f.s.alloc(f.scores(d.heads, 4));
  f.s.free(x);  // the masked scores go with the softmax (trace 011-gptj-m of 2026-12-01-b; what looked like them
                // at 013-gptj-s's peak is the last layer's attn_weights, held until this block returns)
  f.keep(sm);
  held = up ? f.s.alloc(f.scores(d.heads, f.act)) : sm;
  f.keep(held), f.keep(v);
  if (held != sm) f.drop(sm);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act)), merged = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(out);
  if (up) f.drop(qf), f.drop(kf);
  return merged;
}

// GPT-OSS's eager_attention_forward (modeling_gpt_oss.py; the model has no SDPA path): repeat_kv's copies, the
// scores (the query copied for the batched matmul unless heads-major), * scaling, + the causal mask (the mask's
// dtype: fp32 under autocast), torch.cat with the sinks (one column more), minus their max, softmax in the
// combined logits' own dtype (no fp32 upcast; saved), each freeing the one before except where a Python name holds
// it: `attn_weights` (the masked scores) until dropout rebinds it, `combined_logits` (the shifted logits) to the
// return. probs[..., :-1] (a view: cuBLAS reads its stride) times the values; the output made contiguous.
u64 sink_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, bool q_heads_major, u64& held) {
  const bool repeat = d.kv_heads < d.heads;
  const u64 kr = repeat ? f.s.alloc(f.bytes(d.q, f.act)) : k, vr = repeat ? f.s.alloc(f.bytes(d.q, f.act)) : v;
  const u64 qc = q_heads_major ? q : f.s.alloc(f.bytes(d.q, f.act));
  f.keep(qc), f.keep(kr);
  const u64 sc = f.s.alloc(f.scores(d.heads, f.act));
  if (qc != q) f.drop(qc);
  const u64 scaled = f.s.alloc(f.scores(d.heads, f.act));
  f.s.free(sc);
  const u64 w = std::max(f.act, f.r.w.weight);  // + attention_mask (the embeddings' dtype)
  const u64 masked = f.s.alloc(f.scores(d.heads, w));
  f.s.free(scaled);
  // (batch, heads, q_len, kv_len + 1): the sink column
  const u64 with_sink = saturating_add(f.scores(d.heads, w), saturating_mul(saturating_mul(f.batch, d.heads), saturating_mul(f.q_len, w)));
  const u64 combined = f.s.alloc(with_sink);
  const u64 shifted = f.s.alloc(with_sink);  // combined_logits - max(...).values
  f.s.free(combined);
  const u64 probs = f.s.alloc(with_sink);
  f.keep(probs);
  f.drop(masked);  // attn_weights = dropout(scores): p = 0 returns the view
  f.keep(vr);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act));
  f.s.free(shifted);  // combined_logits: to the return
  const u64 contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(out);
  if (kr != k) f.drop(kr);
  if (vr != v) f.drop(vr);
  held = probs;
  return contiguous;
}

// create_causal_mask(allow_is_causal_skip=False): the seq x seq condition, for SDPA expanded to a batch x seq x
// seq bool mask and made additive by torch.where (eager gets the additive one directly); then
// masked_fill(alibi / sqrt(head_dim), causal_mask < -1, min) broadcasts to every head (modeling_falcon.py:763-786;
// trace 017-falcon-rw of 2026-12-02: 2,130,739,200 bytes for 8 x 32 x 2040 x 2040 in bf16).
void falcon_alibi_mask(Forward& f, Prelude& p) {
  const u64 width = f.r.w.weight, square = saturating_mul(f.q_len, f.kv_len), batched = saturating_mul(f.batch, square);
  const u64 cond = f.s.alloc(square), combined = f.s.alloc(square);
  f.s.free(cond);
  const bool sdpa = attention_path(f.r.m, f.r.o) != AttentionPath::Eager;
  const u64 bool_mask = sdpa ? f.s.alloc(batched) : 0;
  if (sdpa) f.s.free(combined);
  const u64 additive = f.s.alloc(saturating_mul(batched, width));  // (SDPA: torch.where(causal_mask, 0.0, min_dtype))
  f.s.free(sdpa ? bool_mask : combined);
  const u64 below = f.s.alloc(batched);  // causal_mask < -1
  const u64 mask = f.s.alloc(saturating_mul(saturating_mul(batched, layer_dims(f.r).heads), width));
  f.s.free(below), f.s.free(additive);
  if (f.train) f.saved_mask = mask;
  else p.held.push_back(mask);
}

u64 family_norm(Forward& f, u64 x, u64 elements, u64 in_width) {
  const ModelConfig& m = f.r.m;
  if (m.enc.int_layer_norm) {
    // IntLayerNorm.forward without quant_mode (quant_modules.py): y = x - mean (saved by pow and by the division),
    // y**2 (its mean is small), y / sqrt(eps + var) (saved by the weight's product when it trains), x * weight,
    // + bias: each a tensor of the input's dtype; the input itself is not saved
    const u64 centred = f.s.alloc(f.bytes(elements, in_width));
    f.keep(centred);
    const u64 pow = f.s.alloc(f.bytes(elements, in_width));
    f.drop(pow);
    const u64 normed = f.s.alloc(f.bytes(elements, in_width));
    if (f.weights_train()) f.keep(normed);
    const u64 weighted = f.s.alloc(f.bytes(elements, in_width));
    f.drop(normed), f.drop(centred);
    const u64 out = f.s.alloc(f.bytes(elements, in_width));
    f.drop(weighted);
    return out;
  }
  if (m.norm == NormKind::LayerNorm1P) {  // weight + 1 (small); under autocast the input cast to 16 bit first
    const u64 in = f.amp && in_width == 4 ? f.s.alloc(f.bytes(elements, 2)) : x;
    f.keep(in);
    const u64 out = f.s.alloc(f.bytes(elements, f.amp ? 2 : in_width));
    if (in != x) f.drop(in);
    return out;
  }
  // CohereLayerNorm: to(float32); (h - mean) (saved by pow); pow(2); (h - mean) again (saved by the
  // product with rsqrt); the normalised tensor (saved by the weight's product when it trains);
  // weight * h in fp32; to(input dtype). DebertaLayerNorm the same to the normalised tensor (its division
  // by sqrt saves the second (h - mean)), then to(input dtype) first, weight * h, + bias.
  const u64 up = in_width == 4 ? x : f.s.alloc(f.bytes(elements, 4));
  const u64 centred = f.s.alloc(f.bytes(elements, 4));
  f.keep(centred);
  const u64 pow = f.s.alloc(f.bytes(elements, 4));
  f.drop(pow), f.drop(centred);
  const u64 centred2 = f.s.alloc(f.bytes(elements, 4));
  f.keep(centred2);
  const u64 normed = f.s.alloc(f.bytes(elements, 4));
  f.drop(centred2);
  if (up != x) f.drop(up);
  if (m.enc.deberta_layer_norm) {
    const u64 cast = in_width == 4 ? normed : f.s.alloc(f.bytes(elements, in_width));
    if (cast != normed) f.drop(normed);
    if (f.weights_train()) f.keep(cast);
    const u64 weighted = f.s.alloc(f.bytes(elements, in_width)), out = f.s.alloc(f.bytes(elements, in_width));
    f.drop(weighted), f.drop(cast);
    return out;
  }
  if (f.weights_train()) f.keep(normed);
  const u64 weighted = f.s.alloc(f.bytes(elements, 4));
  f.drop(normed);
  if (in_width == 4) return weighted;
  const u64 out = f.s.alloc(f.bytes(elements, in_width));
  f.drop(weighted);
  return out;
}

u64 residual_sum(Forward& f, u64 bytes) {
  if (!f.r.m.scaled_residual) return f.s.alloc(bytes);
  const u64 scaled = f.s.alloc(bytes), sum = f.s.alloc(bytes);  // Granite: residual + branch * residual_multiplier
  f.s.free(scaled);
  return sum;
}

// GPT-J's sincos per layer (GPTJAttention.forward, modeling_gptj.py:160-193): embed_positions repeated over the
// batch (batch x n_positions x rotary_dim, fp32), the position ids repeated (batch x seq x rotary_dim, int64), their
// gather (fp32) cast to the keys' dtype; the two repeats and the cast are locals to the attention's end (trace
// 008-gptj-m of 2026-12-02: lines 166, 192, 193 alive at the prefill's peak).
void gptj_sincos(Forward& f, u64 rotary, std::vector<u64>& locals) {
  const u64 table = f.s.alloc(saturating_mul(saturating_mul(f.batch, f.r.m.max_positions), saturating_mul(rotary, 4)));
  const u64 ids = f.s.alloc(f.bytes(rotary, 8)), gathered = f.s.alloc(f.bytes(rotary, 4));
  const u64 sincos = f.act != 4 ? f.s.alloc(f.bytes(rotary, f.act)) : gathered;
  if (sincos != gathered) f.s.free(gathered);
  locals.insert(locals.end(), {table, ids, sincos});
}

// MPT's attention (MptAttention.forward, modeling_mpt.py:96-133): q and k copied for the batched matmul (views of
// the fused Wqkv output; freed after it), the scores, times softmax_scale, plus the ALiBi position bias (an fp32
// tensor: the sum is fp32), masked_fill with the bool mask (attention_scores: a local alive to the forward's return,
// trace 016-mpt-1b of 2026-12-02-r4), softmax of the (already fp32) scores, cast to the values' dtype (attn_weights:
// returned, the model's loop holds it until the next block returns), the context, permuted and made contiguous.
// Saved: q and k (the first matmul), the softmax's output, attn_weights and v (the second).
u64 mpt_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held) {
  const u64 qc = f.s.alloc(f.bytes(d.q, f.act)), kc = f.s.alloc(f.bytes(d.kv, f.act));
  f.keep(qc), f.keep(kc);
  (void)q, (void)k;  // views: their copies are what the matmul reads
  const u64 scores = f.s.alloc(f.scores(d.heads, f.act));
  f.drop(qc), f.drop(kc);
  const u64 scaled = f.s.alloc(f.scores(d.heads, f.act));
  f.s.free(scores);
  const u64 biased = f.s.alloc(f.scores(d.heads, 4));
  f.s.free(scaled);
  const u64 masked = f.s.alloc(f.scores(d.heads, 4));
  f.s.free(biased);
  const u64 sm = f.s.alloc(f.scores(d.heads, 4));
  f.keep(sm);
  held = f.act != 4 ? f.s.alloc(f.scores(d.heads, f.act)) : sm;
  f.keep(held), f.keep(v);
  if (held != sm) f.drop(sm);
  const u64 ctx = f.s.alloc(f.bytes(d.q, f.act)), contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(ctx);
  f.s.free(masked);
  return contiguous;
}

// XGLM's attention (XGLMAttention.forward, modeling_xglm.py:155-243; trace 020-xglm-564m of 2026-12-02-r4): the
// scaled query made (batch x heads, seq, dim) by reshape (a copy); keys and values the cache's copies (reshape: views)
// or, without a cache, copies of the transposed projections; bmm's scores (line 194), + attention_mask (207: the
// mask's dtype), torch.max against the dtype's min (208-210), softmax (217; fp16: in fp32 and cast back, 214-215),
// each freeing the one before; dropout (226: mask and output saved), bmm with the values (228), the heads merged
// (241: a copy). Saved: the query's copy and the keys (bmm), the sum (torch.max), the softmax, the dropout's output
// and the values (bmm). The softmax is returned as attn_weights and held by the layer (`hidden_states, _ =`).
u64 xglm_attention(Forward& f, const LayerDims& d, u64 q, u64 k, u64 v, u64& held) {
  const u64 qc = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(q);
  const u64 kc = f.use_cache ? k : f.s.alloc(f.bytes(d.kv, f.act)), vc = f.use_cache ? v : f.s.alloc(f.bytes(d.kv, f.act));
  f.keep(qc), f.keep(kc);
  const u64 scores = f.s.alloc(f.scores(d.heads, f.act));
  const u64 sum_w = std::max(f.act, f.r.w.weight);  // the mask has the embeddings' dtype (fp32 under autocast)
  const u64 sum = f.s.alloc(f.scores(d.heads, sum_w));
  f.drop(scores);
  f.keep(sum);
  const u64 mx = f.s.alloc(f.scores(d.heads, sum_w));
  f.drop(sum);
  const bool fp16 = f.r.o.precision == Precision::Fp16;
  const u64 up = fp16 ? f.s.alloc(f.scores(d.heads, 4)) : 0;
  const u64 sm = f.s.alloc(f.scores(d.heads, f.amp ? 4 : sum_w));  // softmax autocasts to fp32
  f.drop(mx), f.drop(up);
  f.keep(sm);
  u64 probs = sm;
  if (f.train && f.r.m.attention_dropout > 0) {
    const u64 mask = f.s.alloc(f.scores(d.heads, 1));
    probs = f.s.alloc(f.scores(d.heads, f.amp ? 4 : sum_w));
    f.keep(mask);
  }
  const u64 p16 = f.amp ? f.s.alloc(f.scores(d.heads, f.act)) : probs;  // bmm under autocast: a 16-bit copy
  f.keep(p16), f.keep(vc);
  if (p16 != probs) f.drop(probs);
  const u64 ctx = f.s.alloc(f.bytes(d.q, f.act)), merged = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(ctx);
  if (p16 != probs) f.drop(p16);
  if (probs != sm) f.drop(probs);
  f.drop(qc);
  if (!f.use_cache) f.drop(kc), f.drop(vc);
  held = sm;
  return merged;
}

void xglm_embeddings(Forward& f, Prelude& p) {
  const u64 width = f.r.w.weight, h = f.r.m.hidden_size;
  if (f.r.m.scaled_embeddings) {  // XGLMScaledWordEmbedding: the lookup times embed_scale (the lookup freed)
    const u64 scaled = f.s.alloc(f.bytes(h, width));
    f.s.free(p.hidden), p.hidden = scaled;
  }
  p.held.push_back(p.hidden), p.hold_first_input = false;  // inputs_embeds: a local to the forward's end
  const u64 ids = f.s.alloc(saturating_mul(f.tokens(), 8));  // position_ids + offset
  const u64 positions = f.s.alloc(f.bytes(h, width));       // weights.index_select(...)
  f.s.free(ids);
  const u64 sum = f.s.alloc(f.bytes(h, width));
  f.s.free(positions);
  p.hidden = dropout(f, sum, h, width, f.r.m.residual_dropout);
}

// Falcon without parallel attention (Falcon-RW): FalconDecoderLayer.forward keeps its locals to its return -
// input_layernorm's output, the attention output, the residual sum, post_attention_layernorm's output
// (modeling_falcon.py:587-631; dropout_add with p = 0 returns its input); trace 017-falcon-rw of 2026-12-02 frees
// them after the second sum.
u64 falcon_sequential_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache) {
  const u64 h = f.r.m.hidden_size;
  u64 held = 0;
  const u64 n1 = norm(f, x, h, f.wide), a = attention(f, kind, n1, f.amp, cache, held);
  const u64 residual = f.s.alloc(f.bytes(h, f.wide));
  const u64 n2 = norm(f, residual, h, f.wide), mo = mlp(f, kind, n2, f.amp);
  const u64 out = f.s.alloc(f.bytes(h, f.wide));
  for (u64 id : {residual, n1, n2, a, mo}) f.drop(id);
  f.drop(held);
  return out;
}

// OPT with do_layer_norm_before=false (opt-350m): attention, dropout, the residual sum, its norm;
// fc1 -> relu -> fc2, dropout, the sum, its norm.
u64 post_norm_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size;
  u64 held = 0;
  u64 a = attention(f, kind, x, f.amp, cache, held);
  a = dropout(f, a, h, f.act, m.residual_dropout);
  // BERT-style inference (attention() said so): BertSelfOutput's LayerNorm(hidden_states + input_tensor) runs with
  // the dense output still named, BertAttention holds self_outputs to its return, BertLayer holds attention_output and
  // the intermediate activation to its end (the XLM-R inference trace of 2026-12-03)
  const bool bert = f.self_output != 0;
  const u64 sum = f.s.alloc(f.bytes(h, f.wide));
  if (!bert) f.drop(a);
  u64 n1 = norm(f, sum, h, f.wide);
  f.drop(sum);
  if (bert) f.drop(a), f.drop(f.self_output), f.self_output = 0;
  if (kind.cross) {  // BART's decoder layer: cross-attention, dropout, the sum, its norm
    u64 c = cross_attention(f, n1, f.memory, f.memory_tokens);
    c = dropout(f, c, h, f.act, m.residual_dropout);
    const u64 sum_c = f.s.alloc(f.bytes(h, f.wide));
    f.drop(c), f.drop(n1);
    n1 = norm(f, sum_c, h, f.wide);
    f.drop(sum_c);
  }
  f.hold_intermediate = bert;
  u64 mo = mlp(f, kind, n1, f.amp);
  f.hold_intermediate = false;
  mo = dropout(f, mo, h, f.act, m.residual_dropout);
  const u64 sum2 = f.s.alloc(f.bytes(h, f.wide));
  if (!bert) f.drop(mo), f.drop(n1), f.drop(held);
  const u64 out = norm(f, sum2, h, f.wide);
  f.drop(sum2);
  if (bert) f.drop(mo), f.drop(f.layer_locals), f.drop(n1), f.drop(held);
  return out;
}

}  // namespace vramdoc::estimator::detail
