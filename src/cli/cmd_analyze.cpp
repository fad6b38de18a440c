// vramdoc analyze FILE... [--json] [--html FILE] [--trace-dir DIR] [--config FILE|--model PRESET --batch B --seq S ...]:
// diagnose recorded timelines (several files, one per node, are one job) and a PyTorch memory
// snapshot (a pickle, told by its first bytes) as one report.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "cli/command.hpp"
#include "cli/model_input.hpp"
#include "cli/python_hook.hpp"
#include "cli/snapshot_io.hpp"
#include "cli/style.hpp"
#include "cli/timeline_io.hpp"
#include "cli/trace_support.hpp"
#include "core/report/job_report.hpp"
#include "core/terminal_safe.hpp"
#include "core/timeline/job.hpp"
#include "core/trace/overlay.hpp"

namespace vramdoc::cli {

namespace {

// What a --trace-dir folder adds: the Python lines when it holds any, the call sites and the
// traced bytes when a trace can be read. Problems go to stderr; a folder of --trace-python alone
// has no .vdt files, so there only unreadable ones are worth a line.
void add_trace_dir(report::JobReport& r, const std::string& dir) {
  std::vector<std::string> problems;
  r.oom_snapshots = load_oom_snapshots(dir, problems);
  if (auto stacks = load_python_stacks(dir); stacks && (!stacks->processes.empty() || !stacks->problems.empty() || !problems.empty())) {
    r.python = std::move(*stacks);
    r.python->problems.insert(r.python->problems.end(), problems.begin(), problems.end());
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
    if (r.traced || !r.python || w.starts_with("skipped ")) std::fprintf(stderr, "vramdoc analyze: --trace-dir: %s\n", terminal_safe_lines(w).c_str());
  }
}

// The files given, sorted by what they hold: timelines, and at most one PyTorch memory snapshot.
struct AnalyzeFiles {
  std::vector<std::string> timelines;
  std::string snapshot;  // empty: none
};

Result<AnalyzeFiles> sort_files(const std::vector<std::string>& files) {
  AnalyzeFiles out;
  for (const auto& f : files) {
    if (!is_pickle_file(f)) {
      out.timelines.push_back(f);
    } else if (out.snapshot.empty()) {
      out.snapshot = f;
    } else {
      return make_error("one memory snapshot per report: " + out.snapshot + " and " + f + " (analyze each alone)");
    }
  }
  return out;
}

// The timelines judged as one job (with what --trace-dir adds) into `r`; the error names the file.
Result<bool> judge_timelines(const std::vector<std::string>& files, const std::string& trace_dir, report::JobReport& r) {
  std::vector<timeline::Timeline> timelines;
  for (const auto& f : files) {
    auto tl = load_timeline(f);
    if (!tl) return make_error(tl.error());
    timelines.push_back(std::move(*tl));
  }
  r.timeline = timelines.front();  // the traces' clock: the recording's own
  if (!trace_dir.empty()) add_trace_dir(r, trace_dir);
  // One story: the verdict weighs what the trace saw (docs/run-analyze.md, "Consistent with the trace").
  auto judged = timeline::judge_job(timelines, r.traced ? std::optional(timeline::trace_evidence(*r.traced)) : std::nullopt);
  r.timeline = std::move(judged.headline);
  r.diagnosis = std::move(judged.diagnosis);
  r.processes = std::move(judged.processes);
  return true;
}

}  // namespace

int cmd_analyze(const std::vector<std::string>& args) {
  CLI::App app{"Diagnose recorded GPU-memory timelines: leak, insufficient, fragmentation, plateau, stable, per process\n"
               "and for the job. Reads timelines written by 'vramdoc run --out' (versions 1 and 2), the shared timeline\n"
               "JSON, and PyTorch memory snapshots (torch.cuda.memory._dump_snapshot, the pickle memory_viz reads);\n"
               "several timelines (one per node of a job) are one job, a snapshot given with them a section of its report.", "analyze"};
  std::vector<std::string> files;
  std::string html, trace_dir;
  EstimatorArgs job;
  bool json = false;
  app.add_option("FILE", files, "the timeline file(s), one per node of a multi-node job (- reads standard input), and/or one PyTorch memory snapshot (.pickle)")->required();
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
  auto sorted = sort_files(files);
  if (!sorted) return fail("analyze", sorted.error());
  const auto& timelines = sorted->timelines;
  if (!trace_dir.empty() && timelines.size() > 1) return fail("analyze", "--trace-dir goes with one timeline file, not " + std::to_string(timelines.size()));
  if (timelines.empty() && (!trace_dir.empty() || *input))
    return fail("analyze", "--trace-dir and a job (--config, --model) go with a timeline, not with a memory snapshot alone");
  std::optional<snapshot::SnapshotReport> snap;
  if (!sorted->snapshot.empty()) {
    auto s = load_snapshot_report(sorted->snapshot);
    if (!s) return fail("analyze", s.error());
    snap = std::move(*s);
  }
  report::JobReport r;
  if (timelines.empty()) {
    r = report::report_of_snapshot(std::move(*snap));
  } else {
    if (auto judged = judge_timelines(timelines, trace_dir, r); !judged) return fail("analyze", judged.error());
    r.snapshot = std::move(snap);
  }
  if (auto q = quantify_job(*input, r.timeline, r.diagnosis); !q) return fail("analyze", q.error());
  if (!html.empty()) {
    if (auto w = write_text_file(html, report::render_html(r)); !w) return fail("analyze", w.error());
  }
  if (json) print(json_document("vramdoc.analyze/1", report::render_json(r)));
  else print(highlight(report::render_text(r), style_for(stdout)));
  return is_problem(r.diagnosis.verdict) ? kFailure : kOk;  // "no": a leak, insufficient or fragmentation
}

}  // namespace vramdoc::cli
