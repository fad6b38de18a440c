// config.json -> ModelConfig for the models with an encoder: BERT-style encoders (BERT, RoBERTa,
// DistilBERT, DeBERTa-v2 and their relatives), encoder-decoders (T5, BART, Whisper) and vision
// transformers (ViT, Swin), with transformers' (5.17) class defaults for the fields a config.json may
// leave out. Their layers run on the decoder's ops (forward_ops.hpp) with these traits.
#include <algorithm>
#include <array>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoders.hpp"
#include "core/estimator/families.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;
using Size = std::optional<std::uint64_t>;

struct EncoderType {
  std::string_view model_type;
  Family family;
  ModelKind kind;
};
// Model types read as one of the measured families (the same modules, other weights).
constexpr std::array<EncoderType, 32> kEncoderTypes = {{
    {"bert", Family::Bert, ModelKind::Encoder},           {"electra", Family::Bert, ModelKind::Encoder},
    {"ernie", Family::Bert, ModelKind::Encoder},          {"roberta", Family::Roberta, ModelKind::Encoder},
    {"xlm-roberta", Family::Roberta, ModelKind::Encoder}, {"camembert", Family::Roberta, ModelKind::Encoder},
    {"distilbert", Family::DistilBert, ModelKind::Encoder}, {"deberta-v2", Family::DebertaV2, ModelKind::Encoder},
    {"deberta", Family::DebertaV2, ModelKind::Encoder},   {"vit", Family::Vit, ModelKind::Vision},
    {"deit", Family::Vit, ModelKind::Vision},             {"swin", Family::Swin, ModelKind::Vision},
    {"t5", Family::T5, ModelKind::EncoderDecoder},        {"mt5", Family::T5, ModelKind::EncoderDecoder},
    {"umt5", Family::T5, ModelKind::EncoderDecoder},      {"bart", Family::Bart, ModelKind::EncoderDecoder},
    {"mbart", Family::Bart, ModelKind::EncoderDecoder},   {"pegasus", Family::Bart, ModelKind::EncoderDecoder},
    {"marian", Family::Bart, ModelKind::EncoderDecoder},  {"blenderbot", Family::Bart, ModelKind::EncoderDecoder},
    {"m2m_100", Family::Bart, ModelKind::EncoderDecoder}, {"whisper", Family::Whisper, ModelKind::EncoderDecoder},
    {"mpnet", Family::Bert, ModelKind::Encoder},          {"xlm-roberta-xl", Family::Roberta, ModelKind::Encoder},
    {"modernbert", Family::Bert, ModelKind::Encoder},     {"albert", Family::Bert, ModelKind::Encoder},
    {"led", Family::Bart, ModelKind::EncoderDecoder},     {"dinov2", Family::Vit, ModelKind::Vision},
    {"siglip_vision_model", Family::Vit, ModelKind::Vision},  // SigLIP's vision_config (read_vision_tower)
    {"switch_transformers", Family::T5, ModelKind::EncoderDecoder},  // T5 with sparse feed-forward layers
    {"swinv2", Family::Swin, ModelKind::Vision},          // Swin with cosine attention (modeling_swinv2.py)
    {"roformer", Family::Bert, ModelKind::Encoder},       // BERT with rotary sinusoidal positions (modeling_roformer.py)
}};

Result<std::uint64_t> need(const json& cfg, std::initializer_list<const char*> names, const std::string& source,
                           std::optional<std::uint64_t> fallback = std::nullopt) {
  auto v = fields::size(cfg, names, source);
  if (!v) return make_error(v.error());
  if (*v) return **v;
  if (fallback) return *fallback;
  return make_error("missing field '" + std::string(*names.begin()) + "' in " + source);
}

// An optional size, or `fallback` when absent or not a positive integer below 2^40.
std::uint64_t size_or(const json& cfg, const char* name, std::uint64_t fallback) {
  auto v = fields::size(cfg, {name}, "");
  return v && *v ? **v : fallback;
}

// A list of positive integers (Swin's depths and num_heads); empty when absent.
std::vector<std::uint64_t> sizes_list(const json& cfg, const char* name) {
  std::vector<std::uint64_t> out;
  if (auto it = cfg.find(name); it != cfg.end() && it->is_array()) {
    for (const auto& v : *it) {
      if (v.is_number_unsigned() && v.get<std::uint64_t>() > 0 && v.get<std::uint64_t>() < (1ULL << 20)) out.push_back(v.get<std::uint64_t>());
    }
  }
  return out;
}

