#include "core/trace/analysis.hpp"

#include <algorithm>
#include <limits>
#include <map>

#include "core/units.hpp"

namespace vramdoc::trace {
namespace {

// Releases match allocations of the same family: cuMemFree can free any device pointer
// (cuMemAlloc, pitch, managed or stream-ordered), cuMemRelease a handle, cuMemUnmap a range.
enum Space { kPointers, kHandles, kMaps, kPools, kHost, kSpaces };

Space space_of(MemKind kind) {
  switch (kind) {
    case MemKind::VmmPhysical: return kHandles;
    case MemKind::VmmMap: return kMaps;
    case MemKind::Pool: return kPools;
    case MemKind::Pinned: return kHost;  // cuMemFreeHost releases it, cuMemFree does not
    default: return kPointers;
  }
}

struct Live {
  std::uint64_t size_bytes;
  std::uint32_t stack_id;
  MemKind kind;
  std::uint64_t t_ns;
  std::uint64_t ordinal;  // which event made it: 1, 2, ...
};

using LiveMap = std::map<std::uint64_t, Live>;

// The traced bytes alive: a corrupt or hostile trace's sizes may sum past 2^64, so the sum is
// kept in 128 bits and shown saturated (it wrapped to small numbers before).
__extension__ typedef unsigned __int128 Sum;
std::uint64_t saturated(Sum s) { return s > std::numeric_limits<std::uint64_t>::max() ? std::numeric_limits<std::uint64_t>::max() : static_cast<std::uint64_t>(s); }

class Replay {
 public:
  // Applies one event; returns true when it changed the traced bytes.
  bool apply(const EventRecord& e, TraceAnalysis& out) {
    ++ordinal_;
    if (e.op == Op::Failed) { out.failed++; return false; }
    auto& live = spaces_[space_of(e.kind)];
    if (e.op == Op::Alloc) {
      out.allocations++;
      // The address came back without a traced release: count the old one released.
      if (auto old = live.find(e.address); old != live.end()) release(live, old, std::next(old), out);
      live.emplace(e.address, Live{e.size_bytes, e.stack_id, e.kind, e.t_ns, ordinal_});
      if (counts_bytes(e.kind)) bytes_ += e.size_bytes;
      return counts_bytes(e.kind);
    }
    // An unmap may cover several maps: it releases every map that starts inside its range.
    auto first = live.lower_bound(e.address);
    auto last = first;
    if (space_of(e.kind) == kMaps && e.size_bytes > 0) last = live.lower_bound(e.address + e.size_bytes);
    else if (first != live.end() && first->first == e.address) last = std::next(first);
    if (first == last) { out.unmatched_releases++; return false; }
    return release(live, first, last, out);
  }
  // Releases [first, last); returns true when traced bytes changed.
  bool release(LiveMap& live, LiveMap::iterator first, LiveMap::iterator last, TraceAnalysis& out) {
    bool changed = false;
    for (auto it = first; it != last; ++it) {
      out.releases++;
      if (counts_bytes(it->second.kind)) { bytes_ -= it->second.size_bytes; changed = true; }  // was added: no wrap
    }
    live.erase(first, last);
    return changed;
  }
  std::uint64_t bytes() const { return saturated(bytes_); }
  std::vector<AllocGroup> groups() const {
    std::map<std::pair<std::uint32_t, MemKind>, AllocGroup> by_stack;
    for (const auto& space : spaces_)
      for (const auto& [address, a] : space) {
        if (!counts_bytes(a.kind) && a.kind != MemKind::Pinned) continue;  // pinned host memory: listed, not device bytes
        auto& g = by_stack[{a.stack_id, a.kind}];
        const double t_s = static_cast<double>(a.t_ns) * 1e-9;
        g.first_t_s = g.count == 0 ? t_s : std::min(g.first_t_s, t_s);
        g.last_t_s = g.count == 0 ? t_s : std::max(g.last_t_s, t_s);
        g.first_event = g.count == 0 ? a.ordinal : std::min(g.first_event, a.ordinal);
        g.last_event = g.count == 0 ? a.ordinal : std::max(g.last_event, a.ordinal);
        g.stack_id = a.stack_id;
        g.kind = a.kind;
        g.count++;
        g.bytes = saturating_add(g.bytes, a.size_bytes);
      }
    std::vector<AllocGroup> out;
    for (auto& [key, g] : by_stack) out.push_back(g);
    sort_largest_first(out);
    return out;
  }
  std::uint64_t live_count() const {
    std::uint64_t n = 0;
    for (const auto& space : spaces_) n += space.size();
    return n;
  }
  static void sort_largest_first(std::vector<AllocGroup>& groups) {
    std::stable_sort(groups.begin(), groups.end(), [](const AllocGroup& a, const AllocGroup& b) {
      return a.bytes != b.bytes ? a.bytes > b.bytes : a.stack_id < b.stack_id;
    });
  }

