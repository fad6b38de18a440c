#include "backends/info.hpp"

#include "backends/cuda_driver.hpp"
#include "backends/host.hpp"
#include "backends/nvml.hpp"
#include "core/info/derived.hpp"

namespace vramdoc::backends {

namespace {

// The CUDA driver's facts for each CUDA device (empty where CUDA cannot be had).
std::vector<GpuStatic> cuda_devices(info::InfoReport& report) {
  std::vector<GpuStatic> out;
  auto cuda = CudaDriver::open();
  if (!cuda) {
    report.problems.push_back("on-chip facts (SMs, L2, shared memory, registers) unavailable: " + cuda.error());
    return out;
  }
  if (!report.driver.cuda_driver_version) report.driver.cuda_driver_version = (*cuda)->driver_version();
  for (int i = 0; i < (*cuda)->device_count(); ++i) {
    if (auto g = (*cuda)->device_info(i)) out.push_back(std::move(*g));
  }
  return out;
}

// Completes NVML's facts with those of the CUDA device on the same PCI bus id (CUDA's ordinals
// follow CUDA_VISIBLE_DEVICES and its own order; NVML's follow nvidia-smi).
void merge_cuda_facts(GpuStatic& gpu, const std::vector<GpuStatic>& cuda) {
  auto address = gpu.pci_bus_id ? info::parse_pci_bus_id(*gpu.pci_bus_id) : std::nullopt;
  if (!address) return;
  for (const auto& c : cuda) {
    if (c.pci_bus_id && info::parse_pci_bus_id(*c.pci_bus_id) == address) {
      info::merge_missing(gpu, c);
      info::fill_derived(gpu);
      return;
    }
  }
}

}  // namespace

Result<info::InfoReport> read_info_report(std::optional<unsigned> device) {
  info::InfoReport report;
  report.host = read_host_info();
  auto nvml = Nvml::open();
  if (!nvml) {
    if (device) return make_error("--device " + std::to_string(*device) + ": no GPU information: " + nvml.error());
    report.problems.push_back("no GPU information: " + nvml.error());
    return report;
  }
  report.driver = (*nvml)->driver();
  const unsigned count = (*nvml)->device_count();
  if (device && *device >= count) {
    return make_error("--device " + std::to_string(*device) + ": no such GPU; this machine has " + std::to_string(count) +
                      (count == 1 ? " GPU (index 0)" : " GPUs (indices 0 to " + std::to_string(count == 0 ? 0 : count - 1) + ")"));
  }
  std::vector<GpuStatic> cuda = cuda_devices(report);
  for (unsigned i = 0; i < count; ++i) {
    if (device && i != *device) continue;
    auto facts = (*nvml)->static_info(i);
    if (!facts) {
      report.problems.push_back("GPU " + std::to_string(i) + ": " + facts.error());
      continue;
    }
    info::InfoGpu gpu{*facts, std::nullopt};
    merge_cuda_facts(gpu.facts, cuda);
    if (auto memory = (*nvml)->memory(i)) gpu.memory = *memory;
    report.gpus.push_back(std::move(gpu));
  }
  if (count == 0) report.problems.push_back("NVML found no NVIDIA GPU");
  return report;
}

}  // namespace vramdoc::backends