std::uint64_t labels_of(const json& cfg) {
  if (auto it = cfg.find("id2label"); it != cfg.end() && it->is_object() && !it->empty()) return it->size();
  if (auto it = cfg.find("num_labels"); it != cfg.end() && it->is_number_unsigned() && it->get<std::uint64_t>() > 0) {
    return std::min<std::uint64_t>(it->get<std::uint64_t>(), 1ULL << 24);
  }
  return 2;
}

// ALBERT's shared layers (modeling_albert.py AlbertTransformer): num_hidden_groups groups of inner_group_num
// layers each; the forward applies group i x groups / num_hidden_layers (its layers in turn) for each of
// num_hidden_layers steps. m.num_layers becomes the applications (each its own activations), shared_layers
// the distinct layers (their weights, gradients and optimizer state once).
Result<bool> read_shared_layers(ModelConfig& m, const json& cfg, const std::string& source) {
  const std::uint64_t groups = size_or(cfg, "num_hidden_groups", 0), inner = size_or(cfg, "inner_group_num", 0);
  if (groups == 0 && inner == 0) return true;
  const std::uint64_t g = std::max<std::uint64_t>(groups, 1), each = std::max<std::uint64_t>(inner, 1);
  const std::uint64_t applied = saturating_mul(m.num_layers, each), distinct = saturating_mul(g, each);
  if (applied > kMaxLayers) {
    return make_error("fields 'num_hidden_layers' x 'inner_group_num' in " + source + " make " + std::to_string(applied) +
                      " layers: vramdoc estimates at most " + std::to_string(kMaxLayers));
  }
  if (g > m.num_layers) return make_error("field 'num_hidden_groups' in " + source + " exceeds num_hidden_layers");
  m.num_layers = applied;
  if (distinct < applied) m.enc.shared_layers = distinct;
  return true;
}

// The widths every kind has (hidden, layers, heads, MLP, vocabulary), by each family's field names.
Result<bool> read_widths(ModelConfig& m, const json& cfg, const std::string& source) {
  const bool vision = m.kind == ModelKind::Vision, s2s = m.kind == ModelKind::EncoderDecoder;
  // Swin's hidden_size is its last stage's width (embed_dim x 2^(stages - 1)): the layers start at embed_dim
  auto h = m.family == Family::Swin ? need(cfg, {"embed_dim"}, source, 96) : need(cfg, {"hidden_size", "dim", "d_model", "embed_dim"}, source);
  if (!h) return make_error(h.error());
  m.hidden_size = *h;
  if (m.family == Family::Swin) {
    m.enc.stage_depths = sizes_list(cfg, "depths"), m.enc.stage_heads = sizes_list(cfg, "num_heads");
    if (m.enc.stage_depths.empty()) m.enc.stage_depths = {2, 2, 6, 2};
    if (m.enc.stage_heads.size() != m.enc.stage_depths.size()) m.enc.stage_heads.assign(m.enc.stage_depths.size(), 0);
    for (std::size_t i = 0; i < m.enc.stage_heads.size(); ++i) {
      if (m.enc.stage_heads[i] == 0) m.enc.stage_heads[i] = 3ULL << i;
    }
    std::uint64_t layers = 0;
    for (auto d : m.enc.stage_depths) layers += d;
    m.num_layers = layers, m.num_heads = m.enc.stage_heads.front();
    m.enc.window = size_or(cfg, "window_size", 7);
    m.intermediate_size = 4 * m.hidden_size;  // mlp_ratio 4
  } else {
    auto layers = need(cfg, {"num_hidden_layers", "n_layers", "num_decoder_layers", "decoder_layers", "num_layers"}, source);
    auto heads = need(cfg, {"num_attention_heads", "n_heads", "decoder_attention_heads", "num_heads"}, source);
    auto inter = need(cfg, {"intermediate_size", "hidden_dim", "decoder_ffn_dim", "d_ff"}, source, 4 * m.hidden_size);
    for (auto* v : {&layers, &heads, &inter}) {
      if (!*v) return make_error(v->error());
    }
    m.num_layers = *layers, m.num_heads = *heads, m.intermediate_size = *inter;
    if (auto ok = read_shared_layers(m, cfg, source); !ok) return make_error(ok.error());
  }
  if (s2s) {
    auto enc_layers = need(cfg, {"encoder_layers", "num_layers"}, source, m.num_layers);
    auto enc_ffn = need(cfg, {"encoder_ffn_dim", "d_ff"}, source, m.intermediate_size);
    if (!enc_layers) return make_error(enc_layers.error());
    if (!enc_ffn) return make_error(enc_ffn.error());
    m.enc.encoder_layers = *enc_layers, m.enc.encoder_ffn = *enc_ffn;
  }
  if (!vision) {
    auto vocab = need(cfg, {"vocab_size"}, source);
    if (!vocab) return make_error(vocab.error());
    m.vocab_size = *vocab;
  }
  auto kv = fields::size(cfg, {"d_kv"}, source);  // T5: per-head width
  if (!kv) return make_error(kv.error());
  if (*kv) {
    m.head_dim = **kv;
  } else if (m.hidden_size % m.num_heads != 0) {
    return make_error("field 'num_attention_heads' in " + source + " does not divide the hidden size");
  } else {
    m.head_dim = m.hidden_size / m.num_heads;
  }
  m.num_kv_heads = m.num_heads;
  return true;
}

