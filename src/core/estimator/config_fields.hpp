// Reading config.json fields for the estimator: sizes (positive integers below 2^40), flags and
// fractions, with errors that name the field and the file. Shared by model_config.cpp and families.cpp.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/result.hpp"

namespace vramdoc::estimator::fields {

// The first present (non-null) field of `names` as a positive integer; nullopt when none is there.
Result<std::optional<std::uint64_t>> size(const nlohmann::json& cfg, std::initializer_list<const char*> names,
                                          const std::string& source);
// Like size(), but 0 is allowed (e.g. first_k_dense_replace).
Result<std::optional<std::uint64_t>> count(const nlohmann::json& cfg, const char* name, const std::string& source);
// A boolean field, or `fallback` when absent or not a boolean.
bool flag(const nlohmann::json& cfg, const char* name, bool fallback);
// A fraction in [0, 1), or `fallback` when absent or out of range.
double fraction(const nlohmann::json& cfg, const char* name, double fallback);
// A positive finite number (soft-capping values), or 0 when absent or null.
double positive_number(const nlohmann::json& cfg, const char* name);

}  // namespace vramdoc::estimator::fields
