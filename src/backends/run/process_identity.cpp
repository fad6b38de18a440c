#include "backends/run/process_identity.hpp"

#include <unistd.h>

#include <charconv>
#include <fstream>
#include <map>
#include <optional>

#include "core/redact.hpp"

namespace vramdoc::backends {

namespace {

std::string read_start(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::optional<long> plain_rank(std::string_view v) {
  long n = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || n < 0 || n > 100'000'000) return std::nullopt;
  return n;
}

// The first of `keys` in `vars` that holds a plain number.
std::optional<long> first_rank(const std::map<std::string_view, std::string_view>& vars, std::initializer_list<std::string_view> keys) {
  for (auto key : keys)
    if (auto it = vars.find(key); it != vars.end())
      if (auto n = plain_rank(it->second)) return n;
  return std::nullopt;
}

}  // namespace

void read_ranks(std::string_view environ_text, timeline::ProcessInfo& who) {
  std::map<std::string_view, std::string_view> vars;
  for (std::size_t pos = 0; pos < environ_text.size();) {
    std::size_t end = environ_text.find('\0', pos);
    if (end == std::string_view::npos) end = environ_text.size();
    const auto entry = environ_text.substr(pos, end - pos);
    if (const auto eq = entry.find('='); eq != std::string_view::npos) vars.emplace(entry.substr(0, eq), entry.substr(eq + 1));
    pos = end + 1;
  }
  who.rank = first_rank(vars, {"RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"});
  who.local_rank = first_rank(vars, {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"});
}

timeline::ProcessInfo read_process_identity(std::uint32_t pid, unsigned gpu, const std::string& host, const std::string& proc_root) {
  timeline::ProcessInfo who;
  who.host = host;
  who.pid = pid;
  who.gpu = gpu;
  const std::string dir = proc_root + "/" + std::to_string(pid);
  who.command = read_start(dir + "/comm", 256);
  if (!who.command.empty() && who.command.back() == '\n') who.command.pop_back();
  who.command = redact_text(who.command);  // a process may name itself anything (docs/security.md)
  read_ranks(read_start(dir + "/environ", 1 << 20), who);  // environments are rarely above a few KiB
  return who;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace vramdoc::backends
