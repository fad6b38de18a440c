#include "core/estimator/fit.hpp"

#include "core/units.hpp"

namespace vramdoc::estimator {

namespace {

template <class Set>
Result<SearchResult> largest(const ModelConfig& model, Options options, std::uint64_t usable, Set set) {
  std::uint64_t lo = 0, hi = 1ULL << 24;  // lo fits (0 = nothing does), hi does not
  SearchResult best;
  while (hi - lo > 1) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    set(options, mid);
    auto e = estimate(model, options);
    if (e && fits(*e, usable)) {
      lo = mid;
      best = {mid, e->process_bytes, usable - e->process_bytes};
    } else if (!e && mid == 1) {
      return make_error(e.error());
    } else {
      hi = mid;
    }
  }
  return best;
}

}  // namespace

bool fits(const Estimate& e, std::uint64_t usable_bytes) {
  const std::uint64_t margin = kFitMarginPercent + e.uncertainty_percent;  // wider where the family is less certain
  const std::uint64_t with_margin = saturating_add(e.process_bytes, e.process_bytes / 100 * margin);
  return with_margin <= usable_bytes;
}

Result<SearchResult> max_batch(const ModelConfig& model, Options options, std::uint64_t usable_bytes) {
  return largest(model, options, usable_bytes, [](Options& o, std::uint64_t v) { o.batch = v; });
}

Result<SearchResult> max_seq(const ModelConfig& model, Options options, std::uint64_t usable_bytes) {
  return largest(model, options, usable_bytes, [](Options& o, std::uint64_t v) { o.seq = v; });
}

}  // namespace vramdoc::estimator
