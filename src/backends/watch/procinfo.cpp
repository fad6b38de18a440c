#include "backends/watch/procinfo.hpp"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include "core/redact.hpp"

namespace vramdoc::backends {

namespace {

std::optional<std::string> slurp(const std::string& path, std::size_t limit = 64 * 1024) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::string text(limit, '\0');
  in.read(text.data(), static_cast<std::streamsize>(limit));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (in.bad()) return std::nullopt;
  return text;
}

// The value of "Key:" in a /proc status text, trimmed; empty when absent.
std::optional<std::string> status_field(const std::string& status, const std::string& key) {
  std::istringstream in(status);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::string value = line.substr(key.size() + 1);
    std::size_t first = value.find_first_not_of(" \t");
    return first == std::string::npos ? std::string() : value.substr(first);
  }
  return std::nullopt;
}

std::optional<std::string> user_name(std::uint32_t uid) {
  struct passwd pw{};
  struct passwd* found = nullptr;
  char buf[4096];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found) return std::string(found->pw_name);
  return std::to_string(uid);
}

// Container ids are lower-case hex.
bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// The UUID shape 8-4-4-4-12 of lower-case hex at text[at], with '-' or (systemd) '_' between.
bool uuid_at(const std::string& text, std::size_t at) {
  static constexpr std::size_t kDash[] = {8, 13, 18, 23};
  if (at + 36 > text.size()) return false;
  for (std::size_t i = 0; i < 36; ++i) {
    const char c = text[at + i];
    const bool dash = std::find(std::begin(kDash), std::end(kDash), i) != std::end(kDash);
    if (dash ? (c != '-' && c != '_') : !is_hex(c)) return false;
  }
  return true;
}

// An RFC 1123 label: what Kubernetes accepts as a namespace name.
bool is_namespace_name(const std::string& name) {
  if (name.empty() || name.size() > 63 || name.front() == '-' || name.back() == '-') return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

}  // namespace

std::vector<std::string> split_cmdline(const std::string& cmdline) {
  std::vector<std::string> argv;
  std::size_t start = 0;
  while (start < cmdline.size()) {
    std::size_t end = cmdline.find('\0', start);
    if (end == std::string::npos) end = cmdline.size();
    argv.push_back(cmdline.substr(start, end - start));
    start = end + 1;
  }
  while (!argv.empty() && argv.back().empty()) argv.pop_back();
  return argv;
}

std::optional<std::string> pod_uid_from_cgroup(const std::string& cgroup_text) {
  for (std::size_t at = cgroup_text.find("pod"); at != std::string::npos; at = cgroup_text.find("pod", at + 1)) {
    if (at == 0 || (cgroup_text[at - 1] != '/' && cgroup_text[at - 1] != '-')) continue;
    const std::size_t uid = at + 3, end = uid + 36;
    if (!uuid_at(cgroup_text, uid)) continue;
    if (end < cgroup_text.size() && cgroup_text[end] != '/' && cgroup_text[end] != '.' && cgroup_text[end] != '\n')
      continue;
    const std::size_t line = cgroup_text.rfind('\n', at);
    const std::size_t tree = cgroup_text.rfind("kubepods", at);
    if (tree == std::string::npos || (line != std::string::npos && tree < line)) continue;  // not the kubelet's tree
    std::string out = cgroup_text.substr(uid, 36);
    std::replace(out.begin(), out.end(), '_', '-');
    return out;
  }
  return std::nullopt;
}

std::optional<std::string> namespace_from_file(const std::string& text) {
  std::string name = text.substr(0, text.find('\n'));
  if (!is_namespace_name(name)) return std::nullopt;
  return name;
}

std::optional<std::string> namespace_from_environ(const std::string& environ) {
  static constexpr std::string_view kName = "POD_NAMESPACE=";
  for (const auto& entry : split_cmdline(environ)) {
    if (entry.rfind(kName, 0) != 0) continue;
    std::string value = entry.substr(kName.size());
    if (is_namespace_name(value)) return value;
  }
  return std::nullopt;
}

