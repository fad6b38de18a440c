// The CUDA driver API (libcuda.so.1) through dlopen, with our own declarations: the on-chip facts
// NVML does not know (SMs, L2, shared memory, registers, threads per SM). The binary starts
// without a driver; one failed attribute leaves that field empty.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include "core/gpu.hpp"
#include "core/result.hpp"

namespace vramdoc::backends {

class CudaDriver {
 public:
  // Loads libcuda.so.1 (or $VRAMDOC_CUDA_LIBRARY) and calls cuInit(0). The error says which
  // library was not found or which call failed, with CUDA's own words.
  static Result<std::shared_ptr<CudaDriver>> open();
  ~CudaDriver();
  CudaDriver(const CudaDriver&) = delete;
  CudaDriver& operator=(const CudaDriver&) = delete;

  // CUDA devices visible to this process (CUDA_VISIBLE_DEVICES applies, unlike NVML).
  int device_count() const;
  // cuDriverGetVersion: 13000 for CUDA 13.0.
  std::optional<int> driver_version() const;
  // What the driver knows about CUDA device `ordinal`: name, PCI bus id ("0000:19:00.0"), PCI
  // device id, compute capability, SMs, memory, clocks, bus width, L2, shared memory,
  // registers, threads; `index` is left 0 (the caller matches devices by PCI bus id).
  Result<GpuStatic> device_info(int ordinal) const;

  struct Impl;

 private:
  explicit CudaDriver(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace vramdoc::backends
