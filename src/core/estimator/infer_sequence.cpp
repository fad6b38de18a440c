// Inference, the whole model op by op (see infer_ops.hpp): the weights; the prefill (embeddings,
// rotary tables and the cuBLAS workspace at the first matmul, attention masks, each decoder layer
// as its family's modeling code runs it, the final norm and the logits); then generate()'s decoding
// steps. Both the inference phases (peak allocated, by stage) and the allocator replay (reserved)
// are taken from this one sequence.
#include <algorithm>
#include <vector>

#include "core/estimator/infer_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

constexpr u64 kInferenceWorkspace = 32 * MiB;  // one cuBLAS workspace: every fresh inference trace holds one 32 MiB block

// Each layer's kind in model order: dense layers first (first_k_dense_replace), sliding layers as
// layer_types lists them (else every layer when the model has a window).
std::vector<LayerKind> layer_order(const ModelConfig& m) {
  std::vector<LayerKind> kinds;
  const u64 dense = m.num_experts > 0 ? m.dense_layers : m.num_layers;
  for (u64 i = 0; i < m.num_layers; ++i) {
    const bool sliding = m.sliding_window > 0 && (m.layer_sliding.size() == m.num_layers ? m.layer_sliding[i] : m.sliding_layers >= m.num_layers);
    kinds.push_back({i >= dense, sliding});
  }
  return kinds;
}

// What the model holds from its start to its end: the embeddings' output, the rotary tables, masks.
struct Prelude {
  std::vector<u64> held;
  u64 hidden = 0;  // the first layer's input
};

// The rotary tables (LlamaRotaryEmbedding.forward): inv_freq @ positions in fp32 (the run's first
// matmul: cuBLAS allocates its workspace), cat, cos and sin times attention_scaling, cast to the
// hidden states' dtype (OLMo 2 keeps fp32). Gemma 3 has a local and a global table.
void rotary_tables(Forward& f, Prelude& p, u64& workspace) {
  const ModelConfig& m = f.r.m;
  const u64 rd = std::min(m.rotary_dims, m.head_dim), positions = mul(f.batch, f.q_len);
  const int tables = m.family == Family::Gemma3 ? 2 : 1;
  for (int i = 0; i < tables; ++i) {
    const u64 freqs = f.s.alloc(mul(positions, mul(rd / 2, 4)));
    if (workspace == 0) workspace = f.s.alloc(kInferenceWorkspace, Use::Workspace);
    const u64 emb = f.s.alloc(mul(positions, mul(rd, 4)));
    std::vector<u64> scaled;
    for (int t = 0; t < 2; ++t) {  // cos, then sin: each times attention_scaling
      const u64 raw = f.s.alloc(mul(positions, mul(rd, 4)));
      scaled.push_back(f.s.alloc(mul(positions, mul(rd, 4))));
      f.s.free(raw);
    }
    if (m.family != Family::Olmo2 && f.wide != 4) {
      p.held.push_back(f.s.alloc(mul(positions, mul(rd, f.wide)))), p.held.push_back(f.s.alloc(mul(positions, mul(rd, f.wide))));
      f.s.free(scaled);
    } else {
      p.held.insert(p.held.end(), scaled.begin(), scaled.end());
    }
    f.s.free(freqs), f.s.free(emb);
  }
}

