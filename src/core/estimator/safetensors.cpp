#include "core/estimator/safetensors.hpp"

#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 14> kDtypeBytes = {{
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2}, {"I8", 1},
    {"U8", 1}, {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"U16", 2}, {"U32", 4}}};

}  // namespace

Result<std::uint64_t> safetensors_header_length(std::string_view first8, const std::string& source) {
  if (first8.size() < 8) return make_error(source + ": truncated safetensors file (no 8-byte header length)");
  std::uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | static_cast<unsigned char>(first8[static_cast<std::size_t>(i)]);
  if (length == 0 || length > kMaxSafetensorsHeaderBytes) {
    return make_error(source + ": safetensors header length " + std::to_string(length) + " is not plausible");
  }
  return length;
}

Result<std::vector<TensorInfo>> parse_safetensors_header(std::string_view prefix, const std::string& source) {
  auto length = safetensors_header_length(prefix, source);
  if (!length) return make_error(length.error());
  if (prefix.size() - 8 < *length) return make_error(source + ": truncated safetensors header");
  auto header = nlohmann::json::parse(prefix.substr(8, *length), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return make_error(source + ": safetensors header is not a JSON object");
  std::vector<TensorInfo> tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string where = source + ": tensor '" + name + "'";
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array()) {
      return make_error(where + " lacks a dtype string or a shape list");
    }
    TensorInfo t{name, entry["dtype"].get<std::string>(), {}, 0};
    std::uint64_t width = 0;
    for (const auto& [dtype, bytes] : kDtypeBytes) width = dtype == t.dtype ? bytes : width;
    if (width == 0) return make_error(where + " has an unknown dtype '" + t.dtype + "'");
    std::uint64_t elements = 1;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_unsigned()) return make_error(where + " has a shape entry that is not a non-negative integer");
      t.shape.push_back(d.get<std::uint64_t>());
      auto product = checked_mul(elements, t.shape.back());
      if (!product) return make_error(where + " has an absurd shape (overflows 64 bits)");
      elements = *product;
    }
    auto bytes = checked_mul(elements, width);
    if (!bytes) return make_error(where + " has an absurd shape (overflows 64 bits)");
    t.bytes = *bytes;
    tensors.push_back(std::move(t));
  }
  return tensors;
}

}  // namespace vramdoc::estimator
