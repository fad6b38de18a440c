// The weight tensors of encoders, encoder-decoders and vision transformers, as transformers (5.17)
// builds them for the task (AutoModelFor...: the task's head), names as PEFT matches them.
#include <algorithm>

#include "core/estimator/encoders.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using u64 = std::uint64_t;
u64 mul(u64 a, u64 b) { return saturating_mul(a, b); }

// Which layers the tensors being added belong to (LayerSet::All: every layer, or none for count 1).
struct Holder {
  LayerSet set = LayerSet::All;
  std::uint8_t stage = 0;
};

void linear(std::vector<WeightTensor>& w, const std::string& name, u64 in, u64 out, u64 count, bool bias, Holder at = {}) {
  if (count == 0) return;
  w.push_back({name, in, out, count, true, false, true});
  w.back().layers = at.set, w.back().stage = at.stage;
  if (bias) w.push_back({name + ".bias", 1, out, count, false, false, false}), w.back().layers = at.set, w.back().stage = at.stage;
}
void vector(std::vector<WeightTensor>& w, const std::string& name, u64 n, u64 count = 1, Holder at = {}) {
  if (count > 0 && n > 0) w.push_back({name, 1, n, count, false, false, false}), w.back().layers = at.set, w.back().stage = at.stage;
}

// A norm's weights over width h: a LayerNorm's weight and bias (ModernBERT's: no bias), an RMS norm's weight.
u64 norm_width(const ModelConfig& m, u64 h) { return m.norm == NormKind::LayerNorm && m.enc.norm_bias ? 2 * h : h; }

// The names of q, k, v and the attention's output projection per family.
struct AttentionNames {
  const char *q, *k, *v, *o;
};
AttentionNames attention_names(Family f) {
  switch (f) {
    case Family::DistilBert: return {"q_lin", "k_lin", "v_lin", "out_lin"};
    case Family::DebertaV2: return {"query_proj", "key_proj", "value_proj", "attention.output.dense"};
    case Family::Vit:
    case Family::Swin: return {"q_proj", "k_proj", "v_proj", "o_proj"};  // transformers 5 names (modeling_swin.py:411)
    case Family::T5: return {"q", "k", "v", "o"};
    case Family::Bart:
    case Family::Whisper: return {"q_proj", "k_proj", "v_proj", "out_proj"};
    default: return {"query", "key", "value", "attention.output.dense"};
  }
}

