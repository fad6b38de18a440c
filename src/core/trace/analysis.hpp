// What a trace says: leaks (alive at the end), peak contributors (alive at the peak), refused
// allocations, and the timeline of traced bytes. Pure: no GPU, no symbols (see symbols.hpp).
#pragma once
#include <cstdint>
#include <vector>

#include "core/trace/reader.hpp"

namespace vramdoc::trace {

// Allocations that share one call stack and kind.
struct AllocGroup {
  std::uint32_t stack_id = 0;
  MemKind kind = MemKind::Device;
  std::uint64_t count = 0;
  std::uint64_t bytes = 0;
  double first_t_s = 0;  // when the earliest / latest of these allocations was made
  double last_t_s = 0;
  std::uint64_t first_event = 0;  // the same, as ordinals of the trace's events (1, 2, ...)
  std::uint64_t last_event = 0;
};

struct TimelinePoint {
  double t_s = 0;            // seconds since the trace started
  std::uint64_t bytes = 0;   // traced bytes alive (the largest value within its time bucket)
};

struct TraceAnalysis {
  std::uint64_t allocations = 0;        // successful allocation calls of every kind
  std::uint64_t releases = 0;           // releases that matched a traced allocation
  std::uint64_t live = 0;               // allocations never released: allocations = releases + live
  std::uint64_t unmatched_releases = 0; // releases of memory allocated before tracing began
  std::uint64_t failed = 0;             // allocation calls the driver refused
  std::uint64_t live_bytes = 0;         // traced bytes alive at the end
  std::uint64_t peak_bytes = 0;
  double peak_t_s = 0;
  std::vector<AllocGroup> leaks;              // alive at the end, largest first
  std::vector<AllocGroup> peak_contributors;  // alive at the peak, largest first
  std::vector<AllocGroup> refused;            // failed allocation attempts, largest first
  // Peak contributors that grew steadily: at least kMinAccumulating allocations alive at the peak,
  // made over at least half of the events before the peak. In Python programs
  // teardown frees everything, so this, not "alive at exit", is where a loop's leak shows.
  std::vector<AllocGroup> accumulating;
  std::vector<TimelinePoint> timeline;        // at most max_points points
};

inline constexpr std::uint64_t kMinAccumulating = 10;

// True for the kinds that own memory (VMM maps are views of physical memory; pools hold none).
bool counts_bytes(MemKind kind);

// Replays the events of `trace` in order. max_points >= 2 bounds the timeline.
TraceAnalysis analyze_trace(const Trace& trace, std::size_t max_points = 1000);

}  // namespace vramdoc::trace
