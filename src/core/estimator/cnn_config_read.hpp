// The readers of config.json fields shared by the CNN configs' readers (cnn_config.cpp, cnn_config_more.cpp):
// lists of sizes, sizes, numbers and strings with transformers' class defaults where a field is left out, and clear
// errors naming the field and the file.
#pragma once
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/estimator/cnn_parts.hpp"
#include "core/estimator/config_fields.hpp"
#include "core/estimator/model_config.hpp"
#include "core/result.hpp"
#include "core/units.hpp"

namespace vramdoc::estimator::cnn_read {

using nlohmann::json;
using u64 = std::uint64_t;

inline constexpr u64 kMaxChannels = 1ULL << 20;
inline constexpr u64 kMaxImageSide = 1ULL << 16;

// A list of positive integers below `max` (a stage's depths or widths), or `fallback` when absent.
inline Result<std::vector<u64>> sizes(const json& cfg, const char* name, const std::string& source, std::vector<u64> fallback,
                               u64 max = kMaxChannels, u64 min = 1) {
  const auto it = cfg.find(name);
  if (it == cfg.end() || it->is_null()) return fallback;
  const std::string where = "field '" + std::string(name) + "' in " + source;
  if (!it->is_array()) return make_error(where + " is not a list of sizes");
  std::vector<u64> out;
  for (const json& v : *it) {
    const double d = v.is_number() ? v.get<double>() : -1.0;
    if (!std::isfinite(d) || d != std::floor(d) || d < static_cast<double>(min)) {
      return make_error(where + " holds " + v.dump() + (min > 0 ? ": expected positive integers" : ": expected integers of 0 or more"));
    }
    if (d >= static_cast<double>(max)) return make_error(where + " holds " + v.dump() + ": absurdly large (at most " + std::to_string(max - 1) + ")");
    out.push_back(static_cast<u64>(d));
  }
  return out;
}

inline Result<u64> size(const json& cfg, const char* name, const std::string& source, u64 fallback, u64 max = kMaxChannels) {
  auto v = fields::size(cfg, {name}, source);
  if (!v) return make_error(v.error());
  if (*v && **v >= max) return make_error("field '" + std::string(name) + "' in " + source + " is absurdly large: " + std::to_string(**v));
  return v->value_or(fallback);
}

// A positive finite number at most `max` (EfficientNet's coefficients), or `fallback` when absent.
inline Result<double> number(const json& cfg, const char* name, const std::string& source, double fallback, double max = 64.0) {
  const auto it = cfg.find(name);
  if (it == cfg.end() || it->is_null()) return fallback;
  const double v = it->is_number() ? it->get<double>() : -1.0;
  if (!std::isfinite(v) || v <= 0 || v > max) {
    return make_error("field '" + std::string(name) + "' in " + source + " must be a positive number up to " + std::to_string(max) +
                      ", got " + it->dump());
  }
  return v;
}

inline std::string string_or(const json& cfg, const char* name, std::string fallback) {
  const auto it = cfg.find(name);
  return it != cfg.end() && it->is_string() ? it->get<std::string>() : fallback;
}

inline u64 labels_of(const json& cfg) {
  if (auto it = cfg.find("id2label"); it != cfg.end() && it->is_object() && !it->empty()) return it->size();
  if (auto it = cfg.find("num_labels"); it != cfg.end() && it->is_number_unsigned()) {
    return std::min<u64>(it->get<u64>(), 1ULL << 24);
  }
  return 2;  // PretrainedConfig's default
}

// Reads one field into `out`, or leaves the first error in `error`.
template <typename T>
inline void take(Result<T> r, T& out, std::string& error) {
  if (!r) {
    if (error.empty()) error = r.error();
  } else {
    out = *r;
  }
}

// cnn_config_more.cpp: the families read there (round 8), by the fields that name their mechanism: HGNet-V2's
// stage_mid_channels, TextNet's conv_layer_kernel_sizes, spatial-reduction attention's sr_ratios /
// sequence_reduction_ratios, MobileViT V2's base_attn_unit_dims, SwiftFormer's embed_dims with downsamples and
// down_patch_size, CvT's kernel_qkv and stride_kv, Hiera's masked_unit_attention and query_stride; nothing for any
// other config.
std::optional<CnnArch> arch_by_fields(const json& cfg);
void read_hgnet_v2(CnnParts& p, const json& cfg, const std::string& source, std::string& error);
void read_textnet(CnnParts& p, const json& cfg, const std::string& source, std::string& error);
void read_spatial_reduction_vit(CnnParts& p, const json& cfg, const std::string& source, std::string& error);
void read_mobilevit_v2(CnnParts& p, const json& cfg, const std::string& source, std::string& error);
void read_swiftformer(CnnParts& p, const json& cfg, const std::string& source, std::string& error);
void read_cvt(CnnParts& p, const json& cfg, const std::string& source, std::string& error);
void read_hiera(CnnParts& p, const json& cfg, const std::string& source, std::string& error);

}  // namespace vramdoc::estimator::cnn_read
