#include "core/watch/render.hpp"

#include <cmath>
#include <cstdio>

#include "core/json_document.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/units.hpp"
#include "core/watch/format.hpp"

namespace vramdoc::watch {

namespace {

template <class T>
nlohmann::ordered_json opt(const std::optional<T>& value) {
  return value ? nlohmann::ordered_json(*value) : nlohmann::ordered_json(nullptr);
}

// Byte figures are integers in every JSON document (docs/cli.md); a theoretical rate rounds.
nlohmann::ordered_json whole_bytes(const std::optional<double>& bytes) {
  return bytes ? nlohmann::ordered_json(static_cast<std::int64_t>(std::llround(*bytes))) : nlohmann::ordered_json(nullptr);
}

std::string gpu_name(const GpuView& gpu) { return or_na(gpu.info.name); }

std::string fmt_clock(const std::optional<unsigned>& mhz) { return mhz ? std::to_string(*mhz) + " MHz" : "n/a"; }

std::string fmt_temp(const std::optional<unsigned>& c) { return c ? std::to_string(*c) + " C" : "n/a"; }

// A command line cut to `max` bytes with "..." so one long command does not widen the table.
std::string shorten(const std::optional<std::string>& raw, std::size_t max = 60) {
  if (!raw) return "n/a";
  const std::string command = terminal_safe(*raw);
  if (command.size() <= max) return command;
  std::size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(command[cut]) & 0xC0) == 0x80) --cut;  // whole UTF-8 chars
  return command.substr(0, cut) + "...";
}

// The USED cell, coloured by how full the GPU is (the thresholds of render_text's contract).
std::string used_cell(const GpuSample& s, const Style& style) {
  const std::string text = fmt_bytes(s.memory.used_bytes);
  if (!s.memory.used_bytes || !s.memory.total_bytes || *s.memory.total_bytes == 0) return text;
  const double share = static_cast<double>(*s.memory.used_bytes) / static_cast<double>(*s.memory.total_bytes);
  return share >= 0.9 ? style.paint(text, Tone::Bad) : share >= 0.75 ? style.paint(text, Tone::Warn) : text;
}

}  // namespace

std::string render_text(const Snapshot& snapshot, const Style& style) {
  if (snapshot.gpus.empty()) return "No GPU to watch.\n";
  TextTable gpus({"GPU", "NAME", "USED", "TOTAL", "SM", "MEM BUSY", "PCIE TX", "PCIE RX", "SM CLK", "MEM CLK",
                  "POWER", "TEMP", "THROTTLE"},
                 {TextTable::Align::Right, TextTable::Align::Left});
  for (const auto& gpu : snapshot.gpus) {
    std::string index = std::to_string(gpu.info.index);
    if (!gpu.sample) {
      gpus.add_row({index, gpu_name(gpu), "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a", "n/a"});
      continue;
    }
    const GpuSample& s = *gpu.sample;
    gpus.add_row({index, gpu_name(gpu), used_cell(s, style), fmt_bytes(s.memory.total_bytes),
                  fmt_percent(s.sm_util_percent), fmt_percent(s.mem_util_percent), fmt_rate(s.pcie_tx_bytes_per_s),
                  fmt_rate(s.pcie_rx_bytes_per_s), fmt_clock(s.sm_clock_mhz), fmt_clock(s.mem_clock_mhz),
                  fmt_watts(s.power_watts), fmt_temp(s.temperature_c), fmt_throttle(s.throttle_reasons)});
  }
  std::string out = gpus.render();

  TextTable procs({"GPU", "PID", "USER", "GPU MEM", "SM", "MEM BUSY", "CONTAINER", "COMMAND"},
                  {TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left, TextTable::Align::Right,
                   TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left, TextTable::Align::Left});
  std::size_t process_count = 0;
  for (const auto& gpu : snapshot.gpus) {
    auto processes = gpu.processes;
    sort_processes(processes, SortKey::Memory);
    for (const auto& p : processes) {
      procs.add_row({std::to_string(gpu.info.index), std::to_string(p.gpu.pid), or_na(p.details.user),
                     fmt_bytes(p.gpu.used_bytes), fmt_percent(p.gpu.sm_util_percent),
                     fmt_percent(p.gpu.mem_util_percent), fmt_container(p.details), shorten(p.details.command)});
      ++process_count;
    }
  }
  out += "\n";
  out += process_count ? procs.render() : "No compute processes.\n";

  std::string notes;
  for (const auto& gpu : snapshot.gpus) {
    std::string prefix = "GPU " + std::to_string(gpu.info.index) + ": ";
    if (gpu.error) notes += prefix + "not read: " + terminal_safe(*gpu.error) + "\n";
    for (const auto& h : gpu.hints) notes += prefix + h.text + "\n";
  }
  if (!notes.empty()) out += "\n" + notes;
  return out;
}

