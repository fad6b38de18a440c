#include "core/timeline/render_job.hpp"

#include <cmath>
#include <cstdint>
#include <set>

#include "core/table.hpp"
#include "core/terminal_safe.hpp"
#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

using nlohmann::json;

namespace {

bool several_hosts(const JobVerdicts& j) {
  std::set<std::string> hosts;
  for (const auto& p : j.processes) hosts.insert(p.who.host);
  return hosts.size() > 1;
}

std::string peak_cell(const Evidence& ev) {
  std::string s = format_bytes(ev.peak_bytes);
  if (ev.capacity_bytes && ev.peak_fraction) s += " of " + format_bytes(*ev.capacity_bytes) + " (" + fixed(100 * *ev.peak_fraction, 1) + "%)";
  return s;
}

std::string growth_cell(const Evidence& ev) {
  if (!ev.growth_bytes_per_step) return "n/a";
  return (*ev.growth_bytes_per_step < 0 ? "-" : "") + format_bytes(std::uint64_t(std::abs(*ev.growth_bytes_per_step)));
}

// The rows both the text and the HTML tables show.
std::vector<std::vector<std::string>> rows(const JobVerdicts& j) {
  const bool hosts = several_hosts(j);
  std::vector<std::vector<std::string>> out;
  for (const auto& p : j.processes) {
    const auto& ev = p.diagnosis.evidence;
    out.push_back({process_name(p.who, hosts), p.who.command.empty() ? "n/a" : p.who.command, verdict_name(p.diagnosis.verdict),
                   peak_cell(ev), growth_cell(ev), ev.steps ? std::to_string(*ev.steps) : "n/a"});
  }
  return out;
}

const std::vector<std::string> kHeaders = {"process", "command", "verdict", "peak (driver)", "growth per step", "steps"};

}  // namespace

std::string render_processes_text(const JobVerdicts& j) {
  std::string out = "  processes (" + std::to_string(j.processes.size()) + "; the job's verdict is the worst of theirs):\n";
  TextTable t(kHeaders, {TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left, TextTable::Align::Left,
                         TextTable::Align::Right, TextTable::Align::Right});
  for (auto& r : rows(j)) {
    for (auto& cell : r) cell = terminal_safe(cell);  // names, hosts and commands from the timeline
    t.add_row(std::move(r));
  }
  out += t.render("    ");
  for (const auto& n : j.notes) out += "    note: " + terminal_safe(n) + "\n";
  return out;
}

json processes_json(const JobVerdicts& j) {
  auto opt = [](const auto& v) { return v ? json(*v) : json(nullptr); };
  // Byte figures are integers in every JSON document (docs/cli.md): rates round.
  auto opt_whole = [](const std::optional<double>& v) { return v ? json(static_cast<std::int64_t>(std::llround(*v))) : json(nullptr); };
  json list = json::array();
  for (const auto& p : j.processes) {
    const auto& ev = p.diagnosis.evidence;
    list.push_back({{"host", p.who.host}, {"pid", p.who.pid == 0 ? json(nullptr) : json(p.who.pid)}, {"rank", opt(p.who.rank)},
                    {"local_rank", opt(p.who.local_rank)}, {"gpu", opt(p.who.gpu)},
                    {"gpu_uuid", p.gpu_uuid.empty() ? json(nullptr) : json(p.gpu_uuid)}, {"command", p.who.command},
                    {"verdict", verdict_name(p.diagnosis.verdict)}, {"summary", p.diagnosis.summary},
                    {"peak_bytes", ev.peak_bytes}, {"capacity_bytes", opt(ev.capacity_bytes)},
                    {"growth_bytes_per_step", opt_whole(ev.growth_bytes_per_step)}, {"growth_bytes_per_s", opt_whole(ev.growth_bytes_per_second)},
                    {"steps", opt(ev.steps)}, {"samples", ev.samples}});
  }
  return {{"verdict", verdict_name(j.verdict)}, {"summary", j.summary}, {"worst", opt(j.worst)}, {"notes", j.notes}, {"processes", list}};
}

std::string render_processes_html(const JobVerdicts& j) {
  std::string h = "<section id='processes'><h2>Processes</h2><p>" + xml_escape(j.summary) +
                  ". The job's verdict is the worst of theirs.</p><table><tr>";
  for (const auto& c : kHeaders) h += "<th>" + xml_escape(c) + "</th>";
  h += "</tr>";
  std::size_t i = 0;
  for (const auto& r : rows(j)) {
    h += "<tr data-verdict='" + std::string(verdict_name(j.processes[i++].diagnosis.verdict)) + "'>";
    for (const auto& c : r) h += "<td>" + xml_escape(c) + "</td>";
    h += "</tr>";
  }
  h += "</table>";
  for (const auto& n : j.notes) h += "<p class='note'>" + xml_escape(n) + "</p>";
  return h + "</section>\n";
}

}  // namespace vramdoc::timeline
