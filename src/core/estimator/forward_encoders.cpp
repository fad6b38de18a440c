// A forward op by op (see forward_ops.hpp) for the models with an encoder: their embeddings (text,
// patches, Whisper's conv stem), a decoder layer's cross-attention, and the heads of the tasks
// (--task). Their layers are the decoder's ops with the family's traits (encoder_traits.cpp): BERT's
// post-norm, ViT's pre-norm, no RoPE, no cache in the encoder, no causal mask.
#include <algorithm>

#include "core/estimator/encoders.hpp"
#include "core/estimator/forward_ops.hpp"

namespace vramdoc::estimator::detail {

namespace {

u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// ViT: the pixels (the caller's input, made once and alive throughout; under autocast cast to 16 bit for the conv),
// the patch projection, the class token concatenated, the positions added. Whisper: two convs with
// gelu (each saved), the positions added. `tokens` of hidden_size go to the layers.
void vision_or_audio(Forward& f, Prelude& p) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, in_w = f.r.w.weight;
  const bool whisper = m.family == Family::Whisper;
  const u64 pixels = whisper ? mul(mul(f.batch, m.enc.mel_bins), 2 * m.enc.source_positions)
                             : mul(mul(f.batch, m.enc.channels), mul(f.r.o.image_size ? f.r.o.image_size : m.enc.image_size,
                                                                      f.r.o.image_size ? f.r.o.image_size : m.enc.image_size));
  if (f.pixels == 0) f.pixels = f.s.alloc(mul(pixels, in_w));  // made once, before the first step
  const u64 cast = f.amp ? f.s.alloc(mul(pixels, 2)) : 0;
  f.keep(cast);
  if (whisper) {  // conv1 over 2 x positions frames, gelu, conv2 (stride 2), gelu
    const u64 c1 = f.s.alloc(f.bytes(2 * h, f.act)), g1 = f.s.alloc(f.bytes(2 * h, f.act));
    f.keep(c1), f.keep(g1);
    f.drop(c1);
    const u64 c2 = f.s.alloc(f.bytes(h, f.act)), g2 = f.s.alloc(f.bytes(h, f.act));
    f.keep(c2);
    f.drop(g1), f.drop(c2);
    p.hidden = f.s.alloc(f.bytes(h, std::max(f.act, in_w)));  // + embed_positions
    f.drop(g2);
  } else {
    const u64 conv = f.s.alloc(f.bytes(h, f.act)), cat = f.s.alloc(f.bytes(h, f.act));
    f.drop(conv);
    p.hidden = f.s.alloc(f.bytes(h, std::max(f.act, in_w)));  // + position_embeddings
    f.drop(cat);
  }
  f.drop(cast);
  if (m.enc.pre_layernorm) {  // CLIPVisionTransformer.forward: hidden_states = self.pre_layrnorm(embeddings)
    const u64 n = norm(f, p.hidden, h, std::max(f.act, in_w));
    f.drop(p.hidden);
    p.hidden = n;
  }
}

// MarkupLM's XPathEmbeddings.forward (modeling_markuplm.py): max_depth tag and subscript lookups (each list alive to
// its torch.cat), the two cats, their sum (xpath_unitseq2_inner's input, saved), the inner Linear to 4 x hidden,
// ReLU (its output saved), dropout (mask; its output saved by inner2emb), inner2emb's output: one more table summed
// into the embeddings.
u64 xpath_embeddings(Forward& f, u64 width) {
  const ModelConfig& m = f.r.m;
  const u64 h = m.hidden_size, units = mul(m.enc.xpath_depth, m.enc.xpath_unit);
  std::vector<u64> lookups;
  for (u64 i = 0; i < 2 * m.enc.xpath_depth; ++i) lookups.push_back(f.s.alloc(f.bytes(m.enc.xpath_unit, width)));
  const u64 tags = f.s.alloc(f.bytes(units, width)), subs = f.s.alloc(f.bytes(units, width));
  f.s.free(lookups);
  const u64 sum = f.s.alloc(f.bytes(units, width));
  f.s.free(tags), f.s.free(subs);
  const u64 inner = linear(f, sum, units, 4 * h, false, "xpath_unitseq2_inner");
  f.drop(sum);
  const u64 relu = f.s.alloc(f.bytes(4 * h, f.act));
  f.keep(relu);
  f.drop(inner);
  const u64 dropped = dropout(f, relu, 4 * h, f.act, m.residual_dropout);
  const u64 out = linear(f, dropped, 4 * h, h, false, "inner2emb");
  f.drop(dropped), f.drop(relu);
  return out;
}

// RoCBertEmbeddings.forward with concat_input (modeling_roc_bert.py): the word lookup (a local to the return),
// torch.clone of it, each used table's lookup (ids default to zeros; locals to the return) concatenated on (each cat
// replaces the last), map_inputs_layer on the concatenation (saved): its output, to which the token types and
// positions are added in place.
u64 concatenated_inputs(Forward& f, u64 word, u64 width) {
  const ModelConfig& m = f.r.m;
  u64 in = f.s.alloc(f.bytes(m.hidden_size, width)), in_w = m.hidden_size;  // torch.clone(inputs_embeds)
  std::vector<u64> lookups = {word};
  const std::pair<bool, u64> tables[] = {{m.enc.shape_used, m.enc.shape_embed}, {m.enc.pronunciation_used, m.enc.pronunciation_embed}};
  for (const auto& [used, table_w] : tables) {
    if (!used) continue;
    lookups.push_back(f.s.alloc(f.bytes(table_w, width)));
    in_w += table_w;
    const u64 cat = f.s.alloc(f.bytes(in_w, width));
    f.drop(in);
    in = cat;
  }
  const u64 mapped = linear(f, in, in_w, m.hidden_size, false, "map_inputs_layer");
  f.drop(in);
  f.s.free(lookups);
  return mapped;
}

// LayoutLMv3TextEmbeddings.calculate_spatial_position_embeddings: the six lookups (x and y coordinate_size wide,
// h and w shape_size; the clipped differences are int64 batch x seq), concatenated.
u64 layout_spatial(Forward& f, u64 width) {
  const EncoderParts& e = f.r.m.enc;
  std::vector<u64> parts;
  for (int i = 0; i < 6; ++i) parts.push_back(f.s.alloc(f.bytes(i < 4 ? e.layout_coordinate : e.layout_shape, width)));
  const u64 cat = f.s.alloc(f.bytes(4 * e.layout_coordinate + 2 * e.layout_shape, width));
  f.s.free(parts);
  return cat;
}

// LayoutLMv3Encoder._cal_1d_pos_emb / _cal_2d_pos_emb: per bias an int64 seq x seq difference per sequence,
// relative_position_bucket's int64 and fp32 temporaries (six int64 ones alive at its widest), the weights gathered
// into batch x seq x seq x heads and made contiguous as batch x heads x seq x seq; the x and y biases summed. The
// 1-D bias and the 2-D sum are held to the encoder's end (`held`).
void layout_relative_biases(Forward& f, std::vector<u64>& held) {
  const EncoderParts& e = f.r.m.enc;
  const u64 square = saturating_mul(f.batch, saturating_mul(f.q_len, f.kv_len)), heads = f.r.m.num_heads;
  auto bias = [&]() {
    std::vector<u64> temps;
    for (int i = 0; i < 6; ++i) temps.push_back(f.s.alloc(saturating_mul(square, 8)));
    const u64 gathered = f.s.alloc(f.scores(heads, f.r.w.weight));
    f.s.free(temps);
    const u64 contiguous = f.s.alloc(f.scores(heads, f.r.w.weight));
    f.s.free(gathered);
    return contiguous;
  };
  if (e.rel_1d_bins > 0) held.push_back(bias());
  if (e.rel_2d_bins > 0) {
    const u64 x = bias(), y = bias(), sum = f.s.alloc(f.scores(heads, f.r.w.weight));
    f.s.free(x), f.s.free(y);
    held.push_back(sum);
  }
}

}  // namespace

