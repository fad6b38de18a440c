// Whether an estimate fits a card (the table of common GPUs is cards.hpp), and the largest
// batch / sequence length that fits. "Fits" compares the whole process (reserved + CUDA
// context) plus a safety margin with the memory the card offers, so it never says fits where
// the estimate says OOM.
#pragma once
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/estimator/cards.hpp"
#include "core/estimator/estimate.hpp"

namespace vramdoc::estimator {

// Safety margin on top of the estimate before it is called a fit (the estimator's p95 error).
constexpr std::uint64_t kFitMarginPercent = 8;

// True when the process, plus the margin, stays within `usable_bytes`.
bool fits(const Estimate& e, std::uint64_t usable_bytes);

struct SearchResult {
  std::uint64_t value = 0;          // the largest batch (or sequence length) that fits; 0 if none
  std::uint64_t process_bytes = 0;  // the estimate at that value
  std::uint64_t headroom_bytes = 0;  // usable - process at that value
};

// Largest batch (with options.seq) that fits in `usable_bytes`, searched up to 2^24.
Result<SearchResult> max_batch(const ModelConfig& model, Options options, std::uint64_t usable_bytes);
// Largest sequence length (with options.batch) that fits, searched up to 2^24.
Result<SearchResult> max_seq(const ModelConfig& model, Options options, std::uint64_t usable_bytes);

}  // namespace vramdoc::estimator
