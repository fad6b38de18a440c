#include "core/timeline/spacing.hpp"

#include <algorithm>
#include <cmath>

#include "core/timeline/stats.hpp"

namespace vramdoc::timeline {

namespace {

constexpr double kRandomShapesP = 1e-3;  // below this, the rises are not the records of random shapes
constexpr double kEvenSpreadP = 0.05;    // ... or below this when they are also evenly spaced
constexpr double kEvenSpread = 0.25;     // median |gap - period| / period of evenly spaced rises
constexpr double kMinPeriodReadings = 3; // a period of fewer readings than this cannot show evenness

}  // namespace

double poisson_tail(std::size_t k, double lambda) {
  if (k == 0) return 1;
  if (!(lambda > 0)) return 0;
  double below = 0;  // P(N < k), summed in log space: no overflow for large k or lambda
  for (std::size_t j = 0; j < k; ++j)
    below += std::exp(-lambda + static_cast<double>(j) * std::log(lambda) - std::lgamma(static_cast<double>(j) + 1));
  return std::clamp(1 - below, 0.0, 1.0);
}

std::vector<std::size_t> new_highs(const Series& s, std::size_t from, double tolerance) {
  std::vector<std::size_t> out;
  if (s.y.empty()) return out;
  double high = s.y[0];
  for (std::size_t i = 1; i < s.y.size(); ++i) {
    if (s.y[i] > high + tolerance && i > from) out.push_back(i);
    high = std::max(high, s.y[i]);
  }
  return out;
}

RiseSpacing rise_spacing(const std::vector<double>& rise_x, double origin_x, double start_x, double end_x, double resolution) {
  RiseSpacing r;
  r.rises = rise_x.size();
  if (r.rises == 0 || !(end_x > start_x)) return r;
  // Records of random shapes drawn once per step from the first step on: among draws (a, b] there
  // are ln(b / a) of them on average (the harmonic numbers' difference), Poisson in the limit.
  // Only the rises after start_x count (one at start_x is the origin's own record).
  std::vector<double> after;
  for (double x : rise_x)
    if (x > start_x) after.push_back(x);
  const double a = std::max(start_x - origin_x, 1e-9), b = end_x - origin_x;
  r.expected_records = std::log(b / a);
  r.records_p = poisson_tail(after.size(), r.expected_records);
  if (after.size() >= 2) {
    // The ratios of consecutive record times are uniform: ln(last / first) ~ Gamma(n - 1, 1).
    const double first = std::max(after.front() - origin_x, 1e-9), last = after.back() - origin_x;
    r.span_p = poisson_tail(after.size() - 1, std::log(std::max(last / first, 1.0)));
  }
  if (r.rises >= 2) {
    std::vector<double> gaps;
    for (std::size_t k = 1; k < rise_x.size(); ++k) gaps.push_back(rise_x[k] - rise_x[k - 1]);
    const double period = median(gaps);
    if (period > 0) {
      std::vector<double> deviation;
      for (double g : gaps) deviation.push_back(std::fabs(g - period));
      r.period = period;
      r.spread = median(deviation) / period;
    }
  }
  const double p = std::min(r.records_p, r.span_p);
  r.even = r.rises >= 4 && r.period && *r.period >= kMinPeriodReadings * resolution && r.spread <= kEvenSpread;
  r.regular = r.rises >= 3 && (p < kRandomShapesP || (r.even && p < kEvenSpreadP));
  return r;
}

}  // namespace vramdoc::timeline
