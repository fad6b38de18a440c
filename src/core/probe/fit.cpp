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

namespace {

struct Measured {
  std::uint64_t value;
  double peak;  // the largest peak measured at this value or any smaller one: memory never falls as the value grows
};

// The values that ran with a measured peak, at most `answer`, in order, their peaks made nondecreasing.
std::vector<Measured> envelope(const std::vector<Trial>& trials, std::uint64_t answer) {
  std::vector<Measured> pts;
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok && t.peak_bytes && t.value <= answer) pts.push_back({t.value, static_cast<double>(*t.peak_bytes)});
  std::sort(pts.begin(), pts.end(), [](const Measured& a, const Measured& b) { return a.value < b.value || (a.value == b.value && a.peak > b.peak); });
  std::vector<Measured> out;
  for (const auto& p : pts) {
    if (!out.empty() && out.back().value == p.value) continue;
    out.push_back({p.value, out.empty() ? p.peak : std::max(p.peak, out.back().peak)});
  }
  return out;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

double allowed_peak_bytes(double capacity_bytes, double margin_fraction, double outside_bytes) {
  const double outside = std::clamp(outside_bytes, 0.0, capacity_bytes);
  return capacity_bytes - margin_fraction * (capacity_bytes - outside);
}

Recommendation recommend(const std::vector<Trial>& trials, std::optional<std::uint64_t> capacity_bytes,
                         double margin_fraction, std::optional<std::uint64_t> answer) {
  Recommendation rec;
  rec.margin_fraction = margin_fraction;
  std::optional<std::uint64_t> largest_ok;
  for (const auto& t : trials)
    if (t.outcome == Outcome::Ok && (!answer || t.value <= *answer)) largest_ok = std::max(largest_ok.value_or(0), t.value);
  if (!largest_ok) {
    rec.basis = "no value ran";
    return rec;
  }
  const auto pts = envelope(trials, *largest_ok);
  if (!capacity_bytes || pts.empty()) {  // peaks unknown (no driver): nothing measured says what headroom any value keeps
    rec.basis = "nothing is recommended: no trial's peak memory was measured";
    return rec;
  }
  // The margin is kept on what the allocator controls: the card less what lies outside it (the
  // CUDA context, measured as the driver's number less the reserved bytes), not on the context.
  std::uint64_t outside = 0;
  for (const auto& t : trials) outside = std::max(outside, t.outside_allocator_bytes.value_or(0));
  const double cap = static_cast<double>(*capacity_bytes);
  const double allowed = allowed_peak_bytes(cap, margin_fraction, static_cast<double>(outside));
  char margin[200];
  std::snprintf(margin, sizeof margin, "%.0f %% of the memory the allocator can have kept free: a peak of at most %s of %s",
                100 * margin_fraction, gib(allowed).c_str(), gib(cap).c_str());
  const std::string context = outside > 0 ? " (" + gib(static_cast<double>(outside)) + " outside the allocator: the CUDA context)" : "";
  // The largest value whose peak, interpolated between the two values that ran around it, stays
  // within the allowed peak. Never above the largest value that ran, never extrapolated.
  std::optional<Measured> below;
  for (std::size_t i = 0; i < pts.size(); ++i) {
    if (pts[i].peak > allowed) {
      if (below) {
        const auto& hi = pts[i];
        const double share = hi.peak > below->peak ? (allowed - below->peak) / (hi.peak - below->peak) : 0;
        auto v = below->value + static_cast<std::uint64_t>(std::floor(share * static_cast<double>(hi.value - below->value)));
        // Nor above where the fitted curve crosses the allowed peak (a convex curve bends above the chord).
        if (const auto fit = fit_peaks(trials); fit && fit->predict(static_cast<double>(v)) > allowed) {
          std::uint64_t good = below->value, bad = v;  // the fit's crossing, bisected: predict(good) is not checked (it ran)
          while (bad - good > 1) {
            const std::uint64_t mid = good + (bad - good) / 2;
            (fit->predict(static_cast<double>(mid)) <= allowed ? good : bad) = mid;
          }
          v = good;
        }
        rec.value = v;
        rec.basis = v == below->value ? "the largest value that ran that keeps " + std::string(margin) + context
                                      : "its peak interpolated between " + std::to_string(below->value) + " (" + gib(below->peak) +
                                            ") and " + std::to_string(hi.value) + " (" + gib(hi.peak) + "), which ran, keeps " + margin + context;
      }
      break;
    }
    below = pts[i];
  }
  if (!rec.value && below) {  // every measured value within the allowed peak: the largest of them
    rec.value = below->value;
    rec.basis = "the largest value that ran that keeps " + std::string(margin) + context;
  }
  if (rec.value) return rec;
  // Every peak above the margin, the smallest value's too: no value is known to keep it.
  rec.basis = "nothing is recommended: every value that ran peaked above " + std::string(margin) + context +
              " (the smallest, " + std::to_string(pts.front().value) + ", at " + gib(pts.front().peak) + ")";
  return rec;
}

}  // namespace vramdoc::probe
