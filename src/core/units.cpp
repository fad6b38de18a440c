#include "core/units.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>

namespace vramdoc {

std::string format_bytes(std::uint64_t bytes, int decimals) {
  static constexpr std::array<const char*, 7> kUnits = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < kUnits.size()) {
    value /= 1024.0;
    ++unit;
  }
  char buf[64];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.*f %s", decimals, value, kUnits[unit]);
  }
  return buf;
}

std::string format_gib(std::uint64_t bytes, int decimals) {
  if (bytes >= 1024 * GiB) return format_bytes(bytes, decimals);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, static_cast<double>(bytes) / static_cast<double>(GiB));
  return buf;
}

std::string format_gib_unit(std::uint64_t bytes, int decimals) {
  return bytes >= 1024 * GiB ? format_gib(bytes, decimals) : format_gib(bytes, decimals) + " GiB";
}

std::string format_rate(double bytes_per_second, int decimals) {
  static constexpr std::array<const char*, 5> kUnits = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
  double value = bytes_per_second;
  std::size_t unit = 0;
  while (std::fabs(value) >= 1000.0 && unit + 1 < kUnits.size()) {
    value /= 1000.0;
    ++unit;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f %s", decimals, value, kUnits[unit]);
  return buf;
}

namespace {

std::string lower(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// Splits "1.5gib" into 1.5 and "gib"; nullopt when the number part is malformed.
std::optional<std::pair<double, std::string>> split_number(std::string_view text) {
  std::string s = lower(text);
  std::size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.')) ++i;
  if (i == 0) return std::nullopt;
  std::string number = s.substr(0, i);
  if (number.find('.') != number.rfind('.')) return std::nullopt;
  char* end = nullptr;
  double value = std::strtod(number.c_str(), &end);
  if (end == number.c_str() || !std::isfinite(value)) return std::nullopt;
  return std::make_pair(value, s.substr(i));
}

}  // namespace

Result<std::uint64_t> parse_size(std::string_view text) {
  auto parts = split_number(text);
  if (!parts) return make_error("not a size: '" + std::string(text) + "' (expected e.g. 24GiB, 80GB, 512MiB)");
  auto [value, unit] = *parts;
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kib") scale = 0x1p10;
  else if (unit == "m" || unit == "mib") scale = 0x1p20;
  else if (unit == "g" || unit == "gib") scale = 0x1p30;
  else if (unit == "t" || unit == "tib") scale = 0x1p40;
  else if (unit == "kb") scale = 1e3;
  else if (unit == "mb") scale = 1e6;
  else if (unit == "gb") scale = 1e9;
  else if (unit == "tb") scale = 1e12;
  else return make_error("unknown size unit '" + unit + "' in '" + std::string(text) + "'");
  double bytes = value * scale;
  if (bytes >= 0x1p64) return make_error("size too large: '" + std::string(text) + "'");
  return static_cast<std::uint64_t>(std::llround(bytes));
}

Result<std::uint64_t> parse_memory_size(std::string_view text) {
  auto parts = split_number(text);
  if (parts && parts->second.empty()) {
    return make_error("'" + std::string(text) + "' has no unit: write e.g. " + std::string(text) + "GiB (binary) or " +
                      std::string(text) + "GB (decimal)");
  }
  auto bytes = parse_size(text);
  if (bytes && *bytes == 0) return make_error("'" + std::string(text) + "' is no memory at all: give a size above 0");
  return bytes;
}

Result<double> parse_duration(std::string_view text) {
  auto parts = split_number(text);
  if (!parts) return make_error("not a duration: '" + std::string(text) + "' (expected e.g. 20ms, 1s, 10m)");
  auto [value, unit] = *parts;
  double scale = 0;
  if (unit.empty() || unit == "s") scale = 1;
  else if (unit == "ms") scale = 1e-3;
  else if (unit == "us") scale = 1e-6;
  else if (unit == "m" || unit == "min") scale = 60;
  else if (unit == "h") scale = 3600;
  else if (unit == "d") scale = 86400;
  else return make_error("unknown duration unit '" + unit + "' in '" + std::string(text) + "'");
  const double seconds = value * scale;  // value is finite and below 10^309; scale at most 86400
  if (!std::isfinite(seconds) || seconds > kMaxDurationSeconds) {
    return make_error("duration too long: '" + std::string(text) + "' (at most 100 days)");
  }
  return seconds;
}

std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return checked_add(a, b).value_or(std::numeric_limits<std::uint64_t>::max());
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  return checked_mul(a, b).value_or(std::numeric_limits<std::uint64_t>::max());
}

}  // namespace vramdoc
