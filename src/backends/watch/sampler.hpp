// Samples the watched GPUs through NVML and joins their processes with /proc details. Shared
// by every `vramdoc watch` mode; one failed device never stops the others.
//
// Two cadences: memory and the per-process memory (cheap: ~0.01 ms of CPU per call on an H200)
// are read at every sample; utilisation, PCIe, clocks, power and temperature (a full NVML
// sample: the two PCIe counters alone block 20 ms and cost ~0.5 ms of CPU each) at most once per
// `full_period_s`, and carried in between; so are the processes' CPU share, host memory and
// running time (/proc/PID/stat). NVML averages utilisation over 1/6 s to 1 s windows
// anyway, so a faster full sample adds cost, not information.
#pragma once
#include <chrono>
#include <map>
#include <memory>
#include <vector>

#include "backends/nvml.hpp"
#include "backends/watch/proc_usage.hpp"
#include "backends/watch/procinfo.hpp"
#include "core/watch/model.hpp"

namespace vramdoc::backends {

class WatchSampler {
 public:
  // Watches `devices` (NVML indexes) of an opened NVML.
  WatchSampler(std::shared_ptr<backends::Nvml> nvml, std::vector<unsigned> devices, double full_period_s = 1.0);
  // One snapshot of every watched GPU; a device whose query fails carries the error instead.
  watch::Snapshot sample();

 private:
  GpuStatic static_info(unsigned index);
  // Memory and processes now, the slow fields from the last full sample of `index`.
  Result<GpuSample> quick_sample(unsigned index);

  std::shared_ptr<backends::Nvml> nvml_;
  std::vector<unsigned> devices_;
  std::chrono::steady_clock::duration full_period_;
  std::optional<std::chrono::steady_clock::time_point> last_full_;
  std::map<unsigned, GpuSample> full_;     // the last full sample of each device that succeeded
  std::map<unsigned, GpuStatic> statics_;  // read once per device, once it succeeds
  backends::ProcessDetailsCache processes_;
  backends::ProcessUsageTracker usage_tracker_;  // CPU, host memory, running time: read at full samples
  std::map<std::uint32_t, watch::ProcessUsage> usage_;
};

// The GPUs to watch: `device` alone (checked against the count) or every GPU.
Result<std::vector<unsigned>> watched_devices(backends::Nvml& nvml, std::optional<unsigned> device);

// A sampler that survives a missing or failing driver, for the exporter (a supervised exporter
// must not crash-loop): NVML is opened at the first sample and, while that fails, again at most
// every `retry_s`; meanwhile each snapshot has no GPU and says why in `driver_error`.
class DriverRetryingSampler {
 public:
  explicit DriverRetryingSampler(std::optional<unsigned> device, double retry_s = 10.0);
  // A snapshot of the watched GPUs, or of none with the reason the driver could not be used.
  watch::Snapshot sample();

 private:
  std::optional<unsigned> device_;
  std::chrono::steady_clock::duration retry_;
  std::optional<std::chrono::steady_clock::time_point> last_try_;
  std::string error_;
  std::unique_ptr<WatchSampler> sampler_;
};

}  // namespace vramdoc::backends
