// The GPU memory of one job, for `vramdoc run`'s sampler: the interface, and the NVML reader.
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hpp"
#include "core/timeline/ticks.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::backends {

struct JobMemory {
  std::optional<std::uint64_t> process_used_bytes;  // summed over the job's processes on all GPUs
  std::optional<std::uint64_t> device_used_bytes;   // the GPUs the job uses (all, until it uses one)
  std::vector<unsigned> gpus;                       // indices of the GPUs the job has memory on
  std::vector<timeline::Tick::Holding> processes;   // each of the job's processes on each GPU (known bytes)
  std::vector<std::optional<std::uint64_t>> gpu_used_bytes;  // every GPU's used memory, by index
};

class JobMemoryProbe {
 public:
  virtual ~JobMemoryProbe() = default;
  // One reading for the processes `pids`. A query that fails leaves its figure empty.
  virtual JobMemory read(const std::vector<pid_t>& pids) = 0;
  // Memory capacity of the GPUs `gpus` together (all GPUs when empty); empty when unknown.
  virtual std::optional<std::uint64_t> capacity_bytes(const std::vector<unsigned>& gpus) const = 0;
  // The GPU model, e.g. "NVIDIA H200"; empty when unknown.
  virtual std::optional<std::string> device_name() const = 0;
  // Every GPU: index, UUID, PCI bus id, name, capacity (what the driver could tell).
  virtual std::vector<timeline::GpuInfo> gpu_infos() const = 0;
};

// Reads job memory through NVML. The error says why it cannot (no driver, no GPU).
Result<std::unique_ptr<JobMemoryProbe>> open_nvml_job_probe();

}  // namespace vramdoc::backends
