// `vramdoc info`: this machine's GPU memory hierarchy, from NVML, the CUDA driver and procfs.
#include <CLI/CLI.hpp>
#include <optional>

#include "backends/cuda_driver.hpp"
#include "backends/host.hpp"
#include "backends/nvml.hpp"
#include "cli/command.hpp"
#include "core/info/derived.hpp"
#include "core/info/report.hpp"

namespace vramdoc::cli {

namespace {

struct InfoOptions {
  std::optional<unsigned> device;
  bool json = false;
};

// The CUDA driver's facts for each CUDA device (empty where CUDA cannot be had).
std::vector<GpuStatic> cuda_devices(info::InfoReport& report) {
  std::vector<GpuStatic> out;
  auto cuda = backends::CudaDriver::open();
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

int cmd_info(const std::vector<std::string>& args) {
  CLI::App app{"This machine's GPU memory hierarchy: registers, shared memory / L1, L2, device memory, the "
               "host link and host RAM, with theoretical peaks and the VRAM vs RAM table.",
               "info"};
  InfoOptions options;
  app.add_option("--device", options.device, "only GPU N (numbered as nvidia-smi numbers them)");
  app.add_flag("--json", options.json, "every field as JSON; unknown values are null");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  info::InfoReport report;
  report.host = backends::read_host_info();
  auto nvml = backends::Nvml::open();
  if (!nvml) {
    if (options.device) return fail("info", "--device " + std::to_string(*options.device) + ": no GPU information: " + nvml.error());
    report.problems.push_back("no GPU information: " + nvml.error());
  } else {
    report.driver = (*nvml)->driver();
    unsigned count = (*nvml)->device_count();
    if (options.device && *options.device >= count) {
      return fail("info", "--device " + std::to_string(*options.device) + ": no such GPU; this machine has " +
                              std::to_string(count) + (count == 1 ? " GPU (index 0)" : " GPUs (indices 0 to " +
                              std::to_string(count == 0 ? 0 : count - 1) + ")"));
    }
    std::vector<GpuStatic> cuda = cuda_devices(report);
    for (unsigned i = 0; i < count; ++i) {
      if (options.device && i != *options.device) continue;
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
  }
  print(options.json ? json_document("vramdoc.info/1", info::info_to_json(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n") : info::render_info_text(report));
  return kOk;
}

}  // namespace vramdoc::cli
