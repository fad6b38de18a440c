#include "core/estimator/config_fields.hpp"

#include <cmath>

namespace vramdoc::estimator::fields {

namespace {

constexpr double kMaxDimension = static_cast<double>(1ULL << 40);  // far beyond any real model

Result<std::optional<std::uint64_t>> integer(const nlohmann::json& value, const std::string& where, bool zero_ok) {
  if (!value.is_number()) return make_error(where + " is not a number");
  const double v = value.get<double>();
  if (!std::isfinite(v) || v != std::floor(v)) return make_error(where + " is not an integer");
  if (v < 0 || (v == 0 && !zero_ok)) return make_error(where + " must be positive, got " + value.dump());
  if (v >= kMaxDimension) return make_error(where + " is absurdly large: " + value.dump());
  return std::optional<std::uint64_t>(static_cast<std::uint64_t>(v));
}

}  // namespace

Result<std::optional<std::uint64_t>> size(const nlohmann::json& cfg, std::initializer_list<const char*> names,
                                          const std::string& source) {
  for (const char* name : names) {
    auto it = cfg.find(name);
    if (it == cfg.end() || it->is_null()) continue;
    return integer(*it, "field '" + std::string(name) + "' in " + source, false);
  }
  return std::optional<std::uint64_t>();
}

Result<std::optional<std::uint64_t>> count(const nlohmann::json& cfg, const char* name, const std::string& source) {
  auto it = cfg.find(name);
  if (it == cfg.end() || it->is_null()) return std::optional<std::uint64_t>();
  return integer(*it, "field '" + std::string(name) + "' in " + source, true);
}

bool flag(const nlohmann::json& cfg, const char* name, bool fallback) {
  auto it = cfg.find(name);
  return it != cfg.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

double fraction(const nlohmann::json& cfg, const char* name, double fallback) {
  auto it = cfg.find(name);
  if (it == cfg.end() || !it->is_number()) return fallback;
  const double v = it->get<double>();
  return std::isfinite(v) && v >= 0 && v < 1 ? v : fallback;
}

double positive_number(const nlohmann::json& cfg, const char* name) {
  auto it = cfg.find(name);
  if (it == cfg.end() || !it->is_number()) return 0.0;
  const double v = it->get<double>();
  return std::isfinite(v) && v > 0 ? v : 0.0;
}

}  // namespace vramdoc::estimator::fields
