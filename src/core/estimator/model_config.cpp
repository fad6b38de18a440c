// config.json -> ModelConfig: the fields every decoder has (sizes, heads, vocabulary); the
// family's own fields and traits come from families.cpp, quantization_config from quant_config.cpp.
#include "core/estimator/model_config.hpp"

#include <nlohmann/json.hpp>
#include <utility>

#include "core/estimator/cnn.hpp"
#include "core/estimator/config_aliases.hpp"
#include "core/estimator/config_fields.hpp"
#include "core/estimator/encoders.hpp"
#include "core/estimator/families.hpp"

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

Result<std::uint64_t> require_size(const json& cfg, std::initializer_list<const char*> names, const std::string& source) {
  auto v = fields::size(cfg, names, source);
  if (!v) return make_error(v.error());
  if (*v) return **v;
  return make_error("missing field '" + std::string(*names.begin()) + "' in " + source);
}

// hidden size, layers, heads, vocabulary, KV heads and head_dim.
Result<bool> read_common(ModelConfig& m, const json& cfg, const std::string& source) {
  auto hidden = require_size(cfg, {"hidden_size", "n_embd", "d_model"}, source);
  auto layers = require_size(cfg, {"num_hidden_layers", "n_layer", "num_layers", "n_layers"}, source);
  auto heads = require_size(cfg, {"num_attention_heads", "n_head", "num_heads", "n_heads", "attention_heads"}, source);  // GPT-Neo: num_heads; XGLM: attention_heads
  auto vocab = require_size(cfg, {"vocab_size"}, source);
  for (const auto* v : {&hidden, &layers, &heads, &vocab}) {
    if (!*v) return make_error(v->error());
  }
  if (*layers > kMaxLayers)
    return make_error("field 'num_hidden_layers' in " + source + " is " + std::to_string(*layers) + ": vramdoc estimates at most " +
                      std::to_string(kMaxLayers) + " layers (each is simulated op by op; the largest published models have ~200)");
  m.hidden_size = *hidden, m.num_layers = *layers, m.num_heads = *heads, m.vocab_size = *vocab;
  auto kv = fields::size(cfg, {"num_key_value_heads", "num_kv_heads"}, source);
  auto head_dim = fields::size(cfg, {"head_dim"}, source);
  if (!kv) return make_error(kv.error());
  if (!head_dim) return make_error(head_dim.error());
  m.num_kv_heads = kv->value_or(m.num_heads);
  if (m.num_heads % m.num_kv_heads != 0) {
    return make_error("field 'num_key_value_heads' in " + source + " (" + std::to_string(m.num_kv_heads) +
                      ") does not divide num_attention_heads (" + std::to_string(m.num_heads) + ")");
  }
  if (*head_dim) {
    m.head_dim = **head_dim;
  } else if (m.hidden_size % m.num_heads != 0) {
    return make_error("field 'num_attention_heads' in " + source + " (" + std::to_string(m.num_heads) +
                      ") does not divide hidden_size (" + std::to_string(m.hidden_size) + ")");
  } else {
    m.head_dim = m.hidden_size / m.num_heads;
  }
  return true;
}

// An encoder-decoder whose widths sit in nested `encoder` and `decoder` configs (T5Gemma; transformers'
// composite configs, configuration_t5gemma.py: T5GemmaConfig(encoder=..., decoder=...)) as one config of the
// BART-style stand-in's fields: the decoder's widths, the encoder's layer count and MLP width beside them, the
// top level's vocabulary and tying. Returns whether it flattened.
bool flatten_encoder_decoder(json& cfg) {
  const auto enc = cfg.find("encoder"), dec = cfg.find("decoder");
  if (cfg.contains("hidden_size") || cfg.contains("d_model") || enc == cfg.end() || dec == cfg.end() || !enc->is_object() ||
      !dec->is_object() || !enc->contains("hidden_size") || !dec->contains("hidden_size")) {
    return false;
  }
  json flat = *dec;
  for (const char* key : {"hidden_size", "num_hidden_layers", "intermediate_size"})
    if (!dec->contains(key) || !enc->contains(key)) return false;
  flat["encoder_layers"] = (*enc)["num_hidden_layers"];
  flat["encoder_ffn_dim"] = (*enc)["intermediate_size"];
  if (flat.contains("head_dim")) flat["d_kv"] = flat["head_dim"];
  // each stack is a model of its own with its own embed_tokens (T5GemmaEncoder, T5GemmaDecoder): FSMT's reading of
  // an encoder's own table (encoder_attention.cpp)
  if (enc->contains("vocab_size") && dec->contains("vocab_size")) flat["src_vocab_size"] = (*enc)["vocab_size"], flat["tgt_vocab_size"] = (*dec)["vocab_size"];
  for (auto it = cfg.begin(); it != cfg.end(); ++it)
    if (it.key() != "encoder" && it.key() != "decoder") flat[it.key()] = it.value();
  flat["is_encoder_decoder"] = true;
  cfg = std::move(flat);
  return true;
}