// An encoder whose layers are a decoder's without the causal mask: pre-norm LayerNorms, RoPE on every head,
// a gated MLP, no absolute positions and no token types (the embeddings: the tokens' lookup, its norm,
// dropout). The generic stand-in keeps the rest of what its config says (a llama-style layer);
// ModernBERT (modeling_modernbert.py) adds its own pieces in set_encoder_traits.
void decoder_style_layers(ModelConfig& m) {
  m.post_norm = false, m.norm = NormKind::LayerNorm, m.mlp = MlpKind::Gated, m.enc.gated_ffn = true;
  m.rotary_dims = m.head_dim, m.enc.position_table = false, m.enc.type_vocab = 0;
}

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
  if (m.kind == ModelKind::Encoder) {
    // ELECTRA's (and ALBERT's) narrower embeddings; RemBERT's decoupled ones (modeling_rembert.py RemBertEmbeddings:
    // input_embedding_size wide, RemBertEncoder.embedding_hidden_mapping_in to hidden_size; RemBertLMPredictionHead:
    // dense to output_embedding_size, LayerNorm, the decoder from that width, untied)
    const std::uint64_t e = size_or(cfg, "embedding_size", size_or(cfg, "input_embedding_size", m.hidden_size));
    m.enc.embedding_size = e != m.hidden_size ? e : 0;
    m.enc.mlm_width = size_or(cfg, "output_embedding_size", 0);
  }
  switch (m.family) {
    case Family::Bert: m.enc.type_vocab = 2, m.enc.pooler = true; break;
    case Family::Roberta: m.enc.type_vocab = 1, m.enc.classifier_dense = true; break;
    case Family::DistilBert: m.enc.classifier_dense = true; break;
    case Family::DebertaV2: {
      // v2: 2 x position_buckets relative embeddings (LayerNorm'd), keys shared with the content (share_att_key);
      // v1 (modeling_deberta.py): 2 x max_relative_positions (-1: max_position_embeddings), no norm, its own
      // pos_proj / pos_q_proj per layer; both: absolute positions only with position_biased_input
      const bool v1 = m.model_type == "deberta";
      m.enc.type_vocab = size_or(cfg, "type_vocab_size", 0), m.enc.pooler = true;
      m.enc.relative_buckets = v1 ? 2 * size_or(cfg, "max_relative_positions", m.max_positions)
                                  : 2 * size_or(cfg, "position_buckets", 256);
      m.enc.position_table = fields::flag(cfg, "position_biased_input", true);
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
  m.enc.cosine_attention = m.model_type == "swinv2";  // Swinv2SelfAttention (modeling_swinv2.py:389)
  m.enc.project_in_encoder = m.model_type == "albert";  // modeling_albert.py AlbertTransformer.forward
  m.enc.attention_locals_held = m.model_type == "dinov2";  // modeling_dinov2.py Dinov2Layer.forward
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
  // position_embedding_type "rotary" (ESM, BERT-style code with RoPE): q and k rotated, no absolute position table
  if (const auto pe = cfg.find("position_embedding_type"); m.kind == ModelKind::Encoder && pe != cfg.end() && pe->is_string() &&
                                                           pe->get<std::string>() == "rotary") {
    m.rotary_dims = m.head_dim, m.enc.position_table = false;
  }
  // Dinov2LayerScale / BEiT's lambda_1, lambda_2: `branch * lambda` out of place (mul saves the branch for the
  // scale's gradient); BEiT has none when layer_scale_init_value is 0
  m.enc.layer_scale = fields::positive_number(cfg, "layerscale_value") > 0 || fields::positive_number(cfg, "layer_scale_init_value") > 0;
}

}  // namespace

