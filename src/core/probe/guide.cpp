#include "core/probe/guide.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/probe/fit.hpp"
#include "core/timeline/oom_message.hpp"

namespace vramdoc::probe {

namespace {

// The prior's weight on the guess's neighbourhood (split_prior).
constexpr double kCoreOdds = 0.8;
// A peak this close to the card is saturated (saturated()): the limit's uncertainty, 1.5 % of the card.
constexpr double kSaturatedShare = 0.985;
// An OOM message's in use + free this far above the card told is the device's, not the job's.
constexpr double kMessageBeyondCard = 1.05;
// The fit uses this many trials, those with the largest values.
constexpr std::size_t kLocalPoints = 3;

struct Point {
  double value, peak;
};

std::vector<Point> measured(const std::vector<Trial>& trials) {
  std::vector<Point> pts;
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok && t.peak_bytes) pts.push_back({static_cast<double>(t.value), static_cast<double>(*t.peak_bytes)});
  return pts;
}

// peak = a + k x estimate(v), least squares over the trials (k within [0.5, 2]: the estimator's
// shape is trusted, its scale corrected); from one trial k = 1.
std::optional<PeakModel> estimator_model(const std::vector<Point>& pts,
                                         const std::function<std::optional<double>(std::uint64_t)>& estimate) {
  double n = 0, se = 0, sp = 0, see = 0, sep = 0;
  for (const auto& p : pts) {
    auto e = estimate(static_cast<std::uint64_t>(p.value));
    if (!e) continue;
    n += 1, se += *e, sp += p.peak, see += *e * *e, sep += *e * p.peak;
  }
  if (n == 0) return std::nullopt;
  const double var = n * see - se * se;
  const double k = var > 1e-9 * see * n ? std::clamp((n * sep - se * sp) / var, 0.5, 2.0) : 1.0;
  const double a = (sp - k * se) / n;
  PeakModel m;
  m.predict = [estimate, a, k](double v) {
    auto e = estimate(static_cast<std::uint64_t>(std::max(1.0, std::round(v))));
    return e ? a + k * *e : HUGE_VAL;
  };
  return m;
}

// The trials that ran with the largest values: the curve near the limit. Small values fit it
// badly (at batch 1 the allocator's rounding and workspaces outweigh a sample).
std::vector<Trial> nearest_to_limit(const std::vector<Trial>& trials) {
  std::vector<Trial> ran;
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok && t.peak_bytes) ran.push_back(t);
  std::sort(ran.begin(), ran.end(), [](const Trial& a, const Trial& b) { return a.value > b.value; });
  if (ran.size() > kLocalPoints) ran.resize(kLocalPoints);
  return ran;
}

// The trials above the floor. A job's recorded peak at small values can sit on a floor (the
// allocator's first blocks, the optimizer step's temporaries, workspaces: ViT-B/16 on the H200,
// 2.69 2.63 GiB at batch 1 and 2, its allocator peaks 1.68 1.68), max(floor, the line), so such a
// trial bounds the line from above and says nothing of its slope; fitted, floored points bent the
// curve up (a quadratic through 2.69 2.63 2.75 at 1 2 9) and each margin trial fell short (22 34 47
// on the H200). The floor is seen when a value above the smallest that ran peaked no higher than
// it; it is then the smallest value and every value that did not rise above its peak. Those are
// left out while another trial remains; `floored` says that some were.
std::vector<Trial> above_floor(const std::vector<Trial>& trials, bool& floored) {
  floored = false;
  const Trial* smallest = nullptr;
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok && t.peak_bytes && (!smallest || t.value < smallest->value)) smallest = &t;
  if (!smallest) return trials;
  const std::uint64_t start = smallest->value, floor = *smallest->peak_bytes;
  auto on_floor = [&](const Trial& t) { return t.outcome == Outcome::Ok && t.peak_bytes && (t.value == start || *t.peak_bytes <= floor); };
  std::vector<Trial> above;
  std::size_t on = 0;
  for (const auto& t : trials) {
    if (on_floor(t)) ++on;
    else above.push_back(t);
  }
  if (on < 2 || measured(above).empty()) return trials;  // no evidence of a floor, or nothing above it
  floored = true;
  return above;
}