// One self-attention (and in a decoder layer of an encoder-decoder, one cross-attention) with its
// norm, and the MLP with its norm, over `count` layers of width h and MLP width inter, held by `at`.
void layer(const ModelConfig& m, std::vector<WeightTensor>& w, u64 count, u64 h, u64 inter, bool cross, u64 heads,
           Holder at = {}) {
  const AttentionNames n = attention_names(m.family);
  const bool bias = m.attention_bias, whisper = m.family == Family::Whisper;
  // T5's attention is num_heads x d_kv wide (mT5 / UMT5: narrower than d_model; modeling_t5.py T5Attention.inner_dim)
  const u64 inner = m.family == Family::T5 ? mul(heads, m.head_dim) : h;
  for (int a = 0; a < (cross ? 2 : 1); ++a) {
    const std::string prefix = a == 0 ? "" : "encoder_attn.";
    if (m.enc.fourier_mixing) {  // FNet: no projections, FNetBasicOutput's LayerNorm
      vector(w, "fourier.output.LayerNorm", norm_width(m, h), count, at);
      continue;
    }
    if (!m.enc.pooled_blocks.empty()) {  // FunnelRelMultiheadAttention: q_head without bias; r_w_bias, r_r_bias,
      // r_s_bias, seg_embed (2 per head), r_kernel (d_model x heads x d_head)
      vector(w, prefix + "attention.relative_biases", mul(5, inner), count, at);
      w.push_back({prefix + "attention.r_kernel", h, inner, count, false, false, false}), w.back().layers = at.set;
    }
    linear(w, prefix + n.q, h, inner, count, bias && m.enc.pooled_blocks.empty(), at);
    // Whisper's, Swin V2's keys: no bias; DeBERTa v1's in_proj none (its q_bias and v_bias stand for q's and v's)
    linear(w, prefix + n.k, h, inner, count, bias && !whisper && !m.enc.cosine_attention && !m.enc.fused_in_proj, at);
    linear(w, prefix + n.v, h, inner, count, bias, at);
    linear(w, prefix + n.o, inner, h, count, m.output_bias, at);
    vector(w, prefix + "attention norm", norm_width(m, h), count, at);
  }
  if (m.enc.landmark_conv > 0) vector(w, "attention.conv", mul(heads, m.enc.landmark_conv), count, at);  // Nystromformer
  if (m.enc.cosine_attention) {  // Swin V2: logit_scale, continuous_position_bias_mlp (Linear(2, 512), Linear(512, heads))
    vector(w, "logit_scale", heads, count, at);
    linear(w, "cpb_mlp.0", 2, 512, count, true, at), linear(w, "cpb_mlp.2", 512, heads, count, false, at);
  } else if (m.family == Family::Swin) {
    vector(w, "relative_position_bias_table", mul((2 * m.enc.window - 1) * (2 * m.enc.window - 1), heads), count, at);
  }
  // Switch Transformers' sparse layers: a router (classifier, no bias by router_bias) and num_experts wi / wo pairs
  const u64 sparse = m.enc.experts == 0 ? 0
                     : std::min(count, at.set == LayerSet::Encoder ? m.enc.sparse_encoder_layers
                                       : at.set == LayerSet::Decoder ? m.enc.sparse_decoder_layers : 0);
  if (sparse > 0) {
    linear(w, "mlp.router.classifier", h, m.enc.experts, sparse, false, at);
    // (NLLB-MoE's NllbMoeDenseActDense experts have biases, Switch's none: the family's MLP bias)
    linear(w, "mlp.experts.wi", h, inter, mul(sparse, m.enc.experts), m.mlp_bias, at);
    linear(w, "mlp.experts.wo", inter, h, mul(sparse, m.enc.experts), m.mlp_bias, at);
  }
  const u64 dense = count - sparse;
  const bool gated_bias = m.enc.gated_ffn && m.fused_gate_up && m.mlp_bias;  // DINOv2's SwiGLU weights_in (T5's none)
  if (m.enc.gated_ffn) linear(w, "wi_0", h, inter, dense, gated_bias, at), linear(w, "wi_1", h, inter, dense, gated_bias, at);
  else linear(w, m.family == Family::T5 ? "wi" : "fc1", h, inter, dense, m.mlp_bias, at);
  linear(w, m.family == Family::T5 ? "wo" : "fc2", inter, h, dense, m.mlp_bias, at);
  vector(w, "mlp norm", norm_width(m, h), count, at);
  if (m.enc.layer_scale) vector(w, "layer_scale", 2 * h, count, at);  // lambda of each branch
}

// Longformer's self-attention (and LED's encoder's) has query_global, key_global and value_global too (with
// bias), used only for tokens with global attention.
void global_projections(const ModelConfig& m, std::vector<WeightTensor>& w, u64 count, Holder at) {
  if (m.enc.attention_window == 0) return;
  for (const char* name : {"query_global", "key_global", "value_global"}) linear(w, name, m.hidden_size, m.hidden_size, count, true, at);
}

