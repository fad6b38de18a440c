#include "core/snapshot/analysis.hpp"

#include <algorithm>

#include "core/snapshot/analysis_parts.hpp"
#include "core/timeline/classify.hpp"
#include "core/units.hpp"

namespace vramdoc::snapshot {

namespace {

using detail::first_oom;
using detail::LiveSet;
using detail::Sites;
using detail::SiteTally;

const Trace kNoTrace;

// The device to report on: the one that ran out of memory, else the one with the most trace
// entries, else the one holding the most in its segments.
std::int64_t pick_device(const Snapshot& s) {
  if (s.hook_oom) return s.hook_oom->device;
  std::int64_t best = -1;
  std::size_t most = 0;
  for (std::size_t d = 0; d < s.traces.size(); ++d) {
    if (first_oom(s.traces[d])) return static_cast<std::int64_t>(d);
    if (s.traces[d].size() > most) most = s.traces[d].size(), best = static_cast<std::int64_t>(d);
  }
  if (best >= 0) return best;
  std::unordered_map<std::int64_t, std::uint64_t> held;
  for (const auto& seg : s.segments) held[seg.device] += seg.total_size;
  std::uint64_t top = 0;
  for (const auto& [device, bytes] : held)
    if (bytes > top || best < 0) top = bytes, best = device;
  return std::max<std::int64_t>(best, 0);
}

// Whether the trace records allocations (a trace of only oom / snapshot entries does not).
bool has_history(const Trace& trace) {
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace[i].action != Action::Oom && trace[i].action != Action::Snapshot && trace[i].action != Action::Unknown) return true;
  return false;
}

std::vector<SiteRow> tally_live(const LiveSet& live, Sites& sites, std::uint64_t& total) {
  SiteTally tally;
  total = 0;
  for (const auto& [addr, b] : live) {
    tally.add(sites.site_of_stack(b.stack), b.stack, b.size);
    total += b.size;
  }
  return tally.rows(sites, kMaxSiteRows);
}

void fill_fragmentation(const Snapshot& s, std::int64_t device, Fragmentation& f) {
  for (const auto& seg : s.segments) {
    if (seg.device != device) continue;
    SegmentRow row;
    row.address = seg.address;
    row.total_bytes = seg.total_size;
    row.large = seg.large;
    row.expandable = seg.expandable;
    for (std::size_t b = seg.first_block; b < seg.first_block + seg.block_count && b < s.blocks.size(); ++b) {
      const Block& blk = s.blocks[b];
      const bool allocated = blk.state == BlockState::ActiveAllocated;
      (allocated ? row.allocated_bytes : row.free_bytes) += blk.size;
      if (blk.state == BlockState::Inactive) row.largest_free_bytes = std::max(row.largest_free_bytes, blk.size);
      if (row.layout.size() < 4096) row.layout.emplace_back(blk.size, allocated);
      ++row.blocks;
    }
    f.reserved_bytes += row.total_bytes;
    f.allocated_bytes += row.allocated_bytes;
    f.free_bytes += row.free_bytes;
    f.largest_free_bytes = std::max(f.largest_free_bytes, row.largest_free_bytes);
    ++f.segments;
    if (seg.expandable) ++f.expandable_segments;
    if (row.allocated_bytes > 0 && row.free_bytes > 0) f.stranded_bytes += row.free_bytes, ++f.partly_used_segments;
    f.rows.push_back(std::move(row));
  }
  std::sort(f.rows.begin(), f.rows.end(), [](const SegmentRow& a, const SegmentRow& b) {
    return a.total_bytes != b.total_bytes ? a.total_bytes > b.total_bytes : a.address < b.address;
  });
  if (f.rows.size() > kMaxSegmentRows) f.rows.resize(kMaxSegmentRows);
}

// Allocations made during the recording and alive at its end, by call site; the sites with at
// least kMinGrowingAllocations of them spread over at least half of the recording.
std::vector<SiteRow> growing_sites(const Trace& trace, Sites& sites) {
  if (trace.empty()) return {};
  struct Made {
    std::uint64_t size;
    std::uint32_t stack;
    double t;
  };
  std::unordered_map<std::uint64_t, Made> made;
  const std::int64_t t0 = trace[0].time_us;
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const TraceEntry& e = trace[i];
    if (e.action == Action::Alloc) made[e.addr] = {e.size, e.stack, double(e.time_us - t0) / 1e6};
    else if (e.action == Action::FreeRequested) made.erase(e.addr);
  }
  SiteTally tally;
  for (const auto& [addr, m] : made) tally.add(sites.site_of_stack(m.stack), m.stack, m.size, m.t);
  const double span = double(trace.back().time_us - t0) / 1e6;
  std::vector<SiteRow> out;
  for (auto& row : tally.rows(sites, 1u << 20))
    if (row.count >= kMinGrowingAllocations && row.last_seconds - row.first_seconds >= 0.5 * span && row.where != "(other call sites)")
      out.push_back(std::move(row));
  if (out.size() > kMaxSiteRows) out.resize(kMaxSiteRows);
  return out;
}

}  // namespace