Prelude encoder_prelude(Forward& f, u64 workspace, bool decoder_side) {
  const ModelConfig& m = f.r.m;
  Prelude p;
  if (workspace != 0) f.s.alloc(workspace, Use::Workspace);
  if (!decoder_side && (m.kind == ModelKind::Vision || m.family == Family::Whisper)) {
    vision_or_audio(f, p);
    return p;
  }
  const u64 width = f.r.w.weight;
  const u64 h = !decoder_side && m.enc.embedding_size > 0 ? m.enc.embedding_size : m.hidden_size;
  // word embeddings, then each added table (positions, token types), the embeddings' norm, dropout
  // (and ELECTRA's embeddings_project to the hidden size)
  u64 x = f.s.alloc(f.bytes(h, width));
  const bool concatenated = !decoder_side && m.enc.concat_width > 0;  // RoCBert: the tables below added in place
  if (concatenated) x = concatenated_inputs(f, x, width);
  const bool positions = m.kind == ModelKind::Encoder || (m.kind == ModelKind::EncoderDecoder && m.family != Family::T5);
  // (DeBERTa's relative positions and RoPE encoders' rotations add no table)
  const int tables = (positions ? 1 : 0) + (m.enc.type_vocab > 0 && !decoder_side ? 1 : 0) -
                     (m.family == Family::DebertaV2 || (m.kind == ModelKind::Encoder && m.rotary_dims > 0) ? 1 : 0);
  // LayoutLM: left, upper, right, lower, h, w added one by one (LayoutLMv3: concatenated, layout_spatial)
  const int layout = !decoder_side && m.enc.layout_positions > 0 && m.enc.layout_coordinate == 0 ? 6 : 0;
  // An encoder's embeddings module (BertEmbeddings.forward and its copies) holds inputs_embeds and each table's
  // lookup in locals to its return, after the norm and dropout; only the running sum is rebound (the XLM-R
  // inference trace of 2026-12-03: five batch x seq x hidden blocks live at once before the LayerNorm)
  const bool locals = f.r.o.mode == Mode::Infer && m.kind == ModelKind::Encoder && !decoder_side && !concatenated && layout == 0 &&
                      m.enc.layout_coordinate == 0 && m.enc.xpath_depth == 0;
  std::vector<u64> embedding_locals;
  if (locals && tables > 0) embedding_locals.push_back(x);
  for (int i = 0; i < tables + layout; ++i) {
    const u64 table = f.s.alloc(f.bytes(h, width));
    if (concatenated) {
      f.s.free(table);
      continue;
    }
    const u64 sum = f.s.alloc(f.bytes(h, width));
    if (locals) {
      embedding_locals.push_back(table);
      if (i > 0) f.drop(x);
    } else {
      f.s.free(table), f.drop(x);
    }
    x = sum;
  }
  if (!decoder_side && m.enc.layout_coordinate > 0) {  // LayoutLMv3: + calculate_spatial_position_embeddings(bbox)
    const u64 spatial = layout_spatial(f, width), sum = f.s.alloc(f.bytes(h, width));
    f.s.free(spatial), f.drop(x);
    x = sum;
  }
  if (!decoder_side && m.enc.xpath_depth > 0) {  // MarkupLM: + xpath_embeddings
    const u64 xpath = xpath_embeddings(f, width), sum = f.s.alloc(f.bytes(h, std::max(width, f.act)));
    f.drop(xpath), f.drop(x);
    x = sum;
  }
  if (m.kind == ModelKind::Encoder || m.embed_norm) {
    const u64 n = norm(f, x, h, width);
    f.drop(x);
    x = n;
  }
  if (!decoder_side && m.enc.embeddings_projection) {  // FNetEmbeddings.projection after the LayerNorm
    const u64 projected = linear(f, x, h, h, false, "embeddings.projection");
    f.drop(x);
    x = projected;
  }
  p.hidden = dropout(f, x, h, width, m.residual_dropout);
  for (u64 id : embedding_locals) f.drop(id);
  if (!decoder_side && m.enc.batched_position_bias) {  // MPNet: buckets (int64, seq x seq), their lookup, expanded
    const u64 square = saturating_mul(f.q_len, f.kv_len), buckets = f.s.alloc(saturating_mul(square, 8));
    const u64 lookup = f.s.alloc(saturating_mul(square, saturating_mul(m.num_heads, width)));
    f.position_bias = f.s.alloc(f.scores(m.num_heads, width));  // held to the encoder's end
    f.s.free(lookup), f.s.free(buckets);
  }
  if (!decoder_side && (m.enc.rel_1d_bins > 0 || m.enc.rel_2d_bins > 0)) layout_relative_biases(f, p.held);
  if (!decoder_side && m.sliding_window > 0 && f.q_len > m.sliding_window) {
    // a bidirectional window (ModernBERT's sliding layers): one seq x seq bool mask, held to the model's end
    // (masking_utils; SDPA makes it additive per call: fused_kernel)
    const u64 mask = f.s.alloc(saturating_mul(f.q_len, f.kv_len));
    f.sliding_bool_mask = mask;
    p.held.push_back(mask);
  }
  if (h != m.hidden_size) {  // ELECTRA's model holds the projection (embedding_output rebound), ALBERT's the embeddings
    const u64 projected = linear(f, p.hidden, h, m.hidden_size, false, "embeddings_project");
    if (m.enc.project_in_encoder) p.held.push_back(p.hidden), p.hold_first_input = false;
    else f.drop(p.hidden);
    p.hidden = projected;
  }
  return p;
}