// CANINE (modeling_canine.py CanineModel.__init__): CharactersToMolecules' Conv1d (hidden -> hidden, kernel = stride =
// downsampling_rate) and LayerNorm after the initial character layer; ConvProjection's Conv1d (2 x hidden -> hidden,
// upsampling_kernel_size) and LayerNorm before the final character layer. For sequence classification the final
// layer is not one of the estimate's layers (layer_order): it and ConvProjection are the model's, run by the forward
// but never reached by the loss (the classifier reads the deep encoder's pooled output), so no gradient.
void canine_convolutions(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size;
  w.push_back({"chars_to_molecules.conv", mul(h, m.enc.downsampling_rate), h, 1, false, false, false});
  vector(w, "chars_to_molecules.conv.bias", h), vector(w, "chars_to_molecules.LayerNorm", norm_width(m, h));
  const std::size_t tail = w.size();
  w.push_back({"projection.conv", mul(2 * h, m.enc.upsampling_kernel), h, 1, false, false, false});
  vector(w, "projection.conv.bias", h), vector(w, "projection.LayerNorm", norm_width(m, h));
  if (m.task != Task::SeqCls) return;
  layer(m, w, 1, h, m.intermediate_size, false, m.num_heads);  // final_char_encoder's one layer
  for (std::size_t i = tail; i < w.size(); ++i) w[i].gradient = false;
}

