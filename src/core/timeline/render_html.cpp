// The HTML report: one self-contained page, an inline SVG chart, no script, no network.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/timeline/classify.hpp"
#include "core/text.hpp"
#include "core/timeline/quantify.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/render_job.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

constexpr double kW = 900, kH = 360, kLeft = 70, kRight = 20, kTop = 20, kBottom = 40;

std::string num(double v) { return fixed(v, 1); }

// Maps seconds and bytes onto the plot area.
struct Scale {
  double t0, t1, y1;
  double x(double t) const { return kLeft + (t - t0) / std::max(t1 - t0, 1e-9) * (kW - kLeft - kRight); }
  double y(double bytes) const { return kH - kBottom - bytes / std::max(y1, 1.0) * (kH - kTop - kBottom); }
};

// A polyline of one column, thinned to the min and max per pixel column so peaks survive.
template <class Get>
std::string polyline(const Timeline& tl, const Scale& sc, Get get, const char* colour, const char* name) {
  std::string pts;
  int column = -1;
  double low = 0, high = 0;
  bool any = false;
  auto flush = [&] {
    if (column < 0) return;
    pts += num(column) + "," + num(sc.y(low)) + " " + num(column) + "," + num(sc.y(high)) + " ";
  };
  for (const auto& s : tl.samples) {
    const std::optional<double> v = get(s);
    if (!v) continue;
    any = true;
    const int c = static_cast<int>(sc.x(s.t_seconds));
    if (c != column) {
      flush();
      column = c, low = high = *v;
    } else {
      low = std::min(low, *v), high = std::max(high, *v);
    }
  }
  flush();
  if (!any) return "";
  return std::string("<polyline fill='none' stroke='") + colour + "' stroke-width='1.5' points='" + pts + "'><title>" + name + "</title></polyline>\n";
}

// The traced bytes as a step line; points outside the driver's time axis are left out.
std::string traced_polyline(const TracedSeries& traced, const Scale& sc) {
  std::string pts;
  double last_y = sc.y(0);
  for (const auto& p : traced.points) {
    if (p.t_seconds < sc.t0 || p.t_seconds > sc.t1) continue;
    const double x = sc.x(p.t_seconds), y = sc.y(double(p.bytes));
    if (!pts.empty()) pts += num(x) + "," + num(last_y) + " ";
    pts += num(x) + "," + num(y) + " ";
    last_y = y;
  }
  if (pts.empty()) return "";
  return "<polyline id='traced' fill='none' stroke='#8e44ad' stroke-width='1.5' points='" + pts + "'><title>traced bytes (" +
         xml_escape(traced.alignment) + ")</title></polyline>\n";
}