u64 cross_attention(Forward& f, u64 x, u64 memory, u64 memory_tokens) {
  const ModelConfig& m = f.r.m;
  const LayerDims d = layer_dims(f.r);
  const char* q_name = m.family == Family::T5 ? "q" : "q_proj";
  const u64 q = linear(f, x, d.h, d.q, false, std::string("encoder_attn.") + q_name);
  const u64 q_len = f.q_len;
  f.q_len = memory_tokens;  // keys and values over the encoder's tokens
  const u64 k = linear(f, memory, d.h, d.kv, false, m.family == Family::T5 ? "encoder_attn.k" : "encoder_attn.k_proj");
  const u64 v = linear(f, memory, d.h, d.kv, false, m.family == Family::T5 ? "encoder_attn.v" : "encoder_attn.v_proj");
  f.q_len = q_len;
  u64 kc = k, vc = v;
  if (f.use_cache) {  // EncoderDecoderCache's cross-attention update: torch.cat onto an empty tensor, copies
    kc = f.s.alloc(saturating_mul(saturating_mul(f.batch, memory_tokens), mul(d.kv, f.act)), Use::Cache);
    vc = f.s.alloc(saturating_mul(saturating_mul(f.batch, memory_tokens), mul(d.kv, f.act)), Use::Cache);
    f.cross_cache.push_back(kc), f.cross_cache.push_back(vc);
    f.drop(k), f.drop(v);
  }
  f.keep(q), f.keep(kc), f.keep(vc);
  const u64 out = f.s.alloc(f.bytes(d.q, f.act));
  f.keep(out);
  const u64 contiguous = f.s.alloc(f.bytes(d.q, f.act));
  f.drop(out);
  const u64 o = linear(f, contiguous, d.q, d.h, false, m.family == Family::T5 ? "encoder_attn.o" : "encoder_attn.out_proj");
  f.drop(contiguous), f.drop(q);
  if (!f.use_cache) f.drop(k), f.drop(v);
  return o;
}

