// How much an insufficient job needs: from what it held when it failed and the failed request,
// from the peaks of the steps it finished (and how they grew), and, with --config, from the
// estimator (quantify.hpp). docs/run-analyze.md, "Insufficient: how much is needed".
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/timeline/oom_message.hpp"
#include "core/timeline/timeline.hpp"

namespace vramdoc::timeline {

struct Need {
  std::uint64_t bytes = 0;                   // what the job needs (see at_least)
  bool at_least = true;                      // a lower bound: the failing step was not finished
  std::string basis;                         // how it was found, one phrase
  std::optional<std::uint64_t> fixed_bytes;  // held before the first step: weights, context (optimizer state if made)
  // The part above fixed_bytes (a step's activations, roughly batch-proportional) must shrink by at
  // least this factor to fit under the card with the estimator's 8 % margin; empty when unknown or
  // when fixed_bytes alone does not fit.
  std::optional<double> shrink;
};

// The need at the failure: the OOM message's figures (PyTorch: in use - reserved but unallocated +
// requested; others: the driver's peak + requested), at least the peak of the last finished step
// plus the growth between the last two steps' peaks. Empty without an OOM.
std::optional<Need> estimate_need(const Timeline& tl, const std::optional<OomMessage>& oom,
                                  const std::vector<double>& step_ends, std::optional<std::uint64_t> capacity_bytes,
                                  double tolerance_bytes);

// Sets the shrink factor from bytes, fixed_bytes and the capacity.
void set_shrink(Need& need, std::optional<std::uint64_t> capacity_bytes);

}  // namespace vramdoc::timeline
