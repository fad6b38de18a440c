#include "core/estimator/model_config.hpp"

#include <array>
#include <cmath>
#include <initializer_list>
#include <vector>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

constexpr std::uint64_t kMaxDimension = 1ULL << 40;  // far beyond any real model, keeps products in range

struct FamilyName {
  std::string_view model_type;
  Family family;
};
constexpr std::array<FamilyName, 9> kFamilies = {{
    {"llama", Family::Llama}, {"mistral", Family::Mistral}, {"qwen2", Family::Qwen2},
    {"qwen3", Family::Qwen3}, {"gemma", Family::Gemma},     {"phi3", Family::Phi3},
    {"gpt2", Family::Gpt2},   {"mixtral", Family::Mixtral}, {"", Family::Generic},
}};

// Reads the first present field of `names` as a positive integer; nullopt when none is present
// (or present as null). Errors name the field and the file.
Result<std::optional<std::uint64_t>> read_size(const json& cfg, std::initializer_list<const char*> names,
                                                const std::string& source) {
  for (const char* name : names) {
    auto it = cfg.find(name);
    if (it == cfg.end() || it->is_null()) continue;
    const std::string where = "field '" + std::string(name) + "' in " + source;
    if (!it->is_number()) return make_error(where + " is not a number");
    double value = it->get<double>();
    if (!std::isfinite(value) || value != std::floor(value)) return make_error(where + " is not an integer");
    if (value <= 0) return make_error(where + " must be positive, got " + it->dump());
    if (value >= static_cast<double>(kMaxDimension)) return make_error(where + " is absurdly large: " + it->dump());
    return std::optional<std::uint64_t>(static_cast<std::uint64_t>(value));
  }
  return std::optional<std::uint64_t>();
}

Result<std::uint64_t> require_size(const json& cfg, const std::vector<const char*>& names, const std::string& source) {
  for (const char* name : names) {
    auto v = read_size(cfg, {name}, source);
    if (!v) return make_error(v.error());
    if (*v) return **v;
  }
  return make_error("missing field '" + std::string(names.front()) + "' in " + source);
}

double read_fraction(const json& cfg, const char* name, double fallback) {
  auto it = cfg.find(name);
  if (it == cfg.end() || !it->is_number()) return fallback;
  double v = it->get<double>();
  return std::isfinite(v) && v >= 0 && v < 1 ? v : fallback;
}

bool read_bool(const json& cfg, const char* name, bool fallback) {
  auto it = cfg.find(name);
  return it != cfg.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

// transformers' per-class defaults for the fields config.json may leave out.
void apply_family_defaults(ModelConfig& m, const json& cfg) {
  m.tie_word_embeddings = read_bool(cfg, "tie_word_embeddings", m.family == Family::Gpt2 || m.family == Family::Gemma);
  m.attention_bias = m.family == Family::Qwen2 || m.family == Family::Gpt2 || read_bool(cfg, "attention_bias", false);
  if (m.family == Family::Gpt2) {
    m.attention_dropout = read_fraction(cfg, "attn_pdrop", 0.1);
    m.residual_dropout = read_fraction(cfg, "resid_pdrop", 0.1);
  } else {
    m.attention_dropout = read_fraction(cfg, "attention_dropout", 0.0);
    m.residual_dropout = read_fraction(cfg, "resid_pdrop", 0.0);
  }
}

}  // namespace

std::string_view family_name(Family family) {
  for (const auto& f : kFamilies) {
    if (f.family == family) return f.model_type.empty() ? std::string_view("generic decoder") : f.model_type;
  }
  return "generic decoder";
}

Result<ModelConfig> parse_config_json(std::string_view text, const std::string& source) {
  json cfg = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (cfg.is_discarded()) return make_error(source + " is not valid JSON");
  if (!cfg.is_object()) return make_error(source + " is not a JSON object (expected a config.json)");
  if (auto text_cfg = cfg.find("text_config"); text_cfg != cfg.end() && text_cfg->is_object() &&
                                                 !cfg.contains("hidden_size")) {
    cfg = *text_cfg;  // multimodal wrappers keep the language model's fields here
  }
  ModelConfig m;
  m.name = source;
  if (auto it = cfg.find("model_type"); it != cfg.end() && it->is_string()) m.model_type = it->get<std::string>();
  for (const auto& f : kFamilies) {
    if (f.model_type == m.model_type) m.family = f.family;
  }
  if (m.family == Family::Generic) {
    m.warnings.push_back("unknown model_type '" + m.model_type + "' in " + source +
                         ": estimated as a generic llama-style decoder");
  }
  const bool gpt2 = m.family == Family::Gpt2;
  // vectors, not initializer_lists: an initializer_list's storage would dangle in this array
  const std::pair<std::uint64_t*, std::vector<const char*>> required[] = {
      {&m.hidden_size, {"hidden_size", "n_embd", "d_model"}},
      {&m.num_layers, {"num_hidden_layers", "n_layer", "num_layers"}},
      {&m.num_heads, {"num_attention_heads", "n_head"}},
      {&m.vocab_size, {"vocab_size"}},
  };
  for (const auto& [field, names] : required) {
    auto v = require_size(cfg, names, source);
    if (!v) return make_error(v.error());
    *field = *v;
  }
  auto kv = read_size(cfg, {"num_key_value_heads"}, source);
  auto head_dim = read_size(cfg, {"head_dim"}, source);
  auto inter = read_size(cfg, {"intermediate_size", "n_inner", "ffn_dim"}, source);
  auto window = read_size(cfg, {"sliding_window"}, source);
  auto positions = read_size(cfg, {"n_positions", "max_position_embeddings"}, source);
  auto experts = read_size(cfg, {"num_local_experts", "num_experts"}, source);
  auto per_token = read_size(cfg, {"num_experts_per_tok"}, source);
  for (const auto* r : {&kv, &head_dim, &inter, &window, &positions, &experts, &per_token}) {
    if (!*r) return make_error(r->error());
  }
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
  if (*inter) {
    m.intermediate_size = **inter;
  } else if (gpt2) {
    m.intermediate_size = 4 * m.hidden_size;  // GPT2Config: n_inner None means 4 * n_embd
  } else {
    return make_error("missing field 'intermediate_size' in " + source);
  }
  if (gpt2) {
    if (!*positions) return make_error("missing field 'n_positions' in " + source);
    m.max_positions = **positions;
  }
  const bool sliding = m.family == Family::Mistral || read_bool(cfg, "use_sliding_window", false);
  if (sliding && *window) m.sliding_window = **window;
  if (m.family == Family::Mixtral || *experts) {
    m.num_experts = experts->value_or(8);
    m.experts_per_token = per_token->value_or(2);
    if (m.experts_per_token > m.num_experts) {
      return make_error("field 'num_experts_per_tok' in " + source + " exceeds the number of experts");
    }
  }
  apply_family_defaults(m, cfg);
  return m;
}

}  // namespace vramdoc::estimator