namespace {

// What an unknown model_type's config says it is: its `architectures` (the classes transformers built
// it as) first, else its fields: is_encoder_decoder, a vision model's image_size and patch_size, a
// BERT-style encoder's type_vocab_size (ALBERT, RoFormer, ...). Decoder when nothing says otherwise.
ModelKind unknown_kind(const json& cfg) {
  if (fields::flag(cfg, "is_encoder_decoder", false)) return ModelKind::EncoderDecoder;
  if (auto it = cfg.find("architectures"); it != cfg.end() && it->is_array()) {
    for (const auto& a : *it) {
      if (!a.is_string()) continue;
      const std::string name = a.get<std::string>();
      const auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
      if (has("ForCausalLM") || has("LMHeadModel")) return ModelKind::Decoder;
      if (has("ForImageClassification")) return ModelKind::Vision;
      if (has("ForMaskedLM") || has("ForSequenceClassification") || has("ForTokenClassification") ||
          has("ForQuestionAnswering") || has("ForMultipleChoice")) {
        return ModelKind::Encoder;
      }
    }
  }
  if (cfg.contains("image_size") && cfg.contains("patch_size")) return ModelKind::Vision;
  if (cfg.contains("conv_dim")) return ModelKind::Encoder;  // a speech encoder (wav2vec2, HuBERT, WavLM): its frames as tokens
  if (cfg.contains("type_vocab_size")) return ModelKind::Encoder;
  return ModelKind::Decoder;
}

const char* stand_in_name(ModelKind kind, Family family) {
  switch (kind) {
    case ModelKind::EncoderDecoder: return family == Family::T5 ? "encoder-decoder (T5-style)" : "encoder-decoder (BART-style)";
    case ModelKind::Vision: return family == Family::Swin ? "vision transformer (Swin-style)" : "vision transformer (ViT-style)";
    default: return "encoder (BERT-style)";
  }
}

}  // namespace

bool has_encoder(std::string_view model_type, const json& cfg) {
  for (const auto& t : kEncoderTypes) {
    if (t.model_type == model_type) return true;
  }
  return family_of(model_type) == Family::Generic && unknown_kind(cfg) != ModelKind::Decoder;
}

Result<bool> read_encoder_config(ModelConfig& m, const json& cfg, const std::string& source) {
  m.family = Family::Bert, m.kind = ModelKind::Encoder;
  bool known = false;
  for (const auto& t : kEncoderTypes) {
    if (t.model_type == m.model_type) m.family = t.family, m.kind = t.kind, known = true;
  }
  if (!known) {
    m.kind = unknown_kind(cfg);
    if (m.kind == ModelKind::Decoder) m.kind = ModelKind::Encoder;  // --task asked for an encoder's head
    m.family = m.kind == ModelKind::EncoderDecoder ? Family::Bart : m.kind == ModelKind::Vision ? Family::Vit : Family::Bert;
    // stages (a `depths` list: Swin V2's windowed attention, DiNAT, LeViT, SegFormer) are read as Swin's stages
    const auto depths = cfg.find("depths");
    if (m.kind == ModelKind::Vision && depths != cfg.end() && depths->is_array()) m.family = Family::Swin;
    // per-head widths and bucketed relative positions (d_kv, relative_attention_num_buckets: Switch Transformers) are T5's
    if (m.kind == ModelKind::EncoderDecoder && cfg.contains("d_kv") && cfg.contains("relative_attention_num_buckets")) m.family = Family::T5;
    m.stand_in = true;
  }
  if (auto ok = read_widths(m, cfg, source); !ok) return make_error(ok.error());
  set_encoder_traits(m, cfg);
  if (!known) {
    // Most text encoders and encoder-decoders transformers has run eager attention: their classes set no
    // _supports_sdpa (the records' attn_implementation: megatron-bert, rembert, convbert, funnel, fnet, mvp,
    // nllb-moe, prophetnet, fsmt, longt5, bigbird_pegasus ran eager; data2vec-text sdpa), so a stand-in
    // estimates eager unless --attention says otherwise (attention_of). Vision stand-ins keep SDPA.
    m.enc.eager_by_default = m.kind != ModelKind::Vision;
    m.warnings.push_back("unknown model_type '" + m.model_type + "' in " + source + ": estimated as a generic " +
                         stand_in_name(m.kind, m.family) + (m.enc.eager_by_default ? " with eager attention (--attention sdpa "
                                                                                   "if its class supports SDPA)" : "") +
                         ": expect +-30 %");
  }
  return true;
}

