// The sections of a snapshot's report that come from its trace: the timeline the classifier
// judges, the chart, and the OOM.
#include <algorithm>

#include "core/snapshot/analysis_parts.hpp"
#include "core/text.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/stats.hpp"

namespace vramdoc::snapshot::detail {

namespace {

std::uint64_t clamp(std::int64_t v) { return v < 0 ? 0 : static_cast<std::uint64_t>(v); }

double seconds(const Trace& trace, std::size_t i) {
  return double(trace[i].time_us - trace[0].time_us) / 1e6;
}

void add_sample(timeline::Timeline& tl, double t, std::int64_t allocated, std::int64_t reserved) {
  timeline::Sample s;
  s.t_seconds = std::max(t, tl.samples.empty() ? 0.0 : tl.samples.back().t_seconds);
  s.process_used_bytes = clamp(reserved);
  s.allocated_bytes = clamp(allocated);
  s.reserved_bytes = clamp(reserved);
  tl.samples.push_back(s);
}

// One sample per entry when they are few; otherwise per time bucket the lowest and the highest
// reading, each at its own time (the classifier reads floors, and the peak).
timeline::Timeline timeline_of(const Trace& trace, Totals cur, std::size_t buckets) {
  timeline::Timeline tl;
  add_sample(tl, 0, cur.allocated, cur.reserved);
  const double span = seconds(trace, trace.size() - 1);
  const bool every = trace.size() <= 2 * buckets || span <= 0;
  struct Extreme {
    double t = 0;
    Totals v;
  } low, high;
  std::size_t bucket = 0;
  bool open = false;
  auto close = [&] {
    if (!open) return;
    const bool low_first = low.t <= high.t;
    const Extreme& a = low_first ? low : high;
    const Extreme& b = low_first ? high : low;
    add_sample(tl, a.t, a.v.allocated, a.v.reserved);
    add_sample(tl, b.t, b.v.allocated, b.v.reserved);
    open = false;
  };
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const Delta d = delta_of(trace[i]);
    cur.allocated = wrap_add(cur.allocated, d.allocated);
    cur.reserved = wrap_add(cur.reserved, d.reserved);
    const double t = seconds(trace, i);
    if (every) {
      add_sample(tl, t, cur.allocated, cur.reserved);
      continue;
    }
    const auto b = std::min(buckets - 1, static_cast<std::size_t>(t / span * double(buckets)));
    if (b != bucket) close(), bucket = b;
    if (!open) low = high = {t, cur}, open = true;
    if (cur.reserved < low.v.reserved || (cur.reserved == low.v.reserved && cur.allocated < low.v.allocated)) low = {t, cur};
    if (cur.reserved > high.v.reserved || (cur.reserved == high.v.reserved && cur.allocated > high.v.allocated)) high = {t, cur};
  }
  close();
  return tl;
}

// Totals just before entry `index`.
Totals totals_before(const Trace& trace, Totals t, std::size_t index) {
  for (std::size_t i = 0; i < index && i < trace.size(); ++i) {
    const Delta d = delta_of(trace[i]);
    t.allocated = wrap_add(t.allocated, d.allocated);
    t.reserved = wrap_add(t.reserved, d.reserved);
  }
  return t;
}

// Whether nothing after entry `index` changed the allocator's state (the dump is from that moment).
bool nothing_after(const Trace& trace, std::size_t index) {
  for (std::size_t i = index + 1; i < trace.size(); ++i) {
    const Delta d = delta_of(trace[i]);
    if (d.allocated != 0 || d.reserved != 0) return false;
  }
  return true;
}

// A snapshot has no step marks. A training loop repeats its allocations every step, so the
// allocated bytes are periodic: the classifier's own period finder, run on them resampled evenly,
// gives the step; a "step N" mark at each period lets the classifier read the bytes kept from
// step to step (its most trusted series), as it does for `run` with marks. Empty: no period.
std::optional<double> mark_steps(timeline::Timeline& tl) {
  constexpr std::size_t kGrid = 4000;
  const double span = tl.samples.back().t_seconds;
  if (tl.samples.size() < 24 || span <= 0) return std::nullopt;
  std::vector<double> y(kGrid);
  std::size_t j = 0;
  for (std::size_t g = 0; g < kGrid; ++g) {
    const double t = span * double(g) / double(kGrid - 1);
    while (j + 1 < tl.samples.size() && tl.samples[j + 1].t_seconds <= t) ++j;
    y[g] = double(tl.samples[j].allocated_bytes.value_or(0));
  }
  const auto period = timeline::find_period(y);
  if (!period) return std::nullopt;
  const double step = *period * span / double(kGrid - 1);
  if (step <= 0 || span / step < 8) return std::nullopt;  // the classifier wants a few steps after warm-up
  for (std::size_t k = 1; double(k) * step <= span; ++k) {
    timeline::Mark m;
    m.t_seconds = double(k) * step;
    m.label = "step " + std::to_string(k);
    tl.marks.push_back(std::move(m));
  }
  return step;
}

}  // namespace