nlohmann::ordered_json to_json(const Snapshot& snapshot) {
  nlohmann::ordered_json gpus = nlohmann::ordered_json::array();
  for (const auto& gpu : snapshot.gpus) {
    nlohmann::ordered_json g = {{"index", gpu.info.index},
                        {"name", opt(gpu.info.name)},
                        {"uuid", opt(gpu.info.uuid)},
                        {"pci_bus_id", opt(gpu.info.pci_bus_id)},
                        {"pcie_peak_bytes_per_s", whole_bytes(gpu.info.pcie_bandwidth_bytes_per_s)},
                        {"error", opt(gpu.error)}};
    if (gpu.sample) {
      const GpuSample& s = *gpu.sample;
      g["memory"] = {{"total_bytes", opt(s.memory.total_bytes)},
                     {"used_bytes", opt(s.memory.used_bytes)},
                     {"free_bytes", opt(s.memory.free_bytes)},
                     {"reserved_bytes", opt(s.memory.reserved_bytes)}};
      g["sm_util_percent"] = opt(s.sm_util_percent);
      g["mem_util_percent"] = opt(s.mem_util_percent);
      g["pcie_tx_bytes_per_s"] = opt(s.pcie_tx_bytes_per_s);
      g["pcie_rx_bytes_per_s"] = opt(s.pcie_rx_bytes_per_s);
      g["sm_clock_mhz"] = opt(s.sm_clock_mhz);
      g["mem_clock_mhz"] = opt(s.mem_clock_mhz);
      g["power_watts"] = opt(s.power_watts);
      g["power_limit_watts"] = opt(s.power_limit_watts);
      g["temperature_c"] = opt(s.temperature_c);
      g["throttle_reasons"] = s.throttle_reasons ? nlohmann::ordered_json(throttle_reason_names(*s.throttle_reasons))
                                                 : nlohmann::ordered_json(nullptr);
    }
    nlohmann::ordered_json hints = nlohmann::ordered_json::array();
    for (const auto& h : gpu.hints) {
      hints.push_back({{"kind", h.kind == HintKind::BandwidthBound ? "bandwidth_bound" : "host_link_bound"},
                       {"text", h.text}});
    }
    g["hints"] = hints;
    nlohmann::ordered_json procs = nlohmann::ordered_json::array();
    for (const auto& p : gpu.processes) {
      procs.push_back({{"pid", p.gpu.pid},
                       {"used_bytes", opt(p.gpu.used_bytes)},
                       {"sm_util_percent", opt(p.gpu.sm_util_percent)},
                       {"mem_util_percent", opt(p.gpu.mem_util_percent)},
                       {"user", opt(p.details.user)},
                       {"command", opt(p.details.command)},
                       {"container_pid", opt(p.details.container_pid)},
                       {"container_id", opt(p.details.container_id)}});
    }
    g["processes"] = procs;
    gpus.push_back(std::move(g));
  }
  return {{"t_unix_s", snapshot.t_unix_seconds}, {"gpus", gpus}};
}

std::string render_json(const Snapshot& snapshot) { return json_document("vramdoc.watch/1", to_json(snapshot)); }

std::string render_jsonl_line(const Snapshot& snapshot) {
  return json_document("vramdoc.watch/1", to_json(snapshot), JsonLayout::Line);
}

std::string csv_escape(const std::string& cell) {
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

namespace {

template <class T>
std::string cell(const std::optional<T>& value) {
  if (!value) return "";
  if constexpr (std::is_same_v<T, double>) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", *value);
    return buf;
  } else if constexpr (std::is_same_v<T, std::string>) {
    std::string text = terminal_safe(*value);  // the log is read with cat and less too
    // ... and opened in spreadsheets: a text cell that starts like a formula stays text (OWASP).
    if (!text.empty() && std::string_view("=+-@").find(text.front()) != std::string_view::npos) text.insert(0, 1, '\'');
    return csv_escape(text);
  } else {
    return std::to_string(*value);
  }
}

}  // namespace

std::string csv_header() {
  return "t_unix_s,kind,gpu,uuid,pid,used_bytes,total_bytes,reserved_bytes,sm_util_percent,mem_util_percent,"
         "pcie_tx_bytes_per_s,pcie_rx_bytes_per_s,sm_clock_mhz,mem_clock_mhz,power_watts,temperature_c,"
         "throttle_reasons,user,command,error\n";
}

std::string render_csv_rows(const Snapshot& snapshot) {
  char t[32];
  std::snprintf(t, sizeof t, "%.3f", snapshot.t_unix_seconds);
  std::string out;
  for (const auto& gpu : snapshot.gpus) {
    auto head = [&](const char* kind) {
      return std::string(t) + "," + kind + "," + std::to_string(gpu.info.index) + "," + cell(gpu.info.uuid) + ",";
    };
    if (!gpu.sample) {
      out += head("gpu") + ",,,,,,,,,,,,,,," + cell(gpu.error) + "\n";
      continue;
    }
    const GpuSample& s = *gpu.sample;
    std::optional<std::string> throttle;
    if (s.throttle_reasons) throttle = fmt_throttle(s.throttle_reasons);
    out += head("gpu") + "," + cell(s.memory.used_bytes) + "," + cell(s.memory.total_bytes) + "," +
           cell(s.memory.reserved_bytes) + "," + cell(s.sm_util_percent) + "," + cell(s.mem_util_percent) + "," +
           cell(s.pcie_tx_bytes_per_s) + "," + cell(s.pcie_rx_bytes_per_s) + "," + cell(s.sm_clock_mhz) + "," +
           cell(s.mem_clock_mhz) + "," + cell(s.power_watts) + "," + cell(s.temperature_c) + "," + cell(throttle) +
           ",,,\n";
    for (const auto& p : gpu.processes) {
      out += head("process") + std::to_string(p.gpu.pid) + "," + cell(p.gpu.used_bytes) + ",,," +
             cell(p.gpu.sm_util_percent) + "," + cell(p.gpu.mem_util_percent) + ",,,,,,,," + cell(p.details.user) +
             "," + cell(p.details.command) + ",\n";
    }
  }
  return out;
}

}  // namespace vramdoc::watch
