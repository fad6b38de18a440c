#include "core/input_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <system_error>

#include "core/units.hpp"

namespace vramdoc {

namespace {

namespace fs = std::filesystem;

const char* kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory: return "a directory";
    case fs::file_type::fifo: return "a FIFO (named pipe)";
    case fs::file_type::character: return "a character device";
    case fs::file_type::block: return "a block device";
    case fs::file_type::socket: return "a socket";
    default: return "not a regular file";
  }
}

// Checks `path` without opening it (opening a FIFO would wait for a writer). Follows symlinks.
Result<std::uint64_t> regular_file_size(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec) return make_error("cannot read " + path + ": " + ec.message());
  if (status.type() != fs::file_type::regular) {
    return make_error(path + " is " + kind_of(status.type()) + ", not a file vramdoc can read");
  }
  const auto size = fs::file_size(path, ec);
  if (ec) return make_error("cannot read " + path + ": " + ec.message());
  return static_cast<std::uint64_t>(size);
}

// Reads `in` to its end, in pieces, failing as soon as more than `max_bytes` arrived.
Result<std::string> read_capped(std::istream& in, const std::string& name, std::uint64_t max_bytes,
                                std::uint64_t expected) {
  std::string text;
  text.reserve(static_cast<std::size_t>(std::min(expected, max_bytes)));
  char buffer[1 << 16];
  while (in) {
    in.read(buffer, sizeof buffer);
    text.append(buffer, static_cast<std::size_t>(in.gcount()));
    if (text.size() > max_bytes) return make_error(name + " is larger than " + format_bytes(max_bytes) + ": not an input vramdoc reads");
  }
  if (in.bad()) return make_error("cannot read " + name + ": a read error");
  return text;
}

// Gives `in` to `piece` in pieces until its end, failing as soon as more than `max_bytes` arrived.
Result<bool> pieces_capped(std::istream& in, const std::string& name, std::uint64_t max_bytes,
                           const std::function<bool(std::string_view)>& piece) {
  std::string buffer(std::size_t{1} << 20, '\0');
  std::uint64_t total = 0;
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    total += got;
    if (total > max_bytes) return make_error(name + " is larger than " + format_bytes(max_bytes) + ": not an input vramdoc reads");
    if (got > 0 && !piece(std::string_view(buffer.data(), got))) return true;
  }
  if (in.bad()) return make_error("cannot read " + name + ": a read error");
  return true;
}

}  // namespace

std::string input_name(const std::string& path) { return path == "-" ? "standard input" : path; }

Result<std::string> read_input_file(const std::string& path, std::uint64_t max_bytes) {
  if (path == "-") return read_capped(std::cin, input_name(path), max_bytes, 0);
  auto size = regular_file_size(path);
  if (!size) return make_error(size.error());
  if (*size > max_bytes) return make_error(path + " is larger than " + format_bytes(max_bytes) + ": not an input vramdoc reads");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path);
  return read_capped(in, path, max_bytes, *size);
}

Result<bool> read_input_pieces(const std::string& path, std::uint64_t max_bytes, const std::function<bool(std::string_view)>& piece) {
  if (path == "-") return pieces_capped(std::cin, input_name(path), max_bytes, piece);
  auto size = regular_file_size(path);
  if (!size) return make_error(size.error());
  if (*size > max_bytes) return make_error(path + " is larger than " + format_bytes(max_bytes) + ": not an input vramdoc reads");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path);
  return pieces_capped(in, path, max_bytes, piece);
}

Result<std::uint64_t> check_input_file(const std::string& path, std::uint64_t max_bytes) {
  auto size = regular_file_size(path);
  if (!size) return make_error(size.error());
  if (*size > max_bytes) return make_error(path + " is larger than " + format_bytes(max_bytes) + ": not an input vramdoc reads");
  return size;
}

Result<std::string> read_file_head(const std::string& path, std::uint64_t bytes) {
  auto size = regular_file_size(path);
  if (!size) return make_error(size.error());
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path);
  std::string text(static_cast<std::size_t>(std::min(bytes, *size)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return make_error("cannot read " + path + ": a read error");
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

}  // namespace vramdoc
