// vramdoc analyze FILE [--json] [--html FILE] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose a recorded timeline.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/style.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/report/job_report.hpp"
#include "core/timeline/classify.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::cli {

namespace {

// What a --trace-dir folder adds: the Python lines when it holds any, the call sites and the
// traced bytes when a trace can be read. Problems go to stderr; a folder of --trace-python alone
// has no .vdt files, so there only unreadable ones are worth a line.
void add_trace_dir(report::JobReport& r, const std::string& dir) {
  if (auto stacks = load_python_stacks(dir); stacks && (!stacks->processes.empty() || !stacks->problems.empty())) {
    r.python = std::move(*stacks);
  }
  std::vector<std::string> warnings;
  auto traces = load_traces(dir);
  if (!traces) {
    warnings.push_back(traces.error() + "; the report below is the driver's alone");
  } else {
    for (const auto& problem : traces->problems) warnings.push_back("skipped " + problem);
    if (traces->processes.empty()) {
      warnings.push_back("no readable trace.*.vdt in " + dir + "; the report below is the driver's alone");
    } else {
      r.traced = trace::build_overlay(traces->processes, r.timeline);
      r.call_sites = std::move(*traces);
    }
  }
  for (const auto& w : warnings) {
    if (r.traced || !r.python || w.starts_with("skipped ")) std::fprintf(stderr, "vramdoc analyze: --trace-dir: %s\n", w.c_str());
  }
}

}  // namespace

int cmd_analyze(const std::vector<std::string>& args) {
  CLI::App app{"Diagnose a recorded GPU-memory timeline: leak, insufficient, fragmentation, plateau, stable.\n"
               "Reads timelines written by 'vramdoc run --out' and the shared timeline JSON.", "analyze"};
  std::string file, html, trace_dir;
  EstimatorArgs job;
  bool json = false;
  app.add_option("FILE", file, "the timeline file (- reads standard input)")->required();
  app.add_flag("--json", json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", html, "also write a self-contained HTML report to this file");
  add_estimator_options(app, job, EstimatorUse::Job);
  app.add_option("--trace-dir", trace_dir,
                 "also show the allocation traces in DIR (vramdoc run --trace: traced bytes, call sites) and the "
                 "Python lines (--trace-python)");
  if (int rc = parse_args(app, args); rc >= 0) return rc;

  auto input = read_job(job);
  if (!input) return fail("analyze", input.error());
  auto tl = load_timeline(file);
  if (!tl) return fail("analyze", tl.error());
  report::JobReport r;
  r.timeline = std::move(*tl);
  if (!trace_dir.empty()) add_trace_dir(r, trace_dir);
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace").
  r.diagnosis = timeline::classify(r.timeline, r.traced ? std::optional(timeline::trace_evidence(*r.traced)) : std::nullopt);
  if (auto q = quantify_job(*input, r.timeline, r.diagnosis); !q) return fail("analyze", q.error());
  if (!html.empty()) {
    if (auto w = write_text_file(html, report::render_html(r)); !w) return fail("analyze", w.error());
  }
  if (json) print(json_document("vramdoc.analyze/1", report::render_json(r)));
  else print(highlight(report::render_text(r), style_for(stdout)));
  return is_problem(r.diagnosis.verdict) ? kFailure : kOk;  // "no": a leak, insufficient or fragmentation
}

}  // namespace vramdoc::cli