std::optional<std::string> container_id_from_cgroup(const std::string& cgroup_text) {
  // Runtimes name the cgroup after the container: docker-<64 hex>.scope, /docker/<64 hex>,
  // cri-containerd-<64 hex>.scope, libpod-<64 hex>.scope, kubepods/.../<64 hex>.
  for (std::size_t i = 0; i + 64 <= cgroup_text.size(); ++i) {
    if (i > 0 && is_hex(cgroup_text[i - 1])) continue;
    std::size_t n = 0;
    while (i + n < cgroup_text.size() && is_hex(cgroup_text[i + n])) ++n;
    if (n == 64) return cgroup_text.substr(i, 12);
    i += n;
  }
  return std::nullopt;
}

std::optional<std::uint32_t> container_pid_from_status(const std::string& status_text) {
  auto nspid = status_field(status_text, "NSpid");
  if (!nspid) return std::nullopt;
  std::istringstream in(*nspid);
  std::vector<std::uint32_t> levels;
  for (std::uint32_t pid = 0; in >> pid;) levels.push_back(pid);
  if (levels.size() < 2) return std::nullopt;
  return levels.back();
}

namespace {

// What the pod says its namespace is: the service-account file the kubelet mounts, else the
// environment (read only for that one variable; the rest is dropped here).
std::optional<std::string> pod_namespace(const std::string& dir) {
  if (auto file = slurp(dir + "/root/var/run/secrets/kubernetes.io/serviceaccount/namespace", 256))
    if (auto name = namespace_from_file(*file)) return name;
  if (auto environ = slurp(dir + "/environ", 256 * 1024)) return namespace_from_environ(*environ);
  return std::nullopt;
}

}  // namespace

watch::ProcessDetails read_process_details(std::uint32_t pid, const std::string& proc_root) {
  watch::ProcessDetails details;
  std::string dir = proc_root + "/" + std::to_string(pid);
  if (auto status = slurp(dir + "/status")) {
    if (auto uid = status_field(*status, "Uid")) {
      std::istringstream in(*uid);
      std::uint32_t real_uid = 0;
      if (in >> real_uid) details.user = user_name(real_uid);
    }
    details.container_pid = container_pid_from_status(*status);
  }
  if (auto cmdline = slurp(dir + "/cmdline", 4096); cmdline && !cmdline->empty()) {
    // Redacted argument by argument, before the arguments are joined: a secret never leaves here.
    const auto argv = redact_argv(split_cmdline(*cmdline));
    std::string joined;
    for (const auto& arg : argv) joined += (joined.empty() ? "" : " ") + arg;
    details.command = joined;
    details.executable = argv.empty() ? std::string() : executable_name(argv.front());
  } else if (auto comm = slurp(dir + "/comm", 256); comm && !comm->empty()) {
    if (comm->back() == '\n') comm->pop_back();
    details.executable = redact_text(*comm);
    details.command = "[" + *details.executable + "]";  // kernel threads and zombies have no cmdline
  }
  if (auto cgroup = slurp(dir + "/cgroup")) {
    details.container_id = container_id_from_cgroup(*cgroup);
    details.pod_uid = pod_uid_from_cgroup(*cgroup);
  }
  if (details.pod_uid) details.pod_namespace = pod_namespace(dir);
  return details;
}

std::map<std::uint32_t, watch::ProcessDetails> ProcessDetailsCache::lookup(const std::vector<std::uint32_t>& pids) {
  std::map<std::uint32_t, watch::ProcessDetails> now;
  for (std::uint32_t pid : pids) {
    auto found = known_.find(pid);
    now[pid] = found != known_.end() ? found->second : read_process_details(pid, proc_root_);
  }
  known_ = now;
  return now;
}

}  // namespace vramdoc::backends
