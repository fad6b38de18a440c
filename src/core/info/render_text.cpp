#include <cstdio>

#include "core/info/report.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"

namespace vramdoc::info {

const char* const kMemoryBandwidthFormula =
    "theoretical device-memory bandwidth = 2 x max memory clock x bus width / 8 (two transfers per clock of "
    "the memory clock NVML reports; multiplying an already doubled data rate by 2 again, as some articles do, "
    "gives twice the real peak)";
const char* const kPcieBandwidthFormula =
    "PCIe bandwidth is per direction, after line encoding: GT/s x lanes / 8 x 128/130 for Gen3-5 (8, 16, 32 "
    "GT/s), 8b/10b for Gen1-2, 242/256 for Gen6 (64 GT/s); Gen5 x16 = 63.0 GB/s";
const char* const kRamBandwidthUnknownReason =
    "host RAM bandwidth is not shown: it needs the DIMMs' speed and channel count, which Linux exposes only "
    "to root (SMBIOS)";

namespace {

// A string the driver or the host gave (a GPU's name, the driver's version), safe for a
// terminal (core/terminal_safe.hpp); `unknown` when absent.
std::string shown(const std::optional<std::string>& value, const char* unknown) {
  return value ? terminal_safe(*value) : std::string(unknown);
}

constexpr const char* kUnknown = "n/a";

std::string bytes(const std::optional<std::uint64_t>& v) { return v ? format_bytes(*v, 1) : kUnknown; }
// Three significant digits: "4.92 TB/s", "63.0 GB/s", "512 GB/s".
std::string rate(const std::optional<double>& v) {
  if (!v) return kUnknown;
  double scaled = *v;
  while (scaled >= 1000.0) scaled /= 1000.0;
  return format_rate(*v, scaled < 10.0 ? 2 : scaled < 100.0 ? 1 : 0);
}

// Word-wraps `text` into lines of at most `width` columns, each starting with `indent`.
std::string wrap(const std::string& text, const std::string& first, const std::string& indent, std::size_t width = 100) {
  std::string out, line = first;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(start, end - start);
    if (line.size() + word.size() + 1 > width && line.size() > indent.size()) {
      out += line + "\n";
      line = indent;
    }
    line += (line.size() > indent.size() && line != first ? " " : "") + word;
    start = end + 1;
  }
  return out + line + "\n";
}
template <class T>
std::string num(const std::optional<T>& v, const std::string& suffix = "") {
  return v ? std::to_string(*v) + suffix : kUnknown;
}
std::string on_off(const std::optional<bool>& v) { return v ? (*v ? "on" : "off") : kUnknown; }

std::string link_text(const std::optional<unsigned>& gen, const std::optional<unsigned>& width) {
  return "Gen" + (gen ? std::to_string(*gen) : std::string("?")) + " x" + (width ? std::to_string(*width) : std::string("?"));
}

std::string host_line(const HostInfo& h) {
  std::string out = "Host: " + shown(h.cpu_model, "CPU model n/a");
  if (h.logical_cpus) out += " (" + std::to_string(*h.logical_cpus) + " logical CPUs)";
  out += ", RAM " + bytes(h.ram_total_bytes);
  if (h.ram_available_bytes) out += " (" + bytes(h.ram_available_bytes) + " available)";
  return out + "\n";
}

std::string driver_line(const DriverInfo& d) {
  std::string cuda = kUnknown;
  if (d.cuda_driver_version) {
    cuda = std::to_string(*d.cuda_driver_version / 1000) + "." + std::to_string(*d.cuda_driver_version % 1000 / 10);
  }
  return "Driver " + shown(d.driver_version, kUnknown) + ", CUDA " + cuda + ", NVML " + shown(d.nvml_version, kUnknown) + "\n";
}

std::string hierarchy(const InfoGpu& gpu, const HostInfo& host) {
  const GpuStatic& g = gpu.facts;
  TextTable t({"level", "capacity", "peak (theoretical)", "details"},
              {TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left});
  std::optional<std::uint64_t> register_bytes;
  if (g.registers_per_sm) register_bytes = *g.registers_per_sm * 4;
  t.add_row({"registers", register_bytes ? bytes(register_bytes) + " per SM" : kUnknown, "-",
             num(g.registers_per_sm) + " x 32-bit per SM, " + num(g.registers_per_block) + " per block, " +
                 num(g.max_registers_per_thread) + " per thread"});
  t.add_row({"shared memory / L1", g.shared_per_sm_bytes ? bytes(g.shared_per_sm_bytes) + " per SM" : kUnknown, "-",
             bytes(g.shared_per_block_bytes) + " per block by default, " + bytes(g.shared_per_block_optin_bytes) +
                 " opt-in; L1 + shared " + bytes(g.l1_shared_per_sm_bytes) + " per SM"});
  t.add_row({"L2 cache", bytes(g.l2_bytes), "-", "shared by all " + num(g.sm_count) + " SMs"});
  t.add_row({"device memory", bytes(g.memory_total_bytes), rate(g.theoretical_bandwidth_bytes_per_s),
             shown(g.memory_type, "type n/a") + ", " + num(g.bus_width_bits, "-bit") + " bus, " +
                 num(g.max_mem_clock_mhz, " MHz") + " max memory clock"});
  std::string nvlink = g.nvlink_active_links ? ", NVLink " + std::to_string(*g.nvlink_active_links) + " active links" : "";
  t.add_row({"host link", "-", rate(g.pcie_bandwidth_bytes_per_s),
             "PCIe " + link_text(g.pcie_gen_max, g.pcie_width_max) + " per direction (now " +
                 link_text(g.pcie_gen_current, g.pcie_width_current) + ": " + rate(g.pcie_bandwidth_current_bytes_per_s) +
                 ")" + nvlink});
  t.add_row({"host RAM", bytes(host.ram_total_bytes), rate(host.ram_bandwidth_bytes_per_s),
             shown(host.cpu_model, "CPU model n/a")});
  return t.render("  ");
}

std::string vram_vs_ram(const InfoGpu& gpu, const HostInfo& host) {
  const GpuStatic& g = gpu.facts;
  TextTable t({"", "VRAM (GPU " + std::to_string(g.index) + ")", "RAM (host)"},
              {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left});
  t.add_row({"capacity", bytes(g.memory_total_bytes), bytes(host.ram_total_bytes)});
  t.add_row({"free now", gpu.memory ? bytes(gpu.memory->free_bytes) : kUnknown, bytes(host.ram_available_bytes)});
  t.add_row({"memory type", shown(g.memory_type, kUnknown), kUnknown});
  t.add_row({"theoretical bandwidth", rate(g.theoretical_bandwidth_bytes_per_s), rate(host.ram_bandwidth_bytes_per_s)});
  t.add_row({"attached to", "the GPU (" + num(g.bus_width_bits, "-bit") + " bus)", "the CPU (DIMM slots)"});
  std::string out = t.render("  ");
  out += "  link between them: PCIe " + link_text(g.pcie_gen_max, g.pcie_width_max) + ", " +
         rate(g.pcie_bandwidth_bytes_per_s) + " per direction\n";
  if (g.theoretical_bandwidth_bytes_per_s && g.pcie_bandwidth_bytes_per_s && *g.pcie_bandwidth_bytes_per_s > 0) {
    char ratio[160];
    std::snprintf(ratio, sizeof ratio, "  data crossing PCIe moves %.0fx slower than data already in VRAM\n",
                  *g.theoretical_bandwidth_bytes_per_s / *g.pcie_bandwidth_bytes_per_s);
    out += ratio;
  }
  return out;
}

std::string gpu_section(const InfoGpu& gpu, const HostInfo& host) {
  const GpuStatic& g = gpu.facts;
  std::string cc = g.cc_major && g.cc_minor ? std::to_string(*g.cc_major) + "." + std::to_string(*g.cc_minor) : kUnknown;
  std::string out = "\nGPU " + std::to_string(g.index) + ": " + shown(g.name, "name n/a") + "\n";
  out += "  UUID " + shown(g.uuid, kUnknown) + ", PCI " + shown(g.pci_bus_id, kUnknown) + "\n";
  out += "  compute capability " + cc + ", " + num(g.sm_count) + " SMs, max SM clock " + num(g.max_sm_clock_mhz, " MHz") + "\n";
  out += "  ECC " + on_off(g.ecc_enabled) + ", MIG " + on_off(g.mig_enabled) + ", persistence " +
         on_off(g.persistence_mode) + ", compute mode " + shown(g.compute_mode, kUnknown) + "\n";
  if (gpu.memory) {
    const GpuMemory& m = *gpu.memory;
    out += "  memory now: " + bytes(m.used_bytes) + " used, " + bytes(m.reserved_bytes) + " reserved by the driver, " +
           bytes(m.free_bytes) + " free, of " + bytes(m.total_bytes) + "\n";
  }
  out += "\n  Memory hierarchy, fastest and smallest first\n" + hierarchy(gpu, host);
  out += "\n  VRAM vs RAM on this machine\n" + vram_vs_ram(gpu, host);
  return out;
}

}  // namespace

std::string render_info_text(const InfoReport& report) {
  std::string out = host_line(report.host);
  for (const auto& problem : report.problems) out += terminal_safe_lines(problem) + "\n";
  if (report.gpus.empty()) return out;
  out += driver_line(report.driver);
  for (const auto& gpu : report.gpus) out += gpu_section(gpu, report.host);
  out += "\nNotes\n";
  for (const char* note : {kMemoryBandwidthFormula, kPcieBandwidthFormula, kRamBandwidthUnknownReason}) {
    out += wrap(note, "  - ", "    ");
  }
  return out;
}

}  // namespace vramdoc::info
