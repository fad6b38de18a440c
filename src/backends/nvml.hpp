// NVML through dlopen, with our own declarations: the binary starts without a driver.
// One failed query never throws or kills the caller: it leaves that field empty.
#pragma once
#include <memory>
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

  unsigned device_count() const;
  DriverInfo driver() const;
  // Identity and hierarchy facts NVML knows (the CUDA driver backend adds the on-chip ones).
  Result<GpuStatic> static_info(unsigned index) const;
  // Memory only (cheap): for samplers that poll every few milliseconds.
  Result<GpuMemory> memory(unsigned index) const;
  // Compute processes on the device and the memory the driver charges to each.
  Result<std::vector<GpuProcess>> processes(unsigned index) const;
  // Everything that changes: memory, utilisation, PCIe, clocks, power, temperature, processes.
  Result<GpuSample> sample(unsigned index) const;

  struct Impl;

 private:
  explicit Nvml(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vramdoc::backends