// Masks (transformers' masking_utils, built before the rotary tables): the causal condition over
// seq x seq (the sliding window's adds a second condition and their combination), expanded to a
// bool batch x seq x seq mask; eager attention makes it additive (one per kind of layer). SDPA gets
// none (is_causal) except for a window shorter than the prompt: the bool mask, which the kernel
// makes additive per call.
void masks(Forward& f, Prelude& p, const std::vector<LayerKind>& kinds) {
  const ModelConfig& m = f.r.m;
  const bool any_sliding = std::any_of(kinds.begin(), kinds.end(), [](LayerKind k) { return k.sliding; });
  const bool any_full = std::any_of(kinds.begin(), kinds.end(), [](LayerKind k) { return !k.sliding; });
  const bool eager = f.r.o.attention == Attention::Eager;
  const u64 square = mul(f.q_len, f.kv_len), batched = mul(f.batch, square);
  for (bool sliding : {false, true}) {
    const bool needed = eager ? (sliding ? any_sliding : any_full) : sliding && any_sliding && f.q_len > m.sliding_window;
    if (!needed) continue;
    u64 cond = f.s.alloc(square);
    for (int i = 0; i < (sliding ? 3 : 1); ++i) {  // causal; the window; their combination
      const u64 next = f.s.alloc(square);
      f.s.free(cond);
      cond = next;
    }
    const u64 bool_mask = f.s.alloc(batched);
    f.s.free(cond);
    if (!eager) {
      f.sliding_bool_mask = bool_mask;
      p.held.push_back(bool_mask);
      continue;
    }
    p.held.push_back(f.s.alloc(mul(batched, f.act)));
    f.s.free(bool_mask);
  }
}

Prelude prelude(Forward& f, const std::vector<LayerKind>& kinds, u64& workspace) {
  const ModelConfig& m = f.r.m;
  Prelude p;
  const u64 width = f.r.w.weight;  // the embedding's dtype (fp32 weights under autocast)
  p.hidden = f.s.alloc(f.bytes(m.hidden_size, width));
  if (m.family == Family::Gemma || m.family == Family::Gemma2 || m.family == Family::Gemma3) {
    const u64 scaled = f.s.alloc(f.bytes(m.hidden_size, width));  // embeddings * sqrt(hidden_size)
    f.s.free(p.hidden), p.hidden = scaled;
  } else if (m.family == Family::Gpt2) {
    const u64 positions = f.s.alloc(f.bytes(m.hidden_size, width)), sum = f.s.alloc(f.bytes(m.hidden_size, width));
    f.s.free(positions);
    p.held.push_back(p.hidden), p.hidden = sum;
  }
  masks(f, p, kinds);
  if (m.rotary_dims > 0) rotary_tables(f, p, workspace);
  if (workspace == 0) workspace = f.s.alloc(kInferenceWorkspace, Use::Workspace);
  return p;
}

// One decoder layer as its family's forward() runs it: pre-norm (Llama), sandwich norms (Gemma 2/3),
// norms after the sublayers only (OLMo 2), or attention and MLP side by side (Phi, Falcon, GPT-NeoX).
u64 decoder_layer(Forward& f, LayerKind kind, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, wide = f.wide;
  u64 held = 0;
  if (m.parallel_residual) {
    u64 n_attn = norm(f, h, wide), n_mlp = 0;
    if (!m.shared_norm && m.family == Family::Falcon) n_mlp = norm(f, h, wide);  // ln_attn and ln_mlp first
    const u64 a = attention(f, kind, f.amp, cache, held);
    if (!m.shared_norm && n_mlp == 0) {  // GPT-NeoX: post_attention_layernorm after attention
      f.s.free(n_attn), n_attn = 0;
      n_mlp = norm(f, h, wide);
    }
    const u64 mo = mlp(f, kind, f.amp);
    if (m.family == Family::GptNeox) f.s.free(n_mlp), n_mlp = 0;
    const u64 partial = m.family == Family::Falcon ? 0 : f.s.alloc(f.bytes(h, wide));  // Falcon adds in place
    const u64 out = f.s.alloc(f.bytes(h, wide));
    for (u64 id : {partial, n_attn, n_mlp, a, mo, held}) f.s.free(id);
    return out;
  }
  u64 a = 0;
  if (m.post_norms_only) {
    a = attention(f, kind, f.amp, cache, held);
  } else {
    const u64 n = norm(f, h, wide);
    a = attention(f, kind, f.amp, cache, held);
    f.s.free(n);
  }
  if (m.sandwich_norms || m.post_norms_only) {
    const u64 pa = norm(f, h, f.act);
    f.s.free(a), a = pa;
  }
  const u64 x2 = f.s.alloc(f.bytes(h, wide));
  f.s.free(a);
  u64 mo = 0;
  if (m.post_norms_only) {
    mo = mlp(f, kind, f.amp);
  } else {
    const u64 n2 = norm(f, h, wide);
    mo = mlp(f, kind, f.amp);
    f.s.free(n2);
  }
  if (m.sandwich_norms || m.post_norms_only) {
    const u64 pm = norm(f, h, f.act);
    f.s.free(mo), mo = pm;
  }
  const u64 out = f.s.alloc(f.bytes(h, wide));
  f.s.free(mo), f.s.free(x2), f.s.free(held);
  return out;
}

