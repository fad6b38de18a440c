#include "core/snapshot/render.hpp"

namespace vramdoc::snapshot {

namespace {

using nlohmann::json;

json frames_json(const std::vector<trace::PythonFrame>& frames) {
  json out = json::array();
  for (const auto& f : frames) out.push_back({{"file", f.file}, {"line", f.line}, {"function", f.function}, {"library", f.library}});
  return out;
}

json sites_json(const std::vector<SiteRow>& rows, bool times) {
  json out = json::array();
  for (const auto& r : rows) {
    json j = {{"where", r.where}, {"bytes", r.bytes}, {"count", r.count}, {"stack", frames_json(r.stack)}};
    if (times) j["first_s"] = r.first_seconds, j["last_s"] = r.last_seconds;
    out.push_back(std::move(j));
  }
  return out;
}

json fragmentation_json(const Fragmentation& f) {
  json rows = json::array();
  for (const auto& s : f.rows)
    rows.push_back({{"address", s.address}, {"total_bytes", s.total_bytes}, {"allocated_bytes", s.allocated_bytes},
                    {"free_bytes", s.free_bytes}, {"largest_free_bytes", s.largest_free_bytes}, {"blocks", s.blocks},
                    {"large", s.large}, {"expandable", s.expandable}});
  return {{"when", f.when}, {"reserved_bytes", f.reserved_bytes}, {"allocated_bytes", f.allocated_bytes},
          {"free_bytes", f.free_bytes}, {"stranded_bytes", f.stranded_bytes}, {"largest_free_bytes", f.largest_free_bytes},
          {"segments", f.segments}, {"partly_used_segments", f.partly_used_segments},
          {"expandable_segments", f.expandable_segments}, {"largest_segments", rows}};
}

json oom_json(const OomReport& o) {
  auto opt = [](const std::optional<std::uint64_t>& v) { return v ? json(*v) : json(nullptr); };
  return {{"source", o.source}, {"t_s", o.t_seconds ? json(*o.t_seconds) : json(nullptr)},
          {"requested_bytes", o.requested_bytes}, {"device_free_bytes", opt(o.device_free_bytes)},
          {"allocated_bytes", opt(o.allocated_bytes)}, {"reserved_bytes", opt(o.reserved_bytes)},
          {"largest_free_bytes", opt(o.largest_free_bytes)}, {"alive_bytes", o.alive_bytes},
          {"alive", sites_json(o.alive, false)}, {"ooms", o.ooms}};
}

json chart_json(const Chart& c) {
  json bands = json::array();
  for (std::size_t k = 0; k < c.sites.size(); ++k) bands.push_back({{"site", c.sites[k]}, {"bytes", c.bytes[k]}});
  return {{"t_s", c.t}, {"bands", bands}, {"reserved_bytes", c.reserved}};
}

}  // namespace

json snapshot_json(const SnapshotReport& r) {
  json settings = json::object();
  for (const auto& [k, v] : r.allocator_settings) settings[k] = v;
  json out = {{"schema", kSnapshotSchema}, {"source", r.source}, {"format", r.format}, {"device", r.device},
              {"devices", r.devices}, {"entries", r.entries}, {"segments", r.segments}, {"blocks", r.blocks},
              {"frames", r.frames}, {"stacks", r.stacks}, {"history", r.history},
              {"alive_bytes", r.alive_bytes}, {"alive", sites_json(r.alive, false)},
              {"growing", r.history ? sites_json(r.growing, true) : json(nullptr)},
              {"fragmentation", fragmentation_json(r.fragmentation)}, {"oom", r.oom ? oom_json(*r.oom) : json(nullptr)},
              {"chart", chart_json(r.chart)}, {"allocator_settings", settings}, {"notes", r.notes}};
  if (own_verdict_shown(r)) out["own_verdict"] = {{"verdict", timeline::verdict_name(r.diagnosis->verdict)}, {"summary", r.diagnosis->summary}};
  return out;
}

}  // namespace vramdoc::snapshot
