#include "core/timeline/trace_evidence.hpp"

#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

// Below this nothing is claimed: a runtime's own few small buffers are not a leak to report.
constexpr std::uint64_t kMinEvidenceBytes = 1 << 20;

}  // namespace

TraceEvidence trace_evidence(const TracedSeries& traced) {
  TraceEvidence e;
  e.segments_only = traced.pytorch;
  e.alive_at_exit_bytes = traced.live_bytes_at_end;
  std::uint64_t largest = 0;
  for (const auto& site : traced.top_sites) {
    if (site.why == "growing") e.growing_bytes = saturating_add(e.growing_bytes, site.bytes), e.growing_count += site.count;
    else e.alive_at_exit_count += site.count;
    if (site.bytes > largest) largest = site.bytes, e.top_site = site.where;
  }
  return e;
}

bool trace_shows_leak(const TraceEvidence& e, bool ran_out) {
  if (e.segments_only) return false;
  const bool alive = !ran_out && e.alive_at_exit_count > 0 && e.alive_at_exit_bytes >= kMinEvidenceBytes;
  return alive || (e.growing_count > 0 && e.growing_bytes >= kMinEvidenceBytes);
}

bool trace_shows_growth(const TraceEvidence& e, bool ran_out) {
  return trace_shows_leak(e, ran_out) || (e.growing_count > 0 && e.growing_bytes >= kMinEvidenceBytes);
}

}  // namespace vramdoc::timeline
