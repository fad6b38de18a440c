#include "core/timeline/features.hpp"

#include <algorithm>
#include <cmath>

#include "core/timeline/stats.hpp"

namespace vramdoc::timeline {

namespace {

constexpr double kMiB = 1048576.0;
constexpr double kSignificantZ = 3.09;  // Mann-Kendall, one-sided p < 0.001
constexpr double kMinQuietSeconds = 2.0;
constexpr double kMinQuietSteps = 3.0;
constexpr std::size_t kMinTrendPoints = 8;

// Growth that counts: above both an absolute floor and 1% of the level it grows from.
double growth_floor(const Series& s) { return std::max(8 * kMiB, 0.01 * median(s.y)); }

Analysis analyse(Series s, double tolerance) {
  Analysis a;
  a.series = bounded(std::move(s));  // a days-long job's steps, grouped: the statistics stay bounded
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
  // A thinned recording (thinning.hpp) keeps each bin's lowest and highest reading: no longer a
  // signal sampled evenly, and a step shorter than a bin is not in it.
  if (tl.samples.size() < 24 || tl.thinned) return;
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
  ev.samples = tl.thinned ? tl.thinned->samples_read : tl.samples.size();
  ev.duration_seconds = tl.samples.back().t_seconds - tl.samples.front().t_seconds;
  // The job's first and last readings while it held GPU memory: before its CUDA context exists
  // and after it exits, the driver charges it nothing, and those zeros say nothing about it.
  auto holding = [](const Sample& s) { return s.process_used_bytes > 0; };
  auto first = std::find_if(tl.samples.begin(), tl.samples.end(), holding);
  auto last = std::find_if(tl.samples.rbegin(), tl.samples.rend(), holding);
  ev.first_bytes = first != tl.samples.end() ? first->process_used_bytes : 0;
  ev.last_bytes = last != tl.samples.rend() ? last->process_used_bytes : 0;
  ev.holding_seconds = first != tl.samples.end() ? last->t_seconds - first->t_seconds : 0;
  for (const auto& s : tl.samples)
    if (s.process_used_bytes > ev.peak_bytes) ev.peak_bytes = s.process_used_bytes, ev.peak_seconds = s.t_seconds;
  for (const auto& m : tl.messages)
    if ((ev.oom = parse_oom_message(m))) break;
  if (!ev.oom) ev.oom = tl.oom;
  ev.capacity_bytes = tl.total_bytes;
  if (!ev.capacity_bytes && ev.oom && ev.oom->capacity_bytes) ev.capacity_bytes = ev.oom->capacity_bytes;
  // Under torch.cuda.set_per_process_memory_fraction the process's capacity is the limit: the
  // message's "12.00 GiB allowed", else the step hook's mark of the call.
  std::optional<std::uint64_t> allowed = ev.oom ? ev.oom->allowed_bytes : std::nullopt;
  if (!allowed) allowed = fraction_limit_bytes(tl);
  if (allowed && (!ev.capacity_bytes || *allowed < *ev.capacity_bytes)) ev.capacity_bytes = allowed;
  if (ev.capacity_bytes && *ev.capacity_bytes > 0)
    ev.peak_fraction = static_cast<double>(ev.peak_bytes) / static_cast<double>(*ev.capacity_bytes);
  for (const auto& m : tl.marks)
    if (m.label == "oom") ev.oom_seconds = m.t_seconds;
  if (!ev.oom_seconds && (tl.outcome == Outcome::Oom || ev.oom)) ev.oom_seconds = tl.samples.back().t_seconds;
  if (ev.oom && ev.oom->requested_bytes && ev.oom->free_bytes && *ev.oom->requested_bytes > *ev.oom->free_bytes)
    ev.missing_bytes = *ev.oom->requested_bytes - *ev.oom->free_bytes;
  if (const auto& m = ev.oom; m && m->allowed_bytes && m->requested_bytes && m->allocated_bytes) {
    // Under the limit what was left is the limit less what PyTorch reserved, not the card's free memory.
    const std::uint64_t reserved = *m->allocated_bytes + m->reserved_unallocated_bytes.value_or(0);
    const std::uint64_t left = *m->allowed_bytes > reserved ? *m->allowed_bytes - reserved : 0;
    if (*m->requested_bytes > left) ev.missing_bytes = *m->requested_bytes - left;
  }
  ev.allocator = allocator_in_effect(tl);
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
  // grouped (a long job's steps): the steps up to the warm-up's end are counted on x
  if (s.x_is_steps) ev.warmup_steps = s.grouped > 1 ? static_cast<std::size_t>(std::max(0.0, s.x[w] - s.x[0])) : w;
  std::vector<chart::Point> basis;
  for (std::size_t i = 0; i < s.y.size(); ++i) basis.push_back({s.t[i], s.y[i]});
  d.picture.basis = chart::reduce(basis, kPictureBins);
  d.picture.warmup_end_seconds = s.t[w];
  ev.mann_kendall_z = a.trend.mk_z;
  ev.trend_points = a.trend.points;
  if (!a.trend.slope) return;
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
  const std::size_t w = std::min(l.warmup_end, y.size() - 1);
  const std::size_t tail = std::max<std::size_t>(1, (y.size() - w) / 10);
  const double net = median(std::vector<double>(y.end() - static_cast<long>(tail), y.end())) - y[w];
  if (net < growth_floor(a.series)) ev.late_rise_bytes = std::max(0.0, net);
  return ev.late_rise_bytes >= growth_floor(a.series) && small > large;
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

// The new highs after warm-up against the records of random shapes, drawn from the first step on.
// A later origin expects more records: the test errs towards "random shapes", never towards a leak.
RiseSpacing measure_spacing(const Analysis& a) {
  const auto& s = a.series;
  if (s.y.size() < 3) return {};
  const auto& l = a.levels;
  const std::size_t w = std::min(l.warmup_end, s.y.size() - 1);
  std::vector<double> at;
  for (std::size_t i : new_highs(s, w, l.tolerance)) at.push_back(s.x[i]);
  const double dx = (s.x.back() - s.x.front()) / static_cast<double>(s.x.size() - 1);
  if (s.x_is_steps || at.empty()) return rise_spacing(at, s.x[0] - dx, s.x[w], s.x.back(), dx);
  // In time the first step is unknown (loading may last seconds): take the first new high as the
  // first step's record, the latest the shapes can start. It expects the most records.
  return rise_spacing(at, at.front() - dx, at.front(), s.x.back(), dx);
}

// Where the memory is at the unit ends (accounting.hpp), an evaluation that accumulates, and an
// OOM before the step hook saw a single unit end.
void measure_accounting(const Timeline& tl, Features& f, Diagnosis& d) {
  auto& ev = d.evidence;
  const auto units = unit_marks(tl);
  if (!units.empty() && !step_number(units.front()->label)) f.unit = "forward call";
  ev.accounting = account(tl);
  f.outside_allocator_grows = ev.accounting && ev.accounting->growing == Level::Driver;
  bool unit_before_oom = false;
  for (const Mark* m : units) unit_before_oom |= !ev.oom_seconds || m->t_seconds < *ev.oom_seconds;
  f.first_unit_oom = f.oom && hook_marked(tl) && !unit_before_oom;
  const bool training_flat = !f.have_retained || !f.retained.sustained;
  ev.evaluation = evaluation_accumulates(tl, ev.oom_seconds);
  f.evaluation_accumulates = ev.evaluation && training_flat;
  if (!f.evaluation_accumulates) ev.evaluation.reset();
}

}  // namespace

bool fragmented(const std::optional<OomMessage>& m, std::optional<std::uint64_t> capacity) {
  if (!m || !m->requested_bytes || !m->reserved_unallocated_bytes) return false;
  const double holes = double(*m->reserved_unallocated_bytes);
  const double share = capacity ? 0.02 * double(*capacity) : 1024 * kMiB;
  return *m->reserved_unallocated_bytes >= *m->requested_bytes && holes >= share;
}

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

Features measure(const Timeline& tl, const std::optional<TraceEvidence>& trace, Diagnosis& d) {
  Features f;
  auto& ev = d.evidence;
  fill_basics(tl, d);
  d.step_ends = step_end_times(tl);
  find_step_time(tl, d.step_ends, ev);
  f.oom = ev.oom_seconds.has_value();
  const double tolerance = std::max(8 * kMiB, 0.005 * static_cast<double>(ev.peak_bytes));
  f.driver = analyse(driver_floors(tl, d.step_ends), tolerance);
  Series retained = retained_per_step(tl, d.step_ends);
  // A framework that counts nothing (JAX's platform allocator reports bytes_in_use 0) gives no step-end bytes.
  f.have_retained = retained.y.size() >= 3 && std::any_of(retained.y.begin(), retained.y.end(), [](double y) { return y > 0; });
  const double retained_tolerance = std::max(kMiB, 0.002 * median(retained.y));
  if (f.have_retained) f.retained = analyse(std::move(retained), retained_tolerance);
  record_trend(f.have_retained ? f.retained : f.driver, d);
  ev.cache_flushes = f.driver.levels.flushes;
  f.growth_floor = growth_floor(f.driver.series);
  f.small_rises_leak = late_rises_look_like_leak(f.driver, ev);
  f.late_growth = ev.late_rise_bytes >= f.growth_floor;
  f.decelerating = decelerating(f.driver);
  f.fragmented = f.oom && fragmented(ev.oom, ev.capacity_bytes);
  ev.spacing = measure_spacing(f.driver);
  if (ev.capacity_bytes) ev.preallocation = find_preallocation(tl, *ev.capacity_bytes, tolerance);
  f.short_run = d.step_ends.size() < 2 && ev.holding_seconds < kMinQuietSeconds;
  f.framework_pool = grows_a_framework_pool(tl);
  if (trace) {
    ev.trace = trace;
    f.trace_leak = trace_shows_leak(*trace, f.oom);
    f.trace_growth = trace_shows_growth(*trace, f.oom);
  }
  if (f.oom) ev.need = estimate_need(tl, ev.oom, d.step_ends, ev.capacity_bytes, tolerance);
  measure_accounting(tl, f, d);
  return f;
}

}  // namespace vramdoc::timeline
