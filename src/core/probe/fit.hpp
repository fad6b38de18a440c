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

// The largest value that ran AND whose measured peak leaves `margin_fraction` of `capacity_bytes`
// free. Only values that actually ran are recommended: a fitted prediction never is.
Recommendation recommend(const std::vector<Trial>& trials, std::optional<std::uint64_t> capacity_bytes,
                         double margin_fraction);

}  // namespace vramdoc::probe
