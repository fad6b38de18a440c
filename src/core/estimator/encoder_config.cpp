// config.json -> ModelConfig for the models with an encoder: BERT-style encoders (BERT, RoBERTa,
// DistilBERT, DeBERTa-v2 and their relatives), encoder-decoders (T5, BART, Whisper) and vision
// transformers (ViT, Swin), with transformers' (5.17) class defaults for the fields a config.json may
// leave out. Their layers run on the decoder's ops (forward_ops.hpp) with these traits.
#include <algorithm>
#include <array>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoders.hpp"
#include "core/estimator/families.hpp"

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
constexpr std::array<EncoderType, 24> kEncoderTypes = {{
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
  if (m.kind == ModelKind::Encoder) {  // ELECTRA's (and ALBERT's) narrower embeddings
    const std::uint64_t e = size_or(cfg, "embedding_size", m.hidden_size);
    m.enc.embedding_size = e != m.hidden_size ? e : 0;
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
      m.position_offset = m.family == Family::Bart && (!own_positions || t == "m2m_100") ? 2 : 0;
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

const char* stand_in_name(ModelKind kind) {
  switch (kind) {
    case ModelKind::EncoderDecoder: return "encoder-decoder (BART-style)";
    case ModelKind::Vision: return "vision transformer (ViT-style)";
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
    if (m.kind == ModelKind::Vision && cfg.contains("depths")) m.family = Family::Swin;  // hierarchical (SwinV2, DiNAT, LeViT): Swin's stages
    m.stand_in = true;
  }
  if (auto ok = read_widths(m, cfg, source); !ok) return make_error(ok.error());
  set_encoder_traits(m, cfg);
  if (!known) {
    m.warnings.push_back("unknown model_type '" + m.model_type + "' in " + source + ": estimated as a generic " +
                         stand_in_name(m.kind) + ": expect +-30 %");
  }
  return true;
}

ModelConfig generic_encoder_of(const ModelConfig& decoder) {
  ModelConfig m = decoder;
  m.kind = ModelKind::Encoder, m.family = Family::Bert, m.stand_in = true;
  m.max_positions = 0, m.position_offset = 0, m.rotary_dims = 0, m.sliding_window = 0, m.sliding_layers = 0;
  m.num_kv_heads = m.num_heads;
  set_encoder_traits(m, json::object());  // BERT's defaults (512 learned positions, two token types)
  std::vector<std::string> warnings;
  for (const auto& w : decoder.warnings) {
    if (w.rfind("unknown model_type", 0) != 0) warnings.push_back(w);
  }
  warnings.push_back("unknown model_type '" + m.model_type + "' with an encoder's task: estimated as a generic " +
                     std::string(stand_in_name(m.kind)) + ": expect +-30 %");
  m.warnings = std::move(warnings);
  return m;
}

}  // namespace vramdoc::estimator
