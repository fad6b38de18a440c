#include "core/estimator/safetensors.hpp"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

constexpr std::array<std::pair<std::string_view, std::uint64_t>, 14> kDtypeBytes = {{
    {"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2}, {"I64", 8}, {"I32", 4}, {"I16", 2}, {"I8", 1},
    {"U8", 1}, {"BOOL", 1}, {"F8_E4M3", 1}, {"F8_E5M2", 1}, {"U16", 2}, {"U32", 4}}};

// A tensor's [begin, end) in the data buffer, from its "data_offsets".
Result<std::pair<std::uint64_t, std::uint64_t>> data_offsets(const nlohmann::json& entry, const std::string& where) {
  const auto it = entry.find("data_offsets");
  if (it == entry.end() || !it->is_array() || it->size() != 2 || !(*it)[0].is_number_unsigned() ||
      !(*it)[1].is_number_unsigned())
    return make_error(where + " lacks data_offsets [begin, end] (two non-negative integers)");
  const auto begin = (*it)[0].get<std::uint64_t>(), end = (*it)[1].get<std::uint64_t>();
  if (end < begin) return make_error(where + " has data_offsets that end before they begin");
  return std::make_pair(begin, end);
}

// The format's rule: the tensors tile the data buffer from 0, without holes or overlaps; and the
// file holds that buffer, unless it holds none of it (a copy of the header alone).
Result<bool> check_buffer(std::vector<std::pair<std::uint64_t, std::uint64_t>> spans, std::optional<std::uint64_t> data_bytes,
                          const std::string& source) {
  std::sort(spans.begin(), spans.end());
  std::uint64_t at = 0;
  for (const auto& [begin, end] : spans) {
    if (begin != at)
      return make_error(source + ": the tensors' data_offsets " + std::string(begin > at ? "leave a hole" : "overlap") +
                        " at byte " + std::to_string(std::min(begin, at)) + " of the data: the header is corrupt");
    at = end;
  }
  if (data_bytes && *data_bytes > 0 && *data_bytes < at)
    return make_error(source + ": the header describes " + std::to_string(at) + " bytes of tensor data but the file holds " +
                      std::to_string(*data_bytes) + " (a cut-off download?)");
  return true;
}

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

Result<std::vector<TensorInfo>> parse_safetensors_header(std::string_view prefix, const std::string& source,
                                                         std::optional<std::uint64_t> data_bytes) {
  auto length = safetensors_header_length(prefix, source);
  if (!length) return make_error(length.error());
  if (prefix.size() - 8 < *length) return make_error(source + ": truncated safetensors header");
  auto header = nlohmann::json::parse(prefix.substr(8, *length), nullptr, false);
  if (header.is_discarded() || !header.is_object()) return make_error(source + ": safetensors header is not a JSON object");
  std::vector<TensorInfo> tensors;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> spans;
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
    auto span = data_offsets(entry, where);
    if (!span) return make_error(span.error());
    if (span->second - span->first != t.bytes)  // a shape that is not the stored data: believe neither
      return make_error(where + ": its data_offsets [" + std::to_string(span->first) + ", " + std::to_string(span->second) +
                        "] hold " + std::to_string(span->second - span->first) + " bytes, but shape x " + t.dtype + " is " +
                        std::to_string(t.bytes) + " bytes: the header is corrupt");
    spans.push_back(*span);
    tensors.push_back(std::move(t));
  }
  if (auto gap = check_buffer(spans, data_bytes, source); !gap) return make_error(gap.error());
  return tensors;
}

}  // namespace vramdoc::estimator
