// The traced bytes (allocation tracer, docs/trace.md) on the timeline's clock, for the renderers
// to draw beside the driver's numbers. Plain data, filled by core/trace/overlay.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace vramdoc::timeline {

struct TracedPoint {
  double t_seconds = 0;     // on the timeline's clock (seconds since the recording began)
  std::uint64_t bytes = 0;  // traced bytes alive, summed over the traced processes
};

// One top call site of the trace, already named ("file.py:12 (function)").
struct TracedSite {
  std::string where;
  std::string why;           // "growing" (kept by a loop until the peak) or "alive at exit"
  std::uint64_t bytes = 0;
  std::uint64_t count = 0;
  std::uint32_t pid = 0;
};

struct TracedSeries {
  std::vector<TracedPoint> points;      // in time order, bounded
  std::uint64_t peak_bytes = 0;         // the largest sum of traced bytes alive
  double peak_seconds = 0;              // when, on the timeline's clock
  std::uint64_t live_bytes_at_end = 0;  // alive when each process's trace ended
  std::size_t processes = 0;
  bool pytorch = false;                 // a traced process used PyTorch's caching allocator
  std::string alignment;                // how the two clocks were aligned, for the reader
  std::vector<TracedSite> top_sites;    // largest first
};

}  // namespace vramdoc::timeline