// The largest value among the trials that ran with a peak (`fallback` when it is larger).
Point largest_ran(const std::vector<Trial>& trials, Point fallback) {
  for (const auto& p : measured(trials))
    if (p.value > fallback.value) fallback = p;
  return fallback;
}

}  // namespace

bool saturated(const Trial& trial, double capacity_bytes) {
  return trial.outcome == Outcome::Ok && trial.peak_bytes && static_cast<double>(*trial.peak_bytes) >= kSaturatedShare * capacity_bytes;
}

std::optional<PeakModel> peak_model(const std::vector<Trial>& all,
                                    const std::function<std::optional<double>(std::uint64_t)>& estimate_bytes,
                                    std::optional<double> capacity_bytes) {
  // Saturated peaks say the value ran, not what it needs: fitted, they flattened the curve and
  // the model put the limit just above each value that ran (ResNet-50 crawled 345 350 355 357 361).
  std::vector<Trial> trials;
  for (const auto& t : all)
    if (!capacity_bytes || !saturated(t, *capacity_bytes)) trials.push_back(t);
  if (measured(trials).empty()) trials = all;
  bool floored = false;
  trials = above_floor(trials, floored);
  const auto pts = measured(trials);
  if (pts.empty()) return std::nullopt;
  const auto top = *std::max_element(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.value < b.value; });
  std::optional<PeakModel> m;
  if (estimate_bytes) m = estimator_model(pts, estimate_bytes);
  if (!m) {
    if (auto fit = fit_peaks(nearest_to_limit(trials)); fit && fit->predict(2 * top.value) > fit->predict(top.value)) {
      m = PeakModel{[f = *fit](double v) { return f.predict(v); }, false};
    } else if (const auto last = largest_ran(all, top); last.peak > 0) {
      // One value (or noise hiding the slope): the proportional bound, from the largest value that
      // ran, saturated or floored too (the bound holds from any value that ran, and from the largest
      // it is the tightest; from a smaller one, left after the floor and a saturated value were
      // taken out, it put the card below the value that ran and the search crept up one value a
      // trial: the flat-start family, 2033 2034 2035 ...).
      m = PeakModel{[last](double v) { return last.peak * v / last.value; }, true, pts.size() >= 2 || floored};
    }
  }
  if (!m || !(m->predict(2 * top.value + 1) > m->predict(top.value))) return std::nullopt;  // it must grow with the value
  return m;
}

std::optional<AllocatedLimit> allocated_limit(const std::vector<Trial>& trials, double capacity_bytes) {
  std::vector<Trial> allocated;  // the trials that ran, their allocated peak in place of the driver's
  double outside = 0;
  for (const auto& t : trials) outside = std::max(outside, static_cast<double>(t.outside_allocator_bytes.value_or(0)));
  const Trial* top_unsaturated = nullptr;
  for (const auto& t : trials) {
    if (t.outcome != Outcome::Ok || !t.allocated_peak_bytes) continue;
    Trial a = t;
    a.peak_bytes = t.allocated_peak_bytes;
    allocated.push_back(a);
    if (t.peak_bytes && !saturated(t, capacity_bytes) && (!top_unsaturated || t.value > top_unsaturated->value)) top_unsaturated = &t;
  }
  const auto fit = fit_peaks(nearest_to_limit(allocated));
  if (!fit || !(fit->per_item_bytes > 0 || fit->quadratic_bytes.value_or(0) > 0)) return std::nullopt;  // it must grow
  // Cached to needed, where the cache still fits (at least 1: the allocator holds what is live).
  double rho = 1;
  if (top_unsaturated && *top_unsaturated->allocated_peak_bytes > 0)
    rho = std::max(1.0, (static_cast<double>(*top_unsaturated->peak_bytes) - outside) / static_cast<double>(*top_unsaturated->allocated_peak_bytes));
  const double room = capacity_bytes - outside;
  const PeakModel grows{[f = *fit](double v) { return f.predict(v); }};  // A(v), inverted as the driver's model is
  auto value_at = [&](double bytes) { return predicted_value(grows, bytes, 0, std::uint64_t{1} << 32); };
  const double high = value_at(room);
  return AllocatedLimit{value_at(room / rho), high, std::max(0.0, grows.predict(high + 1) - grows.predict(high))};
}