// Text encoders (BERT, RoBERTa, DistilBERT, DeBERTa-v2): embeddings, layers, the task's head.
// ELECTRA's embeddings are embedding_size wide, embeddings_project maps them to the hidden size; its
// MLM head maps back (generator_predictions.dense, LayerNorm) to the tied embeddings (modeling_electra.py).
void text_encoder(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, L = m.num_layers, e = m.enc.embedding_size > 0 ? m.enc.embedding_size : h;
  // (CANINE: num_hash_functions tables of num_hash_buckets x e / num_hash_functions, one tensor's bytes here)
  if (m.enc.hash_functions > 0) w.push_back({"embed_tokens", mul(m.vocab_size, m.enc.hash_functions), e / m.enc.hash_functions, 1, false, false, false});
  else w.push_back({"embed_tokens", m.vocab_size, e, 1, false, false, false});
  if (m.enc.position_table) w.push_back({"embed_positions", m.max_positions, e, 1, false, false, false});
  if (m.enc.type_vocab > 0) w.push_back({"token_type_embeddings", m.enc.type_vocab, e, 1, false, false, false});
  // LayoutLM's x / y / h / w position tables; MarkupLM's XPathEmbeddings (max_depth tag and subscript tables, the
  // xpath_unitseq2_embeddings Linear (built, unused by forward), xpath_unitseq2_inner to 4 x hidden, inner2emb back)
  if (m.enc.layout_positions > 0 && m.enc.layout_coordinate > 0) {  // LayoutLMv3: x, y coordinate_size wide, h, w shape_size
    w.push_back({"embeddings.xy_position_embeddings", m.enc.layout_positions, m.enc.layout_coordinate, 2, false, false, false});
    w.push_back({"embeddings.hw_position_embeddings", m.enc.layout_positions, m.enc.layout_shape, 2, false, false, false});
  } else if (m.enc.layout_positions > 0) {
    w.push_back({"embeddings.xywh_position_embeddings", m.enc.layout_positions, e, 4, false, false, false});
  }
  // LayoutLMv3Encoder's bias Linears: only their weights are read, gathered under torch.no_grad() (no gradient)
  if (m.enc.rel_1d_bins > 0) {
    w.push_back({"encoder.rel_pos_bias", m.enc.rel_1d_bins, m.num_heads, 1, false, false, false});
    w.back().gradient = false;
  }
  if (m.enc.rel_2d_bins > 0) {
    w.push_back({"encoder.rel_pos_xy_bias", m.enc.rel_2d_bins, m.num_heads, 2, false, false, false});
    w.back().gradient = false;
  }
  if (m.enc.xpath_depth > 0) {
    const u64 units = mul(m.enc.xpath_depth, m.enc.xpath_unit);
    linear(w, "xpath_unitseq2_embeddings", units, h, 1, true);
    linear(w, "xpath_unitseq2_inner", units, 4 * h, 1, true), linear(w, "inner2emb", 4 * h, h, 1, true);
    w.push_back({"xpath_tag_sub_embeddings", m.enc.xpath_tags, m.enc.xpath_unit, m.enc.xpath_depth, false, false, false});
    w.push_back({"xpath_subs_sub_embeddings", m.enc.xpath_subs, m.enc.xpath_unit, m.enc.xpath_depth, false, false, false});
  }
  // RoCBert: shape_embed and pronunciation_embed (always built), map_inputs_layer (concat_input) from the word width
  // plus each enabled table's (modeling_roc_bert.py RoCBertEmbeddings.__init__)
  if (m.enc.shape_embed > 0) {
    w.push_back({"shape_embed", m.enc.shape_vocab, m.enc.shape_embed, 1, false, false, false});
    w.push_back({"pronunciation_embed", m.enc.pronunciation_vocab, m.enc.pronunciation_embed, 1, false, false, false});
    if (m.enc.concat_width > 0) linear(w, "map_inputs_layer", m.enc.concat_width, h, 1, true);
  }
  // LUKE: LukeEntityEmbeddings (entity_embeddings, entity_embedding_dense where entity_emb_size != hidden_size,
  // positions, token types, LayerNorm) and each layer's w2e / e2w / e2e queries (use_entity_aware_attention), none
  // read without entity_ids: no gradients (modeling_luke.py LukeEntityEmbeddings.__init__, LukeSelfAttention.__init__)
  if (m.enc.entity_vocab > 0) {
    const std::size_t first = w.size();
    w.push_back({"entity_embeddings", m.enc.entity_vocab, m.enc.entity_embed, 1, false, false, false});
    if (m.enc.entity_embed != h) linear(w, "entity_embedding_dense", m.enc.entity_embed, h, 1, false);
    w.push_back({"entity_position_embeddings", m.max_positions, h, 1, false, false, false});
    w.push_back({"entity_token_type_embeddings", std::max<u64>(m.enc.type_vocab, 1), h, 1, false, false, false});
    vector(w, "entity_embeddings.LayerNorm", norm_width(m, h));
    if (m.enc.entity_aware) for (const char* q : {"w2e_query", "e2w_query", "e2e_query"}) linear(w, q, h, h, L, true);
    for (std::size_t i = first; i < w.size(); ++i) w[i].gradient = false;
  }
  if (m.enc.sinusoidal_rotary_table) w.push_back({"embed_positions", m.max_positions, m.head_dim, 1, false, false, false});
  vector(w, "embeddings.LayerNorm", norm_width(m, e));
  if (e != h) linear(w, "embeddings_project", e, h, 1, true);
  if (m.enc.embeddings_projection) linear(w, "embeddings.projection", h, h, 1, true);  // FNet
  // ALBERT's shared layers: their tensors once (the model's, not a layer's: every application reads them)
  layer(m, w, m.enc.shared_layers > 0 ? m.enc.shared_layers : L, h, m.intermediate_size, false, m.num_heads);
  global_projections(m, w, L, {});
  if (m.enc.hash_functions > 0) canine_convolutions(m, w);
  if (!m.post_norm) vector(w, "norm", norm_width(m, h));  // pre-norm layers (ModernBERT): the final norm
  if (m.enc.position_projections) {  // DisentangledSelfAttention.__init__: one per term pos_att_type names
    if (m.enc.c2p) linear(w, "pos_proj", h, h, L, false);
    if (m.enc.p2c) linear(w, "pos_q_proj", h, h, L, true);
  }
  if (m.enc.batched_position_bias) w.push_back({"relative_attention_bias", m.enc.relative_buckets, m.num_heads, 1, false, false, false});
  if (m.family == Family::DebertaV2 && m.enc.relative_attention) {  // DebertaEncoder: rel_embeddings only then
    w.push_back({"rel_embeddings", m.enc.relative_buckets, h, 1, false, false, false});
    if (m.enc.relative_norm) vector(w, "encoder.LayerNorm", 2 * h);
  }
  if (m.task == Task::Mlm) {  // transform (dense, act, LayerNorm), the decoder tied to the embeddings, its bias
    const u64 head = mlm_width(m);  // RemBERT: output_embedding_size
    if (m.enc.mlm_transform) linear(w, "transform.dense", h, head, 1, true), vector(w, "transform.LayerNorm", norm_width(m, head));
    w.push_back({"lm_head", head, m.vocab_size, 1, true, m.tie_word_embeddings, false});
    w.push_back({"lm_head.bias", 1, m.vocab_size, 1, false, false, false});
    if (m.enc.pooler_always) linear(w, "pooler.dense", h, h, 1, true);  // FNetForMaskedLM's FNetModel keeps its pooler
    return;
  }
  if ((m.task == Task::SeqCls && (m.enc.pooler || m.enc.classifier_dense)) || m.enc.pooler_always) linear(w, "pooler.dense", h, h, 1, true);
  w.push_back({"lm_head", h, m.enc.labels, 1, true, false, false});  // the classifier
  w.push_back({"lm_head.bias", 1, m.enc.labels, 1, false, false, false});
}

