#include "core/timeline/series.hpp"

#include <algorithm>
#include <limits>

#include "core/timeline/accounting.hpp"
#include "core/timeline/stats.hpp"

namespace vramdoc::timeline {

bool has_left_out_ticks(const Timeline& tl) {
  if (!tl.interval_seconds || tl.samples.size() < 2) return false;
  const double ticks = (tl.samples.back().t_seconds - tl.samples.front().t_seconds) / *tl.interval_seconds + 1;
  return ticks > 1.5 * static_cast<double>(tl.samples.size());
}

std::vector<Sample> regular_samples(const Timeline& tl, std::size_t max_points) {
  std::vector<Sample> out;
  if (tl.samples.empty() || !tl.interval_seconds || max_points < 2) return tl.samples;
  const double t0 = tl.samples.front().t_seconds, t1 = tl.samples.back().t_seconds;
  const double step = std::max(*tl.interval_seconds, (t1 - t0) / static_cast<double>(max_points - 1));
  std::size_t i = 0;
  for (double t = t0; t <= t1 + 1e-9 && out.size() < max_points; t = t0 + step * static_cast<double>(out.size())) {
    while (i + 1 < tl.samples.size() && tl.samples[i + 1].t_seconds <= t + 1e-9) ++i;
    out.push_back(tl.samples[i]);
    out.back().t_seconds = t;
  }
  if (out.back().t_seconds < t1) out.push_back(tl.samples.back());  // the last reading, as it was
  return out;
}

std::vector<double> step_end_times(const Timeline& tl) {
  std::vector<double> ends;
  for (const Mark* m : unit_marks(tl)) ends.push_back(m->t_seconds);
  std::sort(ends.begin(), ends.end());
  return ends;
}

Series retained_per_step(const Timeline& tl, const std::vector<double>& step_ends) {
  Series s;
  s.x_is_steps = true;
  const auto units = unit_marks(tl);
  for (const Mark* m : units) {
    if (!m->allocated_bytes) continue;
    s.x.push_back(static_cast<double>(s.x.size()));
    s.t.push_back(m->t_seconds);
    s.y.push_back(static_cast<double>(*m->allocated_bytes));
  }
  if (!s.y.empty()) {
    s.what = step_number(units.front()->label) ? "framework-allocated bytes at each step end"
                                                : "framework-allocated bytes at the end of each forward call of the top module";
    return s;
  }
  double start = tl.samples.empty() ? 0 : tl.samples.front().t_seconds;
  std::size_t i = 0;
  for (double end : step_ends) {
    double low = std::numeric_limits<double>::infinity();
    for (; i < tl.samples.size() && tl.samples[i].t_seconds <= end; ++i)
      if (tl.samples[i].t_seconds >= start && tl.samples[i].allocated_bytes)
        low = std::min(low, static_cast<double>(*tl.samples[i].allocated_bytes));
    if (low != std::numeric_limits<double>::infinity()) {
      s.x.push_back(static_cast<double>(s.x.size()));
      s.t.push_back(end);
      s.y.push_back(low);
    }
    start = end;
  }
  if (!s.y.empty()) s.what = "minimum framework-allocated bytes within each step";
  return s;
}

Series driver_floors(const Timeline& tl, const std::vector<double>& step_ends, std::size_t max_bins) {
  Series s;
  if (tl.samples.empty()) return s;
  std::vector<double> edges;
  if (step_ends.size() >= 2) {
    s.x_is_steps = true;
    s.what = "the driver's per-process number, minimum within each step";
    edges = step_ends;
  } else {
    s.what = "the driver's per-process number, minimum within each time bin";
    const double t0 = tl.samples.front().t_seconds, t1 = tl.samples.back().t_seconds;
    const std::size_t bins = std::min(max_bins, tl.samples.size());
    for (std::size_t b = 1; b <= bins; ++b) edges.push_back(t0 + (t1 - t0) * static_cast<double>(b) / static_cast<double>(bins));
    edges.back() = t1;
  }
  std::size_t i = 0;
  double start = tl.samples.front().t_seconds;
  for (std::size_t k = 0; k < edges.size(); ++k) {
    double low = std::numeric_limits<double>::infinity();
    for (; i < tl.samples.size() && tl.samples[i].t_seconds <= edges[k]; ++i)
      low = std::min(low, static_cast<double>(tl.samples[i].process_used_bytes));
    if (low == std::numeric_limits<double>::infinity()) continue;
    s.x.push_back(s.x_is_steps ? static_cast<double>(k) : (start + edges[k]) / 2);
    s.t.push_back(s.x_is_steps ? edges[k] : (start + edges[k]) / 2);
    s.y.push_back(low);
    start = edges[k];
  }
  return s;
}

Series bounded(Series s, std::size_t max_points) {
  const std::size_t n = s.y.size();
  if (n <= max_points || max_points == 0) return s;
  const std::size_t group = (n + max_points - 1) / max_points;
  std::size_t w = 0;
  for (std::size_t from = 0; from < n; from += group) {
    std::size_t low = from;
    for (std::size_t i = from + 1; i < std::min(n, from + group); ++i)
      if (s.y[i] < s.y[low]) low = i;
    s.x[w] = s.x[low], s.t[w] = s.t[low], s.y[w] = s.y[low];
    ++w;
  }
  s.x.resize(w), s.t.resize(w), s.y.resize(w);
  s.grouped = group;
  return s;
}

Levels find_levels(const Series& s, double tolerance, double min_quiet) {
  Levels l;
  l.tolerance = tolerance;
  if (s.y.empty()) return l;
  double level = s.y[0];
  std::vector<std::size_t> changes{0};
  for (std::size_t i = 1; i < s.y.size(); ++i) {
    if (s.y[i] > level + tolerance) {
      l.rises.push_back(i);
      l.rise_bytes.push_back(s.y[i] - level);
      if (!l.drops.empty() && l.drops.back() < i && (l.rises.size() < 2 || l.rises[l.rises.size() - 2] < l.drops.back()))
        ++l.flushes;
    } else if (s.y[i] < level - tolerance) {
      if (s.y[i] < 0.9 * level) l.drops.push_back(i);  // a flush gives back a tenth or more
    } else {
      continue;
    }
    level = s.y[i];
    changes.push_back(i);
  }
  const double x_end = s.x.back();
  for (std::size_t k = 1; k < changes.size(); ++k) {  // the level before any rise is not a steady state
    const std::size_t at = changes[k];
    const double quiet = (k + 1 < changes.size() ? s.x[changes[k + 1]] : x_end) - s.x[at];
    if (quiet >= std::max(s.x[at] - s.x[0], min_quiet) && quiet > 0) {
      l.settled_at = at;
      break;
    }
  }
  // Never settled: warm-up ends at the last rise far larger than the typical one (the first
  // step's working set, the optimizer state), and not before a tenth of the points.
  l.warmup_end = std::max<std::size_t>(1, s.y.size() / 10);
  if (!l.settled_at && l.rises.size() >= 3) {
    std::vector<double> sizes = l.rise_bytes;
    std::nth_element(sizes.begin(), sizes.begin() + static_cast<long>(sizes.size() / 2), sizes.end());
    const double typical = sizes[sizes.size() / 2];
    const std::size_t limit = std::min(s.y.size() / 2, l.drops.empty() ? s.y.size() : l.drops.front());
    for (std::size_t k = 0; k < l.rises.size() && l.rises[k] < limit; ++k)
      if (l.rise_bytes[k] > 3 * typical) l.warmup_end = std::max(l.warmup_end, l.rises[k]);
  }
  if (l.settled_at) l.warmup_end = *l.settled_at;
  return l;
}

Trend trend_after(const Series& s, std::size_t from) {
  Trend tr;
  if (from >= s.y.size()) return tr;
  std::vector<double> x(s.x.begin() + static_cast<long>(from), s.x.end());
  std::vector<double> y(s.y.begin() + static_cast<long>(from), s.y.end());
  tr.points = y.size();
  tr.span = x.back() - x.front();
  tr.slope = theil_sen_slope(x, y);
  tr.mk_z = mann_kendall(y).z;
  return tr;
}

}  // namespace vramdoc::timeline
