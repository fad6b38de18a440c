#include "core/probe/fit.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <set>

namespace vramdoc::probe {

namespace {

struct Point {
  double x, y;
};

// Solves the 3x3 normal equations by Gaussian elimination; false when singular.
bool solve3(std::array<std::array<double, 4>, 3> m, std::array<double, 3>& out) {
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int r = col + 1; r < 3; ++r)
      if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
    if (std::fabs(m[pivot][col]) < 1e-300) return false;
    std::swap(m[col], m[pivot]);
    for (int r = 0; r < 3; ++r) {
      if (r == col) continue;
      double f = m[r][col] / m[col][col];
      for (int c = col; c < 4; ++c) m[r][c] -= f * m[col][c];
    }
  }
  for (int i = 0; i < 3; ++i) out[i] = m[i][3] / m[i][i];
  return true;
}

double rss(const std::vector<Point>& pts, double a, double b, double c) {
  double sum = 0;
  for (const auto& p : pts) {
    double e = p.y - (a + b * p.x + c * p.x * p.x);
    sum += e * e;
  }
  return sum;
}

}  // namespace

double PeakFit::predict(double value) const {
  return fixed_bytes + per_item_bytes * value + quadratic_bytes.value_or(0) * value * value;
}

std::optional<PeakFit> fit_peaks(const std::vector<Trial>& trials) {
  std::vector<Point> pts;
  std::set<std::uint64_t> values;
  for (const auto& t : trials) {
    if (t.outcome != Outcome::Ok || !t.peak_bytes) continue;
    pts.push_back({static_cast<double>(t.value), static_cast<double>(*t.peak_bytes)});
    values.insert(t.value);
  }
  if (values.size() < 2) return std::nullopt;
  double n = static_cast<double>(pts.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& p : pts) {
    sx += p.x;
    sy += p.y;
    sxx += p.x * p.x;
    sxy += p.x * p.y;
  }
  PeakFit fit;
  fit.points = pts.size();
  fit.per_item_bytes = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  fit.fixed_bytes = (sy - fit.per_item_bytes * sx) / n;
  double mean = sy / n, tss = 0;
  for (const auto& p : pts) tss += (p.y - mean) * (p.y - mean);
  double linear_rss = rss(pts, fit.fixed_bytes, fit.per_item_bytes, 0);
  fit.r_squared = tss > 0 ? 1 - linear_rss / tss : 1;

  // A quadratic term counts only with 3+ distinct values, when it removes most of the linear
  // misfit and is a visible part (> 5 %) of the largest peak.
  if (values.size() >= 3) {
    std::array<double, 5> s{};  // sums of x^0..x^4
    std::array<double, 3> t{};  // sums of y x^0..x^2
    for (const auto& p : pts) {
      double xp = 1;
      for (int k = 0; k < 5; ++k, xp *= p.x) {
        s[k] += xp;
        if (k < 3) t[k] += p.y * xp;
      }
    }
    std::array<std::array<double, 4>, 3> m = {{{s[0], s[1], s[2], t[0]}, {s[1], s[2], s[3], t[1]}, {s[2], s[3], s[4], t[2]}}};
    std::array<double, 3> q{};
    double xmax = 0, ymax = 0;
    for (const auto& p : pts) xmax = std::max(xmax, p.x), ymax = std::max(ymax, p.y);
    if (solve3(m, q) && rss(pts, q[0], q[1], q[2]) < 0.25 * linear_rss && q[2] > 0 &&
        q[2] * xmax * xmax > 0.05 * ymax) {
      fit.fixed_bytes = q[0];
      fit.per_item_bytes = q[1];
      fit.quadratic_bytes = q[2];
      fit.r_squared = tss > 0 ? 1 - rss(pts, q[0], q[1], q[2]) / tss : 1;
    }
  }
  return fit;
}

Recommendation recommend(const std::vector<Trial>& trials, std::optional<std::uint64_t> capacity_bytes,
                         double margin_fraction) {
  Recommendation rec;
  rec.margin_fraction = margin_fraction;
  std::optional<std::uint64_t> largest_ok;
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok) largest_ok = std::max(largest_ok.value_or(0), t.value);
  if (!largest_ok) {
    rec.basis = "no value ran";
    return rec;
  }
  char buf[256];
  if (capacity_bytes) {
    double limit = static_cast<double>(*capacity_bytes) * (1 - margin_fraction);
    for (const auto& t : trials) {
      if (t.outcome != Outcome::Ok || !t.peak_bytes || static_cast<double>(*t.peak_bytes) > limit) continue;
      if (!rec.value || t.value > *rec.value) rec.value = t.value;
    }
    if (rec.value) {
      std::snprintf(buf, sizeof buf, "the largest value that ran with its peak at most %.0f %% of the card's memory",
                    100 * (1 - margin_fraction));
      rec.basis = buf;
      return rec;
    }
  }
  // Peaks unknown (no driver to read them): nothing measured says what headroom any value keeps.
  if (!capacity_bytes || !std::any_of(trials.begin(), trials.end(), [](const Trial& t) { return t.peak_bytes.has_value(); })) {
    rec.basis = "nothing is recommended: no trial's peak memory was measured";
    return rec;
  }
  // Every peak above the margin: step down from the largest value that ran, by the margin (a
  // smaller batch of the same job holds less), and say that this value itself was not measured.
  auto stepped = static_cast<std::uint64_t>(std::floor(static_cast<double>(*largest_ok) * (1 - margin_fraction)));
  rec.value = std::max<std::uint64_t>(1, stepped);
  std::snprintf(buf, sizeof buf, "%.0f %% below the largest value that ran (%llu): peak memory of every trial was above the margin",
                100 * margin_fraction, static_cast<unsigned long long>(*largest_ok));
  rec.basis = buf;
  return rec;
}

}  // namespace vramdoc::probe
