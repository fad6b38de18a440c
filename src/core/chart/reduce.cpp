#include "core/chart/reduce.hpp"

#include <algorithm>
#include <cmath>

namespace vramdoc::chart {

MinMaxReducer::MinMaxReducer(std::size_t bins, double initial_width) : bins_(std::max<std::size_t>(bins, 1)), width_(initial_width) {}

long MinMaxReducer::index_of(double x) const {
  if (width_ <= 0 || !(x > x0_)) return 0;
  const double i = std::floor((x - x0_) / width_);
  return i > 1e15 ? static_cast<long>(1e15) : static_cast<long>(i);
}

void MinMaxReducer::widen() {
  width_ *= 2;
  std::vector<Bin> merged;
  for (Bin b : kept_) {
    b.index /= 2;
    if (merged.empty() || merged.back().index != b.index) {
      merged.push_back(b);
      continue;
    }
    Bin& m = merged.back();
    if (b.low.y < m.low.y) m.low = b.low, m.low_seq = b.low_seq;
    if (b.high.y > m.high.y) m.high = b.high, m.high_seq = b.high_seq;
  }
  kept_ = std::move(merged);
}

void MinMaxReducer::add(double x, double y) {
  if (!std::isfinite(x) || !std::isfinite(y)) return;
  const std::size_t seq = seen_++;
  if (seq == 0) x0_ = x, first_ = {x, y};
  last_ = {x, y};
  if (width_ <= 0 && x > x0_) width_ = x - x0_;
  long index = index_of(x);
  while (index >= static_cast<long>(bins_)) widen(), index = index_of(x);
  auto it = std::lower_bound(kept_.begin(), kept_.end(), index, [](const Bin& b, long i) { return b.index < i; });
  if (it == kept_.end() || it->index != index) {
    kept_.insert(it, Bin{index, {x, y}, {x, y}, seq, seq});
    return;
  }
  if (y < it->low.y) it->low = {x, y}, it->low_seq = seq;
  if (y > it->high.y) it->high = {x, y}, it->high_seq = seq;
}

std::vector<Point> MinMaxReducer::points() const {
  std::vector<Point> out;
  if (seen_ == 0) return out;
  out.reserve(2 * kept_.size() + 2);
  auto push = [&](const Point& p) {
    if (out.empty() || out.back().x != p.x || out.back().y != p.y) out.push_back(p);
  };
  push(first_);
  for (const Bin& b : kept_) {
    if (b.low_seq == b.high_seq) {
      push(b.low);
    } else if (b.low_seq < b.high_seq) {
      push(b.low), push(b.high);
    } else {
      push(b.high), push(b.low);
    }
  }
  push(last_);
  return out;
}

std::vector<Point> reduce(std::span<const Point> points, std::size_t bins) {
  if (points.size() <= 2 * bins + 2) return {points.begin(), points.end()};
  const double span = points.back().x - points.front().x;
  MinMaxReducer r(bins, span > 0 ? span / static_cast<double>(bins) * (1 + 1e-9) : 0);
  for (const Point& p : points) r.add(p.x, p.y);
  return r.points();
}

}  // namespace vramdoc::chart
