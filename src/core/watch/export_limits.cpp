// The exporter's bounds: label values of limited length and valid UTF-8, and a limited number of
// processes per exposition (a fork bomb must not grow a Prometheus server's series without end).
#include <algorithm>

#include "core/terminal_safe.hpp"
#include "core/watch/prometheus.hpp"

namespace vramdoc::watch {

std::string label_value(std::string_view raw, std::size_t max_bytes) {
  static constexpr std::string_view kCut = "...";
  std::string out = terminal_safe(raw);  // the one sanitiser: valid UTF-8, no control character
  if (out.size() <= max_bytes) return out;
  std::size_t keep = max_bytes > kCut.size() ? max_bytes - kCut.size() : 0;
  while (keep > 0 && (static_cast<unsigned char>(out[keep]) & 0xc0) == 0x80) --keep;  // whole characters
  out.resize(keep);
  return out + std::string(kCut.substr(0, std::min(kCut.size(), max_bytes)));
}

std::vector<std::pair<std::size_t, std::size_t>> exported_processes(const Snapshot& snapshot, std::size_t max_processes) {
  std::vector<std::pair<std::size_t, std::size_t>> all;
  for (std::size_t g = 0; g < snapshot.gpus.size(); ++g)
    for (std::size_t p = 0; p < snapshot.gpus[g].processes.size(); ++p) all.emplace_back(g, p);
  const auto process = [&](const std::pair<std::size_t, std::size_t>& at) -> const GpuProcess& {
    return snapshot.gpus[at.first].processes[at.second].gpu;
  };
  std::stable_sort(all.begin(), all.end(), [&](const auto& a, const auto& b) {
    const GpuProcess &pa = process(a), &pb = process(b);
    if (pa.used_bytes.has_value() != pb.used_bytes.has_value()) return pa.used_bytes.has_value();
    if (pa.used_bytes != pb.used_bytes) return *pa.used_bytes > *pb.used_bytes;
    if (a.first != b.first) return a.first < b.first;
    return pa.pid < pb.pid;
  });
  if (all.size() > max_processes) all.resize(max_processes);
  std::sort(all.begin(), all.end());  // back in the snapshot's order: GPU, then its list
  return all;
}

std::uint64_t DroppedProcesses::update(const Snapshot& snapshot, std::size_t max_processes) {
  const auto kept = exported_processes(snapshot, max_processes);
  std::set<std::pair<unsigned, std::uint32_t>> left_out;
  for (std::size_t g = 0; g < snapshot.gpus.size(); ++g) {
    for (std::size_t p = 0; p < snapshot.gpus[g].processes.size(); ++p) {
      if (std::binary_search(kept.begin(), kept.end(), std::make_pair(g, p))) continue;
      const auto key = std::make_pair(snapshot.gpus[g].info.index, snapshot.gpus[g].processes[p].gpu.pid);
      if (!previous_.contains(key)) ++total_;
      left_out.insert(key);
    }
  }
  previous_ = std::move(left_out);
  return total_;
}

}  // namespace vramdoc::watch
