#include "core/timeline/writer.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "core/terminal_safe.hpp"

namespace vramdoc::timeline {

using nlohmann::json;

namespace {

std::string line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }

template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json gpu_json(const GpuInfo& g) {
  return {{"index", g.index}, {"uuid", or_null(g.uuid)}, {"pci_bus_id", or_null(g.pci_bus_id)},
          {"name", or_null(g.name)}, {"total", or_null(g.total_bytes)}};
}

}  // namespace

// Seconds rounded to 0.1 ms: enough for a 1 ms sampler, short lines.
double round_seconds(double t) { return std::round(t * 1e4) / 1e4; }

std::string header_line(const Header& h) {
  json j = {{"vramdoc_timeline", 2}, {"name", h.name}, {"host", h.host}};
  j["start_unix_s"] = h.start_unix_seconds ? json(std::round(*h.start_unix_seconds * 1e6) / 1e6) : json(nullptr);
  j["device"] = or_null(h.device);
  j["total"] = or_null(h.total_bytes);
  j["gpus"] = json::array();
  for (const auto& g : h.gpus) j["gpus"].push_back(gpu_json(g));
  j["columns"] = h.device_used ? json{"t", "process_used", "device_used"} : json{"t", "process_used"};
  if (!h.gpus.empty()) j["columns"].push_back("series"), j["columns"].push_back("gpu_used");
  j["command"] = h.command;
  j["interval_s"] = h.interval_seconds;
  j["heartbeat_s"] = h.heartbeat_seconds;
  if (!h.environment.empty()) j["env"] = h.environment;
  return line(j);
}

std::string sample_line(const Sample& s, bool with_device_used) {
  json j = {round_seconds(s.t_seconds), s.process_used_bytes};
  if (with_device_used) j.push_back(or_null(s.device_used_bytes));
  return line(j);
}

std::string series_line(std::size_t id, const ProcessInfo& who) {
  return line({{"series", {{"id", id}, {"pid", who.pid}, {"gpu", or_null(who.gpu)}, {"rank", or_null(who.rank)},
                           {"local_rank", or_null(who.local_rank)}, {"command", who.command}}}});
}

std::string mark_line(const Mark& m) {
  json j = {{"t", round_seconds(m.t_seconds)}, {"mark", m.label}};
  if (m.pid) j["pid"] = *m.pid;
  if (m.allocated_bytes) j["allocated"] = *m.allocated_bytes;
  if (m.reserved_bytes) j["reserved"] = *m.reserved_bytes;
  if (m.allocated_peak_bytes) j["peak"] = *m.allocated_peak_bytes;
  return line(j);
}

std::string oom_message_line(double t_seconds, const std::string& text) {
  return line({{"t", round_seconds(t_seconds)}, {"oom_message", text}});
}

std::string end_line(double t_seconds, Outcome outcome, std::optional<int> exit_status, std::optional<std::uint64_t> total_bytes) {
  json end = {{"t", round_seconds(t_seconds)}, {"outcome", outcome_name(outcome)}};
  end["exit_status"] = or_null(exit_status);
  if (total_bytes) end["total"] = *total_bytes;
  return line({{"end", end}});
}

std::string write_timeline(const Timeline& tl, const Header& h) {
  Header aggregate = h;
  aggregate.gpus.clear();  // no series columns: this writes the job's sum only
  std::string out = header_line(aggregate);
  for (const auto& s : tl.samples) out += sample_line(s, h.device_used);
  for (const auto& m : tl.marks) out += mark_line(m);
  for (const auto& m : tl.messages) out += oom_message_line(tl.samples.empty() ? 0 : tl.samples.back().t_seconds, m);
  out += end_line(tl.samples.empty() ? 0 : tl.samples.back().t_seconds, tl.outcome, tl.exit_status,
                  tl.total_bytes == h.total_bytes ? std::nullopt : tl.total_bytes);
  return out;
}

std::string default_file_name(std::string_view program, std::string_view stamp) {
  const std::size_t slash = program.rfind('/');
  if (slash != std::string_view::npos) program.remove_prefix(slash + 1);
  // Printable non-ASCII characters (valid UTF-8, no control) stay; ASCII outside the safe set goes.
  std::string name = terminal_safe(program);
  for (char& c : name) {
    const auto b = static_cast<unsigned char>(c);
    const bool safe = b >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-' || c == '+';
    if (!safe) c = '_';
  }
  if (name.size() > kMaxProgramNameInFileName) {
    std::size_t cut = kMaxProgramNameInFileName;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xc0) == 0x80) --cut;  // whole characters
    name.resize(cut);
  }
  if (name.empty()) name = "job";
  return "vramdoc-" + name + "-" + std::string(stamp) + ".jsonl";
}

}  // namespace vramdoc::timeline
