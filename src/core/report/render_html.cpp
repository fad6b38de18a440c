// The job report as one HTML page (the diagnosis's page, the sections after it), and the page of
// `vramdoc trace DIR --html`. Self-contained: inline SVG (core/chart), no script, no network.
#include <algorithm>

#include "core/chart/svg.hpp"
#include "core/html_page.hpp"
#include "core/report/job_report.hpp"
#include "core/snapshot/render.hpp"
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

// One process's traced bytes over its trace's time, as a staircase.
chart::Chart traced_chart(const trace::ProcessTrace& p, std::size_t index) {
  chart::Chart c;
  c.id = "traced-" + std::to_string(index + 1);
  c.x = {.quantity = chart::Quantity::Seconds, .title = "time since the trace began", .from_zero = false};
  c.y = {.quantity = chart::Quantity::Bytes, .title = "traced bytes alive"};
  chart::Line l{.colour = "#8e44ad", .label = "traced bytes", .cls = "traced", .step = true};
  for (const auto& q : p.analysis.timeline) l.points.push_back({q.t_s, static_cast<double>(q.bytes)});
  if (l.points.size() < 2) c.notes.push_back("Fewer than two points: nothing to draw over time.");
  c.lines.push_back(std::move(l));
  return c;
}

}  // namespace

std::string render_html(const JobReport& r) {
  std::vector<timeline::Appendix> appendices;
  if (r.call_sites) appendices.push_back(call_sites_html(*r.call_sites));
  for (std::size_t i = 0; i < r.oom_snapshots.size(); ++i) {  // ids stay unique on the page: one per process
    const std::string id = i == 0 ? "oom-snapshot" : "oom-snapshot-" + std::to_string(i + 1);
    appendices.push_back({id, "PyTorch's snapshot at the first OOM (--trace-python)", snapshot::render_snapshot_html(r.oom_snapshots[i], id), true});
  }
  if (r.python) appendices.push_back(python_html(*r.python));
  if (r.snapshot) appendices.push_back({"snapshot", "What the snapshot shows", snapshot::render_snapshot_html(*r.snapshot), true});
  return timeline::render_html(r.timeline, r.diagnosis, r.traced ? &*r.traced : nullptr, appendices,
                               r.processes ? &*r.processes : nullptr);
}

std::string render_trace_page(const trace::TraceSet& traces, const std::string& title) {
  std::string h = html_page_head("vramdoc trace: " + title) + "<h1>vramdoc trace: " + xml_escape(title) + "</h1>\n";
  for (std::size_t i = 0; i < traces.processes.size(); ++i) {
    const auto& p = traces.processes[i];
    h += "<h2>Process " + std::to_string(p.pid) + ": traced bytes over time</h2>\n<p>peak " +
         format_bytes(p.analysis.peak_bytes) + ", alive at exit " + format_bytes(p.analysis.live_bytes) + "</p>\n";
    h += chart::render_figure(traced_chart(p, i));
  }
  const auto section = call_sites_html(traces);
  h += "<section id='" + section.id + "'><h2>" + xml_escape(section.title) + "</h2><pre>" + xml_escape(section.text) +
       "</pre></section>\n";
  return h + "</body></html>\n";
}

}  // namespace vramdoc::report
