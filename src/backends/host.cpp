#include "backends/host.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

namespace vramdoc::backends {

namespace {

std::optional<std::uint64_t> meminfo_bytes(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::uint64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace

HostInfo read_host_info(const std::string& proc_root) {
  HostInfo info;
  std::ifstream cpuinfo(proc_root + "/cpuinfo");
  std::string line;
  unsigned processors = 0;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("processor", 0) == 0) ++processors;
    if (!info.cpu_model && line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) info.cpu_model = line.substr(colon + 2);
    }
  }
  if (processors > 0) info.logical_cpus = processors;
  else if (unsigned n = std::thread::hardware_concurrency(); n > 0) info.logical_cpus = n;
  info.ram_total_bytes = meminfo_bytes(proc_root + "/meminfo", "MemTotal");
  info.ram_available_bytes = meminfo_bytes(proc_root + "/meminfo", "MemAvailable");
  return info;
}

std::string node_name() {
  if (const char* node = std::getenv("NODE_NAME"); node && *node) return node;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace vramdoc::backends
