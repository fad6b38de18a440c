// Our own declarations of the part of NVML vramdoc uses (no nvml.h needed to build). Layouts and
// values follow NVIDIA's public nvml.h; each versioned struct carries its version word.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vramdoc::backends::nvml_api {

using Return = int;                     // nvmlReturn_t
using Device = struct nvmlDevice_st*;   // nvmlDevice_t: an opaque handle

// nvmlReturn_t values vramdoc tests for.
enum : Return {
  kSuccess = 0,
  kErrorUninitialized = 1,
  kErrorInvalidArgument = 2,
  kErrorNotSupported = 3,
  kErrorNoPermission = 4,
  kErrorNotFound = 6,
  kErrorInsufficientSize = 7,
  kErrorDriverNotLoaded = 9,
  kErrorFunctionNotFound = 13,
  kErrorGpuIsLost = 15,
  kErrorArgumentVersionMismatch = 25,
  kErrorUnknown = 999,
};

// NVML's versioned-struct word: the struct's size in the low 24 bits, the version above.
constexpr unsigned struct_version(std::size_t size_bytes, unsigned version) {
  return static_cast<unsigned>(size_bytes) | (version << 24);
}

// nvmlMemory_t (v1): `used` includes memory the driver reserves.
struct MemoryV1 {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlMemory_v2_t: `used` excludes `reserved`. Its version word must be set before the call.
struct MemoryV2 {
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
constexpr unsigned kMemoryV2Version = struct_version(sizeof(MemoryV2), 2);  // 0x02000028
static_assert(sizeof(MemoryV2) == 40, "nvmlMemory_v2_t is 40 bytes");

// nvmlProcessInfo_v1_t: for the plain nvmlDeviceGetComputeRunningProcesses.
struct ProcessInfoV1 {
  unsigned pid;
  unsigned long long used_gpu_memory;
};
// nvmlProcessInfo_v2_t: for _v2, and for _v3 on drivers that have nvmlDeviceGetRunningProcessDetailList.
struct ProcessInfoV2 {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
};
// The 535-era _v3 layout with confidential-compute memory (drivers that have
// nvmlDeviceGetConfComputeMemSizeInfo but not nvmlDeviceGetRunningProcessDetailList; see nvitop's
// libnvml.py patch for the same rule).
struct ProcessInfoV3cc {
  unsigned pid;
  unsigned long long used_gpu_memory;
  unsigned gpu_instance_id;
  unsigned compute_instance_id;
  unsigned long long used_gpu_cc_protected_memory;
};
constexpr unsigned long long kValueNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE

// nvmlPciInfo_t as the plain nvmlDeviceGetPciInfo fills it (before the _v2 layout change).
struct PciInfoV1 {
  char bus_id[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  unsigned reserved[4];
};
// nvmlPciInfo_t as nvmlDeviceGetPciInfo_v2 and _v3 fill it.
struct PciInfo {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

// nvmlUtilization_t: percent of the last sample period.
struct Utilization {
  unsigned gpu;
  unsigned memory;
};

// nvmlProcessUtilizationSample_t.
struct ProcessUtilizationSample {
  unsigned pid;
  unsigned long long time_stamp_us;
  unsigned sm_util, mem_util, enc_util, dec_util;
};

// nvmlClockType_t, nvmlTemperatureSensors_t, nvmlPcieUtilCounter_t, nvmlEnableState_t.
enum : unsigned { kClockGraphics = 0, kClockSm = 1, kClockMem = 2 };
enum : unsigned { kTemperatureGpu = 0 };
enum : unsigned { kPcieTxBytes = 0, kPcieRxBytes = 1 };
enum : int { kDisabled = 0, kEnabled = 1 };
constexpr unsigned kNvlinkMaxLinks = 18;   // NVML_NVLINK_MAX_LINKS
constexpr unsigned kStringBufferBytes = 96;  // >= NVML_DEVICE_NAME_V2_BUFFER_SIZE, UUID, versions

}  // namespace vramdoc::backends::nvml_api
