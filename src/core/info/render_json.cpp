#include "core/info/report.hpp"

#include <cmath>
#include <cstdint>

#include "core/json_document.hpp"

namespace vramdoc::info {

namespace {

using Json = nlohmann::ordered_json;

template <class T>
Json value_or_null(const std::optional<T>& v) {
  return v ? Json(*v) : Json(nullptr);
}

// Byte figures are integers in every JSON document (docs/cli.md), rates in bytes per second too.
Json bytes_or_null(const std::optional<double>& v) {
  return v ? Json(static_cast<std::int64_t>(std::llround(*v))) : Json(nullptr);
}

Json memory_json(const std::optional<GpuMemory>& m) {
  if (!m) return nullptr;
  return Json{{"total_bytes", value_or_null(m->total_bytes)},
              {"used_bytes", value_or_null(m->used_bytes)},
              {"free_bytes", value_or_null(m->free_bytes)},
              {"reserved_bytes", value_or_null(m->reserved_bytes)}};
}

Json gpu_json(const InfoGpu& gpu) {
  const GpuStatic& g = gpu.facts;
  Json pci_device_id = nullptr;
  if (g.pci_device_id) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "0x%08X", *g.pci_device_id);
    pci_device_id = hex;
  }
  return Json{
      {"index", g.index},
      {"name", value_or_null(g.name)},
      {"uuid", value_or_null(g.uuid)},
      {"pci_bus_id", value_or_null(g.pci_bus_id)},
      {"pci_device_id", pci_device_id},
      {"compute_capability", g.cc_major && g.cc_minor ? Json(std::to_string(*g.cc_major) + "." + std::to_string(*g.cc_minor))
                                                      : Json(nullptr)},
      {"sm_count", value_or_null(g.sm_count)},
      {"max_sm_clock_mhz", value_or_null(g.max_sm_clock_mhz)},
      {"memory", memory_json(gpu.memory)},
      {"device_memory",
       {{"total_bytes", value_or_null(g.memory_total_bytes)},
        {"type", value_or_null(g.memory_type)},
        {"type_source", value_or_null(g.memory_type_source)},
        {"bus_width_bits", value_or_null(g.bus_width_bits)},
        {"max_mem_clock_mhz", value_or_null(g.max_mem_clock_mhz)},
        {"theoretical_bandwidth_bytes_per_s", bytes_or_null(g.theoretical_bandwidth_bytes_per_s)},
        {"ecc_enabled", value_or_null(g.ecc_enabled)},
        {"mig_enabled", value_or_null(g.mig_enabled)},
        {"persistence_mode", value_or_null(g.persistence_mode)},
        {"compute_mode", value_or_null(g.compute_mode)}}},
      {"on_chip",
       {{"l2_bytes", value_or_null(g.l2_bytes)},
        {"shared_per_block_bytes", value_or_null(g.shared_per_block_bytes)},
        {"shared_per_block_optin_bytes", value_or_null(g.shared_per_block_optin_bytes)},
        {"shared_per_sm_bytes", value_or_null(g.shared_per_sm_bytes)},
        {"l1_shared_per_sm_bytes", value_or_null(g.l1_shared_per_sm_bytes)},
        {"registers_per_sm", value_or_null(g.registers_per_sm)},
        {"registers_per_block", value_or_null(g.registers_per_block)},
        {"max_registers_per_thread", value_or_null(g.max_registers_per_thread)},
        {"max_threads_per_sm", value_or_null(g.max_threads_per_sm)},
        {"warp_size", value_or_null(g.warp_size)}}},
      {"host_link",
       {{"pcie_gen_current", value_or_null(g.pcie_gen_current)},
        {"pcie_gen_max", value_or_null(g.pcie_gen_max)},
        {"pcie_width_current", value_or_null(g.pcie_width_current)},
        {"pcie_width_max", value_or_null(g.pcie_width_max)},
        {"pcie_bandwidth_bytes_per_s", bytes_or_null(g.pcie_bandwidth_bytes_per_s)},
        {"pcie_bandwidth_current_bytes_per_s", bytes_or_null(g.pcie_bandwidth_current_bytes_per_s)},
        {"nvlink_active_links", value_or_null(g.nvlink_active_links)}}},
  };
}

}  // namespace

nlohmann::ordered_json info_to_json(const InfoReport& report) {
  Json gpus = Json::array();
  for (const auto& gpu : report.gpus) gpus.push_back(gpu_json(gpu));
  const HostInfo& h = report.host;
  return Json{
      {"host",
       {{"cpu_model", value_or_null(h.cpu_model)},
        {"logical_cpus", value_or_null(h.logical_cpus)},
        {"ram_total_bytes", value_or_null(h.ram_total_bytes)},
        {"ram_available_bytes", value_or_null(h.ram_available_bytes)},
        {"ram_bandwidth_bytes_per_s", bytes_or_null(h.ram_bandwidth_bytes_per_s)}}},
      {"driver",
       {{"driver_version", value_or_null(report.driver.driver_version)},
        {"cuda_driver_version", value_or_null(report.driver.cuda_driver_version)},
        {"nvml_version", value_or_null(report.driver.nvml_version)}}},
      {"gpus", gpus},
      {"problems", report.problems},
      {"notes",
       {{"memory_bandwidth", kMemoryBandwidthFormula},
        {"pcie_bandwidth", kPcieBandwidthFormula},
        {"ram_bandwidth", kRamBandwidthUnknownReason}}},
  };
}

std::string render_info_json(const InfoReport& report) { return json_document("vramdoc.info/1", info_to_json(report)); }

}  // namespace vramdoc::info
