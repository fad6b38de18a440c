#include "core/timeline/classify.hpp"

#include <algorithm>
#include <cmath>

#include "core/timeline/series.hpp"
#include "core/timeline/stats.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Leak: return "leak";
    case Verdict::Insufficient: return "insufficient";
    case Verdict::Fragmentation: return "fragmentation";
    case Verdict::Plateau: return "plateau";
    case Verdict::Stable: return "stable";
    case Verdict::Inconclusive: break;
  }
  return "inconclusive";
}

namespace {

constexpr double kMiB = 1048576.0;
constexpr double kSignificantZ = 3.09;  // Mann-Kendall, one-sided p < 0.001
constexpr double kMinQuietSeconds = 2.0;
constexpr double kMinQuietSteps = 3.0;
constexpr std::size_t kMinTrendPoints = 8;
// Fewer level changes than this before an OOM: the job never completed a steady step.
constexpr std::size_t kFewRises = 10;
// At most this many working-set-sized rises after warm-up are read as new largest input shapes:
// random lengths set a new record about ln(n) times (5 in 150 steps, 7 in 1000); a leak that keeps
// a step's activations rises every step.
constexpr std::size_t kFewShapeRecords = 8;

std::string mib(double bytes) { return format_bytes(static_cast<std::uint64_t>(std::max(0.0, bytes))); }

// Growth that counts: above both an absolute floor and 1% of the level it grows from.
double growth_floor(const Series& s) { return std::max(8 * kMiB, 0.01 * median(s.y)); }

struct Analysis {
  Series series;
  Levels levels;
  Trend trend;
  bool sustained = false;  // significant, large, monotone growth after warm-up
};

Analysis analyse(Series s, double tolerance) {
  Analysis a;
  a.series = std::move(s);
  if (a.series.y.empty()) return a;
  a.levels = find_levels(a.series, tolerance, a.series.x_is_steps ? kMinQuietSteps : kMinQuietSeconds);
  a.trend = trend_after(a.series, a.levels.warmup_end);
  a.sustained = a.trend.points >= kMinTrendPoints && a.trend.slope && *a.trend.slope > 0 &&
                a.trend.mk_z >= kSignificantZ && *a.trend.slope * a.trend.span >= growth_floor(a.series);
  return a;
}

// Seconds per step: from the step marks, else a period found in the allocated or driver signal.
void find_step_time(const Timeline& tl, const std::vector<double>& ends, Evidence& ev) {
  ev.step_source = "none";
  if (ends.size() >= 2) {
    ev.steps = ends.size();
    ev.step_seconds = (ends.back() - ends.front()) / static_cast<double>(ends.size() - 1);
    ev.step_source = "marks";
    return;
  }
  if (tl.samples.size() < 24) return;
  const double t0 = tl.samples.front().t_seconds, t1 = tl.samples.back().t_seconds;
  const double dt = (t1 - t0) / static_cast<double>(tl.samples.size() - 1);
  if (dt <= 0) return;
  const bool use_allocated = tl.samples.front().allocated_bytes.has_value();
  std::vector<double> y;
  for (const auto& s : tl.samples)
    y.push_back(static_cast<double>(use_allocated && s.allocated_bytes ? *s.allocated_bytes : s.process_used_bytes));
  if (auto period = find_period(y)) {
    ev.step_seconds = *period * dt;
    ev.step_source = "period found in the signal";
  }
}

void fill_basics(const Timeline& tl, Diagnosis& d) {
  auto& ev = d.evidence;
  ev.samples = tl.samples.size();
  ev.duration_seconds = tl.samples.back().t_seconds - tl.samples.front().t_seconds;
  // The job's first and last readings while it held GPU memory: before its CUDA context exists
  // and after it exits, the driver charges it nothing, and those zeros say nothing about it.
  auto holding = [](const Sample& s) { return s.process_used_bytes > 0; };
  auto first = std::find_if(tl.samples.begin(), tl.samples.end(), holding);
  auto last = std::find_if(tl.samples.rbegin(), tl.samples.rend(), holding);
  ev.first_bytes = first != tl.samples.end() ? first->process_used_bytes : 0;
  ev.last_bytes = last != tl.samples.rend() ? last->process_used_bytes : 0;
  for (const auto& s : tl.samples)
    if (s.process_used_bytes > ev.peak_bytes) ev.peak_bytes = s.process_used_bytes, ev.peak_seconds = s.t_seconds;
  for (const auto& m : tl.messages)
    if ((ev.oom = parse_oom_message(m))) break;
  if (!ev.oom) ev.oom = tl.oom;
  ev.capacity_bytes = tl.total_bytes;
  if (!ev.capacity_bytes && ev.oom && ev.oom->capacity_bytes) ev.capacity_bytes = ev.oom->capacity_bytes;
  if (ev.capacity_bytes && *ev.capacity_bytes > 0)
    ev.peak_fraction = static_cast<double>(ev.peak_bytes) / static_cast<double>(*ev.capacity_bytes);
  for (const auto& m : tl.marks)
    if (m.label == "oom") ev.oom_seconds = m.t_seconds;
  if (!ev.oom_seconds && (tl.outcome == Outcome::Oom || ev.oom)) ev.oom_seconds = tl.samples.back().t_seconds;
  if (ev.oom && ev.oom->requested_bytes && ev.oom->free_bytes && *ev.oom->requested_bytes > *ev.oom->free_bytes)
    ev.missing_bytes = *ev.oom->requested_bytes - *ev.oom->free_bytes;
}

// Records the trend of `a` in the evidence and the chart's line.
void record_trend(const Analysis& a, Diagnosis& d) {
  auto& ev = d.evidence;
  const auto& s = a.series;
  if (s.y.empty()) return;
  ev.trend_series = s.what;
  const std::size_t w = std::min(a.levels.warmup_end, s.y.size() - 1);
  ev.settled = a.levels.settled_at.has_value();
  ev.warmup_seconds = s.t[w] - s.t[0];
  if (s.x_is_steps) ev.warmup_steps = w;
  ev.mann_kendall_z = a.trend.mk_z;
  ev.trend_points = a.trend.points;
  if (a.trend.slope) {
    ev.growth_method = "Theil-Sen";
    const double slope = *a.trend.slope;
    if (s.x_is_steps) {
      ev.growth_bytes_per_step = slope;
      const double secs = s.t.back() - s.t[w], steps = s.x.back() - s.x[w];
      if (secs > 0 && steps > 0) ev.growth_bytes_per_second = slope * steps / secs;
    } else {
      ev.growth_bytes_per_second = slope;
      if (ev.step_seconds) ev.growth_bytes_per_step = slope * *ev.step_seconds;
    }
    const double mid_x = s.x[w + (s.y.size() - w) / 2];
    const double y_mid = median(std::vector<double>(s.y.begin() + static_cast<long>(w), s.y.end()));
    d.trend = TrendLine{s.t[w], s.t.back(), y_mid + slope * (s.x[w] - mid_x), y_mid + slope * (s.x.back() - mid_x)};
  }
}

void project_oom(Diagnosis& d) {
  auto& ev = d.evidence;
  if (ev.oom_seconds || !ev.capacity_bytes || !ev.growth_bytes_per_second || *ev.growth_bytes_per_second <= 0) return;
  const double left = static_cast<double>(*ev.capacity_bytes) - static_cast<double>(ev.peak_bytes);
  if (left <= 0) return;
  ev.projected_oom_seconds = ev.duration_seconds + left / *ev.growth_bytes_per_second;
  if (ev.growth_bytes_per_step && *ev.growth_bytes_per_step > 0 && ev.steps)
    ev.projected_oom_step = static_cast<double>(*ev.steps) + left / *ev.growth_bytes_per_step;
}

// The driver's rises after warm-up: how many, how much, and whether they are smaller than a step's
// working set (a leak running the allocator's cache out) or as large (new, larger input shapes).
bool late_rises_look_like_leak(const Analysis& a, Evidence& ev) {
  const auto& l = a.levels;
  const auto& y = a.series.y;
  ev.working_set_bytes = 0;  // the largest single rise during warm-up: what one step's activations cost
  for (std::size_t k = 0; k < l.rises.size() && l.rises[k] <= l.warmup_end; ++k)
    ev.working_set_bytes = std::max(ev.working_set_bytes, l.rise_bytes[k]);
  double small = 0, large = 0;
  for (std::size_t k = 0; k < l.rises.size(); ++k) {
    if (l.rises[k] <= l.warmup_end) continue;
    if (l.rise_bytes[k] * 3 >= ev.working_set_bytes) ++ev.large_late_rises;
    ++ev.late_rises;
    ev.late_rise_bytes += l.rise_bytes[k];
    (l.rise_bytes[k] * 3 < ev.working_set_bytes ? small : large) += l.rise_bytes[k];
  }
  // Net growth, so that noise going up and down is not counted as rises.
  const std::size_t tail = std::max<std::size_t>(1, (y.size() - std::min(l.warmup_end, y.size() - 1)) / 10);
  const double net = median(std::vector<double>(y.end() - static_cast<long>(tail), y.end())) - y[std::min(l.warmup_end, y.size() - 1)];
  if (net < growth_floor(a.series)) ev.late_rise_bytes = std::max(0.0, net);
  return ev.late_rise_bytes >= growth_floor(a.series) && small > large;
}

// A staircase has a Theil-Sen slope of zero (a single jump is what it ignores): the rate is then
// the late rises spread over the time after warm-up.
void use_staircase_rate(const Analysis& a, Diagnosis& d) {
  auto& ev = d.evidence;
  const auto& s = a.series;
  const std::size_t w = std::min(a.levels.warmup_end, s.y.size() - 1);
  const double secs = s.t.back() - s.t[w];
  if (secs <= 0) return;
  ev.growth_bytes_per_second = ev.late_rise_bytes / secs;
  ev.growth_method = "late rises over the time after warm-up";
  ev.growth_bytes_per_step = ev.step_seconds ? std::optional<double>(*ev.growth_bytes_per_second * *ev.step_seconds) : std::nullopt;
  d.trend = TrendLine{s.t[w], s.t.back(), s.y[w], s.y[w] + ev.late_rise_bytes};
}

// Growth that slows down: the rises in the second half of the time after warm-up add up to less
// than a quarter of those in the first half. New largest input shapes arrive ever more rarely (a
// record of n random lengths is broken about ln n times); a leak keeps its pace.
bool decelerating(const Analysis& a) {
  const auto& l = a.levels;
  const auto& x = a.series.x;
  if (x.empty()) return false;
  const std::size_t w = std::min(l.warmup_end, x.size() - 1);
  const double mid = (x[w] + x.back()) / 2;
  double first = 0, second = 0;
  for (std::size_t k = 0; k < l.rises.size(); ++k)
    if (l.rises[k] > w) (x[l.rises[k]] <= mid ? first : second) += l.rise_bytes[k];
  return first >= growth_floor(a.series) && second < 0.25 * first;
}

// The OOM message shows fragmentation: the failed request would have fit in the memory reserved
// but unallocated, and that is a real share of the card (2% of its capacity, 1 GiB when unknown):
// a few MiB of holes at the end of a leak that filled the card are not the cause.
bool fragmented(const std::optional<OomMessage>& m, std::optional<std::uint64_t> capacity) {
  if (!m || !m->requested_bytes || !m->reserved_unallocated_bytes) return false;
  const double holes = double(*m->reserved_unallocated_bytes);
  const double share = capacity ? 0.02 * double(*capacity) : 1024 * kMiB;
  return *m->reserved_unallocated_bytes >= *m->requested_bytes && holes >= share;
}

// In a container NVML may list host PIDs that the recorder's /proc does not show: the job's own
// number then stays 0 while the device's moves.
bool job_never_listed(const Timeline& tl) {
  if (tl.samples.empty()) return false;
  bool moved = false;
  for (const auto& s : tl.samples) {
    if (s.process_used_bytes != 0 || !s.device_used_bytes) return false;
    moved |= *s.device_used_bytes != *tl.samples.front().device_used_bytes;
  }
  return moved;
}

}  // namespace

