// A forward op by op (see forward_ops.hpp): what the model computes before its first layer (the
// embeddings, attention masks, rotary tables and, at the first matmul, the cuBLAS workspace) and one
// decoder layer as its family's forward() runs it.
#include <algorithm>
#include <tuple>

#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// The rotary tables (LlamaRotaryEmbedding.forward): inv_freq @ positions in fp32 (the run's first
// matmul: cuBLAS allocates its workspace there), cat, cos and sin times attention_scaling, cast to
// the hidden states' dtype (OLMo 2 keeps fp32). Gemma 3 has a local and a global table.
void rotary_tables(Forward& f, Prelude& p, u64& workspace) {
  const ModelConfig& m = f.r.m;
  // (Falcon with alibi computes the tables too, over the whole head, and never uses them)
  const u64 rd = m.rotary_dims > 0 ? std::min(m.rotary_dims, m.head_dim) : m.head_dim, positions = mul(f.batch, f.q_len);
  for (int i = 0; i < (m.family == Family::Gemma3 ? 2 : 1); ++i) {
    const u64 freqs = f.s.alloc(mul(positions, mul(rd / 2, 4)));
    if (workspace != 0) f.s.alloc(workspace, Use::Workspace), workspace = 0;
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
// seq x seq (a sliding window adds its own condition and their combination); eager attention makes
// it additive straight from its batch-expanded view (one per kind of layer, in the embeddings'
// dtype: fp32 under autocast). SDPA gets none (is_causal) except for a window shorter than the
// prompt: the bool batch x seq x seq mask, made additive per call.
void masks(Forward& f, Prelude& p, const std::vector<LayerKind>& kinds) {
  const ModelConfig& m = f.r.m;
  if (m.alibi_mask) return falcon_alibi_mask(f, p);
  if (m.attention_cache_window > 0) return griffin_mask(f, p);  // RecurrentGemma's own _update_causal_mask
  const bool any_sliding = std::any_of(kinds.begin(), kinds.end(), [](LayerKind k) { return k.sliding; });
  const bool any_full = std::any_of(kinds.begin(), kinds.end(), [](LayerKind k) { return !k.sliding; });
  const bool eager = attention_path(m, f.r.o) == AttentionPath::Eager;
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
    if (eager) {  // eager_mask: sdpa_mask's expanded bool mask, then torch.where (masking_utils.py:585-604)
      const u64 bool_mask = f.s.alloc(batched);
      f.s.free(cond);
      u64 additive = f.s.alloc(mul(batched, f.r.w.weight));
      f.s.free(bool_mask);
      if (m.family == Family::Mpt) {  // MptModel.forward: create_causal_mask(...).to(torch.bool)
        const u64 again = f.s.alloc(batched);
        f.s.free(additive);
        additive = again;
      }
      p.held.push_back(additive);
      continue;
    }
    const u64 bool_mask = f.s.alloc(batched);
    f.s.free(cond);
    f.sliding_bool_mask = bool_mask;
    p.held.push_back(bool_mask);
  }
}

// The end of a layer for the probabilities it kept (`held`): BLOOM's and GPT-J's blocks return them and
// the model's loop holds that tuple until the next block returns (inference; trace 026-bloom-m of
// 2026-12-01-b frees each layer's probabilities after the next layer's MLP). Otherwise they go now.
void let_go_of_weights(Forward& f, u64 held) {
  const Family fam = f.r.m.family;
  if (f.train || held == 0 || (fam != Family::Bloom && fam != Family::Mpt && !gptj_style(fam))) return f.drop(held);
  f.s.free(f.returned_weights);
  f.returned_weights = held;
}

// The parallel layers (Phi, Falcon, GPT-NeoX): attention and MLP read the same input (one norm, or
// Falcon 40B's ln_attn and ln_mlp made first, or GPT-NeoX's second norm after attention); the
// sum with the residual (Falcon adds the two outputs in place).
u64 parallel_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size;
  u64 held = 0, n_mlp = 0;
  u64 n_attn = norm(f, x, h, f.wide);
  if (!m.shared_norm && m.family == Family::Falcon) n_mlp = norm(f, x, h, f.wide);
  u64 a = attention(f, kind, n_attn, f.amp, cache, held);
  a = dropout(f, a, h, f.act, m.residual_dropout);
  if (!m.shared_norm && n_mlp == 0) {
    f.drop(n_attn), n_attn = 0;
    n_mlp = norm(f, x, h, f.wide);
  }
  u64 mo = mlp(f, kind, n_mlp != 0 ? n_mlp : n_attn, f.amp);
  mo = dropout(f, mo, h, f.act, m.residual_dropout);
  if (m.family == Family::GptNeox) f.drop(n_mlp), n_mlp = 0;
  const u64 partial = m.family == Family::Falcon ? 0 : f.s.alloc(f.bytes(h, f.wide));
  const u64 out = f.s.alloc(f.bytes(h, f.wide));
  for (u64 id : {partial, n_attn, n_mlp, a, mo}) f.drop(id);
  let_go_of_weights(f, held);
  return out;
}

