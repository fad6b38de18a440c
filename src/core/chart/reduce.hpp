// Bounded series for the charts: any number of readings reduced to the minimum and maximum of
// each of a fixed number of x bins, so a chart of a days-long recording draws the same peaks and
// dips as one of a minute, in a few thousand points. Streaming: points arrive one at a time and
// memory stays bounded whatever their count or span.
#pragma once
#include <cstddef>
#include <span>
#include <vector>

namespace vramdoc::chart {

struct Point {
  double x = 0, y = 0;
};

// The min / max per bin of a series seen once, in x order (a point out of order joins the bin
// its x falls in). Bins start `initial_width` wide (0: the gap between the first two x values)
// and double, neighbours merged, whenever the span outgrows `bins` of them: at most 2 x bins + 2
// points are kept.
class MinMaxReducer {
 public:
  explicit MinMaxReducer(std::size_t bins = 1000, double initial_width = 0);
  void add(double x, double y);
  // The kept points in x order: each bin's minimum and maximum in the order they came (one point
  // when the same reading is both), and the series' first and last points.
  std::vector<Point> points() const;
  std::size_t seen() const { return seen_; }

 private:
  struct Bin {
    long index = 0;  // which bin: x in [x0 + index * width, x0 + (index + 1) * width)
    Point low, high;
    std::size_t low_seq = 0, high_seq = 0;  // arrival order of the two
  };
  long index_of(double x) const;
  void widen();
  std::size_t bins_;
  double x0_ = 0, width_ = 0;
  std::size_t seen_ = 0;
  Point first_, last_;
  std::vector<Bin> kept_;  // by index
};

// `points` (in x order) reduced to the min / max of `bins` bins over their x range; a series
// already that short comes back unchanged.
std::vector<Point> reduce(std::span<const Point> points, std::size_t bins);

}  // namespace vramdoc::chart
