#include "core/estimator/config_aliases.hpp"
#include "core/estimator/stage_vision.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>

namespace vramdoc::estimator {

namespace {

using nlohmann::json;

bool positive_integer(const json& v) {
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && d >= 1 && d == std::floor(d) && d < static_cast<double>(1ULL << 40);
}

bool has(const json& cfg, const char* name) {
  const auto it = cfg.find(name);
  return it != cfg.end() && !it->is_null();
}

// The first alias present as a positive integer, or a list of them (per-stage values: its last entry,
// the widest stage's; its sum where `sum_lists`: the layers of all stages).
std::optional<std::uint64_t> first_of(const json& cfg, std::initializer_list<const char*> names, bool sum_lists) {
  for (const char* name : names) {
    const auto it = cfg.find(name);
    if (it == cfg.end() || it->is_null()) continue;
    if (positive_integer(*it)) return it->get<std::uint64_t>();
    if (it->is_array() && !it->empty()) {
      std::uint64_t sum = 0;
      bool all = true;
      for (const json& v : *it) {
        if (!positive_integer(v)) {
          all = false;
          break;
        }
        sum = std::min<std::uint64_t>(sum + v.get<std::uint64_t>(), 1ULL << 40);
      }
      if (all) return sum_lists ? sum : it->back().get<std::uint64_t>();
      if (sum_lists) return it->size();  // a list of layer descriptions (Reformer's attn_layers)
    }
  }
  return std::nullopt;
}

void fill(json& cfg, const char* canonical, std::initializer_list<const char*> aliases, bool sum_lists = false) {
  if (has(cfg, canonical)) return;
  if (auto v = first_of(cfg, aliases, sum_lists)) cfg[canonical] = *v;
}

// A canonical field given as a per-stage list (LeViT's, SegFormer's num_attention_heads): its widest stage's
// value (the last), or for the layers their sum.
void scalar_of_list(json& cfg, const char* name, bool sum) {
  const auto it = cfg.find(name);
  if (it == cfg.end() || !it->is_array()) return;
  const json list = *it;
  cfg.erase(name);
  if (auto v = first_of(json{{"v", list}}, {"v"}, sum)) cfg[name] = *v;
}

}  // namespace

std::vector<std::string> add_alias_fields(json& cfg, const std::string& source) {
  std::vector<std::string> assumed;
  normalize_stage_vision(cfg);  // PVT v2, CvT, SegFormer-like stage lists as the Swin-style stand-in's fields
  if (!has(cfg, "num_heads") && cfg.contains("num_attention_heads") && cfg["num_attention_heads"].is_array()) cfg["num_heads"] = cfg["num_attention_heads"];
  for (const char* name : {"hidden_size", "num_attention_heads", "intermediate_size"}) scalar_of_list(cfg, name, false);
  scalar_of_list(cfg, "num_hidden_layers", true);
  // a hierarchical vision model (per-stage depths) is read as Swin: its first stage's width and per-stage heads
  if (!has(cfg, "embed_dim")) {
    if (const auto it = cfg.find("hidden_sizes"); it != cfg.end() && it->is_array() && !it->empty() && positive_integer(it->front())) {
      cfg["embed_dim"] = it->front();
    }
  }
  // YOLOS' image_size [height, width]: the square of as many patches
  if (const auto it = cfg.find("image_size"); it != cfg.end() && it->is_array() && it->size() == 2 && positive_integer((*it)[0]) &&
                                                positive_integer((*it)[1])) {
    cfg["image_size"] = static_cast<std::uint64_t>(std::llround(std::sqrt((*it)[0].get<double>() * (*it)[1].get<double>())));
  }
  // attribute_map of each configuration_*.py: GPT-2 / CTRL / CodeGen n_embd, MPT / XLNet / BART-likes d_model,
  // XLM emb_dim, DistilBERT dim; per-stage hidden_sizes (SegFormer, LeViT, MobileViT: the widest stage)
  fill(cfg, "hidden_size", {"n_embd", "d_model", "emb_dim", "dim", "hidden_sizes", "embed_dim"});
  fill(cfg, "num_hidden_layers", {"depths", "n_layer", "n_layers", "num_layers", "num_decoder_layers", "decoder_layers",
                                  "num_encoder_layers", "encoder_layers", "block_sizes", "attn_layers"}, true);
  fill(cfg, "num_attention_heads", {"n_head", "n_heads", "num_heads", "attention_heads", "decoder_attention_heads",
                                    "num_decoder_attention_heads", "encoder_attention_heads", "num_encoder_attention_heads"});
  fill(cfg, "intermediate_size", {"ffn_dim", "decoder_ffn_dim", "encoder_ffn_dim", "d_ff", "d_inner", "dff", "n_inner"});
  fill(cfg, "head_dim", {"kv_channels"});  // JetMoeConfig's attribute_map
  fill(cfg, "vocab_size", {"tgt_vocab_size", "target_vocab_size", "src_vocab_size", "n_vocab", "num_tokens"});
  if (!has(cfg, "hidden_size")) return assumed;  // nothing to estimate a transformer from: the caller's error names it
  if (has(cfg, "conv_dim")) {  // wav2vec2-style speech encoders
    assumed.push_back("a speech encoder in " + source + ": --seq is its frames (one per conv_stride's product of samples: "
                      "20 ms at 16 kHz); its convolutional feature extractor is modelled op by op, its transformer as a generic encoder");
  }
  if (!has(cfg, "num_hidden_layers")) {  // MobileViT: its layers per block are in its modelling code
    cfg["num_hidden_layers"] = 12;
    assumed.push_back("no layer count in " + source + ": estimated with 12 layers");
  }
  const std::uint64_t hidden = positive_integer(cfg["hidden_size"]) ? cfg["hidden_size"].get<std::uint64_t>() : 0;
  if (!has(cfg, "num_attention_heads") && hidden > 0) {  // Mamba, RWKV: no attention
    const std::uint64_t heads = hidden % 64 == 0 ? hidden / 64 : 1;
    cfg["num_attention_heads"] = heads;
    assumed.push_back("no attention heads in " + source + " (a recurrent or state-space model?): estimated with " +
                      std::to_string(heads) + " attention heads of " + std::to_string(hidden / heads));
  }
  const bool vision = has(cfg, "image_size") || has(cfg, "num_channels") || has(cfg, "patch_size") || has(cfg, "depths");
  // CANINE has no vocabulary: its characters' hash tables have num_hash_buckets rows each (configuration_canine.py,
  // default 16384)
  if (!has(cfg, "vocab_size") && has(cfg, "num_hash_functions")) {
    const bool buckets = has(cfg, "num_hash_buckets") && positive_integer(cfg["num_hash_buckets"]);
    cfg["vocab_size"] = buckets ? cfg["num_hash_buckets"].get<std::uint64_t>() : std::uint64_t{16384};
  }
  if (!has(cfg, "vocab_size") && !vision) {
    cfg["vocab_size"] = 32000;
    assumed.push_back("no vocab_size in " + source + ": estimated with 32000 tokens");
  }
  return assumed;
}

}  // namespace vramdoc::estimator
