// Facts derived from what the drivers report: memory type, theoretical bandwidths, PCI ids.
// Pure arithmetic and tables; unknown inputs give unknown outputs, never 0.
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "core/gpu.hpp"

namespace vramdoc::info {

// Device-memory peak: 2 transfers per memory clock (NVML's max memory clock) x bus width / 8.
// E.g. 10501 MHz x 384 bit -> 1008 GB/s (RTX 4090), 2619 MHz x 5120 bit -> 3.35 TB/s (H100 SXM).
std::optional<double> memory_bandwidth_bytes_per_s(std::optional<unsigned> max_mem_clock_mhz,
                                                   std::optional<unsigned> bus_width_bits);

// PCIe payload bandwidth per direction for a generation and lane count: Gen1/2 use 8b/10b,
// Gen3-5 128b/130b (8, 16, 32 GT/s), Gen6 64 GT/s FLIT mode (242 of 256 bytes). Gen5 x16 = 63.0 GB/s.
std::optional<double> pcie_bandwidth_bytes_per_s(std::optional<unsigned> gen, std::optional<unsigned> width);

// What memory a GPU carries, from its PCI device id (NVML's word, device << 16 | 0x10DE) or,
// failing that, its name. `source` is set to "pci device id" or "name".
struct MemoryType {
  std::string type;    // "HBM3e", "GDDR6X", ...
  std::string source;  // "pci device id" or "name"
};
std::optional<MemoryType> memory_type_for(std::optional<unsigned> pci_device_id, const std::optional<std::string>& name);

// A PCI bus id "0000:19:00.0" or NVML's "00000000:19:00.0", as comparable numbers.
struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0, function = 0;
  bool operator==(const PciAddress&) const = default;
};
std::optional<PciAddress> parse_pci_bus_id(const std::string& text);

// Fills memory_type, theoretical_bandwidth_bytes_per_s and the PCIe bandwidths from the raw facts
// already in `gpu`, leaving any field whose inputs are unknown empty.
void fill_derived(GpuStatic& gpu);

}  // namespace vramdoc::info