std::uint64_t value_within(const PeakModel& model, double bytes, std::uint64_t lo, std::uint64_t hi) {
  if (hi <= lo || model.predict(static_cast<double>(lo + 1)) > bytes) return lo;
  std::uint64_t good = lo + 1, bad = hi + 1;  // predict(good) <= bytes; bad: past hi or above bytes
  while (bad - good > 1) {
    const std::uint64_t mid = good + (bad - good) / 2;
    (model.predict(static_cast<double>(mid)) <= bytes ? good : bad) = mid;
  }
  return good;
}

double predicted_value(const PeakModel& model, double bytes, std::uint64_t lo, std::uint64_t hi) {
  const std::uint64_t below = value_within(model, bytes, lo, hi);
  const double p0 = model.predict(static_cast<double>(below)), p1 = model.predict(static_cast<double>(below + 1));
  if (p0 > bytes || !(p1 > p0)) return static_cast<double>(below);
  return static_cast<double>(below) + (below == hi ? (bytes - p0) / (p1 - p0) : std::clamp((bytes - p0) / (p1 - p0), 0.0, 1.0));
}

std::uint64_t split_prior(double center, double scale, std::uint64_t lo, std::uint64_t hi) {
  // The limit is within 2 scales of the guess (uniform) with odds 4 : 1, else anywhere (a Cauchy
  // tail: far from the guess, each step doubles the distance).
  const double pi = std::numbers::pi, half_width = 2 * scale;
  auto cdf = [&](double x) {
    const double core = std::clamp((x - center + half_width) / (2 * half_width), 0.0, 1.0);
    return kCoreOdds * core + (1 - kCoreOdds) * (0.5 + std::atan((x - center) / scale) / pi);
  };
  const double a = static_cast<double>(lo), b = static_cast<double>(hi), goal = (cdf(a) + cdf(b)) / 2;
  double left = a, right = b;
  for (int i = 0; i < 100 && right - left > 1e-3; ++i) {
    const double mid = (left + right) / 2;
    (cdf(mid) < goal ? left : right) = mid;
  }
  return static_cast<std::uint64_t>(std::clamp(std::round(left), a + 1, b - 1));
}

std::optional<double> reachable_bytes(const std::vector<Trial>& trials, std::optional<double> card_bytes) {
  double largest_peak = 0;  // of a trial that ran: the job reached it, so the limit is not below it
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok && t.peak_bytes) largest_peak = std::max(largest_peak, static_cast<double>(*t.peak_bytes));
  for (const auto& t : trials) {
    if (t.outcome != Outcome::Oom) continue;
    if (t.card_full) continue;  // another process filled the card: nothing about this job's reach
    auto m = timeline::parse_oom_message(t.detail);
    if (!m || !m->in_use_bytes || !m->free_bytes) continue;
    const auto reach = static_cast<double>(*m->in_use_bytes + *m->free_bytes);
    if (card_bytes && reach > kMessageBeyondCard * *card_bytes) return std::nullopt;
    if (reach < largest_peak) return std::nullopt;
    return reach;
  }
  return std::nullopt;
}

}  // namespace vramdoc::probe
