// The GNU build-id of an ELF module, from its notes (NT_GNU_BUILD_ID in a PT_NOTE segment): the
// tracer reads it from the loaded image, symbolisation from the file on disk, and a frame is
// only named from a file whose build-id is the one the traced process ran. Header-only, no
// allocation (the tracer calls it inside the traced process), every length bounds-checked.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vramdoc::trace {

inline constexpr std::size_t kMaxBuildIdBytes = 64;  // SHA-1 ids are 20 bytes, md5/uuid 16

// The build-id in a block of ELF notes (the bytes of one PT_NOTE segment): on success `*id`
// points into `notes` and `*id_bytes` is 1..kMaxBuildIdBytes. Notes are 4-byte aligned (the
// GNU toolchain's), names and descriptors padded to 4.
inline bool find_build_id(const unsigned char* notes, std::size_t size, const unsigned char** id, std::size_t* id_bytes) {
  constexpr std::uint32_t kNtGnuBuildId = 3;
  std::size_t at = 0;
  while (at <= size && size - at >= 12) {
    std::uint32_t name_bytes, desc_bytes, type;
    std::memcpy(&name_bytes, notes + at, 4);
    std::memcpy(&desc_bytes, notes + at + 4, 4);
    std::memcpy(&type, notes + at + 8, 4);
    at += 12;
    const std::size_t name_padded = (static_cast<std::size_t>(name_bytes) + 3) / 4 * 4;
    const std::size_t desc_padded = (static_cast<std::size_t>(desc_bytes) + 3) / 4 * 4;
    if (name_padded > size - at) return false;
    const unsigned char* name = notes + at;
    at += name_padded;
    if (desc_padded > size - at) return false;
    if (type == kNtGnuBuildId && name_bytes == 4 && std::memcmp(name, "GNU", 4) == 0 && desc_bytes > 0 &&
        desc_bytes <= kMaxBuildIdBytes) {
      *id = notes + at;
      *id_bytes = desc_bytes;
      return true;
    }
    at += desc_padded;
  }
  return false;
}

}  // namespace vramdoc::trace
