// What the classifier measures before it decides (docs/run-analyze.md, "How the classifier
// works"): the driver's and the retained series with their warm-up and trend, the late rises and
// their spacing, cache flushes, the OOM and the need, preallocation, the trace. The rules
// (rules.cpp) read these and nothing else.
#pragma once
#include <optional>

#include "core/timeline/diagnosis.hpp"
#include "core/timeline/series.hpp"

namespace vramdoc::timeline {

// One series with its levels and its trend after warm-up.
struct Analysis {
  Series series;
  Levels levels;
  Trend trend;
  bool sustained = false;  // significant, large, monotone growth after warm-up
};

struct Features {
  Analysis driver;                // the driver's per-process number, as floors
  Analysis retained;              // bytes still allocated at step ends (when have_retained)
  bool have_retained = false;
  bool oom = false;
  bool fragmented = false;        // the OOM message shows the memory was there, in pieces
  double growth_floor = 0;        // growth that counts on the driver's series
  bool late_growth = false;       // the driver's rises after warm-up add up to the floor or more
  bool small_rises_leak = false;  // ... mostly in pieces smaller than a third of the working set
  bool decelerating = false;      // ... the second half adding less than a quarter of the first
  bool short_run = false;         // no steps, and the job held memory for less than the minimum quiet spell
  bool framework_pool = false;    // JAX/XLA or TensorFlow's own growing pool (preallocation.hpp)
  bool trace_leak = false;        // the trace shows a leak by itself (trace_evidence.hpp)
  bool trace_growth = false;      // the trace shows memory kept and growing (PyTorch's segments too)
  std::string unit = "step";      // what a mark ends: "step", or "forward call" when nothing steps
  bool outside_allocator_grows = false;  // the driver's bytes beyond PyTorch's reserved grow (accounting.hpp)
  bool first_unit_oom = false;    // out of memory before the step hook marked a single unit end
  bool evaluation_accumulates = false;   // memory grows within an evaluation phase
};

// Measures `tl` (at least 3 samples): the figures go into d.evidence, the step ends into d.step_ends.
Features measure(const Timeline& tl, const std::optional<TraceEvidence>& trace, Diagnosis& d);

// The OOM message shows fragmentation: the failed request would have fit in the memory reserved
// but unallocated, and that is a real share of the card (2 % of its capacity, 1 GiB when unknown).
bool fragmented(const std::optional<OomMessage>& m, std::optional<std::uint64_t> capacity);

// A staircase has a Theil-Sen slope of zero: the rate is then the late rises spread over the time
// after warm-up (evidence and the chart's line).
void use_staircase_rate(const Analysis& a, Diagnosis& d);

}  // namespace vramdoc::timeline
