// vramdoc analyze FILE... [--json] [--html FILE] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose recorded timelines; several files (one per node) are one job.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/style.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/report/job_report.hpp"
#include "core/timeline/job.hpp"
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
  CLI::App app{"Diagnose recorded GPU-memory timelines: leak, insufficient, fragmentation, plateau, stable, per process\n"
               "and for the job. Reads timelines written by 'vramdoc run --out' (versions 1 and 2) and the shared timeline\n"
               "JSON; several files (one per node of a job) are diagnosed as one job.", "analyze"};
  std::vector<std::string> files;
  std::string html, trace_dir;
  EstimatorArgs job;
  bool json = false;
  app.add_option("FILE", files, "the timeline file(s): one per node of a multi-node job (- reads standard input)")->required();
  app.add_flag("--json", json, "print one JSON object (field \"verdict\") instead of text");
  app.add_option("--html", html, "also write a self-contained HTML report to this file");
  add_estimator_options(app, job, EstimatorUse::Job);
  app.add_option("--trace-dir", trace_dir,
                 "also show the allocation traces in DIR (vramdoc run --trace: traced bytes, call sites) and the "
                 "Python lines (--trace-python); one timeline file only");
  if (int rc = parse_args(app, args); rc >= 0) return rc;
  if (std::count(files.begin(), files.end(), "-") + (job.config == "-") > 1)
    return fail("analyze", "standard input (-) is read once: give - for one file or for --config, not both");

  auto input = read_job(job);
  if (!input) return fail("analyze", input.error());
  if (!trace_dir.empty() && files.size() > 1) return fail("analyze", "--trace-dir goes with one timeline file, not " + std::to_string(files.size()));
  std::vector<timeline::Timeline> timelines;
  for (const auto& f : files) {
    auto tl = load_timeline(f);
    if (!tl) return fail("analyze", tl.error());
    timelines.push_back(std::move(*tl));
  }
  report::JobReport r;
  r.timeline = timelines.front();  // the traces' clock: the recording's own
  if (!trace_dir.empty()) add_trace_dir(r, trace_dir);
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace").
  auto judged = timeline::judge_job(timelines, r.traced ? std::optional(timeline::trace_evidence(*r.traced)) : std::nullopt);
  r.timeline = std::move(judged.headline);
  r.diagnosis = std::move(judged.diagnosis);
  r.processes = std::move(judged.processes);
  if (auto q = quantify_job(*input, r.timeline, r.diagnosis); !q) return fail("analyze", q.error());
  if (!html.empty()) {
    if (auto w = write_text_file(html, report::render_html(r)); !w) return fail("analyze", w.error());
  }
  if (json) print(json_document("vramdoc.analyze/1", report::render_json(r)));
  else print(highlight(report::render_text(r), style_for(stdout)));
  return is_problem(r.diagnosis.verdict) ? kFailure : kOk;  // "no": a leak, insufficient or fragmentation
}

}  // namespace vramdoc::cli
