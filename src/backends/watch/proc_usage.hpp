// Per-process host usage for `vramdoc watch`'s view: CPU share, resident memory and running time,
// from /proc/PID/stat and /proc/uptime. What /proc does not let us read stays empty (n/a).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/watch/model.hpp"

namespace vramdoc::backends {

// The fields of one /proc/PID/stat line that the view uses.
struct ProcStat {
  std::uint64_t cpu_ticks = 0;    // utime + stime, in clock ticks
  std::uint64_t start_ticks = 0;  // start time after boot, in clock ticks
  std::uint64_t rss_pages = 0;    // resident set size, in pages
};

// Parses a /proc/PID/stat text ("pid (comm) state ppid ..."; comm may hold spaces and
// parentheses); empty when a field is missing or not a number.
std::optional<ProcStat> parse_proc_stat(const std::string& text);

// Seconds since boot from a /proc/uptime text ("12345.67 54321.00"); empty when malformed.
std::optional<double> parse_uptime(const std::string& text);

// The machine's units: clock ticks per second and bytes per page (sysconf).
struct ProcUnits {
  double ticks_per_second = 100;
  std::uint64_t page_bytes = 4096;
};
ProcUnits proc_units();

// Reads usage per PID at each call; the CPU share is the CPU time used since the previous call
// for the same process (same PID and start time) over the wall time between the calls, in % of
// one core (a process with 4 busy threads shows ~400 %), and unknown at a process's first call.
class ProcessUsageTracker {
 public:
  explicit ProcessUsageTracker(std::string proc_root = "/proc", ProcUnits units = proc_units())
      : proc_root_(std::move(proc_root)), units_(units) {}
  // Usage of each PID in `pids` now; `now_s` is a monotonic clock in seconds (tests pass it).
  std::map<std::uint32_t, watch::ProcessUsage> sample(const std::vector<std::uint32_t>& pids, double now_s);

 private:
  struct Seen {
    std::uint64_t start_ticks = 0;
    std::uint64_t cpu_ticks = 0;
    double at_s = 0;
  };
  std::string proc_root_;
  ProcUnits units_;
  std::map<std::uint32_t, Seen> previous_;
};

}  // namespace vramdoc::backends
