#include "core/bench/render.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "core/json_document.hpp"
#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::bench {

namespace {

const char* unit_name(Unit unit) { return unit == Unit::GBps ? "GB/s" : "cycles"; }

std::string result_cell(const Measure& m) {
  if (!m.error.empty()) return "FAILED";
  if (!m.waived.empty()) return "waived";
  const int decimals = m.unit == Unit::GBps && m.result.median < 100 ? 1 : 0;
  std::string cell = fixed(m.result.median, decimals) + " " + unit_name(m.unit);
  if (m.ns) cell += " (" + fixed(*m.ns, 0) + " ns)";
  return cell;
}

std::string spread_cell(const Measure& m) {
  if (!m.waived.empty() || !m.error.empty() || m.result.samples < 2) return "";
  const int decimals = m.result.median < 100 ? 1 : 0;
  return fixed(m.result.min, decimals) + "-" + fixed(m.result.max, decimals);
}

nlohmann::json sample_json(const GpuSample& s) {
  nlohmann::json j;
  if (s.sm_clock_mhz) j["sm_clock_mhz"] = *s.sm_clock_mhz;
  if (s.mem_clock_mhz) j["mem_clock_mhz"] = *s.mem_clock_mhz;
  if (s.temperature_c) j["temperature_c"] = *s.temperature_c;
  if (s.power_watts) j["power_watts"] = *s.power_watts;
  if (s.throttle_reasons) j["throttle_reasons"] = *s.throttle_reasons;
  if (s.memory.free_bytes) j["free_bytes"] = *s.memory.free_bytes;
  j["processes"] = s.processes.size();
  return j;
}

std::string sample_line(const char* when, const GpuSample& s) {
  auto opt = [](const auto& v, const char* suffix) {
    return v ? std::to_string(*v) + suffix : std::string("n/a");
  };
  std::string line = std::string(when) + ": SM " + opt(s.sm_clock_mhz, " MHz") + ", memory " +
                     opt(s.mem_clock_mhz, " MHz") + ", " + opt(s.temperature_c, " C") + ", ";
  line += s.power_watts ? fixed(*s.power_watts, 0) + " W" : "n/a W";
  if (s.throttle_reasons) {
    char buf[32];
    std::snprintf(buf, sizeof buf, ", throttle reasons 0x%llx", static_cast<unsigned long long>(*s.throttle_reasons));
    line += buf;
  }
  return line + "\n";
}

}  // namespace

std::string render_text(const BenchReport& report) {
  TextTable table({"level", "measure", "result", "min-max", "peak", "% of peak", "how"},
                  {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Right, TextTable::Align::Right,
                   TextTable::Align::Right, TextTable::Align::Right, TextTable::Align::Left});
  std::string previous_level;
  for (const auto& m : report.measures) {
    if (!previous_level.empty() && m.level != previous_level) table.add_rule();
    previous_level = m.level;
    std::string peak, percent;
    const bool measured = m.waived.empty() && m.error.empty();
    if (m.peak && measured) {
      peak = fixed(*m.peak, *m.peak < 100 ? 1 : 0);
      percent = fixed(100.0 * m.result.median / *m.peak, 1);
    }
    std::string how = !m.error.empty() ? m.error : measured ? m.config : m.waived;
    if (!m.bytes_counted.empty() && measured) how = m.bytes_counted + "; " + how;
    table.add_row({m.level, m.name, result_cell(m), spread_cell(m), peak, percent, how});
  }
  std::string out = "vramdoc bench: " + terminal_safe(report.device_name) + " (GPU " + std::to_string(report.device_index) + ")" +
                    (report.quick ? ", quick" : "") + "\n\n" + table.render();
  out += "\nGB/s = 10^9 bytes/s; result = median of the samples, min-max beside it.\n";
  if (report.sm_clock_mhz) out += "SM clock measured during the latency run: " + fixed(*report.sm_clock_mhz, 0) + " MHz\n";
  if (report.before) out += sample_line("before", *report.before);
  if (report.after) out += sample_line("after ", *report.after);
  for (const auto& n : report.notes) out += "note: " + n + "\n";
  return out;
}

std::string render_json(const BenchReport& report) {
  nlohmann::json j;
  j["device"] = {{"index", report.device_index}, {"name", report.device_name}};
  j["quick"] = report.quick;
  if (report.sm_clock_mhz) j["sm_clock_mhz"] = *report.sm_clock_mhz;
  if (report.before) j["nvml_before"] = sample_json(*report.before);
  if (report.after) j["nvml_after"] = sample_json(*report.after);
  j["measures"] = nlohmann::json::array();
  for (const auto& m : report.measures) {
    nlohmann::json e = {{"level", m.level}, {"measure", m.name}, {"unit", unit_name(m.unit)}};
    if (!m.error.empty()) {
      e["error"] = m.error;
    } else if (m.waived.empty()) {
      e["median"] = m.result.median;
      e["min"] = m.result.min;
      e["max"] = m.result.max;
      e["samples"] = m.result.samples;
      if (m.ns) e["ns"] = *m.ns;
      if (m.peak) {
        e["peak"] = *m.peak;
        e["percent_of_peak"] = 100.0 * m.result.median / *m.peak;
      }
    } else {
      e["waived"] = m.waived;
    }
    if (!m.bytes_counted.empty()) e["bytes_counted"] = m.bytes_counted;
    e["config"] = m.config;
    if (!m.variants.empty()) e["variants"] = m.variants;
    j["measures"].push_back(e);
  }
  auto sweep = [](const std::vector<SweepPoint>& points) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& p : points) a.push_back({{"footprint_bytes", p.footprint_bytes}, {"gbps", p.gbps}, {"best_gbps", p.best_gbps}});
    return a;
  };
  j["l2_sweep"] = sweep(report.l2_sweep);
  j["l1_sweep"] = sweep(report.l1_sweep);
  j["latency"] = nlohmann::json::array();
  for (const auto& p : report.latency) {
    j["latency"].push_back({{"footprint_bytes", p.footprint_bytes}, {"cycles", p.cycles}, {"ns", p.ns}});
  }
  j["notes"] = report.notes;
  return json_document("vramdoc.bench/1", j);
}

}  // namespace vramdoc::bench
