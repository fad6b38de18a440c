// Replaying a device's trace: the allocated blocks alive at the dump, stepped back to any entry,
// and the allocated and reserved bytes after each entry (the dump's totals minus what the trace
// added since).
#pragma once
#include <cstdint>
#include <unordered_map>

#include "core/snapshot/model.hpp"

namespace vramdoc::snapshot::detail {

struct LiveBlock {
  std::uint64_t size = 0;
  std::uint32_t stack = 0;
};
using LiveSet = std::unordered_map<std::uint64_t, LiveBlock>;

// The device's allocated blocks in the dump's segments (state active_allocated), by address.
LiveSet live_at_dump(const Snapshot& s, std::int64_t device);
// `live` (alive after the trace's last entry) stepped back to just before entry `index`: blocks
// allocated since are removed, blocks freed since come back with the stack of their free entry.
void step_back(const Trace& trace, std::size_t index, LiveSet& live);

// Adds without overflow (wrapping; exact for any real snapshot: the builder bounds sizes).
std::int64_t wrap_add(std::int64_t a, std::int64_t b);
// How an entry changes the allocator's totals.
struct Delta {
  std::int64_t allocated = 0, reserved = 0;
};
Delta delta_of(const TraceEntry& e);

// The totals at the dump, and before the trace's first entry (the dump's minus the trace's sum).
struct Totals {
  std::int64_t allocated = 0, reserved = 0;
};
Totals totals_at_dump(const Snapshot& s, std::int64_t device);
Totals totals_before_trace(const Trace& trace, const Totals& at_dump);

}  // namespace vramdoc::snapshot::detail
