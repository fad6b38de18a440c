#include "cli/timeline_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/timeline/reader.hpp"

namespace vramdoc::cli {

Result<timeline::Timeline> load_timeline(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return make_error(path + ": is a directory, not a timeline file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error("cannot read " + path + ": " + std::strerror(errno));
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > (1ULL << 30)) return make_error(path + ": larger than 1 GiB; not a timeline vramdoc wrote");
  std::ostringstream text;
  text << in.rdbuf();
  return timeline::read_timeline(text.str(), path);
}

Result<bool> write_text_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return make_error("cannot write " + path + ": " + std::strerror(errno));
  out << text;
  out.flush();
  if (!out) return make_error("cannot write " + path + ": " + std::strerror(errno));
  return true;
}

}  // namespace vramdoc::cli
