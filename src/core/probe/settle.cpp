#include "core/probe/settle.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

#include "core/timeline/job.hpp"
#include "core/timeline/series.hpp"

namespace vramdoc::probe {

namespace {

struct StepReadings {
  std::vector<std::uint64_t> driver;    // the last sample at or before each step's end
  std::vector<std::uint64_t> reserved;  // the step hook's reserved bytes at each step's end
  std::vector<std::uint64_t> outside;   // the driver's number less those reserved bytes, where the driver's is the larger
  int steps = 0;
};

StepReadings step_readings(const timeline::Timeline& whole) {
  // The step hook's marks (tagged with a pid) when there are any, else the job's step lines: a
  // recording without per-process series holds both, and each step would count twice.
  timeline::Timeline tl = whole;
  const bool hooked = std::any_of(tl.marks.begin(), tl.marks.end(), [](const timeline::Mark& m) { return m.pid.has_value(); });
  if (hooked) std::erase_if(tl.marks, [](const timeline::Mark& m) { return !m.pid.has_value(); });
  StepReadings r;
  const auto ends = timeline::step_end_times(tl);
  r.steps = static_cast<int>(ends.size());
  std::size_t i = 0;
  bool have = false;
  std::uint64_t last = 0;
  for (double end : ends) {
    for (; i < tl.samples.size() && tl.samples[i].t_seconds <= end; ++i) last = tl.samples[i].process_used_bytes, have = true;
    if (have) r.driver.push_back(last);
  }
  std::size_t j = 0;
  std::optional<std::uint64_t> driver;
  for (const auto& m : tl.marks) {
    if (!m.reserved_bytes || !timeline::step_number(m.label)) continue;
    r.reserved.push_back(*m.reserved_bytes);
    for (; j < tl.samples.size() && tl.samples[j].t_seconds <= m.t_seconds; ++j) driver = tl.samples[j].process_used_bytes;
    if (driver && *driver >= *m.reserved_bytes) r.outside.push_back(*driver - *m.reserved_bytes);
  }
  return r;
}

std::optional<std::uint64_t> median(std::vector<std::uint64_t> v) {
  if (v.empty()) return std::nullopt;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// How many readings at the end of `series` lie within the tolerance of each other (0: none).
std::size_t flat_tail(const std::vector<std::uint64_t>& series, const SettleRule& rule) {
  if (series.empty()) return 0;
  std::uint64_t lo = series.back(), hi = series.back();
  std::size_t n = 1;
  for (auto it = series.rbegin() + 1; it != series.rend(); ++it) {
    const std::uint64_t nlo = std::min(lo, *it), nhi = std::max(hi, *it);
    const auto tolerance = std::max<std::uint64_t>(rule.tolerance_floor_bytes,
                                                   static_cast<std::uint64_t>(rule.tolerance_share * static_cast<double>(nhi)));
    if (nhi - nlo > tolerance) break;
    lo = nlo, hi = nhi, ++n;
  }
  return n;
}

// One process: the first step (1-based) of the flat tail of both series, and whether K steps followed it.
struct FlatTail {
  int from = 0;          // 1-based
  bool settled = false;  // K steps (K + 1 readings) in it
};

std::optional<FlatTail> flat_tail_of(const StepReadings& r, const SettleRule& rule) {
  if (r.driver.empty() && r.reserved.empty()) return std::nullopt;
  // A series' flat tail of n readings began after step (size - n): the step of its last change.
  int after = 0;
  for (const auto* s : {&r.driver, &r.reserved}) {
    if (s->empty()) continue;
    after = std::max(after, static_cast<int>(s->size() - flat_tail(*s, rule)));
  }
  const int shortest = static_cast<int>(std::min(r.driver.empty() ? r.reserved.size() : r.driver.size(),
                                                 r.reserved.empty() ? r.driver.size() : r.reserved.size()));
  return FlatTail{after + 1, shortest - after >= rule.flat_steps + 1};  // K steps of no change: K + 1 readings
}

}  // namespace

Settling settling(const timeline::Timeline& trial, const SettleRule& rule) {
  Settling s;
  // A driver that lists no memory for the job (every reading 0) has not measured it either.
  s.measured = std::any_of(trial.samples.begin(), trial.samples.end(), [](const timeline::Sample& x) { return x.process_used_bytes > 0; });
  bool all_settled = true, any = false;
  int latest = 0;
  std::optional<int> flat_from;
  for (const auto& p : timeline::split_by_process(trial)) {
    const auto r = step_readings(p.timeline);
    for (const auto& m : p.timeline.marks)
      if (m.allocated_peak_bytes) s.allocated_peak_bytes = std::max(s.allocated_peak_bytes.value_or(0), *m.allocated_peak_bytes);
    if (r.steps == 0) continue;  // a process that marks no steps (a DataLoader worker, a helper)
    any = true;
    s.steps = std::max(s.steps, r.steps);
    s.has_reserved = s.has_reserved || !r.reserved.empty();
    if (auto outside = median(r.outside)) s.outside_allocator_bytes = std::max(s.outside_allocator_bytes.value_or(0), *outside);
    const auto tail = flat_tail_of(r, rule);
    if (tail) flat_from = std::max(flat_from.value_or(0), tail->from);
    if (tail && tail->settled) latest = std::max(latest, tail->from);
    else all_settled = false;
  }
  if (!s.measured) {
    s.why = "no memory readings (the driver gave none): whether memory settled cannot be measured";
  } else if (!any) {
    s.why = "no steps marked (no step lines, no optimizer steps seen): whether memory settled cannot be told";
  } else if (all_settled) {
    s.flat_from = flat_from;
    s.settled_at = latest;
    s.why = "settled at step " + std::to_string(latest) + ": flat for the " + std::to_string(s.steps - latest) +
            " steps since (" + (s.has_reserved ? "reserved bytes and the driver's number" : "the driver's number") + ")";
  } else {
    s.flat_from = flat_from;
    s.why = "not settled after " + std::to_string(s.steps) + " steps";
  }
  return s;
}

}  // namespace vramdoc::probe