Result<std::shared_ptr<const ModelConfig>> read_vision_tower(const json& cfg, const std::string& source) {
  const auto it = cfg.find("vision_config");
  if (it == cfg.end() || !it->is_object() || !it->contains("image_size") || !it->contains("patch_size")) {
    return std::shared_ptr<const ModelConfig>{};
  }
  auto tower = std::make_shared<ModelConfig>();
  tower->name = source;
  if (auto t = it->find("model_type"); t != it->end() && t->is_string()) tower->model_type = t->get<std::string>();
  // a known tower (siglip_vision_model) or, by its image_size and patch_size, a generic ViT
  if (auto ok = read_encoder_config(*tower, *it, source + " (vision_config)"); !ok) return make_error(ok.error());
  if (tower->kind != ModelKind::Vision) return std::shared_ptr<const ModelConfig>{};
  // the wrapper's classifier: nn.Linear(vision_config.hidden_size, config.num_labels), the wrapper's labels
  if (cfg.contains("id2label") || cfg.contains("num_labels")) tower->enc.labels = labels_of(cfg);
  return std::shared_ptr<const ModelConfig>(std::move(tower));
}

ModelConfig generic_vision_of(const ModelConfig& decoder) {
  ModelConfig m = decoder;
  m.kind = ModelKind::Vision, m.family = Family::Vit, m.stand_in = true, m.vision_tower.reset();
  m.max_positions = 0, m.position_offset = 0, m.rotary_dims = 0, m.sliding_window = 0, m.sliding_layers = 0;
  m.layer_sliding.clear();
  m.num_kv_heads = m.num_heads, m.vocab_size = 0;
  set_encoder_traits(m, json::object());  // ViT's: 224 x 224 images, 16 x 16 patches, a class token, pre-norm layers
  std::vector<std::string> warnings;
  for (const auto& w : decoder.warnings) {
    if (w.rfind("unknown model_type", 0) != 0) warnings.push_back(w);
  }
  warnings.push_back("unknown model_type '" + m.model_type + "' with --task image-cls and no vision_config: estimated as a generic " +
                     std::string(stand_in_name(m.kind, m.family)) + " of its widths: expect +-30 %");
  m.warnings = std::move(warnings);
  return m;
}

ModelConfig generic_encoder_of(const ModelConfig& decoder) {
  ModelConfig m = decoder;
  m.kind = ModelKind::Encoder, m.family = Family::Bert, m.stand_in = true;
  m.max_positions = 0, m.position_offset = 0, m.rotary_dims = 0, m.sliding_window = 0, m.sliding_layers = 0;
  m.num_kv_heads = m.num_heads;
  const ModelConfig layers = m;
  set_encoder_traits(m, json::object());  // BERT's heads and dropouts
  // the layers the config describes (the generic decoder's: pre-norm, RoPE, gated MLP), without the causal
  // mask; an encoder's norm is a LayerNorm
  decoder_style_layers(m);
  m.rotary_dims = decoder.rotary_dims > 0 ? decoder.rotary_dims : m.head_dim;
  m.attention_bias = layers.attention_bias, m.output_bias = layers.output_bias, m.mlp_bias = layers.mlp_bias;
  m.attention_dropout = layers.attention_dropout, m.residual_dropout = layers.residual_dropout;
  m.enc.pooler = true;
  std::vector<std::string> warnings;
  for (const auto& w : decoder.warnings) {
    if (w.rfind("unknown model_type", 0) != 0) warnings.push_back(w);
  }
  warnings.push_back("unknown model_type '" + m.model_type + "' with an encoder's task: estimated as a generic " +
                     std::string(stand_in_name(m.kind, m.family)) + ": expect +-30 %");
  m.warnings = std::move(warnings);
  return m;
}

}  // namespace vramdoc::estimator
