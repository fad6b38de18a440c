#include "core/snapshot/replay.hpp"

namespace vramdoc::snapshot::detail {

std::int64_t wrap_add(std::int64_t a, std::int64_t b) {
  return static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + static_cast<std::uint64_t>(b));
}

LiveSet live_at_dump(const Snapshot& s, std::int64_t device) {
  LiveSet live;
  for (const auto& seg : s.segments) {
    if (seg.device != device) continue;
    for (std::size_t b = seg.first_block; b < seg.first_block + seg.block_count && b < s.blocks.size(); ++b)
      if (s.blocks[b].state == BlockState::ActiveAllocated) live[s.blocks[b].address] = {s.blocks[b].size, s.blocks[b].stack};
  }
  return live;
}

void step_back(const Trace& trace, std::size_t index, LiveSet& live) {
  for (std::size_t i = trace.size(); i-- > index;) {
    const TraceEntry& e = trace[i];
    if (e.action == Action::Alloc) live.erase(e.addr);
    else if (e.action == Action::FreeRequested) live[e.addr] = {e.size, e.stack};
  }
}

Delta delta_of(const TraceEntry& e) {
  const auto n = static_cast<std::int64_t>(e.size);
  switch (e.action) {
    case Action::Alloc: return {n, 0};
    case Action::FreeRequested: return {-n, 0};
    case Action::SegmentAlloc:
    case Action::SegmentMap: return {0, n};
    case Action::SegmentFree:
    case Action::SegmentUnmap: return {0, -n};
    default: return {};
  }
}

Totals totals_at_dump(const Snapshot& s, std::int64_t device) {
  Totals t;
  for (const auto& seg : s.segments) {
    if (seg.device != device) continue;
    t.reserved = wrap_add(t.reserved, static_cast<std::int64_t>(seg.total_size));
    for (std::size_t b = seg.first_block; b < seg.first_block + seg.block_count && b < s.blocks.size(); ++b)
      if (s.blocks[b].state == BlockState::ActiveAllocated) t.allocated = wrap_add(t.allocated, static_cast<std::int64_t>(s.blocks[b].size));
  }
  return t;
}

Totals totals_before_trace(const Trace& trace, const Totals& at_dump) {
  Totals t = at_dump;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const Delta d = delta_of(trace[i]);
    t.allocated = wrap_add(t.allocated, -d.allocated);
    t.reserved = wrap_add(t.reserved, -d.reserved);
  }
  return t;
}

}  // namespace vramdoc::snapshot::detail