// One residual branch of a sequential layer: its norm first (not for OLMo 2's norms-after-only),
// the block, the residual dropout, and the norm after it (Gemma's sandwich, OLMo 2); the branch's output.
// `hold`: inference keeps the norm's output to the layer's return (Dinov2Layer's hidden_states_norm local).
template <class Block>
u64 residual_branch(Forward& f, u64 x, Block&& block, bool hold = false) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size;
  u64 y = 0;
  if (m.post_norms_only) {
    y = block(x);
  } else {
    const u64 n = norm(f, x, h, f.wide);
    y = block(n);
    if (hold && !f.train) f.layer_locals.push_back(n);
    else f.drop(n);
  }
  y = dropout(f, y, h, f.act, m.residual_dropout);
  if (m.enc.layer_scale) {  // DINOv2 / BEiT: the branch times its layer scale (mul saves the branch for lambda's gradient)
    if (f.weights_train()) f.keep(y);
    const u64 scaled = f.s.alloc(f.bytes(h, f.act));
    f.drop(y), y = scaled;
  }
  if (m.sandwich_norms || m.post_norms_only) {
    const u64 post = norm(f, y, h, f.act);
    f.drop(y), y = post;
  }
  return y;
}

// OPT (positions: an embedding lookup of cumsum's ids, project_in, their sum) and BLOOM (the
// embeddings' LayerNorm): the embeddings stay referenced to the model's end (OPTDecoder's
// inputs_embeds and pos_embeds, BloomModel's inputs_embeds), the layers read the sum or the norm.
void embeddings_of_families(Forward& f, Prelude& p) {
  const ModelConfig& m = f.r.m;
  const u64 width = f.r.w.weight, h = m.hidden_size;
  p.held.push_back(p.hidden);
  if (m.embed_norm) {
    p.hidden = norm(f, p.hidden, h, width);
    return;
  }
  if (m.scaled_embeddings) {  // BioGptScaledWordEmbedding: the lookup times embed_scale (the lookup freed)
    const u64 scaled = f.s.alloc(f.bytes(h, width));
    f.s.free(p.hidden), p.held.back() = p.hidden = scaled;
  }
  const u64 ids = f.s.alloc(mul(mul(f.batch, f.q_len), 8));  // cumsum(attention_mask) as positions
  const u64 positions = f.s.alloc(f.bytes(h, width));
  f.s.free(ids);
  p.held.push_back(positions);
  u64 embeds = p.hidden;
  if (m.embed_proj_dim > 0) embeds = linear(f, p.hidden, m.embed_proj_dim, h, false, "project_in"), p.held.push_back(embeds);
  p.hidden = f.s.alloc(f.bytes(h, width));
}

}  // namespace

Forward::Forward(Tape& tape, const Run& run) : s(tape), r(run) {
  batch = run.o.batch, q_len = kv_len = run.o.seq;
  act = run.w.act, wide = run.w.wide, amp = run.w.amp;
  quantized = effective_quant(run.m, run.o).method != QuantMethod::None;
  cast_at_call = amp && trains(run.o);
  casts_cached = run.m.family != Family::Falcon;  // FalconLinear: input @ self.weight.T
}

