#include "core/timeline/need.hpp"

#include <algorithm>
#include <cmath>

#include "core/estimator/fit.hpp"

namespace vramdoc::timeline {

namespace {

// A level held this long before the steps is the model loaded and waiting; shorter ones are on the way up.
constexpr double kMinHeldSeconds = 0.25;
// A lower bound within this share of the card says only "more than the card": no shrink factor from it.
constexpr double kCardBound = 1.02;

// The peak of the driver's number within each finished step [previous end, end].
std::vector<double> step_peaks(const Timeline& tl, const std::vector<double>& step_ends) {
  std::vector<double> peaks;
  double start = tl.samples.empty() ? 0 : tl.samples.front().t_seconds;
  std::size_t i = 0;
  for (double end : step_ends) {
    double peak = -1;
    for (; i < tl.samples.size() && tl.samples[i].t_seconds <= end; ++i)
      if (tl.samples[i].t_seconds >= start) peak = std::max(peak, double(tl.samples[i].process_used_bytes));
    if (peak >= 0) peaks.push_back(peak);
    start = end;
  }
  return peaks;
}

// What the job held before its first step: of the readings up to `until` (the first step's end, or
// the failure) and before their peak, the level held longest (within `tolerance`): weights and
// context, loaded and waiting. Later levels hold the allocator's cache too.
std::optional<std::uint64_t> level_before_steps(const Timeline& tl, double tolerance, double until) {
  const auto& s = tl.samples;
  const auto end = std::find_if(s.begin(), s.end(), [&](const Sample& x) { return x.t_seconds > until; });
  const auto peak = std::max_element(s.begin(), end, [](const Sample& a, const Sample& b) { return a.process_used_bytes < b.process_used_bytes; });
  std::optional<std::uint64_t> best;
  double best_seconds = 0;
  for (auto it = s.begin(); it != peak;) {
    auto next = it;
    while (next != peak && std::fabs(double(next->process_used_bytes) - double(it->process_used_bytes)) <= tolerance) ++next;
    const double held = (next != s.end() ? next->t_seconds : s.back().t_seconds) - it->t_seconds;
    if (it->process_used_bytes > 0 && held >= kMinHeldSeconds && held > best_seconds) best = it->process_used_bytes, best_seconds = held;
    it = next;
  }
  return best;
}

// The need at the failure from the message: PyTorch says what the process held and how much of
// that was free inside its cache; other frameworks say only the request.
std::optional<std::uint64_t> need_from_message(const OomMessage& m, std::uint64_t driver_peak) {
  if (!m.requested_bytes) return std::nullopt;
  if (m.in_use_bytes) {
    const std::uint64_t holes = std::min(m.reserved_unallocated_bytes.value_or(0), *m.in_use_bytes);
    // It asked for more than it could get: at least what it held and what was free. Under
    // set_per_process_memory_fraction ("N GiB allowed") the card's free memory was never its to
    // take: what it held and asked for (the card's 115 GiB free made a 10 GiB job "need 125 GiB").
    const std::uint64_t held_and_asked = *m.in_use_bytes - holes + *m.requested_bytes;
    if (m.allowed_bytes) return held_and_asked;
    return std::max(held_and_asked, *m.in_use_bytes + m.free_bytes.value_or(0));
  }
  return driver_peak + *m.requested_bytes;
}

}  // namespace

void set_shrink(Need& need, std::optional<std::uint64_t> capacity_bytes) {
  need.shrink.reset();
  if (!capacity_bytes || !need.fixed_bytes) return;
  const double usable = double(*capacity_bytes) * 100.0 / double(100 + estimator::kFitMarginPercent);
  const double fixed = double(*need.fixed_bytes), part = double(need.bytes) - fixed;
  if (fixed >= usable || part <= 0) return;
  if (need.at_least && double(need.bytes) <= kCardBound * double(*capacity_bytes)) return;
  need.shrink = std::max(1.0, part / (usable - fixed));
}

std::optional<Need> estimate_need(const Timeline& tl, const std::optional<OomMessage>& oom, const std::vector<double>& step_ends,
                                  std::optional<std::uint64_t> capacity_bytes, double tolerance_bytes) {
  if (tl.samples.empty() && !oom) return std::nullopt;
  std::uint64_t peak = 0;
  for (const auto& s : tl.samples) peak = std::max(peak, s.process_used_bytes);
  Need need;
  need.bytes = peak;
  need.basis = "the driver's peak when it ran out";
  if (auto m = oom ? need_from_message(*oom, peak) : std::nullopt; m && *m > need.bytes) {
    need.bytes = *m;
    need.basis = oom->in_use_bytes ? "held when it failed, less the cache's free part, plus the failed request"
                                   : "the driver's peak plus the failed request";
  }
  const auto peaks = step_peaks(tl, step_ends);
  if (peaks.size() >= 2 && peaks.back() > peaks[peaks.size() - 2]) {
    const double next = 2 * peaks.back() - peaks[peaks.size() - 2];  // each step needed more: the next one, extrapolated
    if (next > double(need.bytes)) need.bytes = static_cast<std::uint64_t>(next), need.basis = "the last finished step's peak plus its growth per step";
  }
  need.fixed_bytes = level_before_steps(tl, tolerance_bytes, step_ends.empty() ? tl.samples.back().t_seconds : step_ends.front());
  set_shrink(need, capacity_bytes);
  return need;
}

}  // namespace vramdoc::timeline
