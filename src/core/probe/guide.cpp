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
  const auto pts = measured(trials);
  if (pts.empty()) return std::nullopt;
  const auto top = *std::max_element(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.value < b.value; });
  std::optional<PeakModel> m;
  if (estimate_bytes) m = estimator_model(pts, estimate_bytes);
  if (!m) {
    if (auto fit = fit_peaks(nearest_to_limit(trials)); fit && fit->predict(2 * top.value) > fit->predict(top.value)) {
      m = PeakModel{[f = *fit](double v) { return f.predict(v); }, false};
    } else if (top.peak > 0) {  // one value (or noise hiding the slope): the proportional bound
      m = PeakModel{[top](double v) { return top.peak * v / top.value; }, true, pts.size() >= 2};
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
  return AllocatedLimit{value_at(room / rho), value_at(room)};
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
