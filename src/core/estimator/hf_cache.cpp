#include "core/estimator/hf_cache.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>

#include "core/input_file.hpp"

namespace vramdoc::estimator {

namespace {

namespace fs = std::filesystem;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// The hub cache folder, by huggingface_hub's own order of precedence.
fs::path hub_cache() {
  if (auto v = env("HF_HUB_CACHE"); !v.empty()) return v;
  if (auto v = env("HUGGINGFACE_HUB_CACHE"); !v.empty()) return v;
  if (auto v = env("HF_HOME"); !v.empty()) return fs::path(v) / "hub";
  if (auto v = env("XDG_CACHE_HOME"); !v.empty()) return fs::path(v) / "huggingface" / "hub";
  return fs::path(env("HOME")) / ".cache" / "huggingface" / "hub";
}

bool has_config(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "config.json", ec);
}

// refs/main's commit, when it names a snapshot with a config.json. Read through the bounded
// reader: a refs/main that is /dev/zero or a FIFO is not a revision (it hung, or grew without end).
std::string main_revision(const fs::path& repo) {
  constexpr std::uint64_t kMaxRefBytes = 256;  // a commit id is 40 hex digits
  auto text = read_file_head((repo / "refs" / "main").string(), kMaxRefBytes);
  if (!text) return "";
  std::string rev = text->substr(0, text->find('\n'));
  rev.erase(std::remove_if(rev.begin(), rev.end(), [](unsigned char c) { return std::isspace(c); }), rev.end());
  const bool plain = !rev.empty() && rev.size() <= 64 &&
                     std::all_of(rev.begin(), rev.end(), [](unsigned char c) { return std::isalnum(c); });
  return plain && has_config(repo / "snapshots" / rev) ? rev : "";
}

}  // namespace

bool looks_like_model_id(const std::string& text) {
  const auto slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 == text.size() || text.find('/', slash + 1) != std::string::npos)
    return false;
  if (text.size() > 200 || text.find("..") != std::string::npos || text.front() == '.') return false;
  return std::all_of(text.begin(), text.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

Result<std::string> find_cached_model(const std::string& id) {
  if (!looks_like_model_id(id)) return make_error("'" + id + "' is not a model id (org/name)");
  const fs::path cache = hub_cache();
  const auto slash = id.find('/');
  const fs::path repo = cache / ("models--" + id.substr(0, slash) + "--" + id.substr(slash + 1));
  if (auto rev = main_revision(repo); !rev.empty()) return (repo / "snapshots" / rev).string();
  std::error_code ec;
  fs::path newest;
  fs::file_time_type newest_time{};
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
    std::error_code tec;
    const auto when = fs::last_write_time(entry.path(), tec);
    if (!tec && has_config(entry.path()) && (newest.empty() || when > newest_time)) newest = entry.path(), newest_time = when;
  }
  if (!newest.empty()) return newest.string();
  return make_error("model '" + id + "' is not in the local Hugging Face cache (" + repo.string() +
                    "); vramdoc reads only the cache (no network): fetch its config first, e.g. "
                    "huggingface-cli download " + id + " config.json");
}

}  // namespace vramdoc::estimator
