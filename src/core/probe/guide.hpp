// Where the probe's next trial goes once trials have run: a model of the peak against the value
// (the trials' fit, or the estimator's curve scaled to the trials), inverted at the card's
// capacity, and a heavy-tailed prior around that guess that the search splits in half each trial
// (docs/probe.md, "Search"). Pure arithmetic: no trial is run here.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/probe/search.hpp"

namespace vramdoc::probe {

// peak(value) in bytes, nondecreasing over the values the search tries.
struct PeakModel {
  std::function<double(double)> predict;
  bool proportional = false;  // from one trial only: peak(v) = peak(v1) x v / v1, an upper bound for linear jobs
  // The proportional bound although two or more values ran: their peaks did not grow (the fixed
  // part hides the per-item cost, ViT-B/16 on the H200: 2.69 2.63 2.63 GiB at 1 2 4), which a job
  // without a fixed part could not show; the bound then understates how far the limit is. Set too
  // when the bound comes from the values above a floor (guide.cpp's above_floor: the smallest
  // values' peaks did not grow and are left out of the model; issue 30, the ViT's flat start).
  bool flat = false;
};

// The model from the trials that ran with a known peak: with `estimate_bytes`, a + k x estimate(v)
// fitted to them (k = 1 from one trial); else the fitted fixed + per_item x v (+ quadratic), or
// from one trial the proportional bound. With `capacity_bytes`, trials whose peak reached the card
// (saturated(): the allocator freed its cache and retried, so the peak stopped following the value)
// are left out while any other trial ran. Empty when no trial ran with a peak, or the model does
// not grow with the value.
std::optional<PeakModel> peak_model(const std::vector<Trial>& trials,
                                    const std::function<std::optional<double>(std::uint64_t)>& estimate_bytes,
                                    std::optional<double> capacity_bytes = std::nullopt);

// True when a trial's measured peak is within the limit's uncertainty of the card: near its
// limit PyTorch frees its cache and retries before it fails, so such peaks sit at the card
// whatever the value (H200, ResNet-50 at 16 GiB: batch 345 to 361 all peaked at 16.4-16.7 GiB).
bool saturated(const Trial& trial, double capacity_bytes);

// Where the limit lies by the allocator's own peaks (the step hook's `peak=`), in values: the job
// runs out when the live tensors at their peak, A(v), no longer fit what the allocator can have
// (the card less the context, outside). While the cache fits, the allocator holds rho x A(v)
// (rho: reserved / allocated peak of the largest unsaturated trial, the driver's peak less the
// context as reserved); near its cap PyTorch's caching allocator frees its cached blocks and
// retries before it fails (CUDACachingAllocator.cpp: malloc -> release_cached_blocks), so the
// limit lies between where rho x A(v) reaches it (`low`: the driver's peak saturates there) and
// where A(v) itself does (`high`). A is the line fitted to the trials' allocated peaks. Empty
// without allocated peaks at two values, or when they do not grow.
struct AllocatedLimit {
  double low = 0, high = 0;
  double per_value_bytes = 0;  // A's slope at `high`: what the card's uncertainty is in values
};
std::optional<AllocatedLimit> allocated_limit(const std::vector<Trial>& trials, double capacity_bytes);

// The largest value in [lo, hi] whose predicted peak is at most `bytes` (lo when none is).
std::uint64_t value_within(const PeakModel& model, double bytes, std::uint64_t lo, std::uint64_t hi);

// The value (fractional) where the model reaches `bytes`, searched in [lo, hi]: lo when even lo
// is predicted above it, hi + (what is left) / slope when hi is still below it.
double predicted_value(const PeakModel& model, double bytes, std::uint64_t lo, std::uint64_t hi);

// The value v in (lo, hi) that splits a prior on the limit, truncated to [lo, hi), into halves:
// the limit is below v or at least v with equal odds. The prior: within 2 x `scale` of `center`
// (value units) with odds 4 : 1, else a Cauchy tail. Near the guess it bisects the guess's
// uncertainty; far from it, it gallops (the tail doubles the step). Requires hi - lo >= 2.
std::uint64_t split_prior(double center, double scale, std::uint64_t lo, std::uint64_t hi);

// The memory the job can reach on the card: in use + free from an OOM message of the trials
// (the out-of-memory error's own figures), else empty. Empty too when that is more than 5 % above
// `card_bytes`: the message's free memory is the device's, and a job held to a share of it
// (set_per_process_memory_fraction, "16.00 GiB allowed") reaches only the card it was told; and
// when it is below the peak of a trial that ran: another process held the card at that moment
// (H200, 2026-12-02: a JAX job beside the probe), and a limit below a measured peak sent the
// search creeping up one value a trial (3 4 5 6 under 17x).
std::optional<double> reachable_bytes(const std::vector<Trial>& trials, std::optional<double> card_bytes = std::nullopt);

}  // namespace vramdoc::probe
