// Inference, the whole model op by op (see forward_ops.hpp): the weights; the prefill (embeddings,
// masks, rotary tables and the cuBLAS workspace at the first matmul, each decoder layer as its
// family's modeling code runs it, the final norm and the logits); then generate()'s decoding steps. Both the inference phases (peak allocated, by stage) and the allocator replay (reserved)
// are taken from this one sequence.
#include <algorithm>
#include <vector>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

constexpr u64 kInferenceWorkspace = 32 * MiB;  // one cuBLAS workspace: every fresh inference trace holds one 32 MiB block

// The final norm, then lm_head on the rows transformers keeps (the last position in generate(),
// or with --logits last), Gemma 2's soft-capping (/ cap, tanh, * cap), generate()'s fp32 copy of
// the next-token logits. Returns that copy (held into the decoding steps).
u64 head(Forward& f, u64 x, Prelude& p) {
  const ModelConfig& m = f.r.m;
  const u64 normed = !final_norm_over_tokens(m) ? x : norm(f, x, f.hidden_width(), f.wide);
  if (normed != x) f.s.free(x);
  f.s.free(f.returned_weights), f.returned_weights = 0;  // the model's forward returns
  f.s.free(p.held), f.s.free(f.position_bias), f.s.free(f.cross_bias), f.s.free(f.stack_input);
  f.stack_input = 0;  // (an encoder-decoder's output keeps the encoder's output and the caches: freed below)
  if (f.pending_workspace != 0) f.s.alloc(f.pending_workspace, Use::Workspace), f.pending_workspace = 0;  // no Linear ran
  u64 in = head_input(f, normed);
  const bool generate = f.r.o.new_tokens > 0;
  u64 rows = generate || f.r.o.logits_last_only ? f.batch : f.tokens();
  const u64 outputs = head_outputs(m);
  if (m.kind != ModelKind::Decoder) rows = task_head(f, normed, in) / std::max<u64>(outputs, 1);  // the task's head
  const u64 cast = f.amp ? f.s.alloc(mul(rows, mul(m.embed_proj_dim > 0 ? m.embed_proj_dim : f.hidden_width(), 2))) : 0;
  u64 logits = f.s.alloc(mul(rows, mul(outputs, f.act)));
  f.s.free(cast);
  if (m.enc.logits_bias) {  // BART: lm_logits + final_logits_bias (fp32 under autocast: the buffer is)
    const u64 biased = f.s.alloc(mul(rows, mul(outputs, f.amp ? 4 : f.act)));
    f.s.free(logits);
    logits = biased;
  }
  if (in != normed) f.s.free(in);
  if (m.scaled_logits) {  // Granite: logits / logits_scaling; Cohere: logits * logit_scale
    const u64 scaled = f.s.alloc(mul(rows, mul(m.vocab_size, f.act)));
    f.s.free(logits);
    logits = scaled;
  }
  for (int i = 0; i < (m.final_logit_softcap > 0 ? 3 : 0); ++i) {
    const u64 next = f.s.alloc(mul(rows, mul(m.vocab_size, f.act)));
    f.s.free(logits);
    logits = next;
  }
  const u64 scores = generate ? f.s.alloc(mul(f.batch, mul(m.vocab_size, 4))) : 0;
  if (generate) f.s.free(logits);
  f.s.free(normed), f.s.free(f.cross_cache), f.s.free(f.memory);
  return scores;
}

// One forward over f.q_len tokens (the prefill, or without a cache a whole generate() step): the prelude, every
// layer, the head. Returns the next-token scores (held into the decoding steps).
// `first`: the prefill (its stages marked; the cuBLAS workspace made at its first matmul, then kept).
u64 full_forward(Sequence& s, Forward& f, const std::vector<LayerKind>& kinds, const WeightTensors& weights,
                 std::vector<CacheIds>& cache, bool with_cache, bool first) {
  const Run& r = f.r;
  const bool decoder = r.m.kind == ModelKind::Decoder;
  if (first) s.stage(Stage::Layers);
  const u64 workspace = first ? kInferenceWorkspace : 0;
  if (!decoder) f.pending_workspace = workspace;  // an encoder's: at its first Linear (forward_linear.cpp)
  Prelude p = decoder ? prelude(f, kinds, workspace) : encoder_prelude(f, 0, false);
  u64 x = p.hidden;
  f.use_cache = decoder && with_cache;
  for (std::size_t l = 0; l < kinds.size(); ++l) {
    if (kinds[l].cross && f.memory == 0) x = to_decoder(f, p, x), f.use_cache = true;
    if (f.amp) {
      for (u64 b : weights.layer(kinds[l]).casts) s.alloc(b / std::max<u64>(r.o.tensor_parallel, 1), Use::Cast);
    }
    const u64 out = decoder_layer(f, kinds[l], x, cache[l]);
    if ((l == 0 && p.hold_first_input) || r.m.family == Family::DebertaV2 || r.m.all_hidden_states) p.held.push_back(x);
    // (the embeddings' output lives to the model's end; DeBERTa-v2: every layer's, DebertaV2Encoder's all_hidden_states:
    // the deberta-s inference trace; RecurrentGemma's forced output_hidden_states)
    else if (x != f.stack_input) s.free(x);  // (a stack's held input: freed by the stack)
    x = out;
  }
  if (r.m.enc.always_cached) {  // XLM: the cache is XLMModel.forward's local, gone before the head runs
    for (CacheIds& c : cache) {
      for (u64 id : c) s.free(id);
      c = CacheIds{};
    }
  }
  if (first) s.stage(Stage::Head);
  return head(f, x, p);
}

}  // namespace

void inference_events(Sequence& s, const Run& r) {
  const ModelConfig& m = r.m;
  Forward f(s, r);
  allocate_weights(s, r);
  const std::vector<LayerKind> kinds = layer_order(m);
  const bool decoder = m.kind == ModelKind::Decoder;
  const WeightTensors weights = weight_tensors(r, r.w.weight);
  std::vector<CacheIds> cache(kinds.size(), CacheIds{0, 0});
  u64 scores = full_forward(s, f, kinds, weights, cache, m.generate_with_cache, true);
  s.stage(Stage::Decoding);
  if (!decoder) return;  // an encoder-decoder's generate(): the steps of one token after one encoder pass (small)
  if (!m.generate_with_cache) {  // config.json's use_cache false (MptConfig's default): generate() runs the whole
    // sequence again for every further token (seq + 1, seq + 2, ... tokens; each step's largest tensors outgrow
    // every cached block: trace 016-mpt-1b of 2026-12-02-r4 maps two new segments a step)
    for (u64 t = 1; t < r.o.new_tokens; ++t) {
      f.q_len = f.kv_len = saturating_add(r.o.seq, t);
      const u64 next = full_forward(s, f, kinds, weights, cache, false, false);
      s.free(scores);
      scores = next;
    }
    return;
  }
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