// ViT: the patch projection (a Conv2d), the class token, positions, pre-norm layers, the final
// norm, the classifier. Swin: stages of layers, each stage's width twice the last, patch merging.
void vision(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, p = m.enc.patch_size, c = m.enc.channels;
  w.push_back({"patch_embeddings", mul(mul(c, p), p), h, 1, true, false, false});
  if (m.enc.patch_bias) vector(w, "patch_embeddings.bias", h);
  if (m.enc.pre_layernorm) vector(w, "pre_layrnorm", 2 * h);  // CLIP (its post_layernorm is "norm" below)
  u64 width = h;
  if (m.family == Family::Vit) {
    const u64 patches = mul(m.enc.image_size / std::max<u64>(p, 1), m.enc.image_size / std::max<u64>(p, 1));
    vector(w, "cls_token", mul(h, m.enc.class_tokens));  // DeiT: the class and the distillation token
    w.push_back({"embed_positions", patches + m.enc.class_tokens, h, 1, false, false, false});
    layer(m, w, m.num_layers, h, m.intermediate_size, false, m.num_heads);
    if (m.enc.attention_pool_head) {  // SiglipMultiheadAttentionPoolingHead: probe, nn.MultiheadAttention, LayerNorm, MLP
      vector(w, "head.probe", h);
      linear(w, "head.attention.in_proj", h, 3 * h, 1, true);
      linear(w, "head.attention.out_proj", h, h, 1, true);
      vector(w, "head.layernorm", 2 * h);
      linear(w, "head.mlp.fc1", h, m.intermediate_size, 1, true);
      linear(w, "head.mlp.fc2", m.intermediate_size, h, 1, true);
    }
  } else {
    vector(w, "embeddings.norm", 2 * h);
    for (std::size_t s = 0; s < m.enc.stage_depths.size(); ++s) {
      layer(m, w, m.enc.stage_depths[s], width, 4 * width, false, m.enc.stage_heads[s], {LayerSet::Stage, static_cast<std::uint8_t>(s)});
      if (s + 1 < m.enc.stage_depths.size()) {  // SwinPatchMerging: norm over 4 x width, reduction to 2 x width
        vector(w, "downsample.norm", m.enc.cosine_attention ? 4 * width : 8 * width);  // Swin V2: the norm after the reduction
        linear(w, "downsample.reduction", 4 * width, 2 * width, 1, false);
        width *= 2;
      }
    }
  }
  vector(w, "norm", 2 * width);
  // Dinov2ForImageClassification: the classifier reads cat(cls, mean of the patches), 2 x hidden; a mask token
  const bool dinov2 = m.model_type == "dinov2";
  if (dinov2) vector(w, "mask_token", h);
  w.push_back({"lm_head", dinov2 ? 2 * width : width, m.enc.labels, 1, true, false, false});
  w.push_back({"lm_head.bias", 1, m.enc.labels, 1, false, false, false});
}

