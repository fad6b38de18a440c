#include "core/watch/format.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

#include "core/terminal_safe.hpp"
#include "core/units.hpp"

namespace vramdoc::watch {

std::string fmt_percent(const std::optional<unsigned>& value) {
  return value ? std::to_string(*value) + "%" : "n/a";
}

std::string fmt_bytes(const std::optional<std::uint64_t>& bytes) { return bytes ? format_bytes(*bytes) : "n/a"; }

std::string fmt_rate(const std::optional<std::uint64_t>& bytes_per_s) {
  return bytes_per_s ? format_rate(static_cast<double>(*bytes_per_s)) : "n/a";
}

std::string fmt_watts(const std::optional<double>& watts) {
  if (!watts) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f W", *watts);
  return buf;
}

std::vector<std::string> throttle_reason_names(std::uint64_t mask) {
  // NVML's nvmlClocksEventReason* bits (nvml.h), in bit order.
  static constexpr std::array<const char*, 9> kNames = {
      "gpu_idle",         "applications_clocks", "sw_power_cap",      "hw_slowdown",          "sync_boost",
      "sw_thermal",       "hw_thermal",          "hw_power_brake",    "display_clocks"};
  std::vector<std::string> names;
  for (std::size_t bit = 0; bit < 64; ++bit) {
    if (!(mask & (1ULL << bit))) continue;
    if (bit < kNames.size()) {
      names.emplace_back(kNames[bit]);
    } else {
      char buf[32];
      std::snprintf(buf, sizeof buf, "0x%llx", 1ULL << bit);
      names.emplace_back(buf);
    }
  }
  return names;
}

std::string fmt_throttle(const std::optional<std::uint64_t>& mask) {
  if (!mask) return "n/a";
  auto names = throttle_reason_names(*mask);
  if (names.empty()) return "none";
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ",") + n;
  return out;
}

std::string fmt_container(const ProcessDetails& details) {
  if (details.container_id && details.container_pid) {
    return terminal_safe(*details.container_id) + " pid " + std::to_string(*details.container_pid);
  }
  if (details.container_id) return terminal_safe(*details.container_id);
  if (details.container_pid) return "pid " + std::to_string(*details.container_pid);
  // Without a command line /proc was not readable for this PID: we cannot tell.
  return details.command ? "-" : "n/a";
}

std::string fmt_cpu(const std::optional<double>& percent) {
  if (!percent || !(*percent >= 0)) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", std::min(*percent, 1e6));
  return buf;
}

std::string fmt_duration(const std::optional<double>& seconds) {
  if (!seconds || !(*seconds >= 0) || *seconds > 1e10) return "n/a";
  const auto total = static_cast<std::uint64_t>(*seconds);
  const std::uint64_t days = total / 86400, hours = total / 3600 % 24, minutes = total / 60 % 60, secs = total % 60;
  char buf[48];
  if (days > 0) std::snprintf(buf, sizeof buf, "%llud %02lluh", static_cast<unsigned long long>(days),
                              static_cast<unsigned long long>(hours));
  else if (hours > 0) std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(hours),
                                    static_cast<unsigned long long>(minutes), static_cast<unsigned long long>(secs));
  else std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(minutes),
                     static_cast<unsigned long long>(secs));
  return buf;
}

std::optional<double> used_fraction(const GpuMemory& memory) {
  if (!memory.used_bytes || !memory.total_bytes || *memory.total_bytes == 0) return std::nullopt;
  return static_cast<double>(*memory.used_bytes) / static_cast<double>(*memory.total_bytes);
}

}  // namespace vramdoc::watch
