#include "core/timeline/chart.hpp"

#include <algorithm>
#include <cmath>

#include "core/text.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

// A projected OOM further out than this many times the recording is written, not drawn: the
// chart would shrink the recording to a sliver.
constexpr double kMaxProjectionSpans = 3;
// A capacity more than this many times the highest reading is written, not drawn.
constexpr double kMaxCapacityRatio = 4;

std::string duration(double s) {
  if (s < 100) return fixed(s, 1) + " s";
  if (s < 3600) return fixed(s, 0) + " s";
  if (s < 36000) return fixed(s / 60, 0) + " min";
  return fixed(s / 3600, 1) + " h";
}

double highest(const Picture& p) {
  double top = 0;
  for (const auto* series : {&p.used, &p.allocated, &p.device, &p.basis})
    for (const auto& q : *series) top = std::max(top, q.y);
  return top;
}

void draw_readings(const Picture& p, const TracedSeries* traced, chart::Chart& c) {
  if (!p.device.empty()) c.lines.push_back({.points = p.device, .colour = "#b8b8b8", .label = "device used (whole GPU)", .cls = "device-used"});
  if (!p.allocated.empty())
    c.lines.push_back({.points = p.allocated, .colour = "#7fb77e", .label = "framework allocated (live tensors)", .cls = "allocated"});
  c.lines.push_back({.points = p.used, .colour = "#1f5fbf", .label = "process used (driver)", .cls = "process-used"});
  if (traced && !traced->points.empty()) {
    chart::Line l{.colour = "#8e44ad", .label = "traced bytes (allocation tracer)", .cls = "traced", .step = true};
    for (const auto& q : traced->points)
      if (q.t_seconds >= p.t0 && q.t_seconds <= p.t1) l.points.push_back({q.t_seconds, double(q.bytes)});
    if (!l.points.empty()) c.lines.push_back(std::move(l));
  }
}

// The step-end bytes (or the driver's floors) and the trend fitted over them.
void draw_basis(const Diagnosis& d, chart::Chart& c) {
  const auto& ev = d.evidence;
  if (!d.picture.basis.empty()) {
    c.dots.push_back({.points = d.picture.basis, .colour = "#a04000",
                      .label = ev.trend_series.empty() ? "the trend's series" : ev.trend_series, .cls = "basis", .radius = 2.6});
  }
  // The trend is what a leak, a plateau or a stable verdict rests on; an OOM verdict is decided
  // by the OOM itself, and a flat line through its readings would say nothing.
  const bool oom_verdict = d.verdict == Verdict::Insufficient || d.verdict == Verdict::Fragmentation;
  if (d.trend && !oom_verdict) {
    std::string label = "fitted trend after warm-up";
    if (ev.growth_bytes_per_step) label += ": " + std::string(*ev.growth_bytes_per_step < 0 ? "-" : "+") +
                                           format_bytes(static_cast<std::uint64_t>(std::fabs(*ev.growth_bytes_per_step))) + " per step";
    else if (ev.growth_bytes_per_second) label += ": " + std::string(*ev.growth_bytes_per_second < 0 ? "-" : "+") +
                                                  format_bytes(static_cast<std::uint64_t>(std::fabs(*ev.growth_bytes_per_second))) + " per s";
    c.lines.push_back({.points = {{d.trend->t0, d.trend->y0}, {d.trend->t1, d.trend->y1}}, .colour = "#e07000", .label = label, .cls = "fit", .width = 2.5,
                       .on_top = true});
  }
}

// Before the first step (loading, the CUDA context) and the warm-up steps, as bands: with step
// marks the warm-up starts with the first step (its end less one mean step), not at the recording's
// start, so the band sits over the steps it counts.
void draw_phases(const Diagnosis& d, chart::Chart& c) {
  const Picture& p = d.picture;
  if (!p.warmup_end_seconds || *p.warmup_end_seconds <= p.t0) return;
  double start = p.t0;
  if (!d.step_ends.empty() && d.evidence.step_seconds)
    start = std::clamp(d.step_ends.front() - *d.evidence.step_seconds, p.t0, *p.warmup_end_seconds);
  if (start > p.t0) c.bands.push_back({.x0 = p.t0, .x1 = start, .colour = "#eeeeee", .label = "before the first step", .cls = "startup"});
  const std::string steps = d.evidence.warmup_steps ? " (" + std::to_string(*d.evidence.warmup_steps) + " steps)" : "";
  c.bands.push_back({.x0 = start, .x1 = *p.warmup_end_seconds, .colour = "#fff3c4", .label = "warm-up" + steps, .cls = "warmup"});
}

// When and at which step a leak's trend reaches the capacity ("5.3 h (step 1200)"), and whether
// that is near enough to draw on the recording's own chart.
struct Projection {
  double at = 0, end = 0;  // on the picture's clock
  std::string when;
  bool on_chart = false;
};

