#include "cli/timeline_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "backends/private_files.hpp"
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

Result<std::FILE*> open_timeline_file(std::string& path, bool chosen_by_vramdoc) {
  if (!chosen_by_vramdoc) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) return make_error("cannot write " + path + ": " + std::strerror(errno));
    return f;
  }
  const std::string stem = path.ends_with(".jsonl") ? path.substr(0, path.size() - 6) : path;
  for (int n = 1; n <= 100; ++n) {
    const std::string name = n == 1 ? path : stem + "-" + std::to_string(n) + ".jsonl";
    auto fd = backends::open_private_file(name, true);
    if (!fd && errno == EEXIST) continue;
    if (!fd) return make_error(fd.error());
    path = name;
    std::FILE* f = fdopen(*fd, "w");
    if (!f) close(*fd);
    if (!f) return make_error("cannot write " + path + ": " + std::strerror(errno));
    return f;
  }
  return make_error("cannot write " + path + ": 100 files of that name exist; give --out");
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
