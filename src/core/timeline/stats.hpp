// Robust trend statistics for timelines: Theil-Sen slope, Mann-Kendall test, period finding.
#pragma once
#include <optional>
#include <vector>

namespace vramdoc::timeline {

// Theil-Sen estimator: the median of the slopes between all pairs (x strictly different).
// Insensitive to a few outliers and to a single jump. Empty with fewer than 2 distinct x.
std::optional<double> theil_sen_slope(const std::vector<double>& x, const std::vector<double>& y);

// Mann-Kendall trend test on y in order: S statistic and the normal approximation z (tie
// corrected, continuity corrected). z > 3.09 is an increasing trend at one-sided p < 0.001.
struct MannKendall {
  double s = 0;
  double z = 0;
  std::size_t n = 0;
};
MannKendall mann_kendall(const std::vector<double>& y);

// The dominant period, in samples, of an evenly sampled signal: the first strong peak of the
// autocorrelation of its first difference (lags 2..n/3). Empty when no peak reaches `min_corr`.
std::optional<double> find_period(const std::vector<double>& y, double min_corr = 0.4);

double median(std::vector<double> v);

}  // namespace vramdoc::timeline
