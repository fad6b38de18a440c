#include "core/trace/elf_file.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>

#include "core/trace/elf_note.hpp"

namespace vramdoc::trace {
namespace {

constexpr std::size_t kElfHeaderBytes = 64, kPhdrBytes = 56;
constexpr std::uint32_t kPtNote = 4;
constexpr std::uint64_t kMaxNoteBytes = 1 << 20;  // a note segment is a few hundred bytes

template <class T>
T get(const std::string& s, std::size_t at) {
  T value;
  std::memcpy(&value, s.data() + at, sizeof value);
  return value;
}

// `read(offset, bytes)` gives exactly those bytes or nullopt (outside the image).
template <class Read>
Result<std::optional<std::string>> build_id(Read read) {
  auto header = read(0, kElfHeaderBytes);
  if (!header || std::memcmp(header->data(), "\x7f" "ELF", 4) != 0) return make_error("not an ELF file");
  if ((*header)[4] != 2 || (*header)[5] != 1) return make_error("not a 64-bit little-endian ELF file");
  const auto phoff = get<std::uint64_t>(*header, 32);
  const auto phentsize = get<std::uint16_t>(*header, 54);
  const auto phnum = get<std::uint16_t>(*header, 56);
  if (phnum == 0) return std::optional<std::string>{};
  if (phentsize < kPhdrBytes) return make_error("ELF program headers of " + std::to_string(phentsize) + " bytes");
  if (static_cast<std::uint64_t>(phentsize) * phnum > kMaxNoteBytes)
    return make_error("ELF program header table of " + std::to_string(phnum) + " x " + std::to_string(phentsize) + " bytes");
  auto table = read(phoff, static_cast<std::uint64_t>(phentsize) * phnum);
  if (!table) return make_error("ELF program headers outside the file");
  for (std::size_t i = 0; i < phnum; ++i) {
    const std::size_t at = i * phentsize;
    if (get<std::uint32_t>(*table, at) != kPtNote) continue;
    const auto offset = get<std::uint64_t>(*table, at + 8);
    const auto bytes = get<std::uint64_t>(*table, at + 32);
    if (bytes > kMaxNoteBytes) return make_error("ELF note segment of " + std::to_string(bytes) + " bytes");
    auto notes = read(offset, bytes);
    if (!notes) return make_error("ELF note segment outside the file");
    const unsigned char* id = nullptr;
    std::size_t id_bytes = 0;
    if (find_build_id(reinterpret_cast<const unsigned char*>(notes->data()), notes->size(), &id, &id_bytes))
      return std::optional<std::string>(std::string(reinterpret_cast<const char*>(id), id_bytes));
  }
  return std::optional<std::string>{};
}

}  // namespace

Result<std::optional<std::string>> build_id_of_image(std::string_view bytes) {
  return build_id([&](std::uint64_t offset, std::uint64_t size) -> std::optional<std::string> {
    if (offset > bytes.size() || size > bytes.size() - offset) return std::nullopt;
    return std::string(bytes.substr(offset, size));
  });
}

Result<std::optional<std::string>> build_id_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return make_error("cannot open " + path);
  const auto file_size = static_cast<std::uint64_t>(in.tellg());
  auto id = build_id([&](std::uint64_t offset, std::uint64_t size) -> std::optional<std::string> {
    if (offset > file_size || size > file_size - offset) return std::nullopt;
    std::string out(size, '\0');
    in.seekg(static_cast<std::streamoff>(offset));
    if (!in.read(out.data(), static_cast<std::streamsize>(size))) return std::nullopt;
    return out;
  });
  if (!id) return make_error(path + ": " + id.error());
  return id;
}

std::string hex_bytes(std::string_view raw) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) out += digits[c >> 4], out += digits[c & 15];
  return out;
}

}  // namespace vramdoc::trace
