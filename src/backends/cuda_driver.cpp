#include "backends/cuda_driver.hpp"

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <initializer_list>

namespace vramdoc::backends {

namespace {

// Our own declarations of the CUDA driver API (values from cuda.h's CUdevice_attribute).
using CUresult = int;
using CUdevice = int;
constexpr CUresult kCudaSuccess = 0;
enum Attribute : int {
  kMaxSharedPerBlock = 8,
  kWarpSize = 10,
  kMaxRegistersPerBlock = 12,
  kClockRateKhz = 13,
  kMultiprocessorCount = 16,
  kPciBusId = 33,
  kPciDeviceId = 34,  // the slot ("device") part of the bus id, not the vendor's device id
  kMemoryClockRateKhz = 36,
  kGlobalMemoryBusWidth = 37,
  kL2CacheSize = 38,
  kMaxThreadsPerMultiprocessor = 39,
  kPciDomainId = 50,
  kComputeCapabilityMajor = 75,
  kComputeCapabilityMinor = 76,
  kMaxSharedPerMultiprocessor = 81,
  kMaxRegistersPerMultiprocessor = 82,
  kMaxSharedPerBlockOptin = 97,
};

using FnInit = CUresult (*)(unsigned);
using FnInt = CUresult (*)(int*);
using FnGet = CUresult (*)(CUdevice*, int);
using FnAttribute = CUresult (*)(int*, int, CUdevice);
using FnDevString = CUresult (*)(char*, int, CUdevice);
using FnTotalMem = CUresult (*)(std::size_t*, CUdevice);
using FnErrorString = CUresult (*)(CUresult, const char**);

template <class Fn>
Fn find(void* library, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* address = dlsym(library, name)) return reinterpret_cast<Fn>(address);
  }
  return nullptr;
}

}  // namespace

struct CudaDriver::Impl {
  void* library = nullptr;
  FnInit init = nullptr;
  FnInt driver_get_version = nullptr, device_get_count = nullptr;
  FnGet device_get = nullptr;
  FnAttribute attribute = nullptr;
  FnDevString name = nullptr, pci_bus_id = nullptr;
  FnTotalMem total_mem = nullptr;
  FnErrorString error_string = nullptr;
  int count = 0;

  ~Impl() {
    if (library) dlclose(library);
  }

  std::string describe(const char* function, CUresult rc) const {
    const char* text = nullptr;
    if (!error_string || error_string(rc, &text) != kCudaSuccess || !text) text = "error";
    return std::string(function) + ": " + text + " (CUDA error " + std::to_string(rc) + ")";
  }

  // A positive attribute value; 0 or a failed call is "unknown" (CUDA 13 deprecates some clocks).
  std::optional<int> positive(Attribute a, CUdevice device) const {
    int value = 0;
    if (attribute(&value, a, device) != kCudaSuccess || value <= 0) return std::nullopt;
    return value;
  }
};

Result<std::shared_ptr<CudaDriver>> CudaDriver::open() {
  const char* env = std::getenv("VRAMDOC_CUDA_LIBRARY");
  std::string path = env && *env ? env : "libcuda.so.1";
  auto impl = std::make_unique<Impl>();
  impl->library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->library) {
    const char* why = dlerror();
    return make_error(path + " not found (is the NVIDIA driver installed?)" + (why ? std::string(": ") + why : ""));
  }
  void* lib = impl->library;
  impl->init = find<FnInit>(lib, {"cuInit"});
  impl->driver_get_version = find<FnInt>(lib, {"cuDriverGetVersion"});
  impl->device_get_count = find<FnInt>(lib, {"cuDeviceGetCount"});
  impl->device_get = find<FnGet>(lib, {"cuDeviceGet"});
  impl->attribute = find<FnAttribute>(lib, {"cuDeviceGetAttribute"});
  impl->name = find<FnDevString>(lib, {"cuDeviceGetName"});
  impl->pci_bus_id = find<FnDevString>(lib, {"cuDeviceGetPCIBusId"});
  impl->total_mem = find<FnTotalMem>(lib, {"cuDeviceTotalMem_v2", "cuDeviceTotalMem"});
  impl->error_string = find<FnErrorString>(lib, {"cuGetErrorString"});
  if (!impl->init || !impl->device_get_count || !impl->device_get || !impl->attribute) {
    return make_error(path + " lacks cuInit, cuDeviceGetCount, cuDeviceGet or cuDeviceGetAttribute");
  }
  if (CUresult rc = impl->init(0); rc != kCudaSuccess) return make_error(impl->describe("cuInit", rc));
  if (CUresult rc = impl->device_get_count(&impl->count); rc != kCudaSuccess) {
    return make_error(impl->describe("cuDeviceGetCount", rc));
  }
  return std::shared_ptr<CudaDriver>(new CudaDriver(std::move(impl)));
}

