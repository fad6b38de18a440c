// The job report as one HTML page (the diagnosis's page, the sections after it), and the page of
// `vramdoc trace DIR --html`. Self-contained: inline SVG, no script, no network.
#include <algorithm>

#include "core/report/job_report.hpp"
#include "core/text.hpp"
#include "core/timeline/render.hpp"
#include "core/units.hpp"

namespace vramdoc::report {

namespace {

timeline::Appendix call_sites_html(const trace::TraceSet& traces) {
  return {"call-sites", "Call sites (allocation tracer)", render_call_sites_text(traces)};
}

timeline::Appendix python_html(const trace::PythonStackSet& python) {
  return {"python-lines", "Python lines (--trace-python)",
          trace::render_python_stacks_text(python.processes, python.problems)};
}

constexpr double kW = 900, kH = 260, kLeft = 70, kRight = 20, kTop = 16, kBottom = 36;

// One process's traced bytes over its trace's time as a step line, with a bytes and a time axis.
std::string traced_chart(const trace::ProcessTrace& p) {
  const auto& points = p.analysis.timeline;
  if (points.size() < 2) return "<p>No chart: fewer than two points.</p>\n";
  const double t0 = points.front().t_s, t1 = std::max(points.back().t_s, t0 + 1e-9);
  double top = 1;
  for (const auto& q : points) top = std::max(top, static_cast<double>(q.bytes));
  top *= 1.05;
  auto x = [&](double t) { return kLeft + (t - t0) / (t1 - t0) * (kW - kLeft - kRight); };
  auto y = [&](double b) { return kH - kBottom - b / top * (kH - kTop - kBottom); };
  std::string svg = "<svg xmlns='http://www.w3.org/2000/svg' width='900' height='260' viewBox='0 0 900 260' "
                    "font-family='sans-serif' font-size='11'>\n<rect width='900' height='260' fill='white'/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double b = top * k / 4, t = t0 + (t1 - t0) * k / 4;
    svg += "<line x1='" + fixed(kLeft, 1) + "' x2='" + fixed(kW - kRight, 1) + "' y1='" + fixed(y(b), 1) + "' y2='" +
           fixed(y(b), 1) + "' stroke='#eee'/><text x='" + fixed(kLeft - 6, 1) + "' y='" + fixed(y(b) + 4, 1) +
           "' text-anchor='end'>" + format_bytes(static_cast<std::uint64_t>(b), 1) + "</text>";
    svg += "<text x='" + fixed(x(t), 1) + "' y='" + fixed(kH - kBottom + 16, 1) + "' text-anchor='middle'>" +
           fixed(t, 2) + " s</text>\n";
  }
  std::string pts;
  double last_y = y(0);
  for (const auto& q : points) {
    if (!pts.empty()) pts += fixed(x(q.t_s), 1) + "," + fixed(last_y, 1) + " ";
    last_y = y(static_cast<double>(q.bytes));
    pts += fixed(x(q.t_s), 1) + "," + fixed(last_y, 1) + " ";
  }
  svg += "<polyline fill='none' stroke='#8e44ad' stroke-width='1.5' points='" + pts +
         "'><title>traced bytes</title></polyline>\n</svg>\n";
  return svg;
}

}  // namespace

std::string render_html(const JobReport& r) {
  std::vector<timeline::Appendix> appendices;
  if (r.call_sites) appendices.push_back(call_sites_html(*r.call_sites));
  if (r.python) appendices.push_back(python_html(*r.python));
  return timeline::render_html(r.timeline, r.diagnosis, r.traced ? &*r.traced : nullptr, appendices,
                               r.processes ? &*r.processes : nullptr);
}

std::string render_trace_page(const trace::TraceSet& traces, const std::string& title) {
  std::string h = "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>vramdoc trace: " + xml_escape(title) +
                  "</title>\n<style>body{font-family:sans-serif;margin:24px;color:#222;max-width:960px}</style></head>"
                  "<body>\n<h1>vramdoc trace: " + xml_escape(title) + "</h1>\n";
  for (const auto& p : traces.processes) {
    h += "<h2>Process " + std::to_string(p.pid) + ": traced bytes over time</h2>\n<p>peak " +
         format_bytes(p.analysis.peak_bytes) + ", alive at exit " + format_bytes(p.analysis.live_bytes) + "</p>\n";
    h += traced_chart(p);
  }
  const auto section = call_sites_html(traces);
  h += "<section id='" + section.id + "'><h2>" + xml_escape(section.title) + "</h2><pre>" + xml_escape(section.text) +
       "</pre></section>\n";
  return h + "</body></html>\n";
}

}  // namespace vramdoc::report
