// The HTML report: one self-contained page, inline SVG charts (core/chart), no script, no network.
#include <algorithm>

#include "core/chart/svg.hpp"
#include "core/html_page.hpp"
#include "core/text.hpp"
#include "core/timeline/chart.hpp"
#include "core/timeline/classify.hpp"
#include "core/timeline/quantify.hpp"
#include "core/timeline/render.hpp"
#include "core/timeline/render_job.hpp"
#include "core/units.hpp"

namespace vramdoc::timeline {

namespace {

// One chart per process on a common time and memory range, so the ranks compare at a glance;
// a single process (or a recording without processes) gets the headline chart with the trace.
std::string charts(const Diagnosis& d, const TracedSeries* traced, const JobVerdicts* processes) {
  auto with_projection = [](const Diagnosis& diagnosis, const ChartOptions& o) {
    std::string h = chart::render_figure(diagnosis_chart(diagnosis, o));
    if (auto ahead = projection_chart(diagnosis, o)) h += chart::render_figure(*ahead);
    return h;
  };
  if (!processes || processes->processes.size() < 2) {
    ChartOptions o;
    o.traced = traced;
    return with_projection(d, o);
  }
  ChartOptions common;
  for (const auto& p : processes->processes) {
    const Picture& pic = p.diagnosis.picture;
    if (pic.used.empty()) continue;
    common.x_min = std::min(common.x_min.value_or(pic.t0), pic.t0);
    common.x_max = std::max(common.x_max.value_or(pic.t1), pic.t1);
    for (const auto* series : {&pic.used, &pic.allocated, &pic.device})
      for (const auto& q : *series) common.y_max = std::max(common.y_max.value_or(0), q.y);
  }
  std::string h = "<section id='process-charts'><h2>Each process over time</h2>\n";
  for (std::size_t i = 0; i < processes->processes.size(); ++i) {
    const auto& p = processes->processes[i];
    ChartOptions o = common;
    o.id = "process-" + std::to_string(i + 1);
    o.title = process_name(p.who, false) + ": " + verdict_name(p.diagnosis.verdict);
    h += with_projection(p.diagnosis, o);
  }
  return h + "</section>\n";
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
  std::string h = html_page_head("vramdoc: " + tl.name, ".verdict{font-size:20px;padding:10px 14px;color:white;border-radius:6px;background:" +
                                                         std::string(colour(d.verdict)) + "}");
  h += "<h1>vramdoc report: " + xml_escape(tl.name) + "</h1>\n";
  h += "<p class='verdict' id='verdict' data-verdict='" + std::string(verdict_name(d.verdict)) + "'>" + xml_escape(d.summary) + "</p>\n";
  if (processes) h += render_processes_html(*processes);
  h += charts(d, traced, processes);
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
  h += "<h2>Evidence</h2><table class='evidence'>";
  for (const auto& [k, v] : evidence_rows(d)) h += "<tr><td>" + xml_escape(k) + "</td><td>" + xml_escape(v) + "</td></tr>";
  h += "</table>\n";
  if (d.evidence.oom) h += "<h2>Out-of-memory message</h2><pre style='white-space:pre-wrap'>" + xml_escape(d.evidence.oom->text) + "</pre>\n";
  h += "<h2>What to do</h2><ul>";
  for (const auto& r : d.remedies) h += "<li>" + xml_escape(r) + "</li>";
  h += "</ul>\n" + (d.quantified ? render_quantified_html(*d.quantified) : "");
  for (const auto& a : appendices) {
    h += "<section id='" + xml_escape(a.id) + "'><h2>" + xml_escape(a.title) + "</h2>" +
         (a.html ? a.text : "<pre>" + xml_escape(a.text) + "</pre>") + "</section>\n";
  }
  return h + "</body></html>\n";
}

}  // namespace vramdoc::timeline
