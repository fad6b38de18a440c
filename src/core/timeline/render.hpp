// Renderers of a diagnosis: text for the terminal, JSON (field "verdict"), a self-contained HTML
// report with an inline SVG chart. They return strings or JSON values; only the CLI writes.
// A job's whole report (trace, Python lines) is core/report/job_report.hpp, built on these.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/style.hpp"
#include "core/timeline/diagnosis.hpp"
#include "core/timeline/job.hpp"
#include "core/timeline/timeline.hpp"
#include "core/timeline/traced.hpp"

namespace vramdoc::timeline {

// The evidence as (name, value) rows, shared by the text and HTML renderers; unknown is "n/a".
std::vector<std::pair<std::string, std::string>> evidence_rows(const Diagnosis& d);
// Verdict, evidence and remedies, for a terminal. With `processes` (a job of several processes:
// `tl` and `d` are then the worst one's), their table follows the verdict. With colour, the
// verdict's word is red for a problem, green for stable / plateau, yellow for inconclusive.
std::string render_text(const Timeline& tl, const Diagnosis& d, const JobVerdicts* processes = nullptr, const Style& style = {});
// One JSON object: verdict, summary, reasons, evidence (unknown figures are null), remedies.
nlohmann::json diagnosis_json(const Timeline& tl, const Diagnosis& d);
// A report that rides along at the end of the HTML page as preformatted text (the trace's call
// sites, --trace-python's Python lines); `id` is the section's HTML id.
struct Appendix {
  std::string id, title, text;
  bool html = false;  // `text` is HTML from one of vramdoc's renderers (a snapshot's section), not plain text
};

// A single HTML page, no network: the chart (timeline, steps, warm-up, trend, OOM), verdict, evidence.
// With `traced`, the chart also draws the traced bytes (docs/trace.md) as a second line; with
// `processes`, their table follows the verdict.
std::string render_html(const Timeline& tl, const Diagnosis& d, const TracedSeries* traced = nullptr,
                        const std::vector<Appendix>& appendices = {}, const JobVerdicts* processes = nullptr);

}  // namespace vramdoc::timeline
