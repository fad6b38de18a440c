// The NVML backend's slower queries: a GPU's static facts and a full sample.
#include <algorithm>
#include <cstring>
#include <map>

#include "backends/nvml_impl.hpp"
#include "core/info/derived.hpp"

namespace vramdoc::backends {

using nvml_detail::get;
using nvml_detail::get_string;

namespace {

std::string compute_mode_name(int mode) {
  switch (mode) {
    case 0: return "Default";
    case 1: return "Exclusive_Thread";
    case 2: return "Prohibited";
    case 3: return "Exclusive_Process";
    default: return "unknown (" + std::to_string(mode) + ")";
  }
}

// Bus id and PCI device id, from whichever nvmlDeviceGetPciInfo version the library has.
void read_pci(const Nvml::Impl& impl, api::Device device, GpuStatic& out) {
  const auto& s = impl.sym.pci_info;
  if (!s) return;
  if (std::string_view(s.name) == "nvmlDeviceGetPciInfo") {
    api::PciInfoV1 pci{};
    if (s.fn(device, &pci) != api::kSuccess) return;
    out.pci_bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
    out.pci_device_id = pci.pci_device_id;
    return;
  }
  api::PciInfo pci{};
  if (s.fn(device, &pci) != api::kSuccess) return;
  out.pci_bus_id = std::string(pci.bus_id, strnlen(pci.bus_id, sizeof pci.bus_id));
  out.pci_device_id = pci.pci_device_id;
}

// Active NVLink links; 0 when the device has no NVLink (the first link is "not supported").
std::optional<unsigned> active_nvlinks(const Nvml::Impl& impl, api::Device device) {
  const auto& s = impl.sym.nvlink_state;
  if (!s) return std::nullopt;
  unsigned active = 0;
  for (unsigned link = 0; link < api::kNvlinkMaxLinks; ++link) {
    int state = api::kDisabled;
    api::Return rc = s.fn(device, link, &state);
    if (rc == api::kErrorNotSupported || rc == api::kErrorInvalidArgument) break;  // no such link
    if (rc != api::kSuccess) return link == 0 ? std::nullopt : std::optional<unsigned>(active);
    if (state == api::kEnabled) ++active;
  }
  return active;
}

// Newest SM / memory utilisation per pid since the last call for this device.
void add_process_utilisation(const Nvml::Impl& impl, api::Device device, unsigned index,
                             std::vector<GpuProcess>& processes) {
  const auto& s = impl.sym.process_utilization;
  if (!s || processes.empty()) return;
  std::lock_guard lock(impl.mutex);
  unsigned long long since = impl.last_util_us[index];
  unsigned count = 0;
  api::Return rc = s.fn(device, nullptr, &count, since);
  if (rc != api::kErrorInsufficientSize || count == 0) return;  // NOT_FOUND: no new samples
  std::vector<api::ProcessUtilizationSample> samples(count + 8);
  count = static_cast<unsigned>(samples.size());
  if (s.fn(device, samples.data(), &count, since) != api::kSuccess) return;
  std::map<unsigned, api::ProcessUtilizationSample> newest;
  for (unsigned i = 0; i < count && i < samples.size(); ++i) {
    auto& slot = newest[samples[i].pid];
    if (samples[i].time_stamp_us >= slot.time_stamp_us) slot = samples[i];
    impl.last_util_us[index] = std::max(impl.last_util_us[index], samples[i].time_stamp_us);
  }
  for (auto& p : processes) {
    if (auto it = newest.find(p.pid); it != newest.end()) {
      p.sm_util_percent = it->second.sm_util;
      p.mem_util_percent = it->second.mem_util;
    }
  }
}

}  // namespace

Result<GpuStatic> Nvml::static_info(unsigned index) const {
  auto device = impl_->device(index);
  if (!device) return make_error(device.error());
  const Symbols& sym = impl_->sym;
  api::Device d = *device;
  GpuStatic out;
  out.index = index;
  out.name = get_string(sym.name, d);
  out.uuid = get_string(sym.uuid, d);
  read_pci(*impl_, d, out);
  if (sym.compute_capability) {
    int major = 0, minor = 0;
    if (sym.compute_capability.fn(d, &major, &minor) == api::kSuccess) {
      out.cc_major = major;
      out.cc_minor = minor;
    }
  }
  out.bus_width_bits = get<unsigned>(sym.bus_width, d);
  out.max_mem_clock_mhz = get<unsigned>(sym.max_clock, d, unsigned{api::kClockMem});
  out.max_sm_clock_mhz = get<unsigned>(sym.max_clock, d, unsigned{api::kClockSm});
  if (sym.ecc_mode) {
    int current = 0, pending = 0;
    if (sym.ecc_mode.fn(d, &current, &pending) == api::kSuccess) out.ecc_enabled = current == api::kEnabled;
  }
  if (sym.mig_mode) {
    unsigned current = 0, pending = 0;
    if (sym.mig_mode.fn(d, &current, &pending) == api::kSuccess) out.mig_enabled = current == 1;
  }
  if (auto p = get<int>(sym.persistence_mode, d)) out.persistence_mode = *p == api::kEnabled;
  if (auto m = get<int>(sym.compute_mode, d)) out.compute_mode = compute_mode_name(*m);
  out.pcie_gen_current = get<unsigned>(sym.pcie_gen_current, d);
  out.pcie_gen_max = get<unsigned>(sym.pcie_gen_max, d);
  out.pcie_width_current = get<unsigned>(sym.pcie_width_current, d);
  out.pcie_width_max = get<unsigned>(sym.pcie_width_max, d);
  out.nvlink_active_links = active_nvlinks(*impl_, d);
  info::fill_derived(out);
  return out;
}

Result<GpuSample> Nvml::sample(unsigned index) const {
  auto device = impl_->device(index);
  if (!device) return make_error(device.error());
  const Symbols& sym = impl_->sym;
  api::Device d = *device;
  GpuSample out;
  out.index = index;
  auto memory_now = memory(index);
  if (!memory_now) return make_error(memory_now.error());  // the one field a sample must have
  out.memory = *memory_now;
  if (auto u = get<api::Utilization>(sym.utilization, d)) {
    out.sm_util_percent = u->gpu;
    out.mem_util_percent = u->memory;
  }
  // NVML reports PCIe throughput in KB/s over a 20 ms window (the call blocks that long).
  if (auto tx = get<unsigned>(sym.pcie_throughput, d, unsigned{api::kPcieTxBytes})) out.pcie_tx_bytes_per_s = *tx * 1024ULL;
  if (auto rx = get<unsigned>(sym.pcie_throughput, d, unsigned{api::kPcieRxBytes})) out.pcie_rx_bytes_per_s = *rx * 1024ULL;
  out.sm_clock_mhz = get<unsigned>(sym.clock, d, unsigned{api::kClockSm});
  out.mem_clock_mhz = get<unsigned>(sym.clock, d, unsigned{api::kClockMem});
  if (auto mw = get<unsigned>(sym.power_usage, d)) out.power_watts = *mw / 1000.0;
  if (auto mw = get<unsigned>(sym.power_limit, d)) out.power_limit_watts = *mw / 1000.0;
  out.temperature_c = get<unsigned>(sym.temperature, d, unsigned{api::kTemperatureGpu});
  out.throttle_reasons = get<unsigned long long>(sym.clock_event_reasons, d);
  if (auto procs = processes(index)) {
    out.processes = std::move(*procs);
    add_process_utilisation(*impl_, d, index, out.processes);
  }
  return out;
}

}  // namespace vramdoc::backends
