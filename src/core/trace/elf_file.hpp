// The build-id of an ELF file on disk (64-bit little-endian, the only kind a CUDA host runs).
#pragma once
#include <optional>
#include <string>
#include <string_view>

#include "core/result.hpp"

namespace vramdoc::trace {

// The raw build-id bytes of an ELF image given whole (`bytes`): nullopt when it has none; an
// error when it is not a 64-bit little-endian ELF or its headers point outside it.
Result<std::optional<std::string>> build_id_of_image(std::string_view bytes);

// The same for a file: reads its ELF header, program headers and notes only (not the whole file).
Result<std::optional<std::string>> build_id_of_file(const std::string& path);

// Lowercase hex of raw bytes, as `readelf -n` and `file` print build-ids.
std::string hex_bytes(std::string_view raw);

}  // namespace vramdoc::trace
