// Plain descriptions of GPUs and their processes, filled by the backends (NVML, CUDA driver).
// No vendor type appears here. Every field a device may not report is optional: unknown is
// never 0 (a leak detector must not read "unknown" as "none").
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vramdoc {

// Device memory as the driver reports it (NVML's v2 struct: used excludes reserved).
struct GpuMemory {
  std::optional<std::uint64_t> total_bytes;
  std::optional<std::uint64_t> used_bytes;
  std::optional<std::uint64_t> free_bytes;
  std::optional<std::uint64_t> reserved_bytes;  // held by the driver/firmware; v2 only
};

// One process using a GPU, as the driver accounts it.
struct GpuProcess {
  std::uint32_t pid = 0;
  unsigned gpu_index = 0;
  std::optional<std::uint64_t> used_bytes;  // device memory charged to the process
  std::optional<unsigned> sm_util_percent;  // from process utilisation samples, where reported
  std::optional<unsigned> mem_util_percent;
};

// What changes from one moment to the next on one GPU.
struct GpuSample {
  unsigned index = 0;
  double t_seconds = 0;  // when it was read, seconds on the caller's clock
  GpuMemory memory;
  std::optional<unsigned> sm_util_percent;
  std::optional<unsigned> mem_util_percent;  // memory controller busy: bandwidth use
  std::optional<std::uint64_t> pcie_tx_bytes_per_s;
  std::optional<std::uint64_t> pcie_rx_bytes_per_s;
  std::optional<unsigned> sm_clock_mhz;
  std::optional<unsigned> mem_clock_mhz;
  std::optional<double> power_watts;
  std::optional<double> power_limit_watts;
  std::optional<unsigned> temperature_c;
  std::optional<std::uint64_t> throttle_reasons;  // NVML clocks-event-reason bit mask
  std::vector<GpuProcess> processes;
};

// What does not change: identity and the memory hierarchy of one GPU.
struct GpuStatic {
  unsigned index = 0;
  std::optional<std::string> name;
  std::optional<std::string> uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<unsigned> pci_device_id;  // vendor+device id word, e.g. 0x233510DE
  std::optional<int> cc_major;
  std::optional<int> cc_minor;
  std::optional<unsigned> sm_count;
  // device memory
  std::optional<std::string> memory_type;  // "HBM3e", ... from a table keyed by the device
  std::optional<unsigned> bus_width_bits;
  std::optional<unsigned> max_mem_clock_mhz;
  std::optional<double> theoretical_bandwidth_bytes_per_s;  // 2 x clock x bus width / 8
  std::optional<bool> ecc_enabled;
  std::optional<bool> mig_enabled;
  std::optional<bool> persistence_mode;
  std::optional<std::string> compute_mode;
  std::optional<unsigned> max_sm_clock_mhz;
  // on-chip
  std::optional<std::uint64_t> l2_bytes;
  std::optional<std::uint64_t> shared_per_block_bytes;
  std::optional<std::uint64_t> shared_per_block_optin_bytes;
  std::optional<std::uint64_t> shared_per_sm_bytes;
  std::optional<std::uint64_t> registers_per_sm;
  std::optional<std::uint64_t> registers_per_block;
  std::optional<unsigned> max_registers_per_thread;
  std::optional<unsigned> max_threads_per_sm;
  std::optional<unsigned> warp_size;
  // host link
  std::optional<unsigned> pcie_gen_current;
  std::optional<unsigned> pcie_gen_max;
  std::optional<unsigned> pcie_width_current;
  std::optional<unsigned> pcie_width_max;
  std::optional<double> pcie_bandwidth_bytes_per_s;  // per direction, at the max gen and width
  std::optional<unsigned> nvlink_active_links;
  std::optional<double> pcie_bandwidth_current_bytes_per_s;  // per direction, at the current gen and width
  std::optional<std::string> memory_type_source;  // how memory_type was found: "pci device id" or "name"
  std::optional<std::uint64_t> memory_total_bytes;  // device memory capacity (NVML, else the CUDA driver)
  std::optional<unsigned> clock_rate_khz;  // SM clock the CUDA driver reports (CU_DEVICE_ATTRIBUTE_CLOCK_RATE)
  std::optional<std::uint64_t> l1_shared_per_sm_bytes;  // unified L1 + shared per SM (by compute capability)
};

// The host side of the hierarchy.
struct HostInfo {
  std::optional<std::string> cpu_model;              // /proc/cpuinfo "model name"
  std::optional<unsigned> logical_cpus;              // online logical CPUs
  std::optional<std::uint64_t> ram_total_bytes;      // /proc/meminfo MemTotal
  std::optional<std::uint64_t> ram_available_bytes;  // /proc/meminfo MemAvailable
  // Theoretical RAM bandwidth needs the DIMMs' speed and channel count (SMBIOS, root only): unknown.
  std::optional<double> ram_bandwidth_bytes_per_s;
};

// The driver as a whole.
struct DriverInfo {
  std::optional<std::string> driver_version;   // "580.159.04"
  std::optional<int> cuda_driver_version;      // 13000 for CUDA 13.0
  std::optional<std::string> nvml_version;
};

}  // namespace vramdoc
