#include "backends/nvml.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string_view>

#include "backends/nvml_impl.hpp"

namespace vramdoc::backends {

namespace {

using nvml_detail::get;
using nvml_detail::get_string;

// Reads one running-process list with the struct layout its symbol version implies.
template <class Info>
Result<std::vector<GpuProcess>> read_processes(const Nvml::Impl& impl, api::Device device, unsigned index) {
  const auto& s = impl.sym.compute_processes;
  std::vector<Info> buffer(32);
  for (int attempt = 0; attempt < 8; ++attempt) {
    unsigned count = static_cast<unsigned>(buffer.size());
    api::Return rc = s.fn(device, &count, buffer.data());
    if (rc == api::kErrorInsufficientSize) {  // processes appeared: grow, with room for more
      buffer.resize(std::max<std::size_t>(count, buffer.size()) * 2);
      continue;
    }
    if (rc != api::kSuccess) return make_error(impl.describe(s.name, rc));
    std::vector<GpuProcess> out;
    for (unsigned i = 0; i < count && i < buffer.size(); ++i) {
      GpuProcess p;
      p.pid = buffer[i].pid;
      p.gpu_index = index;
      if (buffer[i].used_gpu_memory != api::kValueNotAvailable) p.used_bytes = buffer[i].used_gpu_memory;
      out.push_back(p);
    }
    return out;
  }
  return make_error(std::string(s.name) + ": the process list kept growing; try again");
}

}  // namespace

Result<std::shared_ptr<Nvml>> Nvml::open() {
  auto impl = std::make_unique<Impl>();
  auto library = Library::open("VRAMDOC_NVML_LIBRARY", "libnvidia-ml.so.1");
  const std::string path = Library::path_for("VRAMDOC_NVML_LIBRARY", "libnvidia-ml.so.1");
  if (!library) return make_error(path + " not found (is the NVIDIA driver installed?): " + library.error());
  impl->library.emplace(std::move(*library));
  if (auto missing = nvml_symbols::resolve(impl->library->handle(), impl->sym)) {
    impl->sym = Symbols{};  // nothing to shut down: init was never called
    return make_error(path + " lacks " + *missing + ": not a usable NVML library");
  }
  if (api::Return rc = impl->sym.init.fn(); rc != api::kSuccess) {
    std::string message = impl->describe(impl->sym.init.name, rc);
    impl->sym.shutdown = {};
    return make_error(message);
  }
  unsigned count = 0;
  if (api::Return rc = impl->sym.device_count.fn(&count); rc != api::kSuccess) {
    return make_error(impl->describe(impl->sym.device_count.name, rc));
  }
  for (unsigned i = 0; i < count; ++i) {
    api::Device device = nullptr;
    api::Return rc = impl->sym.handle_by_index.fn(i, &device);
    impl->devices.push_back(rc == api::kSuccess ? device : nullptr);
    impl->handle_errors.push_back(rc == api::kSuccess ? "" : "GPU " + std::to_string(i) + ": " +
                                  impl->describe(impl->sym.handle_by_index.name, rc));
  }
  impl->last_util_us.assign(count, 0);
  return std::shared_ptr<Nvml>(new Nvml(std::move(impl)));
}

Nvml::Nvml(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Nvml::~Nvml() = default;

unsigned Nvml::device_count() const { return static_cast<unsigned>(impl_->devices.size()); }

std::vector<std::string> Nvml::resolved_symbols() const { return nvml_symbols::resolved_names(impl_->sym); }

DriverInfo Nvml::driver() const {
  DriverInfo info;
  info.driver_version = get_string(impl_->sym.driver_version);
  info.nvml_version = get_string(impl_->sym.nvml_version);
  info.cuda_driver_version = get<int>(impl_->sym.cuda_driver_version);
  return info;
}

Result<GpuMemory> Nvml::memory(unsigned index) const {
  auto device = impl_->device(index);
  if (!device) return make_error(device.error());
  const auto& s = impl_->sym.memory_info;
  GpuMemory out;
  if (std::string_view(s.name) == "nvmlDeviceGetMemoryInfo_v2") {
    api::MemoryV2 m{};
    m.version = api::kMemoryV2Version;  // without it NVML answers "argument version mismatch"
    if (api::Return rc = s.fn(*device, &m); rc != api::kSuccess) return make_error(impl_->describe(s.name, rc));
    out.total_bytes = m.total;
    out.reserved_bytes = m.reserved;
    out.free_bytes = m.free;
    out.used_bytes = m.used;
  } else {  // v1: `used` includes the reserved memory, which v1 cannot tell apart
    api::MemoryV1 m{};
    if (api::Return rc = s.fn(*device, &m); rc != api::kSuccess) return make_error(impl_->describe(s.name, rc));
    out.total_bytes = m.total;
    out.free_bytes = m.free;
    out.used_bytes = m.used;
  }
  return out;
}

Result<std::vector<GpuProcess>> Nvml::processes(unsigned index) const {
  auto device = impl_->device(index);
  if (!device) return make_error(device.error());
  const auto& s = impl_->sym.compute_processes;
  if (!s) return make_error("this NVML has no nvmlDeviceGetComputeRunningProcesses");
  std::string_view name = s.name;
  if (name.ends_with("_v3")) {
    // 535-era drivers filled a longer struct through _v3 (see nvml_api.hpp).
    if (impl_->sym.conf_compute_mem_size && !impl_->sym.process_detail_list) {
      return read_processes<api::ProcessInfoV3cc>(*impl_, *device, index);
    }
    return read_processes<api::ProcessInfoV2>(*impl_, *device, index);
  }
  if (name.ends_with("_v2")) return read_processes<api::ProcessInfoV2>(*impl_, *device, index);
  return read_processes<api::ProcessInfoV1>(*impl_, *device, index);
}

Result<DeviceCapacity> device_capacity(unsigned index) {
  auto nvml = Nvml::open();
  if (!nvml) return make_error(nvml.error());
  auto memory = (*nvml)->memory(index);
  if (!memory) return make_error(memory.error());
  if (!memory->total_bytes) return make_error("the driver does not report the total memory");
  auto info = (*nvml)->static_info(index);
  return DeviceCapacity{info ? info->name : std::nullopt, *memory->total_bytes};
}

}  // namespace vramdoc::backends
