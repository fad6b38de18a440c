// The host side of the hierarchy: CPU model, RAM, read from procfs (Linux).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

namespace vramdoc::backends {

struct HostInfo {
  std::optional<std::string> cpu_model;        // /proc/cpuinfo "model name"
  std::optional<unsigned> logical_cpus;        // online logical CPUs
  std::optional<std::uint64_t> ram_total_bytes;      // /proc/meminfo MemTotal
  std::optional<std::uint64_t> ram_available_bytes;  // /proc/meminfo MemAvailable
};

// Reads the host facts; fields it cannot read stay empty. `proc_root` is for tests.
HostInfo read_host_info(const std::string& proc_root = "/proc");

}  // namespace vramdoc::backends
