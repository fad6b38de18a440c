// The exporter's bounds: label values of limited length and valid UTF-8, and a limited number of
// processes per exposition (a fork bomb must not grow a Prometheus server's series without end).
#include <algorithm>

#include "core/watch/prometheus.hpp"

namespace vramdoc::watch {

namespace {

// The length of the valid UTF-8 sequence at `s[i]`, or 0 when it is not one (overlong forms,
// surrogates and code points above U+10FFFF are not).
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b = byte(i);
  if (b < 0x80) return 1;
  std::size_t n = b >= 0xf0 && b <= 0xf4 ? 4 : b >= 0xe0 ? 3 : b >= 0xc2 && b < 0xe0 ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
  const unsigned char b1 = byte(i + 1);
  if (n == 3 && ((b == 0xe0 && b1 < 0xa0) || (b == 0xed && b1 >= 0xa0))) return 0;  // overlong, surrogate
  if (n == 4 && ((b == 0xf0 && b1 < 0x90) || (b == 0xf4 && b1 >= 0x90))) return 0;  // overlong, > U+10FFFF
  return n;
}

}  // namespace

std::string label_value(std::string_view raw, std::size_t max_bytes) {
  static constexpr std::string_view kReplacement = "\xef\xbf\xbd", kCut = "...";
  std::string out;
  for (std::size_t i = 0; i < raw.size();) {
    const std::size_t n = utf8_length(raw, i);
    std::string_view piece = n ? raw.substr(i, n) : kReplacement;
    if (n == 1 && static_cast<unsigned char>(raw[i]) < 0x20 && raw[i] != '\n') piece = " ";
    if (n == 1 && raw[i] == 0x7f) piece = " ";
    if (out.size() + piece.size() > max_bytes) {
      while (!out.empty() && out.size() + kCut.size() > max_bytes) {  // drop whole characters
        std::size_t last = out.size() - 1;
        while (last > 0 && (static_cast<unsigned char>(out[last]) & 0xc0) == 0x80) --last;
        out.resize(last);
      }
      return out + std::string(kCut.substr(0, std::min(kCut.size(), max_bytes)));
    }
    out += piece;
    i += n ? n : 1;
  }
  return out;
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
