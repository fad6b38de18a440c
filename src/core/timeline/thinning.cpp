#include "core/timeline/thinning.hpp"

#include <algorithm>
#include <cmath>

namespace vramdoc::timeline {

std::size_t kept_samples_per_series(std::size_t series) {
  return std::max(kMinKeptSamples, kMaxKeptSamples / std::max<std::size_t>(1, series));
}

SampleKeeper::SampleKeeper(std::size_t cap) : cap_(std::max<std::size_t>(cap, 8)) {}

void SampleKeeper::add(const Sample& s) {
  ++read_;
  kept_.push_back(s);
  if (kept_.size() > cap_) thin();
}

void SampleKeeper::set_cap(std::size_t cap) {
  cap_ = std::max<std::size_t>(cap, 8);
  if (kept_.size() > cap_) thin();
}

std::optional<Thinning> SampleKeeper::thinning() const {
  if (bin_seconds_ <= 0) return std::nullopt;
  return Thinning{read_, bin_seconds_};
}

// Keeps, per time bin, the first lowest and the first highest reading (the driver's number), and
// the series' first and last reading; widens the bins until at most half the cap is left, so
// that thinning again waits for as many new samples (each sample is moved O(log) times).
void SampleKeeper::thin() {
  const std::size_t n = kept_.size();
  const double t0 = kept_.front().t_seconds, span = kept_.back().t_seconds - t0;
  if (bin_seconds_ <= 0) bin_seconds_ = std::max(span, 1e-9) / static_cast<double>(std::max<std::size_t>(1, cap_ / 4));
  std::vector<char> keep(n);
  for (;; bin_seconds_ *= 2) {
    std::fill(keep.begin(), keep.end(), 0);
    keep[0] = keep[n - 1] = 1;
    std::size_t lo = 0, hi = 0;
    double bin = std::floor((kept_[0].t_seconds - t0) / bin_seconds_);
    for (std::size_t i = 1; i <= n; ++i) {
      const double b = i < n ? std::floor((kept_[i].t_seconds - t0) / bin_seconds_) : bin + 1;
      if (b != bin) {  // the bin [lo's bin] ends: keep its lowest and highest
        keep[lo] = keep[hi] = 1;
        if (i == n) break;
        bin = b, lo = hi = i;
        continue;
      }
      if (kept_[i].process_used_bytes < kept_[lo].process_used_bytes) lo = i;
      if (kept_[i].process_used_bytes > kept_[hi].process_used_bytes) hi = i;
    }
    if (static_cast<std::size_t>(std::count(keep.begin(), keep.end(), 1)) <= std::max<std::size_t>(cap_ / 2, 4)) break;
  }
  std::size_t w = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (keep[i]) kept_[w++] = kept_[i];
  kept_.resize(w);
}

}  // namespace vramdoc::timeline
