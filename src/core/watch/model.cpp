#include "core/watch/model.hpp"

#include <algorithm>
#include <cstdio>

#include "core/terminal_safe.hpp"

namespace vramdoc::watch {

std::vector<Hint> compute_hints(const GpuSample& sample, const GpuStatic& info, const HintThresholds& t) {
  std::vector<Hint> hints;
  char buf[256];
  if (sample.mem_util_percent && sample.sm_util_percent && *sample.mem_util_percent >= t.mem_util_high_percent &&
      *sample.sm_util_percent <= t.sm_util_low_percent) {
    std::snprintf(buf, sizeof buf,
                  "bandwidth-bound: memory controller %u%% busy while kernels run only %u%% of the time",
                  *sample.mem_util_percent, *sample.sm_util_percent);
    hints.push_back({HintKind::BandwidthBound, buf});
  }
  if (info.pcie_bandwidth_bytes_per_s && *info.pcie_bandwidth_bytes_per_s > 0 && sample.sm_util_percent &&
      (sample.pcie_tx_bytes_per_s || sample.pcie_rx_bytes_per_s)) {
    auto busiest = std::max(sample.pcie_tx_bytes_per_s.value_or(0), sample.pcie_rx_bytes_per_s.value_or(0));
    double link = static_cast<double>(busiest);
    double fraction = link / *info.pcie_bandwidth_bytes_per_s;
    if (fraction >= t.link_high_fraction && *sample.sm_util_percent <= t.gpu_idle_percent) {
      std::snprintf(buf, sizeof buf, "host-link-bound: PCIe at %.0f%% of its peak while the GPU is %u%% busy",
                    100.0 * fraction, *sample.sm_util_percent);
      hints.push_back({HintKind::HostLinkBound, buf});
    }
  }
  return hints;
}

GpuView make_gpu_view(GpuStatic info, std::optional<GpuSample> sample, std::optional<std::string> error,
                      const std::map<std::uint32_t, ProcessDetails>& details,
                      const std::map<std::uint32_t, ProcessUsage>& usage) {
  GpuView view;
  if (sample) {
    for (const auto& p : sample->processes) {
      auto found = details.find(p.pid);
      auto used = usage.find(p.pid);
      view.processes.push_back({p, found == details.end() ? ProcessDetails{} : found->second,
                                used == usage.end() ? ProcessUsage{} : used->second});
    }
    view.hints = compute_hints(*sample, info);
  }
  view.info = std::move(info);
  view.sample = std::move(sample);
  view.error = std::move(error);
  return view;
}

SortKey next_sort_key(SortKey key) {
  switch (key) {
    case SortKey::Memory: return SortKey::Gpu;
    case SortKey::Gpu: return SortKey::Pid;
    case SortKey::Pid: return SortKey::Cpu;
    case SortKey::Cpu: return SortKey::Time;
    case SortKey::Time: return SortKey::Util;
    case SortKey::Util: return SortKey::Memory;
  }
  return SortKey::Memory;
}

std::string sort_key_name(SortKey key) {
  switch (key) {
    case SortKey::Memory: return "memory";
    case SortKey::Gpu: return "gpu";
    case SortKey::Pid: return "pid";
    case SortKey::Cpu: return "cpu";
    case SortKey::Time: return "time";
    case SortKey::Util: return "util";
  }
  return "memory";
}

namespace {

// Descending with unknown last; true when a goes before b, nullopt when they tie.
template <class T>
std::optional<bool> descending(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return a.has_value();
  if (!a || *a == *b) return std::nullopt;
  return *a > *b;
}

// True when process a (on GPU ga) goes before b (on GPU gb) in the order of `key`.
bool before(SortKey key, unsigned ga, const ProcessView& a, unsigned gb, const ProcessView& b) {
  std::optional<bool> order;
  if (key == SortKey::Memory) order = descending(a.gpu.used_bytes, b.gpu.used_bytes);
  if (key == SortKey::Util) order = descending(a.gpu.sm_util_percent, b.gpu.sm_util_percent);
  if (key == SortKey::Cpu) order = descending(a.usage.cpu_percent, b.usage.cpu_percent);
  if (key == SortKey::Time) order = descending(a.usage.running_seconds, b.usage.running_seconds);
  if (key == SortKey::Pid && a.gpu.pid != b.gpu.pid) order = a.gpu.pid < b.gpu.pid;
  if (order) return *order;
  if (ga != gb) return ga < gb;
  return a.gpu.pid < b.gpu.pid;
}

}  // namespace

std::vector<ProcessRow> process_rows(const Snapshot& snapshot, SortKey key) {
  std::vector<ProcessRow> rows;
  for (const auto& gpu : snapshot.gpus)
    for (const auto& p : gpu.processes) rows.push_back({gpu.info.index, p});
  std::stable_sort(rows.begin(), rows.end(), [key](const ProcessRow& a, const ProcessRow& b) {
    return before(key, a.gpu, a.process, b.gpu, b.process);
  });
  return rows;
}

void sort_processes(std::vector<ProcessView>& processes, SortKey key) {
  std::stable_sort(processes.begin(), processes.end(),
                   [key](const ProcessView& a, const ProcessView& b) { return before(key, 0, a, 0, b); });
}

bool driver_up(const Snapshot& snapshot) {
  if (snapshot.driver_error) return false;
  if (snapshot.gpus.empty()) return true;
  return std::any_of(snapshot.gpus.begin(), snapshot.gpus.end(), [](const GpuView& g) { return g.sample.has_value(); });
}

std::string or_na(const std::optional<std::string>& value) { return value ? terminal_safe(*value) : "n/a"; }

}  // namespace vramdoc::watch