std::optional<Projection> projection(const Diagnosis& d) {
  const auto& ev = d.evidence;
  if (!ev.projected_oom_seconds || !ev.capacity_bytes) return std::nullopt;
  Projection p;
  p.at = d.picture.t0 + *ev.projected_oom_seconds, p.end = d.picture.t0 + ev.duration_seconds;
  p.when = duration(*ev.projected_oom_seconds) +
           (ev.projected_oom_step ? " (step " + std::to_string(static_cast<long long>(std::ceil(*ev.projected_oom_step))) + ")" : "");
  p.on_chart = *ev.projected_oom_seconds <= kMaxProjectionSpans * std::max(ev.duration_seconds, 1e-9);
  return p;
}

void draw_projection(const Diagnosis& d, const Projection& p, chart::Chart& c) {
  c.lines.push_back({.points = {{p.end, double(d.evidence.peak_bytes)}, {p.at, double(*d.evidence.capacity_bytes)}}, .colour = "#c0392b",
                     .label = "projected at the measured rate", .cls = "projection", .dashed = true, .on_top = true});
  c.markers.push_back({.x = p.at, .colour = "#c0392b", .label = "projected OOM at " + p.when, .cls = "projected-oom", .dashed = true,
                       .tag = "projected OOM"});
}

void draw_capacity(const Evidence& ev, chart::Chart& c) {
  c.rules.push_back({.y = double(*ev.capacity_bytes), .colour = "#c0392b", .label = "card capacity " + format_bytes(*ev.capacity_bytes, 1),
                     .cls = "capacity"});
}

// The card's capacity, the OOM, and a leak's projected OOM when it is near.
void draw_limits(const Diagnosis& d, double top, chart::Chart& c) {
  const auto& ev = d.evidence;
  const auto ahead = projection(d);
  if (ahead && ahead->on_chart) draw_projection(d, *ahead, c);
  if (ahead && !ahead->on_chart)
    c.notes.push_back("At the measured rate it would run out of memory at " + ahead->when + ": the next chart shows where that is.");
  if (ev.capacity_bytes) {
    if ((ahead && ahead->on_chart) || ev.oom_seconds || double(*ev.capacity_bytes) <= kMaxCapacityRatio * std::max(top, 1.0))
      draw_capacity(ev, c);
    else
      c.notes.push_back("The card's capacity, " + format_bytes(*ev.capacity_bytes, 1) + ", is above this chart (the peak is " +
                        fixed(100 * ev.peak_fraction.value_or(0), 1) + " % of it).");
  }
  if (!ev.oom_seconds) return;
  c.markers.push_back({.x = *ev.oom_seconds, .colour = "#c0392b", .label = "out of memory", .cls = "oom", .tag = "OOM"});
  // What the failing allocation asked for, on top of what the job held then: how far past the card.
  if (ev.oom && ev.oom->requested_bytes && !d.picture.used.empty()) {
    double held = 0;
    for (const auto& q : d.picture.used)
      if (q.x <= *ev.oom_seconds) held = q.y;
    c.lines.push_back({.points = {{*ev.oom_seconds, held}, {*ev.oom_seconds, held + double(*ev.oom->requested_bytes)}},
                       .colour = "#7b1fa2", .label = "the failed request: " + format_bytes(*ev.oom->requested_bytes) + " more",
                       .cls = "request", .width = 6, .on_top = true});
  }
}

}  // namespace

chart::Chart diagnosis_chart(const Diagnosis& d, const ChartOptions& o) {
  const Picture& p = d.picture;
  chart::Chart c;
  c.id = o.id, c.title = o.title;
  c.x = {.quantity = chart::Quantity::Seconds, .title = "time since the recording began", .min = o.x_min ? *o.x_min : p.t0,
         .max = o.x_max ? *o.x_max : p.t1, .from_zero = false};
  c.y = {.quantity = chart::Quantity::Bytes, .title = "GPU memory", .max = o.y_max};
  draw_phases(d, c);
  draw_readings(p, o.traced, c);
  draw_basis(d, c);
  draw_limits(d, highest(p), c);
  c.ticks_x = d.step_ends;
  c.ticks_label = "step ends";
  if (p.used.size() < 2) c.notes.push_back("Fewer than two readings: nothing to draw over time.");
  return c;
}

std::optional<chart::Chart> projection_chart(const Diagnosis& d, const ChartOptions& o) {
  const auto ahead = projection(d);
  if (!ahead || ahead->on_chart) return std::nullopt;
  const Picture& p = d.picture;
  chart::Chart c;
  c.id = o.id + "-projection";
  c.title = (o.title.empty() ? std::string() : o.title + ": ") + "at the measured rate, out of memory at " + ahead->when;
  c.x = {.quantity = chart::Quantity::Seconds, .title = "time since the recording began", .min = p.t0, .max = ahead->at, .from_zero = false};
  c.y = {.quantity = chart::Quantity::Bytes, .title = "GPU memory"};
  c.bands.push_back({.x0 = p.t0, .x1 = ahead->end, .colour = "#e8f0fb", .label = "recorded", .cls = "recorded"});
  c.lines.push_back({.points = p.used, .colour = "#1f5fbf", .label = "process used (driver)", .cls = "process-used"});
  draw_projection(d, *ahead, c);
  draw_capacity(d.evidence, c);
  return c;
}

}  // namespace vramdoc::timeline
