// peak(value) = fixed + per_item x value, fitted to the trials that ran, and the recommendation.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/probe/search.hpp"

namespace vramdoc::probe {

struct PeakFit {
  double fixed_bytes = 0;     // weights, optimizer state, context: what value 0 would still need
  double per_item_bytes = 0;  // what each unit of the value adds
  double r_squared = 0;
  std::size_t points = 0;
  // Set when a quadratic term explains the peaks clearly better (e.g. eager attention's s^2).
  std::optional<double> quadratic_bytes;
  bool linear() const { return !quadratic_bytes; }
  // The fitted peak at `value`, quadratic term included when present.
  double predict(double value) const;
};

// Least squares over the Ok trials with a known peak; nullopt with fewer than two distinct values.
std::optional<PeakFit> fit_peaks(const std::vector<Trial>& trials);

struct Recommendation {
  std::optional<std::uint64_t> value;  // nullopt: nothing can be recommended
  double margin_fraction = 0.1;        // headroom kept below the card's capacity
  std::string basis;                   // one sentence: why this value
};

// The largest peak that keeps `margin_fraction` of what the allocator can have free: the card
// less `outside_bytes` (the context, outside the allocator's control) less the margin of the rest.
double allowed_peak_bytes(double capacity_bytes, double margin_fraction, double outside_bytes);

// The largest value, at most `answer` (the confirmed largest value; default: the largest that
// ran), whose peak stays within allowed_peak_bytes (the trials' largest outside_allocator_bytes
// as the context): a value that ran, or one between two values that ran with its peak interpolated
// between theirs (memory never falls as the value grows: the peaks are made nondecreasing first).
// Never extrapolated beyond the values measured; nothing without a measured peak.
Recommendation recommend(const std::vector<Trial>& trials, std::optional<std::uint64_t> capacity_bytes,
                         double margin_fraction, std::optional<std::uint64_t> answer = std::nullopt);

}  // namespace vramdoc::probe
