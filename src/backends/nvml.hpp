// NVML through dlopen, with our own declarations: the binary starts without a driver.
// One failed query never throws or kills the caller: it leaves that field empty.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/gpu.hpp"
#include "core/result.hpp"

namespace vramdoc::backends {

class Nvml {
 public:
  // Loads libnvidia-ml.so.1 (or $VRAMDOC_NVML_LIBRARY) and initialises it. The error says which
  // library was not found or which call failed.
  static Result<std::shared_ptr<Nvml>> open();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // GPUs NVML sees (handles that failed still count; their queries return the error).
  unsigned device_count() const;
  // Driver, CUDA driver and NVML versions; each empty when the library cannot say.
  DriverInfo driver() const;
  // Identity and hierarchy facts NVML knows (the CUDA driver backend adds the on-chip ones).
  Result<GpuStatic> static_info(unsigned index) const;
  // Memory only (cheap): for samplers that poll every few milliseconds.
  Result<GpuMemory> memory(unsigned index) const;
  // Compute processes on the device and the memory the driver charges to each (cheap: one NVML
  // call, no utilisation; the per-process memory read for samplers that poll every 20 ms).
  // Used memory NVML cannot tell (NVML_VALUE_NOT_AVAILABLE) stays empty.
  Result<std::vector<GpuProcess>> processes(unsigned index) const;
  // Everything that changes: memory, utilisation, PCIe, clocks, power, temperature, processes
  // with their utilisation. Slower (the PCIe counters block ~20 ms each). Leaves t_seconds 0:
  // the caller stamps it. Fails only when memory cannot be read; other fields stay empty.
  Result<GpuSample> sample(unsigned index) const;
  // The NVML function names this library resolved, e.g. "nvmlDeviceGetMemoryInfo_v2".
  std::vector<std::string> resolved_symbols() const;

  struct Impl;

 private:
  explicit Nvml(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// A device's name and total memory: estimate's local GPU, probe's card.
struct DeviceCapacity {
  std::optional<std::string> name;
  std::uint64_t total_bytes = 0;
};
// Device `index`'s capacity through NVML, or why it cannot be had (no driver, no such GPU, the
// driver does not report the total).
Result<DeviceCapacity> device_capacity(unsigned index);

}  // namespace vramdoc::backends