std::string chart(const Timeline& tl, const Diagnosis& d, const TracedSeries* traced) {
  const auto& ev = d.evidence;
  if (tl.samples.size() < 2) return "<p>No chart: fewer than two samples.</p>\n";
  Scale sc{tl.samples.front().t_seconds, tl.samples.back().t_seconds, static_cast<double>(ev.peak_bytes)};
  for (const auto& s : tl.samples) sc.y1 = std::max(sc.y1, static_cast<double>(s.device_used_bytes.value_or(0)));
  if (traced) sc.y1 = std::max(sc.y1, static_cast<double>(traced->peak_bytes));
  const bool show_capacity = ev.capacity_bytes && double(*ev.capacity_bytes) < 2 * sc.y1;
  if (show_capacity) sc.y1 = std::max(sc.y1, double(*ev.capacity_bytes));
  if (ev.oom_seconds) sc.t1 = std::max(sc.t1, *ev.oom_seconds);
  sc.y1 *= 1.05;
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='" + num(kW) + "' height='" + num(kH) + "' viewBox='0 0 " + num(kW) + " " + num(kH) + "' font-family='sans-serif' font-size='11'>\n";
  svg += "<rect x='0' y='0' width='" + num(kW) + "' height='" + num(kH) + "' fill='white'/>\n";
  // warm-up
  svg += "<rect x='" + num(sc.x(sc.t0)) + "' y='" + num(kTop) + "' width='" + num(sc.x(sc.t0 + ev.warmup_seconds) - sc.x(sc.t0)) + "' height='" + num(kH - kTop - kBottom) + "' fill='#fff3c4'><title>warm-up</title></rect>\n";
  // steps (at most 300 ticks)
  const std::size_t every = std::max<std::size_t>(1, d.step_ends.size() / 300);
  for (std::size_t i = 0; i < d.step_ends.size(); i += every)
    svg += "<line x1='" + num(sc.x(d.step_ends[i])) + "' x2='" + num(sc.x(d.step_ends[i])) + "' y1='" + num(kH - kBottom) + "' y2='" + num(kH - kBottom - 8) + "' stroke='#999'/>\n";
  // axes and gridlines
  for (int k = 0; k <= 4; ++k) {
    const double b = sc.y1 * k / 4, y = sc.y(b);
    svg += "<line x1='" + num(kLeft) + "' x2='" + num(kW - kRight) + "' y1='" + num(y) + "' y2='" + num(y) + "' stroke='#eee'/>";
    svg += "<text x='" + num(kLeft - 6) + "' y='" + num(y + 4) + "' text-anchor='end'>" + format_bytes(static_cast<std::uint64_t>(b), 1) + "</text>\n";
    const double t = sc.t0 + (sc.t1 - sc.t0) * k / 4;
    svg += "<text x='" + num(sc.x(t)) + "' y='" + num(kH - kBottom + 16) + "' text-anchor='middle'>" + num(t) + " s</text>\n";
  }
  svg += "<line x1='" + num(kLeft) + "' x2='" + num(kLeft) + "' y1='" + num(kTop) + "' y2='" + num(kH - kBottom) + "' stroke='#333'/>";
  svg += "<line x1='" + num(kLeft) + "' x2='" + num(kW - kRight) + "' y1='" + num(kH - kBottom) + "' y2='" + num(kH - kBottom) + "' stroke='#333'/>\n";
  if (show_capacity) {
    const double y = sc.y(double(*ev.capacity_bytes));
    svg += "<line x1='" + num(kLeft) + "' x2='" + num(kW - kRight) + "' y1='" + num(y) + "' y2='" + num(y) + "' stroke='#c00' stroke-dasharray='2,3'><title>capacity</title></line>\n";
  }
  svg += polyline(tl, sc, [](const Sample& s) { return s.device_used_bytes ? std::optional<double>(double(*s.device_used_bytes)) : std::nullopt; }, "#bbb", "device used");
  svg += polyline(tl, sc, [](const Sample& s) { return s.allocated_bytes ? std::optional<double>(double(*s.allocated_bytes)) : std::nullopt; }, "#7fb77e", "framework allocated");
  svg += polyline(tl, sc, [](const Sample& s) { return std::optional<double>(double(s.process_used_bytes)); }, "#1f5fbf", "process used (driver)");
  if (traced) svg += traced_polyline(*traced, sc);
  if (d.trend)
    svg += "<line x1='" + num(sc.x(d.trend->t0)) + "' x2='" + num(sc.x(d.trend->t1)) + "' y1='" + num(sc.y(d.trend->y0)) + "' y2='" + num(sc.y(d.trend->y1)) +
           "' stroke='#e07000' stroke-width='2' stroke-dasharray='6,4'><title>fitted trend after warm-up</title></line>\n";
  if (ev.oom_seconds) {
    const double x = sc.x(*ev.oom_seconds);
    svg += "<line x1='" + num(x) + "' x2='" + num(x) + "' y1='" + num(kTop) + "' y2='" + num(kH - kBottom) + "' stroke='#c00' stroke-width='2'/>";
    svg += "<circle cx='" + num(x) + "' cy='" + num(sc.y(double(ev.peak_bytes))) + "' r='6' fill='#c00'><title>out of memory</title></circle>";
    svg += "<text x='" + num(x - 4) + "' y='" + num(kTop + 12) + "' text-anchor='end' fill='#c00'>OOM</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

// Only what the chart shows.
std::string legend(const Timeline& tl, const Diagnosis& d, const TracedSeries* traced) {
  bool allocated = false, device = false;
  for (const auto& s : tl.samples) allocated |= s.allocated_bytes.has_value(), device |= s.device_used_bytes.has_value();
  std::string l = "<p class='legend'><span style='color:#1f5fbf'>&#9644; process used (driver)</span>";
  if (allocated) l += "<span style='color:#7fb77e'>&#9644; framework allocated</span>";
  if (device) l += "<span style='color:#bbb'>&#9644; device used</span>";
  if (traced) l += "<span style='color:#8e44ad'>&#9644; traced bytes (allocation tracer)</span>";
  if (d.trend) l += "<span style='color:#e07000'>- - fitted trend</span>";
  l += "<span style='background:#fff3c4'>warm-up</span>";
  if (!d.step_ends.empty()) l += "<span>| steps</span>";
  if (d.evidence.oom_seconds) l += "<span style='color:#c00'>&#9679; OOM</span>";
  return l + "</p>\n";
}

const char* colour(Verdict v) {
  switch (v) {
    case Verdict::Leak: case Verdict::Insufficient: case Verdict::Fragmentation: return "#c0392b";
    case Verdict::Plateau: case Verdict::Stable: return "#2e8b57";
    case Verdict::Inconclusive: break;
  }
  return "#777";
}

}  // namespace

std::string render_html(const Timeline& tl, const Diagnosis& d, const TracedSeries* traced,
                        const std::vector<Appendix>& appendices, const JobVerdicts* processes) {
  std::string h = "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>vramdoc: " + xml_escape(tl.name) + "</title>\n<style>"
      "body{font-family:sans-serif;margin:24px;color:#222;max-width:960px}"
      ".verdict{font-size:20px;padding:10px 14px;color:white;border-radius:6px;background:" + std::string(colour(d.verdict)) + "}"
      "table{border-collapse:collapse}td{padding:3px 10px;border-bottom:1px solid #eee;vertical-align:top}"
      ".legend span{margin-right:16px}</style></head><body>\n";
  h += "<h1>vramdoc report: " + xml_escape(tl.name) + "</h1>\n";
  h += "<p class='verdict' id='verdict' data-verdict='" + std::string(verdict_name(d.verdict)) + "'>" + xml_escape(d.summary) + "</p>\n";
  if (processes) h += render_processes_html(*processes);
  h += legend(tl, d, traced);
  h += chart(tl, d, traced);
  if (traced) {
    h += "<p class='traced'>Traced bytes: peak " + format_bytes(traced->peak_bytes) + ", alive at the end " +
         format_bytes(traced->live_bytes_at_end) + "; clocks aligned by " + xml_escape(traced->alignment) + ".</p>\n";
    if (traced->pytorch)
      h += "<p class='traced' id='pytorch-note'>The job used PyTorch's caching allocator: the traced bytes are its segments, "
           "not tensors. To see tensors, run the job again with <code>PYTORCH_NO_CUDA_MEMORY_CACHING=1</code> (slower).</p>\n";
  }
  if (!d.reasons.empty()) {
    h += "<h2>Why</h2><ul>";
    for (const auto& r : d.reasons) h += "<li>" + xml_escape(r) + "</li>";
    h += "</ul>\n";
  }
  h += "<h2>Evidence</h2><table>";
  for (const auto& [k, v] : evidence_rows(d)) h += "<tr><td>" + xml_escape(k) + "</td><td>" + xml_escape(v) + "</td></tr>";
  h += "</table>\n";
  if (d.evidence.oom) h += "<h2>Out-of-memory message</h2><pre style='white-space:pre-wrap'>" + xml_escape(d.evidence.oom->text) + "</pre>\n";
  h += "<h2>What to do</h2><ul>";
  for (const auto& r : d.remedies) h += "<li>" + xml_escape(r) + "</li>";
  h += "</ul>\n" + (d.quantified ? render_quantified_html(*d.quantified) : "");
  for (const auto& a : appendices) {
    h += "<section id='" + xml_escape(a.id) + "'><h2>" + xml_escape(a.title) + "</h2><pre>" + xml_escape(a.text) +
         "</pre></section>\n";
  }
  return h + "</body></html>\n";
}

}  // namespace vramdoc::timeline