namespace {

// No history: the classifier still judges what the OOM's numbers say (fragmentation), and says
// how to get a timeline.
void judge_without_history(const std::string& source, SnapshotReport& r) {
  timeline::Timeline tl;
  tl.name = source;
  if (r.oom) {
    timeline::OomMessage m;
    m.framework = "pytorch";
    m.text = r.oom->source == "hook" ? "vramdoc's --trace-python record at the OOM" : "the allocator's trace: oom entry";
    m.requested_bytes = r.oom->requested_bytes;
    m.free_bytes = r.oom->device_free_bytes;
    m.allocated_bytes = r.oom->allocated_bytes;
    if (r.oom->allocated_bytes && r.oom->reserved_bytes && *r.oom->reserved_bytes >= *r.oom->allocated_bytes)
      m.reserved_unallocated_bytes = *r.oom->reserved_bytes - *r.oom->allocated_bytes;
    tl.oom = m;
    tl.outcome = timeline::Outcome::Oom;
  }
  timeline::Diagnosis d = timeline::classify(tl);
  if (d.verdict == timeline::Verdict::Inconclusive) {
    d.to_settle = "a snapshot without the allocator's history: call torch.cuda.memory._record_memory_history() before the job for a timeline and a verdict";
    d.summary = timeline::summary_for(d);
  }
  r.timeline = std::move(tl);
  r.diagnosis = std::move(d);
}

// Free memory in pieces (issue 32): at least kPiecesMinFree and a quarter of what is reserved
// lies free in the segments, and the largest free block is an eighth of that or less. However short
// the recording, a request larger than that block needs new memory from the driver although the
// memory is there: fragmentation, said rather than "too short to judge".
constexpr std::uint64_t kPiecesMinFree = 1ULL << 30;

void judge_free_in_pieces(SnapshotReport& r) {
  const Fragmentation& f = r.fragmentation;
  if (!r.diagnosis || f.free_bytes < kPiecesMinFree || f.free_bytes * 4 < f.reserved_bytes || f.largest_free_bytes * 8 > f.free_bytes) return;
  timeline::Diagnosis& d = *r.diagnosis;
  using timeline::Verdict;
  if (d.verdict == Verdict::Leak || d.verdict == Verdict::Insufficient || d.verdict == Verdict::Fragmentation) return;
  d.verdict = Verdict::Fragmentation;
  d.rule = "free memory in pieces";
  d.to_settle.clear();
  d.reasons.push_back(format_bytes(f.free_bytes) + " of the " + format_bytes(f.reserved_bytes) + " reserved is free " + f.when +
                      ", but its largest free block is " + format_bytes(f.largest_free_bytes) + ": a request larger than that cannot use it");
  d.summary = timeline::summary_for(d);
  d.remedies = timeline::remedies_for(d);
}

}  // namespace

bool dumped_at_oom(const SnapshotReport& r) {
  return r.oom && r.fragmentation.when == "at the OOM" && r.oom->alive_bytes == r.alive_bytes;
}

bool own_verdict_shown(const SnapshotReport& r) { return r.history && r.diagnosis.has_value(); }

bool verdict_is_reports(const SnapshotReport& r) { return r.history && !r.diagnosis; }

SnapshotReport analyze_snapshot(const Snapshot& s, const std::string& source, const AnalysisOptions& o) {
  SnapshotReport r;
  r.source = source;
  r.format = s.hook_oom ? "vramdoc --trace-python snapshot at an OOM" : "PyTorch memory snapshot";
  r.device = pick_device(s);
  r.devices = s.traces.size();
  for (const auto& t : s.traces) r.entries += t.size();
  r.segments = s.segments.size();
  r.blocks = s.blocks.size();
  r.frames = s.frames.frames();
  r.stacks = s.frames.stacks();
  r.allocator_settings = s.allocator_settings;
  const auto& trace = r.device >= 0 && std::size_t(r.device) < s.traces.size() ? s.traces[std::size_t(r.device)] : kNoTrace;
  Sites sites(s.frames);
  r.alive = tally_live(detail::live_at_dump(s, r.device), sites, r.alive_bytes);
  fill_fragmentation(s, r.device, r.fragmentation);
  r.fragmentation.when = "at the dump";
  r.history = has_history(trace);
  if (r.history) {
    detail::fill_trace_sections(s, trace, source, o, sites, r);
    r.growing = growing_sites(trace, sites);
  } else {
    r.notes.push_back("no allocation history for this device (recorded with enabled=\"state\", or history off): no timeline, only what was alive at the dump");
  }
  detail::fill_oom(s, trace, sites, r);
  if (!r.history) judge_without_history(source, r);
  judge_free_in_pieces(r);
  std::size_t others = 0;
  for (std::size_t d = 0; d < s.traces.size(); ++d)
    if (std::int64_t(d) != r.device && !s.traces[d].empty()) ++others;
  if (others > 0) r.notes.push_back(std::to_string(others) + " other device(s) have trace entries: this report is about device " + std::to_string(r.device));
  return r;
}

}  // namespace vramdoc::snapshot
