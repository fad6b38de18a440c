// config.json -> the traits of each encoder family (norms, MLP, biases, dropouts, the heads' pieces, as its
// modeling_*.py builds them) with transformers' (5.17) class defaults, after encoder_config.cpp has read the
// kind, family and widths; ModernBERT's and Switch Transformers' own pieces.
#include <algorithm>
#include <cctype>
#include <string>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoder_traits.hpp"
#include "core/estimator/encoders.hpp"

namespace vramdoc::estimator::detail {

using nlohmann::json;

// An encoder whose layers are a decoder's without the causal mask: pre-norm LayerNorms, RoPE on every head,
// a gated MLP, no absolute positions and no token types (the embeddings: the tokens' lookup, its norm,
// dropout). The generic stand-in keeps the rest of what its config says (a llama-style layer);
// ModernBERT (modeling_modernbert.py) adds its own pieces in set_encoder_traits.
void decoder_style_layers(ModelConfig& m) {
  m.post_norm = false, m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gated, m.enc.gated_ffn = true;
  m.rotary_dims = m.head_dim, m.enc.position_table = false, m.enc.type_vocab = 0;
}

namespace {

// Which layers attend within a window: layer_types' "sliding_attention" entries, when it names every layer.
std::vector<bool> sliding_pattern(const json& cfg, std::uint64_t layers) {
  std::vector<bool> out;
  if (auto it = cfg.find("layer_types"); it != cfg.end() && it->is_array() && it->size() == layers) {
    for (const auto& t : *it) out.push_back(t.is_string() && t.get<std::string>() == "sliding_attention");
  }
  return out;
}

// ModernBERT (modeling_modernbert.py, transformers 5.17): decoder-style layers (ModernBertEncoderLayer:
// attn_norm, attention, sum; mlp_norm, MLP, sum) with one fused Wqkv whose value view SDPA saves (the whole
// output stays), RoPE on q.float() / k.float() cast back (apply_rotary_pos_emb), the GLU MLP's one Wi
// chunked into input and gate (act(input) * gate), LayerNorms with norm_bias, biases by attention_bias /
// mlp_bias; layer_types' sliding layers attend within local_attention / 2 each side through a bidirectional
// mask (create_bidirectional_sliding_window_mask: seq x seq bool, made additive per SDPA call); dropouts
// attention_dropout, mlp_dropout (embedding_dropout), all 0 by default; a final norm; the heads' dense +
// act + norm (ModernBertPredictionHead) on the first token (seq-cls) or every token (mlm: decoder tied).
void modernbert_traits(ModelConfig& m, const json& cfg) {
  decoder_style_layers(m);
  m.fused_qkv = m.rope_fp32 = m.fused_gate_up = m.enc.rope_upcast_inline = true;
  m.enc.norm_bias = fields::flag(cfg, "norm_bias", false);
  m.attention_bias = m.output_bias = fields::flag(cfg, "attention_bias", false);
  m.mlp_bias = fields::flag(cfg, "mlp_bias", false);
  m.attention_dropout = fields::fraction(cfg, "attention_dropout", 0.0);
  m.residual_dropout = fields::fraction(cfg, "mlp_dropout", 0.0);
  m.layer_sliding = sliding_pattern(cfg, m.num_layers);
  const bool any = std::find(m.layer_sliding.begin(), m.layer_sliding.end(), true) != m.layer_sliding.end();
  if (any) m.sliding_window = std::max<std::uint64_t>(size_or(cfg, "local_attention", 128) / 2, 1);
  m.enc.pooler = true;  // the prediction head's dense on the first token, then the classifier
  m.enc.mlm_loss_fp32 = true;  // ModernBertForMaskedLM: self.loss_function (ForMaskedLMLoss upcasts the logits)
}

// Switch Transformers (configuration_switch_transformers.py, modeling_switch_transformers.py 5.17): a stack's
// layer i has experts when step == 1 or i % step == 1 (SwitchTransformersStack), step its *_sparse_step, else
// num_layers // num_sparse_*_layers (num_layers when that is 0); num_experts experts of d_ff each.
std::uint64_t sparse_layers(const json& cfg, std::uint64_t layers, const char* step_field, const char* sparse_field) {
  std::uint64_t step = size_or(cfg, step_field, 0);
  if (step == 0) {
    const std::uint64_t sparse = size_or(cfg, sparse_field, 3);
    step = sparse > 0 ? layers / sparse : layers;
  }
  if (step == 0) return 0;
  if (step == 1) return layers;
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < layers; ++i) n += i % step == 1;
  return n;
}

void switch_traits(ModelConfig& m, const json& cfg) {
  m.enc.experts = size_or(cfg, "num_experts", 8);
  m.enc.sparse_encoder_layers = sparse_layers(cfg, m.enc.encoder_layers, "encoder_sparse_step", "num_sparse_encoder_layers");
  m.enc.sparse_decoder_layers = sparse_layers(cfg, m.num_layers, "decoder_sparse_step", "num_sparse_decoder_layers");
}

// NLLB-MoE (configuration_nllb_moe.py, modeling_nllb_moe.py 5.17), read by its router's fields (expert_capacity,
// encoder_sparse_step): M2M100's layout (pre-norm layers with a LayerNorm at each stack's end, NllbMoeSinusoidal-
// PositionalEmbedding a buffer with offset 2, no layernorm_embedding, no final_logits_bias), and in a stack's layer i
// NllbMoeSparseMLP when (i + 1) % *_sparse_step == 0 (NllbMoeEncoder / NllbMoeDecoder.__init__): num_experts
// NllbMoeDenseActDense experts (fc1, fc2 with biases) and the router's classifier.
void nllb_moe_traits(ModelConfig& m, const json& cfg) {
  m.post_norm = false, m.embed_norm = false, m.enc.logits_bias = false;
  m.enc.positions_buffer = true, m.position_offset = 2;
  m.enc.experts = size_or(cfg, "num_experts", 128);
  const auto sparse = [&](std::uint64_t layers, const char* field) {
    const std::uint64_t step = size_or(cfg, field, 4);
    return step == 0 ? 0 : layers / step;
  };
  m.enc.sparse_encoder_layers = sparse(m.enc.encoder_layers, "encoder_sparse_step");
  m.enc.sparse_decoder_layers = sparse(m.num_layers, "decoder_sparse_step");
  m.enc.expert_capacity = size_or(cfg, "expert_capacity", 0);
  m.enc.expert_token_dropout = fields::fraction(cfg, "moe_token_dropout", 0.2);
  if (auto it = cfg.find("moe_eval_capacity_token_fraction"); it != cfg.end() && it->is_number() && it->get<double>() <= 1) {
    m.enc.eval_capacity_fraction = it->get<double>();
  }
}

// DeBERTa's pos_att_type: a list of names or one string of names split at '|' (DebertaV2Config.__post_init__);
// anything else (null, numbers) names no term.
void read_pos_att_type(ModelConfig& m, const json& cfg) {
  const auto it = cfg.find("pos_att_type");
  if (it == cfg.end()) return;
  auto name = [&m](std::string t) {
    for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto trim = [](std::string& s) {
      s.erase(0, s.find_first_not_of(" \t"));
      s.erase(s.find_last_not_of(" \t") + 1);
    };
    for (std::size_t start = 0; start <= t.size();) {
      const std::size_t bar = std::min(t.find('|', start), t.size());
      std::string part = t.substr(start, bar - start);
      trim(part);
      m.enc.c2p |= part == "c2p", m.enc.p2c |= part == "p2c";
      start = bar + 1;
    }
  };
  if (it->is_string()) name(it->get<std::string>());
  if (it->is_array())
    for (const auto& e : *it)
      if (e.is_string()) name(e.get<std::string>());
}

}  // namespace

