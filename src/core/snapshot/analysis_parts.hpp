// The parts of analyze_snapshot (analysis.cpp) that read a device's trace: the timeline and its
// verdict, the chart, the OOM.
#pragma once
#include <string>

#include "core/snapshot/analysis.hpp"
#include "core/snapshot/replay.hpp"
#include "core/snapshot/sites.hpp"

namespace vramdoc::snapshot::detail {

// The first OOM entry of the trace, if any.
std::optional<std::size_t> first_oom(const Trace& trace);
// The timeline (allocated, and reserved as the driver's number) and the classifier's verdict.
void fill_trace_sections(const Snapshot& s, const Trace& trace, const std::string& source,
                         const AnalysisOptions& o, Sites& sites, SnapshotReport& r);
// The OOM: from the trace's first oom entry, else from vramdoc's hook record.
void fill_oom(const Snapshot& s, const Trace& trace, Sites& sites, SnapshotReport& r);
// Allocated bytes over time by the top `sites_shown` call sites, `buckets` columns.
Chart build_chart(const Trace& trace, const LiveSet& live_at_start, Sites& sites, const Totals& start,
                  std::size_t buckets, std::size_t sites_shown);

}  // namespace vramdoc::snapshot::detail
