// The articles' "raise the batch until it breaks", as a search over trials. With the card's
// capacity and the trials' peaks it steers by a model of the peak (guide.hpp): a jump to just
// under the margin, then a split of the uncertainty around the predicted limit; without them it
// doubles from --start until the first out-of-memory, then bisects. Either way it stops only when
// the largest value that ran and the smallest that did not are neighbours. Pure: the caller runs
// each trial.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace vramdoc::probe {

enum class Outcome {
  Ok,       // ran its steps (or its time) without error
  Oom,      // died with an out-of-memory error
  Failed,   // died for another reason (bad flag, crash): not an OOM
};

const char* outcome_name(Outcome outcome);

// One trial: the command run once with one value substituted.
struct Trial {
  std::uint64_t value = 0;
  Outcome outcome = Outcome::Ok;
  std::optional<std::uint64_t> peak_bytes;  // peak process memory the driver charged; unknown without NVML
  bool memory_grew = false;                 // the readings at step ends climbed after warm-up (growth.hpp)
  std::string growth;                       // how that was judged, for the report
  std::optional<int> exit_code;             // exit status, or 128 + signal
  std::string detail;                       // the OOM message or the failure's last line
  double seconds = 0;
};

struct SearchLimits {
  std::uint64_t start = 1;
  std::uint64_t max = 1ULL << 20;  // never try above this value
  std::optional<std::uint64_t> capacity_bytes;  // the card's memory: with it the trials' peaks steer the search
  double margin_fraction = 0.1;    // the recommendation's headroom: one early trial aims just under it
  // The estimator's process peak at a value (probe --config): the model's shape before the trials.
  std::function<std::optional<double>(std::uint64_t)> estimate_bytes;
};

// Why the search stopped.
enum class StopReason {
  Running,         // not stopped: next() gives a value
  Bracketed,       // found the largest value that runs and the smallest that does not
  ReachedMax,      // every value up to --max ran
  FailsAtStart,    // even --start runs out of memory
  Leaks,           // memory grew during a fixed-value trial: every value fails eventually
  OtherFailure,    // a trial failed for a reason other than memory
};

const char* stop_reason_name(StopReason reason);

struct PeakModel;  // guide.hpp

class Search {
 public:
  explicit Search(SearchLimits limits);
  // The next value to try, or nullopt when the search is over (see reason()).
  std::optional<std::uint64_t> next() const;
  // Records the trial of the value next() returned.
  void record(const Trial& trial);
  StopReason reason() const { return reason_; }
  const std::vector<Trial>& trials() const { return trials_; }
  // Largest value that ran / smallest value that ran out of memory, when known.
  std::optional<std::uint64_t> largest_ok() const { return largest_ok_; }
  std::optional<std::uint64_t> smallest_oom() const { return smallest_oom_; }

 private:
  // The model-guided next value; empty when there is no capacity, no peak or no growth to steer by.
  std::optional<std::uint64_t> guided() const;
  // Near the limit: a split of the odds around the model's limit in [lo, ceiling).
  std::uint64_t near_limit(const PeakModel& model, std::uint64_t lo, std::uint64_t ceiling) const;
  // The trials above `from` whose outcome contradicts a limit at `center`: out of memory below
  // it, or ran above it.
  int contradictions(double center, double from) const;

  SearchLimits limits_;
  std::vector<Trial> trials_;
  std::optional<std::uint64_t> largest_ok_;
  std::optional<std::uint64_t> smallest_oom_;
  StopReason reason_ = StopReason::Running;
};

}  // namespace vramdoc::probe
