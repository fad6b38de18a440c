// The articles' "raise the batch until it breaks", as a search over trials: double from
// --start until the first out-of-memory, then bisect. Pure: the caller runs each trial.
#pragma once
#include <cstdint>
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
  SearchLimits limits_;
  std::vector<Trial> trials_;
  std::optional<std::uint64_t> largest_ok_;
  std::optional<std::uint64_t> smallest_oom_;
  StopReason reason_ = StopReason::Running;
};

}  // namespace vramdoc::probe
