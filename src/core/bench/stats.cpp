#include <algorithm>

#include "core/bench/result.hpp"

namespace vramdoc::bench {

Stats summarize(std::vector<double> values) {
  Stats s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2.0;
  s.min = values.front();
  s.max = values.back();
  s.samples = static_cast<int>(n);
  return s;
}

Stats rate_gbps(double bytes_per_sample, const std::vector<double>& seconds) {
  std::vector<double> rates;
  rates.reserve(seconds.size());
  for (double s : seconds) {
    if (s > 0) rates.push_back(bytes_per_sample / s / 1e9);
  }
  return summarize(std::move(rates));
}

}  // namespace vramdoc::bench