 private:
  LiveMap spaces_[kSpaces];
  Sum bytes_ = 0;
  std::uint64_t ordinal_ = 0;
};

std::vector<AllocGroup> refused_groups(const Trace& trace) {
  std::map<std::pair<std::uint32_t, MemKind>, AllocGroup> by_stack;
  for (const auto& r : trace.records)
    if (const auto* e = std::get_if<EventRecord>(&r); e && e->op == Op::Failed) {
      auto& g = by_stack[{e->stack_id, e->kind}];
      const double t_s = static_cast<double>(e->t_ns) * 1e-9;
      g = {e->stack_id, e->kind, g.count + 1, saturating_add(g.bytes, e->size_bytes), g.count ? g.first_t_s : t_s, t_s};
    }
  std::vector<AllocGroup> out;
  for (auto& [key, g] : by_stack) out.push_back(g);
  Replay::sort_largest_first(out);
  return out;
}

}  // namespace

bool counts_bytes(MemKind kind) { return kind != MemKind::VmmMap && kind != MemKind::Pool && kind != MemKind::Pinned; }

TraceAnalysis analyze_trace(const Trace& trace, std::size_t max_points) {
  TraceAnalysis out;
  std::uint64_t end_ns = 0;
  for (const auto& r : trace.records)
    if (const auto* e = std::get_if<EventRecord>(&r)) end_ns = std::max(end_ns, e->t_ns);
  const std::uint64_t bucket_ns = std::max<std::uint64_t>(1, end_ns / std::max<std::size_t>(1, max_points - 1) + 1);

  // First pass: counts, the timeline, and when the peak happened (its event index).
  Replay replay;
  std::size_t peak_index = 0, index = 0;
  std::uint64_t bucket = ~0ULL;
  for (const auto& r : trace.records) {
    const auto* e = std::get_if<EventRecord>(&r);
    if (!e) continue;
    ++index;
    if (!replay.apply(*e, out)) continue;
    if (replay.bytes() > out.peak_bytes) {
      out.peak_bytes = replay.bytes();
      out.peak_t_s = static_cast<double>(e->t_ns) * 1e-9;
      peak_index = index;
    }
    const std::uint64_t b = e->t_ns / bucket_ns;
    if (b != bucket || out.timeline.empty()) {
      out.timeline.push_back({static_cast<double>(e->t_ns) * 1e-9, replay.bytes()});
      bucket = b;
    } else {
      out.timeline.back().bytes = std::max(out.timeline.back().bytes, replay.bytes());
    }
  }
  out.live = replay.live_count();
  out.live_bytes = replay.bytes();
  out.leaks = replay.groups();
  out.refused = refused_groups(trace);

  // Second pass: replay up to the peak and group what was alive then.
  TraceAnalysis scratch;
  Replay at_peak;
  index = 0;
  for (const auto& r : trace.records) {
    const auto* e = std::get_if<EventRecord>(&r);
    if (!e) continue;
    if (++index > peak_index) break;
    at_peak.apply(*e, scratch);
  }
  out.peak_contributors = at_peak.groups();
  // Spread is counted in events, not seconds: a pause (loading, compiling) is not activity.
  for (const auto& g : out.peak_contributors)
    if (g.count >= kMinAccumulating && 2 * (g.last_event - g.first_event) >= peak_index)
      out.accumulating.push_back(g);
  return out;
}

}  // namespace vramdoc::trace
