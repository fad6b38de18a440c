#include "core/timeline/ticks.hpp"

#include <nlohmann/json.hpp>

#include "core/timeline/writer.hpp"

namespace vramdoc::timeline {

using nlohmann::json;

bool TickWriter::Row::same_values(const Row& o) const {
  return process_used == o.process_used && device_used == o.device_used && series == o.series && gpus == o.gpus;
}

std::string TickWriter::row_line(const Row& r) {
  json j = {round_seconds(r.t), r.process_used, r.device_used ? json(*r.device_used) : json(nullptr), r.series, json::array()};
  for (const auto& g : r.gpus) j[4].push_back(g ? json(*g) : json(nullptr));
  return j.dump() + "\n";
}

std::string TickWriter::add(const Tick& tick, const Who& who) {
  std::string out;
  std::vector<std::pair<std::size_t, ProcessInfo>> declared;
  for (const auto& h : tick.processes) {
    const auto key = std::make_pair(h.pid, h.gpu);
    if (ids_.count(key)) continue;
    const std::size_t id = ids_.size();
    ids_[key] = id;
    declared.emplace_back(id, who(h.pid, h.gpu));
  }
  Row row{tick.t_seconds, tick.process_used_bytes, tick.device_used_bytes, std::vector<std::uint64_t>(ids_.size(), 0),
          tick.gpu_used_bytes};
  for (const auto& h : tick.processes) row.series[ids_.at({h.pid, h.gpu})] += h.bytes;
  if (declared.empty() && written_ && row.same_values(*written_) && tick.t_seconds - written_->t < heartbeat_) {
    held_ = row;  // unchanged: left out for now
    return out;
  }
  if (held_ && !held_->same_values(row)) out += row_line(*held_);  // the old level's last reading
  held_.reset();
  for (const auto& [id, info] : declared) out += series_line(id, info);
  out += row_line(row);
  written_ = std::move(row);
  return out;
}

std::string TickWriter::finish() {
  if (!held_) return "";
  std::string out = row_line(*held_);
  written_ = std::move(held_);
  held_.reset();
  return out;
}

}  // namespace vramdoc::timeline
