// Did memory grow step after step within one probe trial? A probe trial is short (a few steps at
// one value), too short for the timeline classifier's trend test, but it marks its steps: the
// driver's reading at the end of each step, after warm-up, is what a leak makes climb.
#pragma once
#include <cstdint>
#include <string>

#include "core/timeline/timeline.hpp"

namespace vramdoc::probe {

struct StepGrowth {
  bool judged = false;            // enough steps after warm-up to tell
  bool grew = false;              // the readings at the ends of steps climb after warm-up
  int steps_after_warmup = 0;     // readings compared
  std::uint64_t from_bytes = 0;   // reading at the end of warm-up
  std::uint64_t to_bytes = 0;     // reading at the last step
  std::string why;                // one line for the report
};

// Warm-up: the first max(2, steps / 4) steps (optimizer state, the allocator's first segments).
// Growth: at least 4 step readings after warm-up, rises at two or more of them and in the last
// third, no fall larger than the tolerance, and a total rise of at least max(64 MiB, 2 % of the
// warm-up reading). Readings of steps faster than the sampling share a sample; equal neighbours
// are neither a rise nor a fall. A recording with per-process series is judged per process, each on
// its own step marks (the step hook's or the job's lines, not both); the trial grew when one grew.
StepGrowth step_growth(const timeline::Timeline& trial);

}  // namespace vramdoc::probe