std::vector<LayerKind> layer_order(const ModelConfig& m) {
  std::vector<LayerKind> kinds;
  if (m.kind == ModelKind::EncoderDecoder) {  // the encoder's layers, then the decoder's
    kinds.assign(m.enc.encoder_layers, LayerKind{});
    for (u64 i = 1; m.enc.stagger_blocks && i < kinds.size(); i += 2) kinds[i].shifted = true;  // Pegasus-X's staggered blocks
    kinds.insert(kinds.end(), m.num_layers, LayerKind{false, false, false, true});
    if (m.family == Family::Bart) {  // NLLB-MoE: a stack's layer i has the experts when (i + 1) % step == 0
      const u64 E = m.enc.encoder_layers;
      for (auto [first, layers, sparse] : {std::tuple{u64{0}, E, m.enc.sparse_encoder_layers},
                                           std::tuple{E, m.num_layers, m.enc.sparse_decoder_layers}}) {
        const u64 step = sparse > 0 ? layers / sparse : 0;
        for (u64 i = 0; step > 0 && i < layers; ++i) kinds[first + i].routed = (i + 1) % step == 0;
      }
    }
    return kinds;
  }
  if (m.family == Family::Swin) {  // each stage's blocks (swin_layer runs them at the stage's widths)
    for (std::size_t s = 0; s < m.enc.stage_depths.size(); ++s) {
      for (u64 i = 0; i < m.enc.stage_depths[s]; ++i) {
        LayerKind k{};
        k.stage = static_cast<std::uint8_t>(s), k.shifted = i % 2 == 1, k.stage_end = i + 1 == m.enc.stage_depths[s];
        kinds.push_back(k);
      }
    }
    return kinds;
  }
  if (!m.enc.pooled_blocks.empty()) return funnel_layer_order(m);  // Funnel's pooled blocks, its decoder
  if (m.enc.hash_functions > 0) return canine_layer_order(m);  // CANINE's character and molecule stacks
  const u64 dense = m.num_experts > 0 ? m.dense_layers : m.num_layers;
  const bool listed = m.layer_sliding.size() == m.num_layers;
  for (u64 i = 0; i < m.num_layers; ++i) {
    const bool sliding = m.sliding_window > 0 && (listed ? m.layer_sliding[i] : m.sliding_layers >= m.num_layers);
    kinds.push_back({i >= dense, sliding, i < m.layer_nope.size() && m.layer_nope[i]});
    if (i < m.layer_moe.size()) kinds.back().moe = m.layer_moe[i];        // Jamba's expert_layer_period
    if (i < m.layer_mixer.size()) kinds.back().mixer = m.layer_mixer[i];  // a hybrid's (hybrid_config.cpp)
  }
  return kinds;
}

Prelude prelude(Forward& f, const std::vector<LayerKind>& kinds, u64 workspace) {
  const ModelConfig& m = f.r.m;
  Prelude p;
  const u64 width = f.r.w.weight;  // the embedding's dtype (fp32 weights under autocast)
  p.hidden = f.s.alloc(f.bytes(m.embed_proj_dim > 0 ? m.embed_proj_dim : m.hidden_size, width));
  if (m.family == Family::Xglm) {
    xglm_embeddings(f, p);
  } else if (m.position_offset > 0 || m.embed_norm) {
    embeddings_of_families(f, p);
  } else if (m.family == Family::Gemma || m.family == Family::Gemma2 || m.family == Family::Gemma3 || m.scaled_embeddings) {
    const u64 scaled = f.s.alloc(f.bytes(m.hidden_size, width));  // embeddings * sqrt(hidden_size)
    f.s.free(p.hidden), p.hidden = scaled;
  } else if (gpt2_style(m.family)) {  // + position embeddings, then the embeddings' dropout
    // wpe(position_ids): without position_ids the model's cache_position.unsqueeze(0), one row for the batch;
    // generate() passes its own, one row per sequence (prepare_inputs_for_generation, from the attention mask)
    const u64 rows = f.r.o.new_tokens > 0 ? f.tokens() : f.q_len;
    const u64 positions = f.s.alloc(mul(rows, mul(m.hidden_size, width))), sum = f.s.alloc(f.bytes(m.hidden_size, width));
    // GPTBigCodeModel.forward and GPT2Model.forward keep inputs_embeds and position_embeds (locals) to their end
    // (trace 033-bigcode-1b of 2026-12-02; modeling_gpt2.py GPT2Model.forward)
    p.held.push_back(positions), p.held.push_back(p.hidden);
    p.hidden = dropout(f, sum, m.hidden_size, width, m.residual_dropout);
  }
  if (m.family != Family::Mamba) masks(f, p, kinds);  // MambaModel: no causal mask (the scan is causal)
  if (m.rotary_dims > 0 || m.alibi_mask) rotary_tables(f, p, workspace);
  if (workspace != 0) f.s.alloc(workspace, Use::Workspace);
  return p;
}

