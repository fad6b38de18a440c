// Samples the watched GPUs through NVML and joins their processes with /proc details. Shared
// by every `vramdoc watch` mode; one failed device never stops the others.
#pragma once
#include <map>
#include <memory>
#include <vector>

#include "backends/nvml.hpp"
#include "backends/procinfo.hpp"
#include "core/watch/model.hpp"

namespace vramdoc::cli {

class WatchSampler {
 public:
  // Watches `devices` (NVML indexes) of an opened NVML.
  WatchSampler(std::shared_ptr<backends::Nvml> nvml, std::vector<unsigned> devices);
  // One snapshot of every watched GPU; a device whose query fails carries the error instead.
  watch::Snapshot sample();

 private:
  GpuStatic static_info(unsigned index);

  std::shared_ptr<backends::Nvml> nvml_;
  std::vector<unsigned> devices_;
  std::map<unsigned, GpuStatic> statics_;  // read once per device, once it succeeds
  backends::ProcessDetailsCache processes_;
};

}  // namespace vramdoc::cli