// T5, BART, Whisper: the shared embeddings (Whisper's conv stem and sinusoid-initialised positions),
// the encoder's and the decoder's layers (cross-attention in the decoder's), lm_head.
void encoder_decoder(const ModelConfig& m, std::vector<WeightTensor>& w) {
  const u64 h = m.hidden_size, norm = m.norm == NormKind::LayerNorm ? 2 * h : h;
  w.push_back({"embed_tokens", m.vocab_size, h, 1, false, false, false});
  if (m.enc.source_vocab > 0) w.push_back({"encoder.embed_tokens", m.enc.source_vocab, h, 1, false, false, false});  // FSMT
  if (m.family == Family::Whisper) {
    w.push_back({"conv1", mul(m.enc.mel_bins, 3), h, 1, true, false, false});
    w.push_back({"conv2", mul(h, 3), h, 1, true, false, false});
    vector(w, "conv biases", 2 * h);
    w.push_back({"encoder.embed_positions", m.enc.source_positions, h, 1, false, false, false});
    w.push_back({"embed_positions", m.max_positions, h, 1, false, false, false});
  } else if (m.family == Family::Bart) {
    if (!m.enc.positions_buffer) {
      const u64 source = m.enc.source_positions > 0 ? m.enc.source_positions : m.max_positions + m.position_offset;  // LED's own
      w.push_back({"encoder.embed_positions", source, h, 1, false, false, false});
      w.push_back({"embed_positions", m.max_positions + m.position_offset, h, 1, false, false, false});
    }
    if (m.embed_norm) vector(w, "layernorm_embedding", 2 * norm);
    if (m.enc.global_tokens > 0) w.push_back({"encoder.embed_global", m.enc.global_tokens, h, 1, false, false, false});  // Pegasus-X
  } else {
    w.push_back({"relative_attention_bias", m.enc.relative_buckets, 2 * m.num_heads, 1, false, false, false});
    if (m.enc.global_block_size > 0) {  // LongT5TransientGlobalAttention: the first layer's global bias, a norm each
      w.push_back({"encoder.global_relative_attention_bias", m.enc.relative_buckets, m.num_heads, 1, false, false, false});
      vector(w, "global_input_layer_norm", mul(m.enc.encoder_layers, h));
    }
  }
  layer(m, w, m.enc.encoder_layers, h, m.enc.encoder_ffn, false, m.num_heads, {LayerSet::Encoder});
  global_projections(m, w, m.enc.encoder_layers, {LayerSet::Encoder});
  layer(m, w, m.num_layers, h, m.intermediate_size, true, m.num_heads, {LayerSet::Decoder});
  if (m.enc.ngram > 0) {  // ProphetNet: ProphetNetNgramSelfAttention.relative_pos_embeddings, ProphetNetDecoder.ngram_embeddings
    linear(w, "relative_pos_embeddings", h, mul(m.enc.relative_buckets, m.num_heads), m.num_layers, true, {LayerSet::Decoder});
    w.push_back({"decoder.ngram_embeddings", m.enc.ngram, h, 1, false, false, false});
  }
  if (!m.post_norm) vector(w, "final norms", 2 * norm);  // post-norm stacks (BART, Marian) have none; final_logits_bias is a buffer
  w.push_back({"lm_head", h, m.vocab_size, 1, true, m.tie_word_embeddings, false});
}

}  // namespace

std::uint64_t mlm_width(const ModelConfig& m) {
  if (m.enc.mlm_width > 0) return m.enc.mlm_width;
  return m.enc.embedding_size > 0 ? m.enc.embedding_size : m.hidden_size;
}

void add_encoder_weights(const ModelConfig& m, std::vector<WeightTensor>& w) {
  if (m.kind == ModelKind::Vision) return vision(m, w);
  if (m.kind == ModelKind::EncoderDecoder) return encoder_decoder(m, w);
  text_encoder(m, w);
}

std::uint64_t encoder_tokens(const ModelConfig& m, std::uint64_t seq, std::uint64_t image_size) {
  if (m.kind == ModelKind::Vision) {
    const u64 side = (image_size > 0 ? image_size : m.enc.image_size) / std::max<u64>(m.enc.patch_size, 1);
    return mul(side, side) + (m.family == Family::Vit ? m.enc.class_tokens : 0);
  }
  if (m.family == Family::Whisper) return m.enc.source_positions;
  return seq;
}

}  // namespace vramdoc::estimator
