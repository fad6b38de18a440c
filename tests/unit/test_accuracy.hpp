// How far an estimate is from a measurement, and the quantiles of those errors: what the
// estimator's measured-set tests compare against their bounds.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace vramdoc::test {

// |got - truth| / truth.
inline double rel(std::uint64_t got, double truth) { return std::fabs(static_cast<double>(got) - truth) / truth; }

// The q-quantile (0..1) of `v`, nearest rank; 0 for none.
inline double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<std::size_t>(std::lround(q * static_cast<double>(v.size() - 1))))];
}

}  // namespace vramdoc::test
