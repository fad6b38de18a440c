// The header of a .safetensors file (8-byte little-endian length, then JSON): tensor names,
// dtypes and shapes. Only the header is read, never the weights.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hpp"

namespace vramdoc::estimator {

struct TensorInfo {
  std::string name;
  std::string dtype;                  // "BF16", "F32", ...
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;            // elements x dtype width
};

// Largest header accepted (the format's own limit is 100 MB).
constexpr std::uint64_t kMaxSafetensorsHeaderBytes = 100'000'000;

// Parses the header from the file's first bytes: `prefix` must hold at least 8 + length bytes.
// `source` names the file in errors (truncated, oversized, not JSON, bad dtype or shape). Each
// tensor's data_offsets must span exactly shape x dtype bytes, and together tile the data buffer
// (the format's rule); `data_bytes`, when known, is what the file holds after the header: it
// must hold the whole buffer, or none of it (a copy of the header alone is read too).
Result<std::vector<TensorInfo>> parse_safetensors_header(std::string_view prefix, const std::string& source,
                                                         std::optional<std::uint64_t> data_bytes = std::nullopt);
// The header length announced by the first 8 bytes; an error when fewer than 8 or oversized.
Result<std::uint64_t> safetensors_header_length(std::string_view first8, const std::string& source);

}  // namespace vramdoc::estimator
