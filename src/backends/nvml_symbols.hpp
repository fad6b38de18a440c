// The NVML symbol table (internal to the NVML backend): one X-macro row per function we call,
// each with its candidate names newest first (_v3, _v2, plain) and whether we need it at all.
// Loaded and resolved by backends/library.hpp, as the CUDA driver's and OpenSSL's tables are.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "backends/library.hpp"
#include "backends/nvml_api.hpp"

namespace vramdoc::backends::nvml_symbols {

namespace api = nvml_api;
using FnVoid = api::Return (*)();
using FnErrorString = const char* (*)(api::Return);
using FnUint = api::Return (*)(unsigned*);
using FnInt = api::Return (*)(int*);
using FnStr = api::Return (*)(char*, unsigned);
using FnHandle = api::Return (*)(unsigned, api::Device*);
using FnDevStr = api::Return (*)(api::Device, char*, unsigned);
using FnDevPtr = api::Return (*)(api::Device, void*);              // struct whose layout is versioned
using FnDevCountPtr = api::Return (*)(api::Device, unsigned*, void*);  // running-process lists
using FnDevUint = api::Return (*)(api::Device, unsigned*);
using FnDevInt = api::Return (*)(api::Device, int*);
using FnDevUll = api::Return (*)(api::Device, unsigned long long*);
using FnDevIntInt = api::Return (*)(api::Device, int*, int*);
using FnDevUintUint = api::Return (*)(api::Device, unsigned*, unsigned*);
using FnDevEnumUint = api::Return (*)(api::Device, unsigned, unsigned*);
using FnDevUintInt = api::Return (*)(api::Device, unsigned, int*);
using FnDevUtil = api::Return (*)(api::Device, api::Utilization*);
using FnProcUtil = api::Return (*)(api::Device, api::ProcessUtilizationSample*, unsigned*, unsigned long long);

using backends::kOptional;
using backends::kRequired;
using backends::Symbol;

// X(member, need, function type, names newest first...)
#define VRAMDOC_NVML_SYMBOLS(X)                                                                         \
  X(init, kRequired, FnVoid, "nvmlInit_v2", "nvmlInit")                                                 \
  X(shutdown, kRequired, FnVoid, "nvmlShutdown")                                                        \
  X(error_string, kOptional, FnErrorString, "nvmlErrorString")                                          \
  X(device_count, kRequired, FnUint, "nvmlDeviceGetCount_v2", "nvmlDeviceGetCount")                     \
  X(handle_by_index, kRequired, FnHandle, "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex") \
  X(memory_info, kRequired, FnDevPtr, "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo")          \
  X(compute_processes, kOptional, FnDevCountPtr, "nvmlDeviceGetComputeRunningProcesses_v3",             \
    "nvmlDeviceGetComputeRunningProcesses_v2", "nvmlDeviceGetComputeRunningProcesses")                  \
  X(conf_compute_mem_size, kOptional, FnVoid, "nvmlDeviceGetConfComputeMemSizeInfo")                    \
  X(process_detail_list, kOptional, FnVoid, "nvmlDeviceGetRunningProcessDetailList")                    \
  X(driver_version, kOptional, FnStr, "nvmlSystemGetDriverVersion")                                     \
  X(nvml_version, kOptional, FnStr, "nvmlSystemGetNVMLVersion")                                         \
  X(cuda_driver_version, kOptional, FnInt, "nvmlSystemGetCudaDriverVersion_v2",                         \
    "nvmlSystemGetCudaDriverVersion")                                                                   \
  X(name, kOptional, FnDevStr, "nvmlDeviceGetName")                                                     \
  X(uuid, kOptional, FnDevStr, "nvmlDeviceGetUUID")                                                     \
  X(pci_info, kOptional, FnDevPtr, "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2",                \
    "nvmlDeviceGetPciInfo")                                                                             \
  X(compute_capability, kOptional, FnDevIntInt, "nvmlDeviceGetCudaComputeCapability")                   \
  X(bus_width, kOptional, FnDevUint, "nvmlDeviceGetMemoryBusWidth")                                     \
  X(max_clock, kOptional, FnDevEnumUint, "nvmlDeviceGetMaxClockInfo")                                   \
  X(clock, kOptional, FnDevEnumUint, "nvmlDeviceGetClockInfo")                                          \
  X(ecc_mode, kOptional, FnDevIntInt, "nvmlDeviceGetEccMode")                                           \
  X(mig_mode, kOptional, FnDevUintUint, "nvmlDeviceGetMigMode")                                         \
  X(persistence_mode, kOptional, FnDevInt, "nvmlDeviceGetPersistenceMode")                              \
  X(compute_mode, kOptional, FnDevInt, "nvmlDeviceGetComputeMode")                                      \
  X(pcie_gen_current, kOptional, FnDevUint, "nvmlDeviceGetCurrPcieLinkGeneration")                      \
  X(pcie_gen_max, kOptional, FnDevUint, "nvmlDeviceGetMaxPcieLinkGeneration")                           \
  X(pcie_width_current, kOptional, FnDevUint, "nvmlDeviceGetCurrPcieLinkWidth")                         \
  X(pcie_width_max, kOptional, FnDevUint, "nvmlDeviceGetMaxPcieLinkWidth")                              \
  X(pcie_throughput, kOptional, FnDevEnumUint, "nvmlDeviceGetPcieThroughput")                           \
  X(nvlink_state, kOptional, FnDevUintInt, "nvmlDeviceGetNvLinkState")                                  \
  X(utilization, kOptional, FnDevUtil, "nvmlDeviceGetUtilizationRates")                                 \
  X(process_utilization, kOptional, FnProcUtil, "nvmlDeviceGetProcessUtilization")                      \
  X(power_usage, kOptional, FnDevUint, "nvmlDeviceGetPowerUsage")                                       \
  X(power_limit, kOptional, FnDevUint, "nvmlDeviceGetEnforcedPowerLimit")                               \
  X(temperature, kOptional, FnDevEnumUint, "nvmlDeviceGetTemperature")                                  \
  X(clock_event_reasons, kOptional, FnDevUll, "nvmlDeviceGetCurrentClocksEventReasons",                 \
    "nvmlDeviceGetCurrentClocksThrottleReasons")

struct Symbols {
  VRAMDOC_NVML_SYMBOLS(VRAMDOC_SYMBOL_MEMBER)
};

// Resolves every row from `library` (a dlopen handle). Returns the first name of a required
// row that is missing, or nothing when all required rows resolved.
std::optional<std::string> resolve(void* library, Symbols& symbols);
// The names that resolved, in table order (for diagnostics and tests).
std::vector<std::string> resolved_names(const Symbols& symbols);

}  // namespace vramdoc::backends::nvml_symbols