Diagnosis classify(const Timeline& recorded) {
  Timeline on_device;
  const bool use_device = job_never_listed(recorded);
  if (use_device) {  // judge the device's number instead, and say so
    on_device = recorded;
    for (auto& s : on_device.samples) s.process_used_bytes = *s.device_used_bytes;
  }
  const Timeline& tl = use_device ? on_device : recorded;
  Diagnosis d;
  if (use_device) d.reasons.push_back("the driver never charged memory to the job's processes (a PID namespace?): judged on the device's used memory");
  if (tl.samples.size() < 3) {  // no timeline to judge; an OOM message alone can still show fragmentation
    for (const auto& m : tl.messages)
      if ((d.evidence.oom = parse_oom_message(m))) break;
    if (!d.evidence.oom) d.evidence.oom = tl.oom;
    const auto& m = d.evidence.oom;
    d.evidence.samples = tl.samples.size();
    if (fragmented(m, m && m->capacity_bytes ? m->capacity_bytes : tl.total_bytes)) {
      d.verdict = Verdict::Fragmentation;
      d.reasons.push_back("the failed request is smaller than the memory reserved but unallocated (from the message alone)");
    } else {
      d.to_settle = "too few samples (" + std::to_string(tl.samples.size()) + ") to tell a leak from a job too big: record with GPU memory sampling, over a few steps";
    }
    d.summary = summary_for(d);
    d.remedies = remedies_for(d);
    return d;
  }
  fill_basics(tl, d);
  auto& ev = d.evidence;
  d.step_ends = step_end_times(tl);
  find_step_time(tl, d.step_ends, ev);
  const bool oom = ev.oom_seconds.has_value();

  const Analysis driver = analyse(driver_floors(tl, d.step_ends), std::max(8 * kMiB, 0.005 * static_cast<double>(ev.peak_bytes)));
  Series retained_series = retained_per_step(tl, d.step_ends);
  const bool have_retained = retained_series.y.size() >= 3;
  const double retained_tolerance = std::max(kMiB, 0.002 * median(retained_series.y));
  const Analysis retained = have_retained ? analyse(std::move(retained_series), retained_tolerance) : Analysis{};
  record_trend(have_retained ? retained : driver, d);
  ev.cache_flushes = driver.levels.flushes;
  const bool staircase_leak = late_rises_look_like_leak(driver, ev);
  const std::size_t rises = driver.levels.rises.size();
  auto why = [&](std::string s) { d.reasons.push_back(std::move(s)); };

  if (oom && fragmented(ev.oom, ev.capacity_bytes)) {
    d.verdict = Verdict::Fragmentation;
    why("the failed request (" + mib(double(*ev.oom->requested_bytes)) + ") is smaller than the memory reserved but unallocated (" +
        mib(double(*ev.oom->reserved_unallocated_bytes)) + "): the memory was there, split into pieces too small");
  } else if (have_retained && retained.sustained) {
    d.verdict = Verdict::Leak;
    why("the bytes still allocated at the end of each step grow after warm-up (Mann-Kendall z = " + std::to_string(retained.trend.mk_z).substr(0, 5) + ")");
  } else if (have_retained) {
    d.verdict = oom ? Verdict::Insufficient : driver.trend.points && ev.late_rise_bytes >= growth_floor(driver.series) ? Verdict::Plateau : Verdict::Stable;
    why("the bytes still allocated at the end of each step do not grow: nothing is kept from step to step");
    if (oom) why("yet it ran out of memory: a step itself needs more than the card has");
    else if (d.verdict == Verdict::Plateau) why("the driver's number grew after warm-up: the allocator's cache, for larger shapes; it is reused, not leaked");
  } else if (oom && driver.levels.flushes > 0) {
    d.verdict = Verdict::Insufficient;
    why("the driver's number fell " + std::to_string(driver.levels.flushes) + " time(s) and grew again before the OOM: the allocator gave its cache back, so the memory was reclaimable, not leaked; each step needed more");
  } else if (oom && rises < kFewRises && !driver.levels.settled_at) {
    d.verdict = Verdict::Insufficient;
    why("it ran out of memory before the memory ever levelled off (" + std::to_string(rises) + " rises): the first steps already need more than the card has");
  } else if (!oom && driver.trend.points < kMinTrendPoints) {
    d.verdict = Verdict::Inconclusive;
    d.to_settle = "record longer: too little of the run after warm-up to see a trend";
  } else if (!oom && driver.levels.flushes > 0) {
    d.verdict = Verdict::Inconclusive;
    d.to_settle = "the driver's number grows but the allocator gave memory back " + std::to_string(driver.levels.flushes) +
                  " time(s), so it is not all kept: mark steps (--step-regex or $VRAMDOC_MARK_FILE) or record the framework's allocated bytes";
  } else if (!oom && decelerating(driver)) {
    d.verdict = Verdict::Plateau;
    why("the driver's number grew after warm-up but ever more slowly (the second half of the run added less than a quarter of the first): "
        "the allocator's cache filling up for new, larger shapes, not a leak");
  } else if (!oom && ev.late_rises > 0 && ev.large_late_rises * 2 > ev.late_rises && ev.large_late_rises <= kFewShapeRecords) {
    d.verdict = Verdict::Plateau;
    why("the driver's number rose " + std::to_string(ev.large_late_rises) + " time(s) after warm-up by steps as large as a step's working set, too few for a leak "
        "that keeps something every step: new, larger input shapes filling the allocator's cache");
  } else if (driver.sustained || (staircase_leak && driver.levels.settled_at)) {
    d.verdict = Verdict::Leak;
    if (driver.sustained) why("the driver's number keeps growing after warm-up (Mann-Kendall z = " + std::to_string(driver.trend.mk_z).substr(0, 5) + ")");
    else {
      use_staircase_rate(driver, d);
      why("after levelling off, the driver's number rose again " + std::to_string(ev.late_rises) + " time(s), by " + mib(ev.late_rise_bytes) +
             ", in pieces smaller than a step's working set: the allocator's cache ran out under something kept from step to step");
    }
  } else if (oom) {
    d.verdict = Verdict::Insufficient;
    why("it ran out of memory without growing from step to step");
  } else if (!driver.levels.settled_at) {
    d.verdict = Verdict::Inconclusive;
    d.to_settle = "the memory never levelled off and did not grow steadily either: record longer, or mark steps";
  } else if (ev.late_rise_bytes >= growth_floor(driver.series)) {
    d.verdict = Verdict::Plateau;
    why("after levelling off, the driver's number rose " + std::to_string(ev.late_rises) + " time(s) by steps as large as the working set: new, larger input shapes filling the allocator's cache");
  } else if (driver.trend.points < kMinTrendPoints || (!driver.series.x_is_steps && driver.trend.span < 1.0)) {
    d.verdict = Verdict::Inconclusive;
    d.to_settle = "record longer: the recording ends before a steady state could be seen";
  } else {
    d.verdict = Verdict::Stable;
    why("after warm-up the driver's number stays level (" + mib(double(ev.last_bytes)) + ")");
    if (!have_retained) why("from outside only growth beyond the allocator's cache shows: a leak smaller than that stays hidden until it exhausts the cache");
  }
  if (d.verdict == Verdict::Leak) project_oom(d);
  d.summary = summary_for(d);
  d.remedies = remedies_for(d);
  return d;
}

}  // namespace vramdoc::timeline
