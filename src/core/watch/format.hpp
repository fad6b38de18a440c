// Small formatters shared by the watch renderers: every one shows an unknown value as "n/a".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/watch/model.hpp"

namespace vramdoc::watch {

// "42%" or "n/a".
std::string fmt_percent(const std::optional<unsigned>& value);
// "12.34 GiB" style, or "n/a".
std::string fmt_bytes(const std::optional<std::uint64_t>& bytes);
// "3.2 GB/s" or "n/a".
std::string fmt_rate(const std::optional<std::uint64_t>& bytes_per_s);
// "310 W" or "n/a".
std::string fmt_watts(const std::optional<double>& watts);
// Names of the NVML clocks-event-reason bits set in `mask` ("sw_power_cap", ...); unknown bits
// as "0x..". An empty list means the clocks are not held back.
std::vector<std::string> throttle_reason_names(std::uint64_t mask);
// "none", "sw_power_cap,hw_slowdown", or "n/a" when the mask is unknown.
std::string fmt_throttle(const std::optional<std::uint64_t>& mask);
// The container column: "<id> pid <n>", "pid <n>", "-" when not in a container, "n/a" if unknown.
std::string fmt_container(const ProcessDetails& details);
// A process's CPU share: "12%", "250%" (several cores), or "n/a".
std::string fmt_cpu(const std::optional<double>& percent);
// A running time as ps prints it: "4:05" (m:ss), "1:02:03" (h:mm:ss), "3d 04h", or "n/a".
std::string fmt_duration(const std::optional<double>& seconds);
// The used share of total, 0..1, when both are known and total > 0.
std::optional<double> used_fraction(const GpuMemory& memory);

}  // namespace vramdoc::watch
