#include "core/info/derived.hpp"

#include <array>
#include <cstdio>
#include <string_view>

namespace vramdoc::info {

namespace {

struct ByDeviceId {
  unsigned device_id;  // the upper 16 bits of NVML's pciDeviceId
  std::string_view type;
};
// Data-centre and common cards whose memory the device id alone decides.
constexpr std::array<ByDeviceId, 16> kByDeviceId = {{
    {0x2335, "HBM3e"},   // H200 SXM 141GB
    {0x233B, "HBM3e"},   // H200 NVL
    {0x2330, "HBM3"},    // H100 SXM5 80GB
    {0x2331, "HBM2e"},   // H100 PCIe
    {0x20B0, "HBM2"},    // A100 SXM4 40GB
    {0x20F1, "HBM2"},    // A100 PCIe 40GB
    {0x20B2, "HBM2e"},   // A100 SXM4 80GB
    {0x20B5, "HBM2e"},   // A100 PCIe 80GB
    {0x1DB1, "HBM2"},    // V100 SXM2 16GB
    {0x1DB5, "HBM2"},    // V100 SXM2 32GB
    {0x1DB4, "HBM2"},    // V100 PCIe 16GB
    {0x1EB8, "GDDR6"},   // T4
    {0x27B8, "GDDR6"},   // L4
    {0x26B9, "GDDR6"},   // L40S
    {0x2684, "GDDR6X"},  // GeForce RTX 4090
    {0x2204, "GDDR6X"},  // GeForce RTX 3090
}};

struct ByName {
  std::string_view needle;  // first match wins: specific before general
  std::string_view type;
};
constexpr std::array<ByName, 22> kByName = {{
    {"H200", "HBM3e"},     {"B200", "HBM3e"},    {"B100", "HBM3e"},     {"GB200", "HBM3e"},
    {"H100 PCIe", "HBM2e"}, {"HBM3", "HBM3"},     {"H100", "HBM3"},      {"A100-SXM4-80GB", "HBM2e"},
    {"A100 80GB", "HBM2e"}, {"A100", "HBM2"},     {"A30", "HBM2"},       {"V100", "HBM2"},
    {"P100", "HBM2"},       {"RTX 5090", "GDDR7"}, {"RTX 4090", "GDDR6X"}, {"RTX 4080", "GDDR6X"},
    {"RTX 3090", "GDDR6X"}, {"RTX 3080", "GDDR6X"}, {"L40", "GDDR6"},     {"L4", "GDDR6"},
    {"A10", "GDDR6"},       {"T4", "GDDR6"},
}};

}  // namespace

std::optional<double> memory_bandwidth_bytes_per_s(std::optional<unsigned> max_mem_clock_mhz,
                                                   std::optional<unsigned> bus_width_bits) {
  if (!max_mem_clock_mhz || !bus_width_bits || *max_mem_clock_mhz == 0 || *bus_width_bits == 0) return std::nullopt;
  return 2.0 * *max_mem_clock_mhz * 1e6 * *bus_width_bits / 8.0;
}

std::optional<double> pcie_bandwidth_bytes_per_s(std::optional<unsigned> gen, std::optional<unsigned> width) {
  if (!gen || !width || *width == 0) return std::nullopt;
  double gt_per_s = 0, efficiency = 0;
  switch (*gen) {
    case 1: gt_per_s = 2.5; efficiency = 8.0 / 10.0; break;
    case 2: gt_per_s = 5.0; efficiency = 8.0 / 10.0; break;
    case 3: gt_per_s = 8.0; efficiency = 128.0 / 130.0; break;
    case 4: gt_per_s = 16.0; efficiency = 128.0 / 130.0; break;
    case 5: gt_per_s = 32.0; efficiency = 128.0 / 130.0; break;
    case 6: gt_per_s = 64.0; efficiency = 242.0 / 256.0; break;
    default: return std::nullopt;
  }
  return gt_per_s * 1e9 * efficiency * *width / 8.0;
}

std::optional<MemoryType> memory_type_for(std::optional<unsigned> pci_device_id, const std::optional<std::string>& name) {
  if (pci_device_id && (*pci_device_id & 0xFFFFu) == 0x10DEu) {
    unsigned device_id = *pci_device_id >> 16;
    for (const auto& row : kByDeviceId) {
      if (row.device_id == device_id) return MemoryType{std::string(row.type), "pci device id"};
    }
  }
  if (name) {
    for (const auto& row : kByName) {
      if (name->find(row.needle) != std::string::npos) return MemoryType{std::string(row.type), "name"};
    }
  }
  return std::nullopt;
}

std::optional<PciAddress> parse_pci_bus_id(const std::string& text) {
  PciAddress a;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%x:%x:%x.%x%n", &a.domain, &a.bus, &a.device, &a.function, &consumed) != 4 ||
      static_cast<std::size_t>(consumed) != text.size()) {
    return std::nullopt;
  }
  return a;
}

void fill_derived(GpuStatic& gpu) {
  if (!gpu.memory_type) {
    if (auto found = memory_type_for(gpu.pci_device_id, gpu.name)) {
      gpu.memory_type = found->type;
      gpu.memory_type_source = found->source;
    }
  }
  gpu.theoretical_bandwidth_bytes_per_s = memory_bandwidth_bytes_per_s(gpu.max_mem_clock_mhz, gpu.bus_width_bits);
  gpu.pcie_bandwidth_bytes_per_s = pcie_bandwidth_bytes_per_s(gpu.pcie_gen_max, gpu.pcie_width_max);
  gpu.pcie_bandwidth_current_bytes_per_s = pcie_bandwidth_bytes_per_s(gpu.pcie_gen_current, gpu.pcie_width_current);
}

}  // namespace vramdoc::info
