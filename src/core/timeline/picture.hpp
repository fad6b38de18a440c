// What a timeline's chart draws, kept with its diagnosis and bounded whatever the recording's
// length: the readings reduced to min / max per time bin, the series the trend was measured on
// (the step-end bytes the verdict rests on), and where the warm-up ends. The renderers draw from
// this alone, never from the samples.
#pragma once
#include <optional>
#include <vector>

#include "core/chart/reduce.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

struct Picture {
  double t0 = 0, t1 = 0;  // the recording's first and last reading, seconds
  std::vector<chart::Point> used;       // (s, bytes) the driver's per-process number
  std::vector<chart::Point> allocated;  // the framework's allocated bytes, when recorded
  std::vector<chart::Point> device;     // the whole device's used memory, when recorded
  std::vector<chart::Point> basis;      // (s, bytes) the trend's series (Evidence::trend_series)
  std::optional<double> warmup_end_seconds;  // on the same clock as t0, t1
};

// Bins per series of a picture: a chart is at most about 900 units wide.
inline constexpr std::size_t kPictureBins = 1000;

// Fills the readings of `p` (used, allocated, device, t0, t1) from `tl`'s samples.
void add_readings(const Timeline& tl, Picture& p);

}  // namespace vramdoc::timeline
