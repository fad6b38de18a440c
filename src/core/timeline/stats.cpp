#include "core/timeline/stats.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace vramdoc::timeline {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(mid), v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) m = (m + *std::max_element(v.begin(), v.begin() + static_cast<long>(mid))) / 2;
  return m;
}

std::optional<double> theil_sen_slope(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> slopes;
  const std::size_t n = std::min(x.size(), y.size());
  slopes.reserve(n * (n - (n > 0)) / 2);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j)
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
  if (slopes.empty()) return std::nullopt;
  return median(std::move(slopes));
}

MannKendall mann_kendall(const std::vector<double>& y) {
  MannKendall r;
  r.n = y.size();
  if (r.n < 3) return r;
  for (std::size_t i = 0; i < r.n; ++i)
    for (std::size_t j = i + 1; j < r.n; ++j) r.s += (y[j] > y[i]) - (y[j] < y[i]);
  std::map<double, double> ties;
  for (double v : y) ties[v] += 1;
  const double n = static_cast<double>(r.n);
  double var = n * (n - 1) * (2 * n + 5);
  for (const auto& [value, t] : ties) var -= t * (t - 1) * (2 * t + 5);
  var /= 18;
  if (var <= 0) return r;  // all equal: no trend
  r.z = r.s > 0 ? (r.s - 1) / std::sqrt(var) : r.s < 0 ? (r.s + 1) / std::sqrt(var) : 0;
  return r;
}

std::optional<double> find_period(const std::vector<double>& y, double min_corr) {
  if (y.size() < 12) return std::nullopt;
  std::vector<double> d(y.size() - 1);
  for (std::size_t i = 0; i + 1 < y.size(); ++i) d[i] = y[i + 1] - y[i];
  double mean = 0;
  for (double v : d) mean += v;
  mean /= static_cast<double>(d.size());
  double var = 0;
  for (double& v : d) {
    v -= mean;
    var += v * v;
  }
  if (var <= 0) return std::nullopt;
  const std::size_t max_lag = d.size() / 3;
  std::vector<double> ac(max_lag + 1, 0);
  for (std::size_t lag = 1; lag <= max_lag; ++lag) {
    double s = 0;
    for (std::size_t i = 0; i + lag < d.size(); ++i) s += d[i] * d[i + lag];
    ac[lag] = s / var;
  }
  // The first local maximum above min_corr; refined by a parabola through its neighbours.
  for (std::size_t lag = 2; lag < max_lag; ++lag) {
    if (ac[lag] >= min_corr && ac[lag] >= ac[lag - 1] && ac[lag] >= ac[lag + 1]) {
      const double den = ac[lag - 1] - 2 * ac[lag] + ac[lag + 1];
      const double shift = den != 0 ? 0.5 * (ac[lag - 1] - ac[lag + 1]) / den : 0;
      return static_cast<double>(lag) + std::clamp(shift, -0.5, 0.5);
    }
  }
  return std::nullopt;
}

}  // namespace vramdoc::timeline
