#include "core/watch/prometheus.hpp"

#include <functional>

#include "core/watch/dcgm.hpp"
#include "core/watch/exposition.hpp"

namespace vramdoc::watch {

std::string escape_label_value(const std::string& value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string metrics_content_type(ExpositionFormat format) {
  if (format == ExpositionFormat::OpenMetrics) return "application/openmetrics-text; version=1.0.0; charset=utf-8";
  return "text/plain; version=0.0.4; charset=utf-8";
}

namespace {

Labels gpu_labels(const GpuView& gpu) {
  return {{"gpu", std::to_string(gpu.info.index)}, {"uuid", gpu.info.uuid.value_or("")}};
}

using SampleField = std::function<std::optional<double>(const GpuSample&)>;

struct GpuMetric {
  const char* name;
  const char* help;
  SampleField field;
};

const std::vector<GpuMetric>& gpu_metrics() {
  static const std::vector<GpuMetric> kMetrics = {
      {"vramdoc_gpu_memory_total_bytes",
       "Device memory in total.",
       [](const GpuSample& s) { return as_double(s.memory.total_bytes); }},
      {"vramdoc_gpu_memory_used_bytes",
       "Device memory in use (excludes driver-reserved memory).",
       [](const GpuSample& s) { return as_double(s.memory.used_bytes); }},
      {"vramdoc_gpu_memory_free_bytes",
       "Device memory free.",
       [](const GpuSample& s) { return as_double(s.memory.free_bytes); }},
      {"vramdoc_gpu_memory_reserved_bytes",
       "Device memory reserved by the driver and firmware.",
       [](const GpuSample& s) { return as_double(s.memory.reserved_bytes); }},
      {"vramdoc_gpu_sm_utilization_ratio",
       "Fraction of the last sample period in which a kernel ran (nvidia-smi utilization.gpu / 100).",
       [](const GpuSample& s) { return as_double(s.sm_util_percent, 0.01); }},
      {"vramdoc_gpu_memory_controller_utilization_ratio",
       "Fraction of the last sample period in which device memory was read or written.",
       [](const GpuSample& s) { return as_double(s.mem_util_percent, 0.01); }},
      {"vramdoc_gpu_pcie_tx_bytes_per_second",
       "PCIe throughput from the GPU to the host.",
       [](const GpuSample& s) { return as_double(s.pcie_tx_bytes_per_s); }},
      {"vramdoc_gpu_pcie_rx_bytes_per_second",
       "PCIe throughput from the host to the GPU.",
       [](const GpuSample& s) { return as_double(s.pcie_rx_bytes_per_s); }},
      {"vramdoc_gpu_sm_clock_hertz",
       "SM clock.",
       [](const GpuSample& s) { return as_double(s.sm_clock_mhz, 1e6); }},
      {"vramdoc_gpu_memory_clock_hertz",
       "Memory clock.",
       [](const GpuSample& s) { return as_double(s.mem_clock_mhz, 1e6); }},
      {"vramdoc_gpu_power_watts",
       "Power draw.",
       [](const GpuSample& s) { return s.power_watts; }},
      {"vramdoc_gpu_power_limit_watts",
       "Power limit enforced.",
       [](const GpuSample& s) { return s.power_limit_watts; }},
      {"vramdoc_gpu_temperature_celsius",
       "GPU core temperature.",
       [](const GpuSample& s) { return as_double(s.temperature_c); }},
      {"vramdoc_gpu_clocks_event_reasons",
       "NVML clocks-event (throttle) reason bit mask; 0 means not held back.",
       [](const GpuSample& s) { return as_double(s.throttle_reasons); }},
  };
  return kMetrics;
}

std::optional<double> hint_value(const GpuView& gpu, HintKind kind, bool inputs_known) {
  if (!inputs_known) return std::nullopt;
  for (const auto& h : gpu.hints)
    if (h.kind == kind) return 1.0;
  return 0.0;
}


// The process families for the processes the cap keeps. The command line (redacted when read)
// is published only when asked for: by default the executable's name identifies the process.
std::string process_families(const Snapshot& snapshot, const ExportOptions& options) {
  Family info("vramdoc_process_info",
              std::string("A process using a GPU; labels user, executable, container, pod_uid, namespace") +
                  (options.command ? ", command (redacted)" : "") + "; the value is always 1.");
  Family used("vramdoc_process_memory_used_bytes", "Device memory the driver charges to the process.");
  Family sm("vramdoc_process_sm_utilization_ratio", "The process's share of SM time, where the driver reports it.");
  Family mem("vramdoc_process_memory_controller_utilization_ratio",
             "The process's share of memory-controller time, where the driver reports it.");
  for (const auto& [g, i] : exported_processes(snapshot, options.max_processes)) {
    const GpuView& gpu = snapshot.gpus[g];
    const ProcessView& p = gpu.processes[i];
    Labels labels = gpu_labels(gpu);
    labels.emplace_back("pid", std::to_string(p.gpu.pid));
    Labels info_labels = labels;
    info_labels.emplace_back("user", p.details.user.value_or(""));
    info_labels.emplace_back("executable", p.details.executable.value_or(""));
    if (options.command) info_labels.emplace_back("command", p.details.command.value_or(""));
    info_labels.emplace_back("container", p.details.container_id.value_or(""));
    info_labels.emplace_back("pod_uid", p.details.pod_uid.value_or(""));
    info_labels.emplace_back("namespace", p.details.pod_namespace.value_or(""));
    info.add(info_labels, 1.0);
    used.add(labels, as_double(p.gpu.used_bytes));
    sm.add(labels, as_double(p.gpu.sm_util_percent, 0.01));
    mem.add(labels, as_double(p.gpu.mem_util_percent, 0.01));
  }
  return info.text() + used.text() + sm.text() + mem.text();
}

// The exporter's own numbers: processes left out of this exposition by the cap, and a counter of
// those left out so far (`dropped_total`, kept by the caller's DroppedProcesses).
std::string exporter_counts(const Snapshot& snapshot, ExpositionFormat format, const ExportOptions& options,
                            std::uint64_t dropped_total) {
  std::size_t processes = 0;
  for (const auto& gpu : snapshot.gpus) processes += gpu.processes.size();
  const std::size_t omitted = processes - std::min(processes, options.max_processes);
  Family now("vramdoc_exporter_processes_omitted",
             "Processes on the GPUs left out of this exposition by the limit on process series.");
  now.add({}, static_cast<double>(omitted));
  const std::string family = "vramdoc_exporter_processes_dropped";
  const std::string type_name = format == ExpositionFormat::OpenMetrics ? family : family + "_total";
  return now.text() + "# HELP " + type_name +
         " Processes left out by the limit on process series, each counted when it starts being left out.\n"
         "# TYPE " + type_name + " counter\n" + family + "_total " + std::to_string(dropped_total) + "\n";
}

// vramdoc's per-GPU families: identity, up, the sampled fields, the PCIe peak and the hints.
std::string gpu_families(const Snapshot& snapshot) {
  Family info("vramdoc_gpu_info", "GPU identity; the value is always 1.");
  Family up("vramdoc_gpu_up", "1 when the last sample of this GPU succeeded, 0 when the driver call failed.");
  for (const auto& gpu : snapshot.gpus) {
    Labels labels = gpu_labels(gpu);
    labels.emplace_back("name", gpu.info.name.value_or(""));
    labels.emplace_back("pci_bus_id", gpu.info.pci_bus_id.value_or(""));
    info.add(labels, 1.0);
    up.add(gpu_labels(gpu), gpu.sample ? 1.0 : 0.0);
  }
  std::string out = info.text() + up.text();
  for (const auto& metric : gpu_metrics()) {
    Family family(metric.name, metric.help);
    for (const auto& gpu : snapshot.gpus)
      if (gpu.sample) family.add(gpu_labels(gpu), metric.field(*gpu.sample));
    out += family.text();
  }
  Family peak("vramdoc_gpu_pcie_peak_bytes_per_second",
              "Theoretical PCIe bandwidth per direction at the link's max generation and width.");
  Family bw("vramdoc_gpu_bandwidth_bound",
            "1 when the memory controller is busy while kernels run little (a bandwidth-bound job).");
  Family link("vramdoc_gpu_host_link_bound", "1 when PCIe runs near its peak while the GPU is mostly idle.");
  for (const auto& gpu : snapshot.gpus) {
    peak.add(gpu_labels(gpu), gpu.info.pcie_bandwidth_bytes_per_s);
    if (!gpu.sample) continue;
    const GpuSample& s = *gpu.sample;
    bw.add(gpu_labels(gpu), hint_value(gpu, HintKind::BandwidthBound, s.sm_util_percent && s.mem_util_percent));
    bool link_known = s.sm_util_percent && gpu.info.pcie_bandwidth_bytes_per_s &&
                      (s.pcie_tx_bytes_per_s || s.pcie_rx_bytes_per_s);
    link.add(gpu_labels(gpu), hint_value(gpu, HintKind::HostLinkBound, link_known));
  }
  return out + peak.text() + bw.text() + link.text();
}

}  // namespace

std::string render_metrics(const Snapshot& snapshot, ExpositionFormat format, const ExportOptions& options,
                           std::uint64_t dropped_total) {
  Family up("vramdoc_up",
            "1 when the exporter read the GPU driver in its last sample, 0 when it could not (no driver, or "
            "every GPU failed); the exporter keeps serving either way.");
  up.add({}, driver_up(snapshot) ? 1.0 : 0.0);
  std::string out = up.text();
  if (options.metrics.vramdoc) {
    out += gpu_families(snapshot);
    out += process_families(snapshot, options);
    out += exporter_counts(snapshot, format, options, dropped_total);
  }
  if (options.metrics.dcgm) out += render_dcgm_metrics(snapshot, options.hostname);
  if (format == ExpositionFormat::OpenMetrics) out += "# EOF\n";
  return out;
}

}  // namespace vramdoc::watch