u64 to_decoder(Forward& f, Prelude& p, u64 x) {
  const ModelConfig& m = f.r.m;
  u64 memory = x;
  if (!m.post_norm) {  // T5's final_layer_norm (and dropout), Whisper's layer_norm, mBART's
    memory = norm(f, x, m.hidden_size, f.wide);
    if (!f.kept(x)) f.s.free(x);
    if (m.family == Family::T5) memory = dropout(f, memory, m.hidden_size, f.wide, m.residual_dropout);
  }
  // the encoder returns: its embeddings' output and its position bias (T5) go; its output is the
  // model output's encoder_last_hidden_state, alive to the step's end (f.memory)
  for (u64 id : p.held) f.drop(id);
  p.held.clear();
  f.drop(f.position_bias), f.position_bias = 0;
  if (!f.train && f.r.o.new_tokens > 0 && m.enc.beams > 1) {
    // generate() with the config's num_beams: beam search's _expand_inputs_for_generation repeats the encoder's output
    // per beam (index_select: a copy; the model output's tensor is replaced by it), and the decoder runs on batch x beams
    const u64 expanded = f.s.alloc(saturating_mul(f.s.bytes_of(memory), m.enc.beams));
    if (!f.kept(memory)) f.s.free(memory);
    memory = expanded, f.batch = saturating_mul(f.batch, m.enc.beams);
  }
  f.memory = memory, f.memory_tokens = f.q_len;
  f.q_len = f.kv_len = saturating_mul(f.r.o.target_seq > 0 ? f.r.o.target_seq : 128, 1 + m.enc.ngram);  // ProphetNet's streams
  Prelude dec = encoder_prelude(f, 0, true);
  p.held = dec.held;
  if (!f.train) f.stack_input = dec.hidden;  // held by the decoder until it returns
  return dec.hidden;
}