std::optional<std::size_t> first_oom(const Trace& trace) {
  for (std::size_t i = 0; i < trace.size(); ++i)
    if (trace[i].action == Action::Oom) return i;
  return std::nullopt;
}

void fill_trace_sections(const Snapshot& s, const Trace& trace, const std::string& source,
                         const AnalysisOptions& o, Sites& sites, SnapshotReport& r) {
  const Totals start = totals_before_trace(trace, totals_at_dump(s, r.device));
  if (start.allocated < 0 || start.reserved < 0)
    r.notes.push_back("the trace adds up to more than the dump holds (was history turned off before the dump?): the series start below zero and are shown from zero");
  timeline::Timeline tl = timeline_of(trace, start, o.timeline_buckets);
  tl.name = source;
  if (const auto oom = first_oom(trace)) {
    const Totals at = totals_before(trace, start, *oom);
    timeline::OomMessage m;
    m.framework = "pytorch";
    m.text = "the allocator's trace: oom entry";
    m.requested_bytes = trace[*oom].size;
    m.free_bytes = trace[*oom].addr;
    m.allocated_bytes = clamp(at.allocated);
    m.reserved_unallocated_bytes = clamp(at.reserved - at.allocated);
    tl.oom = m;
    tl.outcome = timeline::Outcome::Oom;
    tl.marks.push_back({seconds(trace, *oom), "oom", m.allocated_bytes, clamp(at.reserved), std::nullopt});
  }
  if (const auto step = mark_steps(tl))
    r.notes.push_back("steps: every " + fixed(*step, 3) + " s, the period of the allocated bytes (a snapshot has no step marks; vramdoc's period finder marked them)");
  std::stable_sort(tl.marks.begin(), tl.marks.end(), [](const auto& a, const auto& b) { return a.t_seconds < b.t_seconds; });
  r.diagnosis = timeline::classify(tl);
  r.timeline = std::move(tl);
  LiveSet live = live_at_dump(s, r.device);
  step_back(trace, 0, live);
  if (!live.empty())
    r.notes.push_back(std::to_string(live.size()) + " block(s) were allocated before the trace's first entry (history started later, or max_entries dropped the oldest entries): their stacks come from the dump or their free entries");
  r.chart = build_chart(trace, live, sites, start, o.chart_buckets, o.chart_sites);
}

void fill_oom(const Snapshot& s, const Trace& trace, Sites& sites, SnapshotReport& r) {
  OomReport o;
  if (const auto idx = first_oom(trace)) {
    o.source = "trace";
    if (r.history) o.t_seconds = seconds(trace, *idx);
    o.requested_bytes = trace[*idx].size;
    o.device_free_bytes = trace[*idx].addr;
    for (std::size_t i = *idx; i < trace.size(); ++i) o.ooms += trace[i].action == Action::Oom;
    const Totals at = totals_before(trace, totals_before_trace(trace, totals_at_dump(s, r.device)), *idx);
    o.reserved_bytes = clamp(at.reserved);
    LiveSet live = live_at_dump(s, r.device);
    step_back(trace, *idx, live);
    SiteTally tally;
    for (const auto& [addr, b] : live) tally.add(sites.site_of_stack(b.stack), b.stack, b.size), o.alive_bytes += b.size;
    o.alive = tally.rows(sites, kMaxSiteRows);
    o.allocated_bytes = o.alive_bytes;
    if (nothing_after(trace, *idx)) {
      o.largest_free_bytes = r.fragmentation.largest_free_bytes;
      r.fragmentation.when = "at the OOM";
    }
  } else if (s.hook_oom) {
    o.source = "hook";
    o.requested_bytes = s.hook_oom->requested_bytes;
    o.device_free_bytes = s.hook_oom->device_free_bytes;
    o.allocated_bytes = r.alive_bytes;
    o.reserved_bytes = r.fragmentation.reserved_bytes;
    o.alive_bytes = r.alive_bytes;
    o.alive = r.alive;
    o.largest_free_bytes = r.fragmentation.largest_free_bytes;
    o.ooms = 1;
    r.fragmentation.when = "at the OOM";
  } else {
    return;
  }
  r.oom = std::move(o);
}

}  // namespace vramdoc::snapshot::detail
