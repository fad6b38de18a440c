// What a PyTorch memory snapshot says (docs/snapshots.md): the allocated and reserved bytes over
// the recorded trace as a timeline for the same classifier `run` uses, who holds the memory (by
// Python call site), what grew across the recording, fragmentation, and the OOM.
// Pure: the report holds text, not ids, and renders without the snapshot.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/snapshot/model.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/timeline.hpp"
#include "core/trace/python_stacks.hpp"

namespace vramdoc::snapshot {

// Bytes held (or allocated) at one call site: the first frame of the stack that is the user's
// code (not torch, site-packages, the standard library, C++), with the stack of its largest part.
struct SiteRow {
  std::string where;   // "train.py:12 step", or "(no stack recorded)"
  std::uint64_t bytes = 0, count = 0;
  std::vector<trace::PythonFrame> stack;  // innermost first, library frames marked
  double first_seconds = 0, last_seconds = 0;  // growing sites: their first and last allocation kept
};

struct SegmentRow {
  std::uint64_t address = 0, total_bytes = 0, allocated_bytes = 0, free_bytes = 0, largest_free_bytes = 0;
  bool large = true, expandable = false;
  std::size_t blocks = 0;
  // The segment's blocks in address order: (bytes, allocated), for the map.
  std::vector<std::pair<std::uint64_t, bool>> layout;
};

struct Fragmentation {
  std::string when;  // "at the dump", "at the OOM"
  std::uint64_t reserved_bytes = 0, allocated_bytes = 0, free_bytes = 0;
  std::uint64_t stranded_bytes = 0;     // free bytes in segments that also hold allocated blocks
  std::uint64_t largest_free_bytes = 0;
  std::size_t segments = 0, partly_used_segments = 0, expandable_segments = 0;
  std::vector<SegmentRow> rows;         // largest first, at most kMaxSegmentRows
};

struct OomReport {
  std::optional<double> t_seconds;  // on the timeline, when there is one
  std::uint64_t requested_bytes = 0;
  std::optional<std::uint64_t> device_free_bytes;
  std::optional<std::uint64_t> allocated_bytes, reserved_bytes;  // the allocator at that moment
  std::optional<std::uint64_t> largest_free_bytes;  // when the segments are from that moment
  std::uint64_t alive_bytes = 0;
  std::vector<SiteRow> alive;  // what held the memory then, by call site
  std::size_t ooms = 0;        // OOM entries in the trace
  std::string source;          // "trace" (an oom entry), "hook" (vramdoc's record at the OOM)
};

// The chart: allocated bytes over time stacked by the top call sites, at screen resolution.
struct Chart {
  std::vector<double> t;                       // bucket ends, seconds
  std::vector<std::string> sites;              // the top call sites, then "other"
  std::vector<std::vector<std::uint64_t>> bytes;  // [site][bucket]: at the bucket's highest total
  std::vector<std::uint64_t> reserved;         // the highest reserved bytes in each bucket
};

struct SnapshotReport {
  std::string source;  // the file
  std::string format;  // "pytorch memory snapshot" or "vramdoc --trace-python OOM snapshot"
  std::int64_t device = 0;
  std::size_t devices = 0, entries = 0, segments = 0, blocks = 0, frames = 0, stacks = 0;
  bool history = false;                         // the trace records allocations: a timeline was built from it
  std::optional<timeline::Timeline> timeline;   // the allocator's timeline (empty of samples without history)
  std::optional<timeline::Diagnosis> diagnosis; // the classifier's verdict on it
  std::uint64_t alive_bytes = 0;                // allocated blocks at the dump
  std::vector<SiteRow> alive;                   // by call site, largest first
  std::vector<SiteRow> growing;                 // allocations kept from across the recording
  Fragmentation fragmentation;
  std::optional<OomReport> oom;
  Chart chart;
  std::vector<std::string> notes;               // what to keep in mind reading it
  std::vector<std::pair<std::string, std::string>> allocator_settings;
};

inline constexpr std::size_t kMaxSiteRows = 20;
inline constexpr std::size_t kMaxSegmentRows = 200;
inline constexpr std::size_t kStackFrames = 12;
// A call site grows when at least this many of its allocations made during the recording are
// still alive at its end, made over at least half of it (the allocation tracer's rule, trace.md).
inline constexpr std::uint64_t kMinGrowingAllocations = 10;

struct AnalysisOptions {
  std::size_t chart_buckets = 600;
  std::size_t chart_sites = 8;
  std::size_t timeline_buckets = 4000;
};

// Whether the dump was taken at the OOM, so that what was alive at the dump is what the OOM
// section shows (renderers then show it once).
bool dumped_at_oom(const SnapshotReport& r);
// Whether the section shows the snapshot's own verdict: it has history and its diagnosis was not
// taken as the report's (a timeline given with it is judged for the report).
bool own_verdict_shown(const SnapshotReport& r);
// Whether the report's verdict is the snapshot's (a snapshot with history, analysed alone).
bool verdict_is_reports(const SnapshotReport& r);

// Analyses the device with the most trace entries (the OOM's device when there is one).
SnapshotReport analyze_snapshot(const Snapshot& s, const std::string& source, const AnalysisOptions& options = {});

// Whether a frame's file is the user's code: a .py file outside torch, site-packages,
// dist-packages and the standard library (C++ frames and "<frozen ...>" are not).
bool is_user_file(std::string_view file);

}  // namespace vramdoc::snapshot
