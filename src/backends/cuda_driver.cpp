#include "backends/cuda_driver.hpp"

#include <cstdio>

#include "backends/library.hpp"

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

// X(member, need, function type, names newest first...): the CUDA driver functions we call.
#define VRAMDOC_CUDA_SYMBOLS(X)                                                          \
  X(init, kRequired, FnInit, "cuInit")                                                   \
  X(device_get_count, kRequired, FnInt, "cuDeviceGetCount")                              \
  X(device_get, kRequired, FnGet, "cuDeviceGet")                                         \
  X(attribute, kRequired, FnAttribute, "cuDeviceGetAttribute")                           \
  X(driver_get_version, kOptional, FnInt, "cuDriverGetVersion")                          \
  X(name, kOptional, FnDevString, "cuDeviceGetName")                                     \
  X(pci_bus_id, kOptional, FnDevString, "cuDeviceGetPCIBusId")                           \
  X(total_mem, kOptional, FnTotalMem, "cuDeviceTotalMem_v2", "cuDeviceTotalMem")         \
  X(error_string, kOptional, FnErrorString, "cuGetErrorString")

struct Symbols {
  VRAMDOC_CUDA_SYMBOLS(VRAMDOC_SYMBOL_MEMBER)
};

std::optional<std::string> resolve(void* library, Symbols& symbols) {
  std::optional<std::string> missing;
  VRAMDOC_CUDA_SYMBOLS(VRAMDOC_SYMBOL_RESOLVE)
  return missing;
}

}  // namespace

struct CudaDriver::Impl {
  std::optional<Library> library;
  Symbols sym;
  int count = 0;

  std::string describe(const char* function, CUresult rc) const {
    const char* text = nullptr;
    if (!sym.error_string || sym.error_string(rc, &text) != kCudaSuccess || !text) text = "error";
    return std::string(function) + ": " + text + " (CUDA error " + std::to_string(rc) + ")";
  }

  // A positive attribute value; 0 or a failed call is "unknown" (CUDA 13 deprecates some clocks).
  std::optional<int> positive(Attribute a, CUdevice device) const {
    int value = 0;
    if (sym.attribute(&value, a, device) != kCudaSuccess || value <= 0) return std::nullopt;
    return value;
  }
};

Result<std::shared_ptr<CudaDriver>> CudaDriver::open() {
  const std::string path = Library::path_for("VRAMDOC_CUDA_LIBRARY", "libcuda.so.1");
  auto library = Library::open("VRAMDOC_CUDA_LIBRARY", "libcuda.so.1");
  if (!library) return make_error(path + " not found (is the NVIDIA driver installed?): " + library.error());
  auto impl = std::make_unique<Impl>();
  impl->library.emplace(std::move(*library));
  if (auto missing = resolve(impl->library->handle(), impl->sym)) return make_error(path + " lacks " + *missing + ": not a usable CUDA driver library");
  if (CUresult rc = impl->sym.init(0); rc != kCudaSuccess) return make_error(impl->describe("cuInit", rc));
  if (CUresult rc = impl->sym.device_get_count(&impl->count); rc != kCudaSuccess) {
    return make_error(impl->describe("cuDeviceGetCount", rc));
  }
  return std::shared_ptr<CudaDriver>(new CudaDriver(std::move(impl)));
}

CudaDriver::CudaDriver(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
CudaDriver::~CudaDriver() = default;

int CudaDriver::device_count() const { return impl_->count; }

std::optional<int> CudaDriver::driver_version() const {
  int version = 0;
  if (!impl_->sym.driver_get_version || impl_->sym.driver_get_version(&version) != kCudaSuccess) return std::nullopt;
  return version;
}

Result<GpuStatic> CudaDriver::device_info(int ordinal) const {
  if (ordinal < 0 || ordinal >= impl_->count) {
    return make_error("no CUDA device " + std::to_string(ordinal) + " (CUDA sees " + std::to_string(impl_->count) + ")");
  }
  CUdevice device = 0;
  if (CUresult rc = impl_->sym.device_get(&device, ordinal); rc != kCudaSuccess) {
    return make_error(impl_->describe("cuDeviceGet", rc));
  }
  const Impl& d = *impl_;
  const Symbols& f = d.sym;
  GpuStatic out;
  char text[128] = {};
  if (f.name && f.name(text, sizeof text - 1, device) == kCudaSuccess) out.name = std::string(text);
  int domain = 0, bus = 0, slot = 0;  // domain 0 is a real domain: read it plainly
  if (f.attribute(&domain, kPciDomainId, device) == kCudaSuccess && f.attribute(&bus, kPciBusId, device) == kCudaSuccess &&
      f.attribute(&slot, kPciDeviceId, device) == kCudaSuccess) {
    char id[32];
    std::snprintf(id, sizeof id, "%04x:%02x:%02x.0", static_cast<unsigned>(domain), static_cast<unsigned>(bus),
                  static_cast<unsigned>(slot));
    out.pci_bus_id = id;
  }
  out.cc_major = d.positive(kComputeCapabilityMajor, device);
  if (out.cc_major) {
    int minor = 0;
    if (f.attribute(&minor, kComputeCapabilityMinor, device) == kCudaSuccess) out.cc_minor = minor;
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
  if (f.total_mem && f.total_mem(&total, device) == kCudaSuccess && total > 0) out.memory_total_bytes = total;
  return out;
}

}  // namespace vramdoc::backends
