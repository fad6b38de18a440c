#include "core/probe/search.hpp"

#include <algorithm>

namespace vramdoc::probe {

const char* outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::Ok: return "ok";
    case Outcome::Oom: return "oom";
    case Outcome::Failed: return "failed";
  }
  return "?";
}

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::Running: return "running";
    case StopReason::Bracketed: return "bracketed";
    case StopReason::ReachedMax: return "reached_max";
    case StopReason::FailsAtStart: return "fails_at_start";
    case StopReason::Leaks: return "leaks";
    case StopReason::OtherFailure: return "other_failure";
  }
  return "?";
}

Search::Search(SearchLimits limits) : limits_(limits) {
  limits_.start = std::max<std::uint64_t>(limits_.start, 1);
  limits_.max = std::max(limits_.max, limits_.start);
}

std::optional<std::uint64_t> Search::next() const {
  if (reason_ != StopReason::Running) return std::nullopt;
  if (trials_.empty()) return limits_.start;
  if (!smallest_oom_) {  // doubling phase: every trial so far ran
    std::uint64_t last = *largest_ok_;
    return last > limits_.max / 2 ? limits_.max : last * 2;
  }
  // bisecting between the largest that ran and the smallest that did not
  return *largest_ok_ + (*smallest_oom_ - *largest_ok_) / 2;
}

void Search::record(const Trial& trial) {
  trials_.push_back(trial);
  // A trial that ran its steps while memory grew step after step leaks: every value will fail
  // eventually, so stop and say so. A trial that ran out of memory grew by definition (its first
  // steps allocate the optimizer state): its growth is no evidence of a leak.
  if (trial.memory_grew && trial.outcome == Outcome::Ok) {
    reason_ = StopReason::Leaks;
    return;
  }
  switch (trial.outcome) {
    case Outcome::Failed:
      reason_ = StopReason::OtherFailure;
      return;
    case Outcome::Ok:
      largest_ok_ = std::max(largest_ok_.value_or(0), trial.value);
      if (!smallest_oom_ && trial.value >= limits_.max) reason_ = StopReason::ReachedMax;
      break;
    case Outcome::Oom:
      smallest_oom_ = std::min(smallest_oom_.value_or(trial.value), trial.value);
      if (!largest_ok_) {
        reason_ = StopReason::FailsAtStart;
        return;
      }
      break;
  }
  if (largest_ok_ && smallest_oom_ && *smallest_oom_ - *largest_ok_ <= 1) reason_ = StopReason::Bracketed;
}

}  // namespace vramdoc::probe
