#include "core/timeline/writer.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace vramdoc::timeline {

using nlohmann::json;

namespace {

std::string line(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; }
// Seconds rounded to 0.1 ms: enough for a 1 ms sampler, short lines.
double round_t(double t) { return std::round(t * 1e4) / 1e4; }

}  // namespace

std::string header_line(const Header& h) {
  json j = {{"vramdoc_timeline", 1}, {"name", h.name}};
  j["device"] = h.device ? json(*h.device) : json(nullptr);
  j["total"] = h.total_bytes ? json(*h.total_bytes) : json(nullptr);
  j["columns"] = h.device_used ? json{"t", "process_used", "device_used"} : json{"t", "process_used"};
  j["command"] = h.command;
  j["interval_s"] = h.interval_seconds;
  if (!h.environment.empty()) j["env"] = h.environment;
  return line(j);
}

std::string sample_line(const Sample& s, bool with_device_used) {
  json j = {round_t(s.t_seconds), s.process_used_bytes};
  if (with_device_used) j.push_back(s.device_used_bytes ? json(*s.device_used_bytes) : json(nullptr));
  return line(j);
}

std::string mark_line(const Mark& m) { return line({{"t", round_t(m.t_seconds)}, {"mark", m.label}}); }

std::string oom_message_line(double t_seconds, const std::string& text) {
  return line({{"t", round_t(t_seconds)}, {"oom_message", text}});
}

std::string end_line(double t_seconds, Outcome outcome, std::optional<int> exit_status, std::optional<std::uint64_t> total_bytes) {
  json end = {{"t", round_t(t_seconds)}, {"outcome", outcome_name(outcome)}};
  end["exit_status"] = exit_status ? json(*exit_status) : json(nullptr);
  if (total_bytes) end["total"] = *total_bytes;
  return line({{"end", end}});
}

std::string write_timeline(const Timeline& tl, const Header& h) {
  std::string out = header_line(h);
  for (const auto& s : tl.samples) out += sample_line(s, h.device_used);
  for (const auto& m : tl.marks) out += mark_line(m);
  for (const auto& m : tl.messages) out += oom_message_line(tl.samples.empty() ? 0 : tl.samples.back().t_seconds, m);
  out += end_line(tl.samples.empty() ? 0 : tl.samples.back().t_seconds, tl.outcome, tl.exit_status,
                  tl.total_bytes == h.total_bytes ? std::nullopt : tl.total_bytes);
  return out;
}

}  // namespace vramdoc::timeline
