// What an allocation trace says about leaks, as plain numbers the classifier can weigh beside the
// driver's timeline (issue 15): one report, one story. Filled from the CUPTI tracer's analysis
// (core/trace/analysis via the overlay's TracedSeries) by whoever builds the job's report.
#pragma once
#include <cstdint>
#include <string>

#include "core/timeline/traced.hpp"

namespace vramdoc::timeline {

struct TraceEvidence {
  std::string source = "allocation tracer";  // where it came from, for the reasons
  // PyTorch's caching allocator was used: the traced allocations are cache segments, not tensors,
  // so segments alive at exit are the cache (the process exits without freeing it), and segments
  // made until the peak may be the cache growing for new shapes as well as a leak.
  bool segments_only = false;
  std::uint64_t alive_at_exit_bytes = 0;   // traced bytes never released
  std::uint64_t alive_at_exit_count = 0;   // allocations never released (of the top call sites)
  std::uint64_t growing_bytes = 0;         // call sites that kept allocating until the traced peak
  std::uint64_t growing_count = 0;
  std::string top_site;                    // the largest leaking or growing call site, named
};

// The evidence in an overlay of traced bytes: its live bytes at the end and its top call sites.
TraceEvidence trace_evidence(const TracedSeries& traced);

// Whether the trace shows a leak by itself: native allocations (not PyTorch's cache) alive at
// exit of a run that did not run out of memory (a run killed by OOM frees nothing), or growing
// until the peak.
bool trace_shows_leak(const TraceEvidence& e, bool ran_out);
// Whether the trace shows memory kept and growing at all (PyTorch's segments included): enough
// to contradict "nothing leaks", not always enough to call it a leak.
bool trace_shows_growth(const TraceEvidence& e, bool ran_out);

}  // namespace vramdoc::timeline