CudaDriver::CudaDriver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDriver::~CudaDriver() = default;

int CudaDriver::device_count() const { return impl_->count; }

std::optional<int> CudaDriver::driver_version() const {
  int version = 0;
  if (!impl_->driver_get_version || impl_->driver_get_version(&version) != kCudaSuccess) return std::nullopt;
  return version;
}

Result<GpuStatic> CudaDriver::device_info(int ordinal) const {
  if (ordinal < 0 || ordinal >= impl_->count) {
    return make_error("no CUDA device " + std::to_string(ordinal) + " (CUDA sees " + std::to_string(impl_->count) + ")");
  }
  CUdevice device = 0;
  if (CUresult rc = impl_->device_get(&device, ordinal); rc != kCudaSuccess) {
    return make_error(impl_->describe("cuDeviceGet", rc));
  }
  const Impl& d = *impl_;
  GpuStatic out;
  char text[128] = {};
  if (d.name && d.name(text, sizeof text - 1, device) == kCudaSuccess) out.name = std::string(text);
  int domain = 0, bus = 0, slot = 0;  // domain 0 is a real domain: read it plainly
  if (d.attribute(&domain, kPciDomainId, device) == kCudaSuccess && d.attribute(&bus, kPciBusId, device) == kCudaSuccess &&
      d.attribute(&slot, kPciDeviceId, device) == kCudaSuccess) {
    char id[32];
    std::snprintf(id, sizeof id, "%04x:%02x:%02x.0", static_cast<unsigned>(domain), static_cast<unsigned>(bus),
                  static_cast<unsigned>(slot));
    out.pci_bus_id = id;
  }
  out.cc_major = d.positive(kComputeCapabilityMajor, device);
  if (out.cc_major) {
    int minor = 0;
    if (d.attribute(&minor, kComputeCapabilityMinor, device) == kCudaSuccess) out.cc_minor = minor;
  }
  auto as_unsigned = [&](Attribute a) -> std::optional<unsigned> {
    if (auto v = d.positive(a, device)) return static_cast<unsigned>(*v);
    return std::nullopt;
  };
  auto as_bytes = [&](Attribute a) -> std::optional<std::uint64_t> {
    if (auto v = d.positive(a, device)) return static_cast<std::uint64_t>(*v);
    return std::nullopt;
  };
  out.sm_count = as_unsigned(kMultiprocessorCount);
  out.bus_width_bits = as_unsigned(kGlobalMemoryBusWidth);
  if (auto khz = d.positive(kMemoryClockRateKhz, device)) out.max_mem_clock_mhz = static_cast<unsigned>(*khz / 1000);
  if (auto khz = d.positive(kClockRateKhz, device)) {
    out.clock_rate_khz = static_cast<unsigned>(*khz);
    out.max_sm_clock_mhz = static_cast<unsigned>(*khz / 1000);
  }
  out.l2_bytes = as_bytes(kL2CacheSize);
  out.shared_per_block_bytes = as_bytes(kMaxSharedPerBlock);
  out.shared_per_block_optin_bytes = as_bytes(kMaxSharedPerBlockOptin);
  out.shared_per_sm_bytes = as_bytes(kMaxSharedPerMultiprocessor);
  out.registers_per_sm = as_bytes(kMaxRegistersPerMultiprocessor);
  out.registers_per_block = as_bytes(kMaxRegistersPerBlock);
  out.max_threads_per_sm = as_unsigned(kMaxThreadsPerMultiprocessor);
  out.warp_size = as_unsigned(kWarpSize);
  std::size_t total = 0;
  if (d.total_mem && d.total_mem(&total, device) == kCudaSuccess && total > 0) out.memory_total_bytes = total;
  return out;
}

}  // namespace vramdoc::backends
