// The view's history: what each GPU and process used, frame after frame, and the plots that show
// it (a one-line sparkline, a multi-line plot as nvtop and nvitop draw them).
#include <algorithm>
#include <array>
#include <cmath>

#include "core/watch/format.hpp"
#include "core/watch/screen.hpp"

namespace vramdoc::watch {

namespace {

constexpr std::array<const char*, 8> kBars = {"\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588"};

// The most processes remembered: beyond, those no longer listed are forgotten first.
constexpr std::size_t kMaxProcesses = 256;

const MemoryHistory::Samples& found_or_empty(const auto& map, const auto& key) {
  static const MemoryHistory::Samples kEmpty;
  auto found = map.find(key);
  return found == map.end() ? kEmpty : found->second;
}

}  // namespace

void MemoryHistory::append(Samples& samples, std::optional<double> value) const {
  samples.push_back(value);
  while (samples.size() > capacity_) samples.pop_front();
}

void MemoryHistory::push(const Snapshot& snapshot) {
  std::map<std::pair<unsigned, std::uint32_t>, std::optional<double>> now;
  for (const auto& gpu : snapshot.gpus) {
    const unsigned index = gpu.info.index;
    append(by_gpu_[index], gpu.sample ? used_fraction(gpu.sample->memory) : std::nullopt);
    std::optional<double> util;
    if (gpu.sample && gpu.sample->sm_util_percent) util = *gpu.sample->sm_util_percent / 100.0;
    append(util_by_gpu_[index], util);
    const std::uint64_t total = gpu.sample ? gpu.sample->memory.total_bytes.value_or(0) : 0;  // 0: unknown
    for (const auto& p : gpu.processes) {
      std::optional<double> share;
      if (p.gpu.used_bytes && total > 0) share = double(*p.gpu.used_bytes) / double(total);
      now[{index, p.gpu.pid}] = share;
    }
  }
  for (auto it = by_process_.begin(); it != by_process_.end();) {  // gone: an unknown sample, forgotten when full
    if (!now.contains(it->first) && by_process_.size() + now.size() > kMaxProcesses) {
      it = by_process_.erase(it);
      continue;
    }
    if (!now.contains(it->first)) append(it->second, std::nullopt);
    ++it;
  }
  for (const auto& [key, share] : now) append(by_process_[key], share);
}

const MemoryHistory::Samples& MemoryHistory::of(unsigned index) const { return found_or_empty(by_gpu_, index); }

const MemoryHistory::Samples& MemoryHistory::util_of(unsigned index) const { return found_or_empty(util_by_gpu_, index); }

const MemoryHistory::Samples& MemoryHistory::process_of(unsigned gpu, std::uint32_t pid) const {
  return found_or_empty(by_process_, std::pair{gpu, pid});
}

std::string sparkline(const std::deque<std::optional<double>>& samples, std::size_t width) {
  std::size_t shown = std::min(width, samples.size());
  std::string out(width - shown, ' ');
  for (std::size_t i = samples.size() - shown; i < samples.size(); ++i) {
    if (!samples[i]) {
      out += ' ';
      continue;
    }
    double f = std::clamp(*samples[i], 0.0, 1.0);
    out += kBars[std::min<std::size_t>(7, static_cast<std::size_t>(std::lround(f * 7.0)))];
  }
  return out;
}

std::vector<std::string> plot(const std::deque<std::optional<double>>& samples, std::size_t width, std::size_t height) {
  std::vector<std::string> lines(height);
  const std::size_t shown = std::min(width, samples.size());
  for (std::size_t row = 0; row < height; ++row) {
    std::string& line = lines[row];
    line.assign(width - shown, ' ');
    const double below = double(height - 1 - row);  // cells under this row
    for (std::size_t i = samples.size() - shown; i < samples.size(); ++i) {
      if (!samples[i]) {
        line += ' ';
        continue;
      }
      // This cell's share of the column: 0 empty, 1 full; eighths in between.
      const double level = std::clamp(*samples[i], 0.0, 1.0) * double(height) - below;
      const auto eighths = static_cast<long>(std::lround(std::clamp(level, 0.0, 1.0) * 8.0));
      if (eighths > 0) line += kBars[static_cast<std::size_t>(eighths - 1)];
      else line += row + 1 == height ? kBars[0] : " ";  // the bottom row shows every known sample
    }
  }
  return lines;
}

}  // namespace vramdoc::watch
