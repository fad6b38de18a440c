#include "core/probe/growth.hpp"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <vector>

#include "core/timeline/job.hpp"
#include "core/timeline/series.hpp"
#include "core/units.hpp"

namespace vramdoc::probe {

namespace {

constexpr std::size_t kMinCompared = 4;
constexpr std::uint64_t kMinRiseBytes = 64ULL << 20;

// The driver's reading at the end of each step: the last sample at or before the step's mark.
std::vector<std::uint64_t> readings_at_step_ends(const timeline::Timeline& tl) {
  std::vector<std::uint64_t> out;
  std::size_t i = 0;
  bool have = false;
  std::uint64_t last = 0;
  for (double end : timeline::step_end_times(tl)) {
    for (; i < tl.samples.size() && tl.samples[i].t_seconds <= end; ++i) last = tl.samples[i].process_used_bytes, have = true;
    if (have) out.push_back(last);
  }
  return out;
}

StepGrowth process_growth(const timeline::Timeline& trial) {
  StepGrowth g;
  const auto r = readings_at_step_ends(trial);
  const std::size_t warmup = std::max<std::size_t>(2, r.size() / 4);
  if (r.size() < warmup + kMinCompared) {
    g.why = "too few steps after warm-up to tell (" + std::to_string(r.size()) + " step readings, warm-up " +
            std::to_string(warmup) + ")";
    return g;
  }
  g.judged = true;
  g.steps_after_warmup = static_cast<int>(r.size() - warmup);
  g.from_bytes = r[warmup - 1];
  g.to_bytes = r.back();
  // NVML reports in 2 MiB granules at best; a tenth of a percent of the level on top.
  const std::uint64_t tolerance = std::max<std::uint64_t>(4ULL << 20, g.from_bytes / 1000);
  std::size_t rises = 0, falls = 0, late_rises = 0;
  const std::size_t late_from = r.size() - (r.size() - warmup + 2) / 3;
  for (std::size_t k = warmup; k < r.size(); ++k) {
    if (r[k] > r[k - 1] + tolerance) {
      ++rises;
      if (k >= late_from) ++late_rises;
    } else if (r[k] + tolerance < r[k - 1]) {
      ++falls;
    }
  }
  const std::uint64_t needed = std::max(kMinRiseBytes, g.from_bytes / 50);
  const bool large = g.to_bytes > g.from_bytes && g.to_bytes - g.from_bytes >= needed;
  g.grew = large && rises >= 2 && late_rises >= 1 && falls == 0;
  char line[200];
  std::snprintf(line, sizeof line, "%s -> %s over %d steps after warm-up (%zu rises, %zu falls)",
                format_bytes(g.from_bytes, 2).c_str(), format_bytes(g.to_bytes, 2).c_str(), g.steps_after_warmup, rises,
                falls);
  g.why = line;
  return g;
}

}  // namespace

StepGrowth step_growth(const timeline::Timeline& trial) {
  // Each process on its own step marks (split_by_process: the step hook's, tagged with its pid, or
  // else the job's lines, never both, which would count each step twice); the trial grew when one did.
  std::optional<StepGrowth> worst;
  for (const auto& p : timeline::split_by_process(trial)) {
    StepGrowth g = process_growth(p.timeline);
    if (!worst || (g.grew && !worst->grew) || (g.judged && !worst->judged)) worst = std::move(g);
  }
  return worst ? *worst : process_growth(trial);
}

}  // namespace vramdoc::probe
