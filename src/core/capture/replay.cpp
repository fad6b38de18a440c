#include "core/capture/replay.hpp"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace vramdoc::capture {
namespace {

using estimator::CachingAllocator;

// The trace's events with the workspaces merged in: the replay's input.
struct Step {
  Event::Kind kind;
  std::uint64_t bytes, id;
  std::uint32_t stream;
  std::string_view where;
};

std::vector<Step> merged(const Trace& t, const std::vector<Insert>& inserts, std::vector<std::size_t>& phase_of) {
  std::vector<Step> steps;
  steps.reserve(t.events.size() + inserts.size());
  std::size_t next = 0, phase = 0;
  for (std::size_t i = 0; i < t.events.size(); ++i) {
    while (phase < t.phases.size() && t.phases[phase].end <= i) ++phase;
    const Event& e = t.events[i];
    if (e.kind != Event::Kind::Kernel) {
      steps.push_back({e.kind, e.bytes, e.id, e.stream, t.texts[e.text]});
      phase_of.push_back(phase);
    }
    for (; next < inserts.size() && inserts[next].after == i; ++next) {
      const Insert& w = inserts[next];
      steps.push_back({w.alloc ? Event::Kind::Alloc : Event::Kind::Free, w.bytes, w.id, w.stream, w.what});
      phase_of.push_back(phase);
    }
  }
  return steps;
}

struct Live {
  std::uint32_t stream;
  CachingAllocator::Handle handle;
  std::uint64_t bytes;
  std::string_view where;
};

}  // namespace

Replay replay_trace(const Trace& trace, const ReplayOptions& options) {
  Replay r;
  const auto inserts = workspaces(trace, options.target, r.libraries);
  std::vector<std::size_t> phase_of;
  const auto steps = merged(trace, inserts, phase_of);
  r.phases.resize(trace.phases.size() + 1);
  for (std::size_t i = 0; i < trace.phases.size(); ++i) r.phases[i].name = trace.phases[i].name;
  r.phases.back().name = "after the last phase";
  std::map<std::uint32_t, CachingAllocator> pools;  // one allocator per stream
  std::unordered_map<std::uint64_t, Live> live;
  std::uint64_t allocated = 0, reserved = 0;
  std::size_t peak_at = 0;
  auto pool = [&](std::uint32_t stream) -> CachingAllocator& {
    return pools.try_emplace(stream, options.allocator).first->second;
  };
  std::size_t phase = 0;  // phases without events of their own show the memory held through them
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    for (; phase < std::min(phase_of[i], r.phases.size() - 1); ++phase) {
      PhasePeak& next = r.phases[phase + 1];
      next.allocated_end_bytes = allocated;
      next.peak_allocated_bytes = std::max(next.peak_allocated_bytes, allocated);
      next.peak_reserved_bytes = std::max(next.peak_reserved_bytes, reserved);
    }
    if (s.kind == Event::Kind::Alloc) {
      if (s.bytes == 0) continue;
      if (auto old = live.find(s.id); old != live.end()) {  // a reused id frees the old block
        CachingAllocator& a = pool(old->second.stream);
        const auto before = a.allocated_bytes();
        a.release(old->second.handle);
        allocated -= before - a.allocated_bytes();
        live.erase(old);
      }
      CachingAllocator& a = pool(s.stream);
      const auto before_a = a.allocated_bytes(), before_r = a.reserved_bytes();
      const auto h = a.allocate(s.bytes);
      allocated += a.allocated_bytes() - before_a;
      reserved += a.reserved_bytes() - before_r;
      live[s.id] = {s.stream, h, a.allocated_bytes() - before_a, s.where};
      ++r.allocations;
    } else if (s.kind == Event::Kind::Free) {
      auto it = live.find(s.id);
      if (it == live.end()) continue;
      CachingAllocator& a = pool(it->second.stream);
      const auto before = a.allocated_bytes();
      a.release(it->second.handle);
      allocated -= before - a.allocated_bytes();
      live.erase(it);
    } else if (s.kind == Event::Kind::EmptyCache) {
      for (auto& [stream, a] : pools) {
        const auto before = a.reserved_bytes();
        a.empty_cache();
        reserved -= before - a.reserved_bytes();
      }
    }
    PhasePeak& p = r.phases[std::min(phase_of[i], r.phases.size() - 1)];
    p.allocated_end_bytes = allocated;
    p.peak_allocated_bytes = std::max(p.peak_allocated_bytes, allocated);
    p.peak_reserved_bytes = std::max(p.peak_reserved_bytes, reserved);
    if (allocated > r.peak_allocated_bytes) r.peak_allocated_bytes = allocated, peak_at = i;
    r.peak_reserved_bytes = std::max(r.peak_reserved_bytes, reserved);
  }
  if (r.phases.back().peak_allocated_bytes == 0) r.phases.pop_back();
  if (!steps.empty()) {
    const std::size_t p = phase_of[peak_at];
    r.peak_phase = p < trace.phases.size() ? trace.phases[p].name : "after the last phase";
  }
  // The live set at the peak, by where it was allocated (a second pass: no allocator needed).
  std::unordered_map<std::uint64_t, std::pair<std::uint64_t, std::string_view>> held;
  for (std::size_t i = 0; i <= peak_at && i < steps.size(); ++i) {
    const Step& s = steps[i];
    if (s.kind == Event::Kind::Alloc && s.bytes > 0) held[s.id] = {estimator::block_bytes(s.bytes), s.where};
    else if (s.kind == Event::Kind::Free) held.erase(s.id);
  }
  std::map<std::string_view, HeldBy> by_where;
  for (const auto& [id, v] : held) {
    HeldBy& h = by_where[v.second];
    h.bytes += v.first, ++h.blocks;
    if (id >= kWorkspaceIds) r.workspace_bytes_at_peak += v.first;
  }
  for (auto& [where, h] : by_where) {
    h.where = where.empty() ? std::string("(blocks under 1 MiB: no Python line recorded)") : std::string(where);
    r.held_at_peak.push_back(std::move(h));
  }
  std::sort(r.held_at_peak.begin(), r.held_at_peak.end(), [](const HeldBy& a, const HeldBy& b) { return a.bytes > b.bytes; });
  return r;
}

}  // namespace vramdoc::capture
