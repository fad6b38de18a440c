// Are the driver's late rises the records of random input shapes (a cache filling up: ever rarer,
// about ln n of them among n steps) or do they repeat at a spacing (a periodic leak)? Method and
// thresholds: docs/run-analyze.md, "Periodic growth or new shapes".
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "core/timeline/series.hpp"

namespace vramdoc::timeline {

struct RiseSpacing {
  std::size_t rises = 0;            // new highs after warm-up
  double expected_records = 0;      // records of random shapes expected in the same window
  double records_p = 1;             // chance of at least `rises` records among random shapes (Poisson)
  double span_p = 1;                // chance of records this close together (ln(last/first) ~ Gamma(rises-1))
  std::optional<double> period;     // median gap between consecutive rises (x units: steps or seconds)
  double spread = 0;                // median |gap - period| / period: 0 for clockwork
  bool even = false;                // at least 4 rises, evenly spaced (not claimed as new shapes)
  bool regular = false;             // too many or too evenly spaced for the records of random shapes
};

// The points after index `from` that exceed every earlier point (warm-up included) by more than
// `tolerance`: a cache grows only to new highs, and noise that goes up and down sets none.
std::vector<std::size_t> new_highs(const Series& s, std::size_t from, double tolerance);

// Tests rises at `rise_x` (ascending; those after start_x are counted) against the records of
// random shapes drawn from `origin_x` on (the first step); `resolution` is the series' spacing. Regular:
// at least 3 rises and a chance below 1/1000 for random shapes, or at least 4 evenly spaced rises
// (spread <= 0.25, period at least 3 x resolution: gaps of one or two readings are all alike)
// with a chance below 5 %.
RiseSpacing rise_spacing(const std::vector<double>& rise_x, double origin_x, double start_x, double end_x, double resolution);

// P(N >= k) for N ~ Poisson(lambda).
double poisson_tail(std::size_t k, double lambda);

}  // namespace vramdoc::timeline
