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
  int steps = 0;                            // steps it completed (marked); an OOM came in step steps + 1
  std::optional<int> settled_at;            // the step from which its memory stayed flat (settle.hpp); empty: not settled
  std::optional<std::uint64_t> outside_allocator_bytes;  // driver's number less reserved at step ends: the context (settle.hpp)
  // The allocator's own peak of live tensors, the largest the step hook's `peak=` reported (what the
  // job needed, below the cache it may free near its cap); unknown without the field (older hooks, not PyTorch).
  std::optional<std::uint64_t> allocated_peak_bytes;
  bool ran_to_end = false;                  // the job ended by itself (exit 0, not stopped by probe): settled however few steps it ran
  bool measured = false;                    // the driver gave memory readings: without them a trial cannot fit
  bool confirmation = false;                // the longer run of the answer (SearchLimits::confirm_steps)
  // An OOM that says the card itself was full while this job held far less than its --gpu-memory:
  // another process took the memory. No evidence about the value: it is tried once more.
  bool card_full = false;
};

struct SearchLimits {
  std::uint64_t start = 1;
  std::uint64_t max = 1ULL << 20;  // never try above this value
  std::optional<std::uint64_t> capacity_bytes;  // the card's memory: with it the trials' peaks steer the search
  double margin_fraction = 0.1;    // the recommendation's headroom: one early trial aims just under it
  // The estimator's process peak at a value (probe --config): the model's shape before the trials.
  std::function<std::optional<double>(std::uint64_t)> estimate_bytes;
  // At most this many trials, the confirmation included (0: no cap); a confirmation that runs out
  // of memory reopens the search below it, one more trial past the cap at most.
  int max_trials = 8;
  // The answer (the largest value that ran) is run again for this many steps before it is reported,
  // unless its trial already ran that long (0: no confirmation).
  int confirm_steps = 50;
};

// Why the search stopped.
enum class StopReason {
  Running,         // not stopped: next() gives a value
  Bracketed,       // found the largest value that runs and the smallest that does not
  ReachedMax,      // every value up to --max ran
  FailsAtStart,    // even --start runs out of memory
  Leaks,           // memory grew during a fixed-value trial: every value fails eventually
  OtherFailure,    // a trial failed for a reason other than memory
  Unmeasured,      // a trial ran but the driver gave no memory readings: it cannot be said to fit
  TrialsSpent,     // --max-trials used before the neighbours were found: the answer is the bracket
};

const char* stop_reason_name(StopReason reason);

struct PeakModel;  // guide.hpp

class Search {
 public:
  explicit Search(SearchLimits limits);
  // The next value to try, or nullopt when the search is over (see reason()).
  std::optional<std::uint64_t> next() const;
  // True when next()'s value is the confirmation run of the answer (run it for confirm_steps).
  bool confirming() const;
  // True when next()'s value is a trial in a narrow bracket or one of the last two the cap allows:
  // run it for confirm_steps too, so that if it turns out to be the answer it is its own
  // confirmation (no extra trial).
  bool runs_long() const;
  // Records the trial of the value next() returned.
  void record(const Trial& trial);
  // The answer's confirmation: the value whose confirmation run (or whose trial, when it ran
  // confirm_steps steps) held; empty before it or when it failed.
  std::optional<std::uint64_t> confirmed() const { return confirmed_; }
  const SearchLimits& limits() const { return limits_; }
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
  // After an out-of-memory at `value`: the largest value below it that ran is the answer's candidate.
  void out_of_memory_at(std::uint64_t value);
  // A value that ran saturated the card and the allocator's peaks put the limit in an interval of
  // at most twice kLongBracket values (search.cpp): the trials there run long.
  bool allocated_guides() const;
  // A trial of `value` ran and peaked above the recommendation's margin (1 - margin_fraction of the card).
  bool near_margin(std::uint64_t value) const;
  // A trial of `value` ran without error for at least confirm_steps steps.
  bool ran_long(std::uint64_t value) const;

  SearchLimits limits_;
  std::vector<Trial> trials_;
  std::optional<std::uint64_t> largest_ok_;
  std::optional<std::uint64_t> smallest_oom_;
  std::optional<std::uint64_t> confirmed_;
  StopReason reason_ = StopReason::Running;
  std::optional<std::uint64_t> retry_;  // a value whose OOM came from a full card: tried again next
};

}  // namespace vramdoc::probe
