// config.json -> ModelConfig for the models with an encoder: BERT-style encoders (BERT, RoBERTa,
// DistilBERT, DeBERTa-v2 and their relatives), encoder-decoders (T5, BART, Whisper) and vision
// transformers (ViT, Swin), with transformers' (5.17) class defaults for the fields a config.json may
// leave out. Their layers run on the decoder's ops (forward_ops.hpp) with these traits (encoder_traits.cpp).
#include <algorithm>
#include <array>

#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoder_traits.hpp"
#include "core/estimator/encoders.hpp"
#include "core/estimator/families.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::detail {

// An optional size, or `fallback` when absent or not a positive integer below 2^40.
std::uint64_t size_or(const nlohmann::json& cfg, const char* name, std::uint64_t fallback) {
  auto v = fields::size(cfg, {name}, "");
  return v && *v ? **v : fallback;
}

std::uint64_t labels_of(const nlohmann::json& cfg) {
  if (auto it = cfg.find("id2label"); it != cfg.end() && it->is_object() && !it->empty()) return it->size();
  if (auto it = cfg.find("num_labels"); it != cfg.end() && it->is_number_unsigned() && it->get<std::uint64_t>() > 0) {
    return std::min<std::uint64_t>(it->get<std::uint64_t>(), 1ULL << 24);
  }
  return 2;
}

}  // namespace vramdoc::estimator::detail

namespace vramdoc::estimator {

namespace {

using nlohmann::json;
using Size = std::optional<std::uint64_t>;
using detail::decoder_style_layers;
using detail::labels_of;
using detail::set_encoder_traits;
using detail::size_or;

struct EncoderType {
  std::string_view model_type;
  Family family;
  ModelKind kind;
};
// Model types read as one of the measured families (the same modules, other weights).
constexpr std::array<EncoderType, 34> kEncoderTypes = {{
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
    {"clip_vision_model", Family::Vit, ModelKind::Vision},    // CLIP's vision_config (read_vision_tower)
    {"switch_transformers", Family::T5, ModelKind::EncoderDecoder},  // T5 with sparse feed-forward layers
    {"swinv2", Family::Swin, ModelKind::Vision},          // Swin with cosine attention (modeling_swinv2.py)
    {"roformer", Family::Bert, ModelKind::Encoder},       // BERT with rotary sinusoidal positions (modeling_roformer.py)
    {"layoutlmv3", Family::Bert, ModelKind::Encoder},     // BERT's layers, its layout tables and biases (encoder_mixing.cpp)
}};

Result<std::uint64_t> need(const json& cfg, std::initializer_list<const char*> names, const std::string& source,
                           std::optional<std::uint64_t> fallback = std::nullopt) {
  auto v = fields::size(cfg, names, source);
  if (!v) return make_error(v.error());
  if (*v) return **v;
  if (fallback) return *fallback;
  return make_error("missing field '" + std::string(*names.begin()) + "' in " + source);
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
  if (cfg.contains("type_vocab_size") || cfg.contains("type_vocab_sizes")) return ModelKind::Encoder;  // (TAPAS: one per table)
  if (cfg.contains("block_sizes")) return ModelKind::Encoder;  // Funnel's pooled blocks (configuration_funnel.py)
  if (fields::flag(cfg, "is_encoder", false)) return ModelKind::Encoder;  // XLMConfig's is_encoder (default true)
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
  if (const std::uint64_t k = m.enc.hash_functions; k > 0 && (k > 16 || m.hidden_size % k != 0)) {
    // CanineEmbeddings: at most 16 hash functions (_PRIMES), each a hidden_size / num_hash_functions shard
    return make_error("field 'num_hash_functions' in " + source + " must be at most 16 and divide hidden_size");
  }
  if (!known) {
    // Most text encoders and encoder-decoders transformers has run eager attention: their classes set no
    // _supports_sdpa (the records' attn_implementation: megatron-bert, rembert, convbert, funnel, fnet, mvp,
    // nllb-moe, prophetnet, fsmt, longt5, bigbird_pegasus ran eager; data2vec-text sdpa), so a stand-in
    // estimates eager unless --attention says otherwise (attention_of). Vision stand-ins keep SDPA.
    m.enc.eager_by_default = m.kind != ModelKind::Vision;
    // Of transformers' (5.17) text encoders, only LayoutLM and MarkupLM call the attention interface
    // (ALL_ATTENTION_FUNCTIONS, eager_attention_forward: softmax in fp32, cast back) without _supports_sdpa: they run
    // that eager function, not a hand-written attention (modeling_layoutlm.py, modeling_markuplm.py)
    m.enc.interface_eager = m.enc.interface_eager || m.model_type == "layoutlm" || m.model_type == "markuplm";
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
  // a known tower (siglip_vision_model, clip_vision_model) or, by its image_size and patch_size, a generic ViT
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