// The final norm, then lm_head on the rows transformers keeps (the last position in generate(),
// or with --logits last), Gemma 2's soft-capping (/ cap, tanh, * cap), generate()'s fp32 copy of
// the next-token logits. Returns that copy (held into the decoding steps).
u64 head(Forward& f, u64 x, Prelude& p) {
  const ModelConfig& m = f.r.m;
  const u64 normed = norm(f, m.hidden_size, f.wide);
  f.s.free(x), f.s.free(p.held);
  const bool generate = f.r.o.new_tokens > 0;
  const u64 rows = generate || f.r.o.logits_last_only ? f.batch : f.tokens();
  const u64 cast = f.amp ? f.s.alloc(mul(rows, mul(m.hidden_size, 2))) : 0;
  u64 logits = f.s.alloc(mul(rows, mul(m.vocab_size, f.act)));
  f.s.free(cast);
  for (int i = 0; i < (m.final_logit_softcap > 0 ? 3 : 0); ++i) {
    const u64 next = f.s.alloc(mul(rows, mul(m.vocab_size, f.act)));
    f.s.free(logits);
    logits = next;
  }
  const u64 scores = generate ? f.s.alloc(mul(f.batch, mul(m.vocab_size, 4))) : 0;
  if (generate) f.s.free(logits);
  f.s.free(normed);
  return scores;
}

}  // namespace

void inference_events(Sequence& s, const Run& r) {
  const ModelConfig& m = r.m;
  const Quantization q = effective_quant(m, r.o);
  Forward f{s, r};
  f.batch = r.o.batch, f.q_len = f.kv_len = r.o.seq;
  f.act = r.w.act, f.wide = r.w.wide, f.amp = r.w.amp;
  f.quantized = q.method != QuantMethod::None;
  allocate_weights(s, r);
  s.stage(Stage::Layers);
  const std::vector<LayerKind> kinds = layer_order(m);
  u64 workspace = 0;
  Prelude p = prelude(f, kinds, workspace);
  std::vector<u64> casts = weight_tensors(r, r.w.weight).layer_casts;
  for (u64& b : casts) b /= std::max<u64>(r.o.tensor_parallel, 1);
  std::vector<CacheIds> cache(kinds.size(), CacheIds{0, 0});
  u64 x = p.hidden;
  for (std::size_t l = 0; l < kinds.size(); ++l) {
    if (f.amp) {
      for (u64 b : casts) s.alloc(b, Use::Cast);
    }
    const u64 out = decoder_layer(f, kinds[l], cache[l]);
    if (l == 0) p.held.push_back(x); else s.free(x);  // the embeddings' output lives to the model's end
    x = out;
  }
  s.stage(Stage::Head);
  u64 scores = head(f, x, p);
  s.stage(Stage::Decoding);
  f.q_len = 1;
  for (u64 t = 1; t <= r.o.new_tokens; ++t) {
    f.kv_len = saturating_add(r.o.seq, t);
    for (std::size_t l = 0; l < kinds.size(); ++l) decode_layer(f, kinds[l], cache[l]);
    const u64 logits = s.alloc(mul(f.batch, mul(m.vocab_size, f.act))), next = s.alloc(mul(f.batch, mul(m.vocab_size, 4)));
    s.free(logits), s.free(scores);
    scores = next;
  }
}

}  // namespace vramdoc::estimator::detail
