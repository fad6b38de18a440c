// Names, HELP texts and units follow dcgm-exporter's etc/default-counters.csv; the reading of each
// field follows DCGM's cache manager (frame buffer from NVML's v2 memory struct, MiB rounded
// down). Read 2026-11-30; the differences are written down in docs/watch.md.
#include "core/watch/dcgm.hpp"

#include <functional>
#include <vector>

#include "core/watch/exposition.hpp"

namespace vramdoc::watch {

namespace {

constexpr std::uint64_t kMiB = 1024 * 1024;

struct DcgmField {
  const char* name;
  const char* help;
  std::function<std::optional<double>(const GpuSample&)> value;
};

std::optional<double> mib(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes / kMiB);  // DCGM divides whole numbers: rounded down
}

std::optional<double> kib(const std::optional<std::uint64_t>& bytes) {
  if (!bytes) return std::nullopt;
  return static_cast<double>(*bytes / 1024);  // NVML's own unit (KB/s) back
}

// In default-counters.csv's order. The PCIe pair is declared gauge: NVML's value is a rate over
// 20 ms, not a running total (dcgm-exporter's csv says counter).
const std::vector<DcgmField>& fields() {
  static const std::vector<DcgmField> kFields = {
      {"DCGM_FI_DEV_SM_CLOCK", "SM clock frequency (in MHz).",
       [](const GpuSample& s) { return as_double(s.sm_clock_mhz); }},
      {"DCGM_FI_DEV_MEM_CLOCK", "Memory clock frequency (in MHz).",
       [](const GpuSample& s) { return as_double(s.mem_clock_mhz); }},
      {"DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).",
       [](const GpuSample& s) { return as_double(s.temperature_c); }},
      {"DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", [](const GpuSample& s) { return s.power_watts; }},
      {"DCGM_FI_DEV_PCIE_TX_THROUGHPUT", "PCIe TX throughput from the GPU (in KB/s) via NVML.",
       [](const GpuSample& s) { return kib(s.pcie_tx_bytes_per_s); }},
      {"DCGM_FI_DEV_PCIE_RX_THROUGHPUT", "PCIe RX throughput to the GPU (in KB/s) via NVML.",
       [](const GpuSample& s) { return kib(s.pcie_rx_bytes_per_s); }},
      {"DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
       [](const GpuSample& s) { return as_double(s.sm_util_percent); }},
      {"DCGM_FI_DEV_MEM_COPY_UTIL", "Memory utilization (in %).",
       [](const GpuSample& s) { return as_double(s.mem_util_percent); }},
      {"DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).",
       [](const GpuSample& s) { return mib(s.memory.free_bytes); }},
      {"DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).",
       [](const GpuSample& s) { return mib(s.memory.used_bytes); }},
      {"DCGM_FI_DEV_FB_RESERVED", "Framebuffer memory reserved (in MiB).",
       [](const GpuSample& s) { return mib(s.memory.reserved_bytes); }},
  };
  return kFields;
}

Labels dcgm_labels(const GpuView& gpu, const std::string& hostname) {
  const std::string index = std::to_string(gpu.info.index);
  Labels labels = {{"gpu", index},
                   {"UUID", gpu.info.uuid.value_or("")},
                   {"pci_bus_id", gpu.info.pci_bus_id.value_or("")},
                   {"device", "nvidia" + index},
                   {"modelName", gpu.info.name.value_or("")}};
  if (!hostname.empty()) labels.emplace_back("Hostname", hostname);
  return labels;
}

}  // namespace

Result<MetricSets> parse_metric_sets(std::string_view text) {
  MetricSets sets{false, false};
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view name = text.substr(start, comma - start);
    bool* set = name == "vramdoc" ? &sets.vramdoc : name == "dcgm" ? &sets.dcgm : nullptr;
    if (!set) return make_error("--metrics: '" + std::string(name) + "' is not a metric set: use vramdoc, dcgm or vramdoc,dcgm");
    if (*set) return make_error("--metrics: '" + std::string(name) + "' is named twice");
    *set = true;
    start = comma + 1;
  }
  return sets;
}

std::string render_dcgm_metrics(const Snapshot& snapshot, const std::string& hostname) {
  std::string out;
  for (const auto& field : fields()) {
    Family family(field.name, field.help);
    for (const auto& gpu : snapshot.gpus)
      if (gpu.sample) family.add(dcgm_labels(gpu, hostname), field.value(*gpu.sample));
    out += family.text();
  }
  return out;
}

}  // namespace vramdoc::watch