namespace {

// The logits' elements and whether the task's loss upcasts them (loss_shape).
LossShape task_loss_shape(const Run& r) {
  const ModelConfig& m = r.m;
  const u64 b = r.o.batch, tokens = mul(b, r.o.seq), target = r.o.target_seq > 0 ? r.o.target_seq : 128;
  switch (r.o.task) {
    case Task::CausalLm: return {mul(r.o.logits_last_only ? b : tokens, m.vocab_size), true};
    case Task::Mlm: return {mul(tokens, m.vocab_size), m.enc.mlm_loss_fp32};
    case Task::TokenCls: return {mul(tokens, m.enc.labels), true};
    case Task::SeqCls:
    case Task::ImageCls: return {mul(b, m.enc.labels), true};
    case Task::Seq2Seq:
    // ProphetNet: lm_head on the ngram predicting streams, _compute_loss's log_softmax(dtype=float32) over all of them
    case Task::SpeechSeq2Seq: return {mul(mul(mul(b, target), std::max<u64>(m.enc.ngram, 1)), m.vocab_size), m.enc.ngram > 0};
  }
  return {tokens, true};
}

}  // namespace

LossShape loss_shape(const Run& r) {
  LossShape loss = task_loss_shape(r);
  loss.autocast_nll = r.w.amp && !loss.fp32 && !r.m.enc.logits_bias;  // BART's sum with its fp32 bias: an fp32 input
  return loss;
}

u64 head_outputs(const ModelConfig& m) {
  return m.kind == ModelKind::Decoder || m.task == Task::Mlm || m.kind == ModelKind::EncoderDecoder ? m.vocab_size : m.enc.labels;
}

HeadShape head_shape(const Run& r) {
  const ModelConfig& m = r.m;
  HeadShape h;
  h.width = m.hidden_size, h.tokens = mul(r.o.batch, r.o.seq);
  if (m.kind == ModelKind::EncoderDecoder) h.tokens = mul(mul(r.o.batch, r.o.target_seq > 0 ? r.o.target_seq : 128), 1 + m.enc.ngram);
  if (m.family == Family::Swin && !m.enc.stage_depths.empty()) {  // the last stage's tokens and width
    const std::size_t last = m.enc.stage_depths.size() - 1;
    u64 side = std::max<u64>((r.o.image_size ? r.o.image_size : m.enc.image_size) / std::max<u64>(m.enc.patch_size, 1), 1);
    for (std::size_t i = 0; i < last; ++i) side = (side + 1) / 2;
    h.tokens = mul(r.o.batch, mul(side, side)), h.width = m.hidden_size << last;
  }
  const LossShape loss = loss_shape(r);
  h.rows = loss.elements / std::max<u64>(head_outputs(m), 1);
  if (m.embed_proj_dim > 0) h.width = m.embed_proj_dim;
  if (m.task == Task::Mlm) h.width = mlm_width(m);  // ELECTRA's generator head, RemBERT's output_embedding_size
  return h;
}

u64 task_head(Forward& f, u64 x, u64& logits_input) {
  const ModelConfig& m = f.r.m;
  const u64 h = f.hidden_width();
  logits_input = x;
  switch (m.task) {
    case Task::Mlm: {  // transform: dense, gelu (saves its input), LayerNorm; then the decoder on every token
      if (!m.enc.mlm_transform) return mul(f.tokens(), m.vocab_size);  // Funnel: lm_head on the last hidden state
      const u64 e = mlm_width(m);  // ELECTRA: back to the embeddings' width; RemBERT: output_embedding_size
      const u64 dense = linear(f, x, h, e, false, "transform.dense"), act = f.s.alloc(f.bytes(e, f.act));
      f.keep(dense);
      const u64 n = norm(f, act, e, f.act);
      f.drop(dense), f.drop(act);
      logits_input = n;
      return mul(f.tokens(), m.vocab_size);
    }
    case Task::TokenCls: logits_input = dropout(f, x, h, f.act, m.residual_dropout); return mul(f.tokens(), m.enc.labels);
    case Task::ImageCls:  // the classifier reads the first token of the final norm's output: its view keeps it
      if (m.enc.mean_pooled) return mul(f.batch, m.enc.labels);  // torch.mean(x, dim=1) saves no input
      [[fallthrough]];
    case Task::SeqCls: f.keep(x); return mul(f.batch, m.enc.labels);  // the pooler's view of the first token keeps x
    default:  // seq2seq: lm_head on the decoder's tokens (ProphetNet's: the predicting streams, not the main one)
      return mul(m.enc.ngram > 0 ? f.tokens() / (1 + m.enc.ngram) * m.enc.ngram : f.tokens(), m.vocab_size);
  }
}

}  // namespace vramdoc::estimator::detail