// The config as one model (a wrapper's text_config for its language model).
Result<ModelConfig> parse_model(json cfg, const std::string& source) {
  const bool composite = flatten_encoder_decoder(cfg);
  if (auto text_cfg = cfg.find("text_config"); text_cfg != cfg.end() && text_cfg->is_object() &&
                                                 !cfg.contains("hidden_size")) {
    json inner = *text_cfg;  // multimodal wrappers keep the language model's fields here
    if (!inner.contains("quantization_config") && cfg.contains("quantization_config")) {
      inner["quantization_config"] = cfg["quantization_config"];
    }
    cfg = std::move(inner);
  }
  ModelConfig m;
  m.name = source;
  if (auto it = cfg.find("model_type"); it != cfg.end() && it->is_string()) m.model_type = it->get<std::string>();
  if (is_cnn_config(m.model_type, cfg)) {  // convolutional classifiers (cnn_config.cpp)
    if (auto ok = read_cnn_config(m, cfg, source); !ok) return make_error(ok.error());
    return m;
  }
  // a model type no reader knows: its attribute_map aliases as the canonical fields (config_aliases.cpp)
  std::vector<std::string> assumed;
  if (family_of(m.model_type) == Family::Generic && !has_encoder(m.model_type, json::object())) assumed = add_alias_fields(cfg, source);
  if (has_encoder(m.model_type, cfg)) {
    if (auto ok = read_encoder_config(m, cfg, source); !ok) return make_error(ok.error());
    if (composite) {
      m.warnings.push_back("the widths of " + source + " read from its nested encoder and decoder configs (the decoder's "
                           "heads and MLP for both stacks' attention, each stack's layers and MLP width)");
    }
    if (auto ok = read_audio_features(m, cfg, source); !ok) return make_error(ok.error());  // wav2vec2-style speech encoders
    m.warnings.insert(m.warnings.end(), assumed.begin(), assumed.end());
    return m;
  }
  m.family = family_of(m.model_type);
  // a state-space model has no attention heads: one placeholder head (nothing is sized by it; ssm_config.cpp)
  if (m.family == Family::Mamba && !cfg.contains("num_attention_heads")) cfg["num_attention_heads"] = 1;
  if (auto ok = read_common(m, cfg, source); !ok) return make_error(ok.error());
  if (auto ok = apply_family(m, cfg, source); !ok) return make_error(ok.error());
  if (auto ok = read_quantization(m, cfg, source); !ok) return make_error(ok.error());
  if (m.family == Family::Generic) {
    m.warnings.push_back("unknown model_type '" + m.model_type + "' in " + source +
                         ": generic decoder: expect +-30 % (estimated as a llama-style decoder; give the model "
                         "directory with its *.safetensors to size its tensors from the checkpoint)");
  }
  m.warnings.insert(m.warnings.end(), assumed.begin(), assumed.end());
  return m;
}

}  // namespace

Result<ModelConfig> parse_config_json(std::string_view text, const std::string& source) {
  json cfg = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (cfg.is_discarded()) return make_error(source + " is not valid JSON");
  if (!cfg.is_object()) return make_error(source + " is not a JSON object (expected a config.json)");
  auto tower = read_vision_tower(cfg, source);  // SigLIP / CLIP style: what --task image-cls runs
  // a model type no reader knows (a known family's malformed config stays its clear error)
  const std::string type = cfg.contains("model_type") && cfg["model_type"].is_string() ? cfg["model_type"].get<std::string>() : "";
  const bool unknown = family_of(type) == Family::Generic && !has_encoder(type, json::object()) && !is_cnn_config(type, json::object());
  const bool vision = unknown && looks_like_vision(cfg) && !cfg.contains("vocab_size") && !cfg.contains("text_config");
  const json original = vision ? cfg : json();
  auto parsed = parse_model(std::move(cfg), source);
  if (!parsed && vision) {  // never refused: a warned generic vision estimate (cnn_config.cpp)
    ModelConfig m;
    if (auto t = original.find("model_type"); t != original.end() && t->is_string()) m.model_type = t->get<std::string>();
    if (read_vision_fallback(m, original, source, parsed.error())) parsed = std::move(m);
  }
  // a vision_config that does not read (a multimodal decoder's tower of another shape) is left out: image-cls
  // then takes the generic vision stand-in, with its warning
  if (parsed && tower && *tower) parsed->vision_tower = *tower;
  return parsed;
}

}  // namespace vramdoc::estimator