// Norms, MLP, biases, dropout and the heads' pieces of each family (its modeling_*.py).
void set_encoder_traits(ModelConfig& m, const json& cfg) {
  m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gelu;
  m.attention_bias = m.output_bias = m.mlp_bias = true;
  m.post_norm = true;  // BERT-style: the norm after each residual sum
  const double hidden_dropout = fields::fraction(cfg, "hidden_dropout_prob", fields::fraction(cfg, "dropout", 0.1));
  m.residual_dropout = hidden_dropout;
  m.attention_dropout = fields::fraction(cfg, "attention_probs_dropout_prob", fields::fraction(cfg, "attention_dropout", 0.1));
  m.max_positions = size_or(cfg, "max_position_embeddings", 512);
  m.enc.labels = labels_of(cfg);
  // ACT2FN["gelu_new"] (ALBERT): Python's tanh formula, op by op, its pieces saved for the backward
  // (the families' own modules below override the MLP: T5's relu / gated gelu)
  const auto act = cfg.find("hidden_act");
  if (act != cfg.end() && act->is_string() && act->get<std::string>() == "gelu_new") m.mlp = MlpKind::NewGelu;
  // ACT2FN["quick_gelu"] (QuickGELUActivation, activations.py): input * torch.sigmoid(1.702 * input), op by op
  if (act != cfg.end() && act->is_string() && act->get<std::string>() == "quick_gelu") m.mlp = MlpKind::QuickGelu;
  // BART's relatives name it activation_function (BartConfig; ACT2FN as above): relu (M2M100, NLLB-MoE, FSMT: its
  // output is fc2's input, the one tensor saved), gelu_new (BigBird-Pegasus: Python's tanh formula)
  if (const auto fn = cfg.find("activation_function"); fn != cfg.end() && fn->is_string()) {
    const std::string name = fn->get<std::string>();
    if (name == "relu") m.mlp = MlpKind::Relu;
    if (name == "gelu_new") m.mlp = MlpKind::NewGelu;
  }
  if (m.kind == ModelKind::Encoder) {
    // ELECTRA's (and ALBERT's) narrower embeddings; RemBERT's decoupled ones (modeling_rembert.py RemBertEmbeddings:
    // input_embedding_size wide, RemBertEncoder.embedding_hidden_mapping_in to hidden_size; RemBertLMPredictionHead:
    // dense to output_embedding_size, LayerNorm, the decoder from that width, untied)
    const std::uint64_t e = size_or(cfg, "embedding_size", size_or(cfg, "input_embedding_size", m.hidden_size));
    m.enc.embedding_size = e != m.hidden_size ? e : 0;
    m.enc.mlm_width = size_or(cfg, "output_embedding_size", 0);
  }
  switch (m.family) {
    case Family::Bert: m.enc.type_vocab = size_or(cfg, "type_vocab_size", 2), m.enc.pooler = true; break;  // FNet: 4
    case Family::Roberta: m.enc.type_vocab = 1, m.enc.classifier_dense = true; break;
    case Family::DistilBert: m.enc.classifier_dense = true; break;
    case Family::DebertaV2: {
      // v2: 2 x position_buckets relative embeddings (LayerNorm'd), keys shared with the content (share_att_key);
      // v1 (modeling_deberta.py): 2 x max_relative_positions (-1: max_position_embeddings), no norm, its own
      // pos_proj / pos_q_proj per layer; both: absolute positions only with position_biased_input
      // relative_attention (both configs default to false; the released v2 / v3 checkpoints set it) switches the
      // tables, the projections and the disentangled terms on; pos_att_type ("c2p|p2c" or a list) picks the terms
      const bool v1 = m.model_type == "deberta";
      m.enc.type_vocab = size_or(cfg, "type_vocab_size", 0), m.enc.pooler = true;
      m.enc.relative_attention = fields::flag(cfg, "relative_attention", false);
      read_pos_att_type(m, cfg);
      m.enc.scores_plus_zero = m.enc.fused_in_proj = m.enc.deberta_layer_norm = v1;  // modeling_deberta.py: rel_att
      // starts as 0 and is never None; DisentangledSelfAttention.in_proj; DebertaLayerNorm
      m.enc.position_table = fields::flag(cfg, "position_biased_input", true);
      if (!m.enc.relative_attention) break;
      m.enc.relative_buckets = v1 ? 2 * size_or(cfg, "max_relative_positions", m.max_positions)
                                  : 2 * size_or(cfg, "position_buckets", 256);
      const auto norm_rel = cfg.find("norm_rel_ebd");  // "layer_norm" (deberta-v3), "none" (the class default)
      m.enc.relative_norm = !v1 && norm_rel != cfg.end() && norm_rel->is_string() &&
                            norm_rel->get<std::string>().find("layer_norm") != std::string::npos;
      m.enc.position_projections = v1 || !fields::flag(cfg, "share_att_key", false);
      break;
    }
    case Family::Vit:
    case Family::Swin:
      m.post_norm = false, m.residual_dropout = fields::fraction(cfg, "hidden_dropout_prob", 0.0);
      m.attention_dropout = fields::fraction(cfg, "attention_probs_dropout_prob", 0.0);
      m.attention_bias = fields::flag(cfg, "qkv_bias", true);
      m.enc.image_size = size_or(cfg, "image_size", 224);
      m.enc.patch_size = size_or(cfg, "patch_size", m.family == Family::Swin ? 4 : 16);
      m.enc.channels = size_or(cfg, "num_channels", 3);
      m.enc.class_tokens = m.model_type == "deit" ? 2 : 1;  // modeling_deit.py DeiTEmbeddings: cls + distillation
      if (m.model_type == "siglip_vision_model") {
        // modeling_siglip.py: SiglipVisionEmbeddings has no class token (num_positions = num_patches);
        // SiglipForImageClassification classifies torch.mean(last_hidden_state, dim=1); SiglipVisionModel
        // builds its attention-pooling head unless vision_use_head is false, and runs it (pooler_output unused)
        m.enc.class_tokens = 0, m.enc.mean_pooled = true;
        m.enc.attention_pool_head = fields::flag(cfg, "vision_use_head", true);
        m.attention_dropout = fields::fraction(cfg, "attention_dropout", 0.0);
      }
      if (m.model_type == "clip_vision_model") {
        // modeling_clip.py: CLIPVisionEmbeddings' patch Conv2d has no bias (a class token, num_patches + 1
        // positions); CLIPVisionTransformer runs pre_layrnorm on the embeddings and its post_layernorm on the class
        // token alone; CLIPForImageClassification classifies torch.mean(last_hidden_state[:, 1:, :], dim=1)
        m.enc.pre_layernorm = m.enc.mean_pooled = true, m.enc.patch_bias = false;
        m.attention_dropout = fields::fraction(cfg, "attention_dropout", 0.0);
      }
      break;
    case Family::T5:  // T5LayerNorm (RMS, fp32 variance), no biases, pre-norm, relu or gated-gelu
      m.norm = NormKind::T5, m.post_norm = false, m.attention_bias = m.output_bias = m.mlp_bias = false;
      m.mlp = MlpKind::Relu, m.residual_dropout = m.attention_dropout = fields::fraction(cfg, "dropout_rate", 0.1);
      if (auto it = cfg.find("feed_forward_proj"); it != cfg.end() && it->is_string() &&
                                                  it->get<std::string>().rfind("gated", 0) == 0) {
        m.enc.gated_ffn = true, m.mlp = MlpKind::Gated;
      }
      m.enc.relative_buckets = size_or(cfg, "relative_attention_num_buckets", 32);
      m.tie_word_embeddings = fields::flag(cfg, "tie_word_embeddings", true);
      break;
    case Family::Bart:
    case Family::Whisper: {
      // BART's relatives differ in their norms and positions: pre-norm layers with a LayerNorm at each
      // stack's end (mBART, Pegasus, Blenderbot, M2M100) or post-norm ones (BART, Marian); layernorm_embedding
      // (BART, mBART); learned positions with BART's offset of 2 (BART, mBART), without (Blenderbot), or
      // sinusoidal (Marian, Pegasus: a frozen parameter; M2M100: a buffer, offset 2)
      const std::string_view t = m.model_type;
      const bool pre_norm = t == "mbart" || t == "pegasus" || t == "blenderbot" || t == "m2m_100";
      const bool own_positions = t == "pegasus" || t == "marian" || t == "blenderbot" || t == "m2m_100";
      m.post_norm = m.family == Family::Bart && !pre_norm && !fields::flag(cfg, "normalize_before", false);
      m.residual_dropout = fields::fraction(cfg, "dropout", m.family == Family::Whisper ? 0.0 : 0.1);
      m.attention_dropout = fields::fraction(cfg, "attention_dropout", 0.0);
      m.position_offset = m.family == Family::Bart && (!own_positions || t == "m2m_100") && t != "led" ? 2 : 0;
      if (t == "led") {  // LEDLearnedPositionalEmbedding: no offset, the encoder's table its own size
        m.enc.source_positions = size_or(cfg, "max_encoder_position_embeddings", 16384);
        m.max_positions = size_or(cfg, "max_decoder_position_embeddings", 1024);
      }
      m.enc.positions_buffer = t == "m2m_100";
      m.embed_norm = m.family == Family::Bart && !own_positions;  // layernorm_embedding
      m.enc.logits_bias = m.family == Family::Bart && t != "m2m_100";  // modeling_bart.py:940
      m.tie_word_embeddings = fields::flag(cfg, "tie_word_embeddings", true);
      if (m.family == Family::Whisper) {
        m.enc.source_positions = size_or(cfg, "max_source_positions", 1500);
        m.enc.mel_bins = size_or(cfg, "num_mel_bins", 80);
        m.max_positions = size_or(cfg, "max_target_positions", 448);
      }
      break;
    }
    default: break;
  }
  if (m.kind == ModelKind::Encoder) m.tie_word_embeddings = fields::flag(cfg, "tie_word_embeddings", true);
  if (m.model_type == "modernbert") modernbert_traits(m, cfg);
  if (m.model_type == "switch_transformers") switch_traits(m, cfg);
  if (m.kind == ModelKind::EncoderDecoder) m.enc.beams = size_or(cfg, "num_beams", 1);  // generate()'s default
  // nn.functional.dropout(hidden_states, p=self.activation_dropout) between fc1's activation and fc2 (BartEncoderLayer,
  // WhisperEncoderLayer, ProphetNetFeedForward: modeling_prophetnet.py:516-523); T5 has its own feed-forward
  if (m.kind == ModelKind::EncoderDecoder && m.family != Family::T5) m.activation_dropout = fields::fraction(cfg, "activation_dropout", 0.0);
  // ProphetNet (and XLM-ProphetNet): ngram predicting streams with relative position buckets (ProphetNetDecoder.forward
  // concatenates them to the main stream: modeling_prophetnet.py:1176-1190)
  // ProphetNetPositionalEmbeddings: max_position_embeddings rows, no offset; num_buckets: the decoder's relative buckets
  if (m.kind == ModelKind::EncoderDecoder && cfg.contains("ngram") && cfg.contains("num_buckets")) {
    m.enc.ngram = size_or(cfg, "ngram", 2), m.enc.relative_buckets = size_or(cfg, "num_buckets", 32), m.position_offset = 0;
  }
  if (m.family == Family::Bart && cfg.contains("expert_capacity") && cfg.contains("encoder_sparse_step")) nllb_moe_traits(m, cfg);
  m.enc.cosine_attention = m.model_type == "swinv2";  // Swinv2SelfAttention (modeling_swinv2.py:389)
  m.enc.project_in_encoder = m.model_type == "albert";  // modeling_albert.py AlbertTransformer.forward
  m.enc.attention_locals_held = m.model_type == "dinov2";  // modeling_dinov2.py Dinov2Layer.forward
  if (m.model_type == "dinov2" && fields::flag(cfg, "use_swiglu_ffn", false)) {
    // Dinov2SwiGLUFFN (modeling_dinov2.py): weights_in (hidden -> 2 x w, bias), chunk, silu(x1) * x2, weights_out
    // (w -> hidden, bias), w = (int(int(hidden x mlp_ratio) x 2 / 3) + 7) // 8 x 8 (DINOv2-g's SwiGLU)
    const auto ratio = cfg.find("mlp_ratio");
    const double r = ratio != cfg.end() && ratio->is_number() && ratio->get<double>() > 0 && ratio->get<double>() < 1e3
                         ? ratio->get<double>() : 4.0;
    const auto wide = static_cast<std::uint64_t>(static_cast<double>(m.hidden_size) * r);
    m.intermediate_size = std::max<std::uint64_t>((wide * 2 / 3 + 7) / 8 * 8, 8);
    m.mlp = MlpKind::Gated, m.enc.gated_ffn = true, m.fused_gate_up = true;
  }
  if (m.model_type == "mpnet") {  // modeling_mpnet.py: no token types; MPNetEncoder.compute_position_bias, its own attention
    m.enc.type_vocab = 0, m.enc.batched_position_bias = true;
    m.enc.relative_buckets = size_or(cfg, "relative_attention_num_buckets", 32);
  }
  if (m.model_type == "roformer") {
    // modeling_roformer.py: no absolute position table; RoFormerSinusoidalPositionalEmbedding (max_position_embeddings
    // x head_dim, frozen) made once per forward; q and k rotated (apply_rotary_position_embeddings: q * cos +
    // rotate_half(q) * sin, v too with rotary_value); RoFormerSelfAttention's own eager attention (lines 197-211)
    m.rotary_dims = m.head_dim, m.enc.position_table = false;
    m.enc.sinusoidal_rotary_table = m.enc.own_eager_attention = true;
  }
  read_attention_kind(m, cfg);  // Longformer, Pegasus-X, BigBird, LongT5 (encoder_attention.cpp)
  read_token_mixing(m, cfg);  // FNet (encoder_mixing.cpp)
  // position_embedding_type "rotary" (ESM, BERT-style code with RoPE): q and k rotated, no absolute position table
  if (const auto pe = cfg.find("position_embedding_type"); m.kind == ModelKind::Encoder && pe != cfg.end() && pe->is_string() &&
                                                           pe->get<std::string>() == "rotary") {
    m.rotary_dims = m.head_dim, m.enc.position_table = false;
  }
  // Dinov2LayerScale / BEiT's lambda_1, lambda_2: `branch * lambda` out of place (mul saves the branch for the
  // scale's gradient); BEiT has none when layer_scale_init_value is 0
  m.enc.layer_scale = fields::positive_number(cfg, "layerscale_value") > 0 || fields::positive_number(cfg, "layer_scale_init_value") > 0;
}

}  // namespace vramdoc::estimator::detail