// Pre-norm layers (Llama), sandwich norms (Gemma 2/3), norms after the sublayers only (OLMo 2):
// attention, the residual sum, the MLP, the second sum; or the parallel form above.
u64 decoder_layer(Forward& f, LayerKind kind, u64 x, CacheIds& cache) {
  const ModelConfig& m = f.r.m;
  if (m.family == Family::T5) return t5_block(f, kind, x, cache);
  if (m.family == Family::Swin) return swin_layer(f, kind, x);
  if (m.family == Family::Mamba) return m.ssm.heads != 0 ? mamba2_block(f, x, cache) : mamba_block(f, x, cache);
  if (m.enc.fourier_mixing) return fourier_layer(f, kind, x);  // FNet
  if (!m.enc.pooled_blocks.empty()) return funnel_layer(f, kind, x);  // Funnel
  if (m.enc.hash_functions > 0) return canine_layer(f, kind, x);  // CANINE
  if (kind.mixer == Mixer::Parallel) return parallel_mixer_layer(f, kind, x, cache);  // Falcon-H1
  if (m.parallel_residual) return parallel_layer(f, kind, x, cache);
  if (m.post_norm) return post_norm_layer(f, kind, x, cache);
  if (m.family == Family::Falcon) return falcon_sequential_layer(f, kind, x, cache);
  const u64 h = m.hidden_size, wide = f.wide;
  u64 held = 0;
  // DINOv2's layer holds its norm1 output and the (scaled) attention output in locals to its return
  const bool hold = m.enc.attention_locals_held && !f.train;
  u64 a = residual_branch(f, x, [&](u64 in) {
    return kind.mixer == Mixer::Attention ? attention(f, kind, in, f.amp, cache, held) : mixer_block(f, kind, in, cache);
  }, hold);
  const u64 x2 = residual_sum(f, f.bytes(h, wide));
  if (hold) f.layer_locals.push_back(a);
  else f.drop(a);
  f.drop(f.after_residual);
  u64 x3 = x2;
  if (kind.cross) {  // an encoder-decoder's decoder layer: cross-attention to the encoder's output
    const u64 c = residual_branch(f, x2, [&](u64 in) { return cross_attention(f, in, f.memory, f.memory_tokens); });
    x3 = f.s.alloc(f.bytes(h, wide));
    f.drop(c), f.drop(x2);
  }
  u64 mo = residual_branch(f, x3, [&](u64 in) { return mlp(f, kind, in, f.amp); });
  const u64 out = residual_sum(f, f.bytes(h, wide));
  f.drop(mo), f.drop(x3);
  let_go_of_weights(f, held);
  f.drop(f.layer_locals);
  return out;
}

// One layer's forward with autograd recording: under autocast the 16-bit copies of the weights no
// Linear call makes (router, experts) first (saved; each Linear makes its own at the call), then
// the layer op by op. `saved` receives what autograd keeps; the cache entries it does not keep go
// to `cache` (DynamicCache holds them to the forward's end).
u64 recorded_layer(Forward& f, const std::vector<u64>& casts, LayerKind kind, u64 x, std::vector<u64>& saved,
                   std::vector<u64>& cache) {
  f.train = true;
  for (u64 b : casts) f.keep(f.s.alloc(b, Use::Cast));
  CacheIds entries{0, 0};
  const u64 out = decoder_layer(f, kind, x, entries);
  for (u64 id : entries) {
    if (id != 0 && !f.kept(id)) cache.push_back(id);
  }
  saved = f.take_saved();
  return out;
}

// A checkpointed layer's forward: nothing saved (its input is the checkpoint). The autocast copies
// stay in autocast's cache (grad mode is on under non-reentrant checkpointing) until autocast exits.
u64 checkpointed_layer(Forward& f, const std::vector<u64>& layer_casts, LayerKind kind, u64 x) {
  f.train = false;
  for (u64 b : layer_casts) f.autocast_cache.push_back(f.s.alloc(b, Use::Cast));
  CacheIds cache{0, 0};
  return decoder_layer(f, kind, x, cache);
}

// The final norm and lm_head's input (cast to 16 bit under autocast, saved when lm_head trains),
// lm_head's autocast copy; frees the last layer's output unless saved. Returns the saved tensors.
std::vector<u64> record_head(Forward& f, u64 x, u64 lm_head_cast) {
  f.train = true;
  const ModelConfig& m = f.r.m;
  const u64 normed = !final_norm_over_tokens(m) ? x : norm(f, x, f.hidden_width(), f.wide);  // OPT-350m, BERT: no final norm
  u64 in = head_input(f, normed);
  u64 rows = f.tokens();
  if (m.kind != ModelKind::Decoder) rows = task_head(f, normed, in) / std::max<u64>(head_outputs(m), 1);
  const u64 width = m.embed_proj_dim > 0 ? m.embed_proj_dim : f.hidden_width();
  if (f.weights_train()) f.keep(f.amp ? f.s.alloc(saturating_mul(rows, width * 2)) : in);  // lm_head's input
  f.keep(f.s.alloc(lm_head_cast, Use::Cast));
  if (in != normed) f.drop(in);
  if (normed != x) f.drop(normed);
  if (!f.kept(x)) f.s.free(x);
  return f.take_saved();
}

u64 head_input(Forward& f, u64 normed) {
  const ModelConfig& m = f.r.m;
  if (m.embed_proj_dim == 0) return normed;
  return linear(f, normed, m.hidden_size, m.embed_proj_dim, f.amp, "project_out");  // OPT: hidden -> word_embed_proj_dim
}

}  // namespace vramdoc::estimator::detail
